---@mod claude_context.small_file Reading a small file that may not be one
---
--- Files the plugin reads on the main thread that a repository or another program controls
--- (git's refs, Claude Code's settings): opened without waiting (a FIFO put there never holds
--- the editor), then the open descriptor checked (a regular file, at most `max` bytes) and read.

local M = {}

---The bytes of the regular file at `path` (at most `max`, default 1 MiB; a larger file is
---refused, or with `prefix` its first `max` bytes are read), or nil and why not.
---@param path string
---@param max integer?
---@param prefix boolean?
---@return string? bytes, string? err
function M.read(path, max, prefix)
  max = max or 1024 * 1024
  local uv = vim.uv or vim.loop
  local c = uv.constants
  local fd, oerr = uv.fs_open(path, bit.bor(c.O_RDONLY, c.O_NONBLOCK or 0), 0)
  if not fd then
    return nil, tostring(oerr)
  end
  local st = uv.fs_fstat(fd)
  local data, why
  if not st or st.type ~= "file" then
    why = "not a regular file"
  elseif st.size > max and not prefix then
    why = ("larger than %d bytes"):format(max)
  else
    data = uv.fs_read(fd, math.min(st.size, max), 0)
    why = not data and "unreadable" or nil
  end
  uv.fs_close(fd)
  return data, why
end

return M
