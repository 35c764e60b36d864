---@mod claude_context.install.download Fetching release assets with curl, over https only

local M = {}

local proc = require("claude_context.install.proc")

---Seconds allowed to connect: a missing network is known this fast.
M.CONNECT_TIMEOUT = 5
---Seconds allowed for one asset (a few MB).
M.DOWNLOAD_TIMEOUT = 90
---Redirects followed (the release host redirects once, to its storage).
M.MAX_REDIRS = 5

---Whether `url` may be downloaded from: https only (whatever serves it, the bytes are checked
---against the plugin's pins; https keeps a network attacker from even choosing them).
---@param url string
---@return boolean ok, string? why_not
function M.https_only(url)
  if type(url) == "string" and url:lower():find("^https://[^/]") then
    return true
  end
  return false, ("%s is refused: downloads are https only"):format(tostring(url))
end

---Fetches `url` into `dest` with curl: https only, and a redirect only to https. Returns nil on
---success, else why not (one line); `dest` is removed on failure.
---@param url string
---@param dest string
---@param max_time integer? seconds (default DOWNLOAD_TIMEOUT)
---@return string? err
function M.fetch(url, dest, max_time)
  local ok, why = M.https_only(url)
  if not ok then
    return why
  end
  if vim.fn.executable("curl") ~= 1 then
    return "curl is not installed"
  end
  local r = proc.run({
    "curl",
    "--fail",
    "--silent",
    "--show-error",
    "--location",
    "--max-redirs",
    tostring(M.MAX_REDIRS),
    "--proto",
    "=https",
    "--proto-redir",
    "=https",
    "--connect-timeout",
    tostring(M.CONNECT_TIMEOUT),
    "--max-time",
    tostring(max_time or M.DOWNLOAD_TIMEOUT),
    "--output",
    dest,
    url,
  })
  if r.code == 0 then
    return nil
  end
  os.remove(dest)
  local msg = vim.trim(r.stderr):gsub("\n.*", "")
  if r.code == 22 then
    local status = msg:match("error: (%d%d%d)") or msg:match("(%d%d%d)")
    if status == "404" then
      return ("%s: not found (HTTP 404)"):format(url)
    end
    return ("%s: %s"):format(url, msg)
  elseif r.code == 1 then
    -- CURLE_UNSUPPORTED_PROTOCOL: with --proto-redir, a redirect to http (or anything else).
    return ("%s: refused a redirect away from https (%s)"):format(url, msg)
  elseif r.code == 18 or r.code == 56 then
    return ("%s: the download was truncated (%s)"):format(url, msg)
  elseif r.code == 28 then
    return ("%s: timed out (%s)"):format(url, msg)
  end
  return ("%s: %s"):format(url, msg ~= "" and msg or ("curl exited with " .. r.code))
end

return M
