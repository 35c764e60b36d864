---@mod claude_context.install.pins The checksums this plugin pins for its own release assets
---
--- A release commit carries `pins/v<version>.sha256` (written by the release workflow from the
--- assets it built): one line per asset, `<sha256 hex>  <asset name>` (sha256sum's format; `#`
--- starts a comment). The installer accepts a downloaded asset only when its SHA-256 is the one
--- pinned here for this version: the download server (or a mirror) chooses where the bytes come
--- from, never which bytes are accepted.

local M = {}

---The pin file of `version`, relative to the plugin root.
---@param version string
---@return string
function M.relpath(version)
  return ("pins/v%s.sha256"):format(version)
end

---Reads and parses the pin file of `version` in the plugin checkout `root`.
---@param root string
---@param version string
---@return table<string, string>? by_name asset name → lowercase hex, string? why_not
function M.read(root, version)
  local rel = M.relpath(version)
  local f = io.open(root .. "/" .. rel, "rb")
  if not f then
    return nil, ("this plugin version (v%s) pins no prebuilt assets (%s is absent)"):format(version, rel)
  end
  local text = f:read(1024 * 1024) or ""
  f:close()
  local by_name, n = {}, 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    line = line:gsub("\r$", "")
    if line:find("%S") and not line:find("^%s*#") then
      local hex, name = line:match("^(%x+) [ *](%S+)%s*$")
      if not hex or #hex ~= 64 then
        return nil, ('%s line %d is not "<sha256>  <asset name>": the pins are not used'):format(rel, n)
      end
      if by_name[name] and by_name[name] ~= hex:lower() then
        return nil, ("%s pins %s twice, differently: the pins are not used"):format(rel, name)
      end
      by_name[name] = hex:lower()
    end
  end
  return by_name
end

---The pinned SHA-256 of each asset in `names` (kind → file name), or nil and why not.
---@param root string
---@param version string
---@param names table<string, string>
---@return table<string, string>? by_kind, string? why_not
function M.lookup(root, version, names)
  local by_name, why = M.read(root, version)
  if not by_name then
    return nil, why
  end
  local out, kinds = {}, vim.tbl_keys(names)
  table.sort(kinds)
  for _, kind in ipairs(kinds) do
    local name = names[kind]
    if not by_name[name] then
      return nil,
        ("%s pins no %s (no prebuilt asset for this platform in this release)"):format(M.relpath(version), name)
    end
    out[kind] = by_name[name]
  end
  return out
end

return M
