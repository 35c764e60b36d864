---@mod claude_context.install.verify Vouching for a library: its pinned checksum, then a load check
---
--- The order matters: a downloaded file is compared with the checksum the plugin pins before
--- anything runs its code; only then does a child Neovim load it to check that it initialises
--- and reports the expected version.

local M = {}

local proc = require("claude_context.install.proc")
local sha256 = require("claude_context.install.sha256")

---Milliseconds allowed for the child Neovim that checks a library.
M.CHECK_TIMEOUT_MS = 20000

---Whether the file at `path` has the pinned SHA-256 `want`.
---@param path string
---@param name string the asset's name, for the message
---@param want string lowercase hex
---@return string? got, string? err
function M.against_pin(path, name, want)
  local got, herr = sha256.file(path)
  if not got then
    return nil, herr
  end
  if got ~= want then
    return nil, ("checksum mismatch for %s: the plugin pins %s, the download is %s (refused)"):format(name, want, got)
  end
  return got
end

---Checks a library in a child Neovim (`check_native.lua` loads it and asks its version).
---@param script string path of check_native.lua
---@param path string
---@param expected string
---@return boolean ok, string why_or_version
function M.check_library(script, path, expected)
  local r = proc.run({ vim.v.progpath, "--clean", "--headless", "-l", script, path }, { timeout = M.CHECK_TIMEOUT_MS })
  local out = vim.trim((r.stdout or "") .. "\n" .. (r.stderr or ""))
  local ver = out:match("version (%S+)")
  if r.code ~= 0 or not ver then
    local why = out:match("error ([^\n]+)") or ("the check exited with %s: %s"):format(tostring(r.code), out)
    return false, why
  end
  if ver ~= expected then
    return false, ("it reports version %s, but this plugin is %s"):format(ver, expected)
  end
  return true, ver
end

return M
