---@mod claude_context.util.small_file Reading a file that may not be a regular one, capped
---
--- Files the plugin reads on the main thread that a repository, Claude or another program
--- controls (git's refs, Claude Code's settings, the old file of an `openDiff`): opened without
--- waiting (a FIFO put there never holds the editor), then the open descriptor checked (a regular
--- file, at most `max` bytes) and read to its end, never more than `max` bytes whatever its size
--- said (it may grow meanwhile).

local M = {}

local uv = vim.uv or vim.loop

---How much one read takes.
local CHUNK = 1024 * 1024

---Reads `fd` from its start to its end or past `limit` bytes; returns (text) or (nil, err).
local function read_to(fd, limit)
  local parts, total = {}, 0
  while total <= limit do
    local chunk, rerr = uv.fs_read(fd, math.min(CHUNK, limit + 1 - total), total)
    if not chunk then
      return nil, tostring(rerr)
    end
    if chunk == "" then
      break
    end
    parts[#parts + 1] = chunk
    total = total + #chunk
  end
  return table.concat(parts)
end

---The bytes of the regular file at `path` (at most `max`, default 1 MiB; a larger file is
---refused, or with `prefix` its first `max` bytes are read), or nil, why not and, when the file
---was opened, what it was judged by (its `fstat`, or the size it grew to): `{ type, size }`.
---@param path string
---@param max integer?
---@param prefix boolean?
---@param nofollow boolean? a symbolic link at `path` is refused: nothing is read unless `path`
---itself (lstat) is the regular file that was opened (luv has no O_NOFOLLOW)
---@return string? bytes, string? err, {type:string, size:integer}? judged
function M.read(path, max, prefix, nofollow)
  max = max or 1024 * 1024
  local c = uv.constants
  local fd, oerr = uv.fs_open(path, bit.bor(c.O_RDONLY, c.O_NONBLOCK or 0, c.O_NOCTTY or 0), 0)
  if not fd then
    return nil, tostring(oerr)
  end
  local st, serr = uv.fs_fstat(fd)
  local l = nofollow and st and uv.fs_lstat(path)
  local data, why
  if not st then
    why = tostring(serr)
  elseif nofollow and not (l and l.type == "file" and l.ino == st.ino and l.dev == st.dev) then
    why = "a symbolic link, not followed"
  elseif st.type ~= "file" then
    why = "not a regular file"
  elseif st.size > max and not prefix then
    why = ("larger than %d bytes"):format(max)
  else
    data, why = read_to(fd, max)
    if data and #data > max then
      if prefix then
        data = data:sub(1, max)
      else
        -- A stand-in stat for the over-size read: only its type and size are read.
        ---@diagnostic disable-next-line: missing-fields
        st, data, why = { type = "file", size = #data }, nil, ("larger than %d bytes"):format(max)
      end
    end
  end
  uv.fs_close(fd)
  return data, why, st
end

return M
