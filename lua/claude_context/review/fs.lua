---@mod claude_context.review.fs The review's file writes: atomic, never through a symlink
---
--- A reject or its undo changes a file of the person's project. The new bytes go to a fresh
--- temporary file in the same directory (created exclusively, mode of the file it replaces),
--- are fsynced, and the temporary file is renamed over the name. A name that is a symlink or
--- not a regular file is refused, so nothing is written through a link.

local M = {}

local uv = vim.uv or vim.loop

---What is at `path` (not following a symlink): "file", "missing", or another kind.
---@param path string
---@return string kind, table? stat
function M.kind(path)
  local st = uv.fs_lstat(path)
  if not st then
    return "missing"
  end
  return st.type, st
end

---The bytes of the regular file `path` (nil and a message otherwise).
---@param path string
---@return string? bytes, string? err
function M.read(path)
  local kind = M.kind(path)
  if kind == "missing" then
    return nil, "missing"
  elseif kind ~= "file" then
    return nil, ("%s is a %s, not a regular file"):format(path, kind)
  end
  local fd, err = uv.fs_open(path, "r", 0)
  if not fd then
    return nil, err
  end
  local parts = {}
  while true do
    local chunk, rerr = uv.fs_read(fd, 1048576)
    if not chunk then
      uv.fs_close(fd)
      return nil, rerr
    end
    if chunk == "" then
      break
    end
    parts[#parts + 1] = chunk
  end
  uv.fs_close(fd)
  return table.concat(parts)
end

---Writes all of `text` to the open file `fd`.
local function write_all(fd, text)
  local off = 0
  while off < #text do
    local n, err = uv.fs_write(fd, text:sub(off + 1), off)
    if not n then
      return false, err
    end
    off = off + n
  end
  return true
end

---Whether `path`'s directory, all links resolved, is inside `root` (resolved too): a
---directory on the way that is a symlink out of the project is refused.
---@param path string
---@param root string?
---@return boolean ok, string? err
function M.inside(path, root)
  if not root then
    return true
  end
  local dir = uv.fs_realpath(vim.fs.dirname(path))
  local r = uv.fs_realpath(root)
  if not (dir and r) or not (dir == r or vim.startswith(dir, r .. "/")) then
    return false, ("%s is not inside the project %s (a directory on the way is a link): not written"):format(path, root)
  end
  return true
end

---Writes `text` to `path` atomically. `opts.new`: the file must not exist (else it must be a
---regular file, whose mode is kept). `opts.root`: the file's directory must be inside it.
---@param path string
---@param text string
---@param opts {new?:boolean, root?:string}?
---@return boolean ok, string? err
function M.write(path, text, opts)
  opts = opts or {}
  local inside, ierr = M.inside(path, opts.root)
  if not inside then
    return false, ierr
  end
  local kind, st = M.kind(path)
  if opts.new and kind ~= "missing" then
    return false, ("%s exists"):format(path)
  elseif not opts.new and kind ~= "file" then
    return false, kind == "missing" and ("%s is gone"):format(path) or ("%s is a %s, not a regular file: not written"):format(path, kind)
  end
  local mode = st and bit.band(st.mode, 4095) or 420
  local dir = vim.fs.dirname(path)
  local base = vim.fs.basename(path)
  local tmp, fd, err
  for _ = 1, 10 do
    tmp = ("%s/.%s.cc-review-%d-%d"):format(dir, base, uv.os_getpid(), math.random(1, 2 ^ 30))
    fd, err = uv.fs_open(tmp, "wx", mode)
    if fd then
      break
    end
  end
  if not fd then
    return false, ("cannot create a temporary file in %s: %s"):format(dir, tostring(err))
  end
  local ok, werr = write_all(fd, text)
  if ok then
    ok, werr = uv.fs_fsync(fd)
  end
  uv.fs_close(fd)
  if ok then
    -- fs_open's mode is masked by the umask: give the file the old one exactly.
    uv.fs_chmod(tmp, mode)
    if opts.new and M.kind(path) ~= "missing" then
      ok, werr = false, ("%s appeared meanwhile"):format(path)
    else
      ok, werr = uv.fs_rename(tmp, path)
    end
  end
  if not ok then
    uv.fs_unlink(tmp)
    return false, ("cannot write %s: %s"):format(path, tostring(werr))
  end
  return true
end

---Removes the regular file `path` (a symlink or anything else is refused; `root`: as for
---|M.write|).
---@param path string
---@param root string?
---@return boolean ok, string? err
function M.remove(path, root)
  local inside, ierr = M.inside(path, root)
  if not inside then
    return false, ierr
  end
  local kind = M.kind(path)
  if kind ~= "file" then
    return false, kind == "missing" and ("%s is gone"):format(path) or ("%s is a %s: not removed"):format(path, kind)
  end
  local ok, err = uv.fs_unlink(path)
  if not ok then
    return false, ("cannot remove %s: %s"):format(path, tostring(err))
  end
  return true
end

return M
