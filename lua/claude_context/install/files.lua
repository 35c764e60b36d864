---@mod claude_context.install.files Reading, writing atomically and installing by rename

local M = {}

local uv = vim.uv or vim.loop

---@return boolean
local function is_windows()
  return vim.fn.has("win32") == 1
end

---@param path string
---@return string? bytes
function M.read(path)
  local f = io.open(path, "rb")
  if not f then
    return nil
  end
  local s = f:read("*a")
  f:close()
  return s
end

---Writes `text` to `path` atomically (a temporary file in the same directory, then rename): the
---plugin's one atomic write of a file of its own.
---@param path string
---@param text string
---@param mode integer? the new file's mode (default 0666, less the umask)
---@return boolean ok, string? err
function M.write_atomic(path, text, mode)
  local tmp = ("%s.tmp-%d"):format(path, uv.os_getpid())
  local fd, err = uv.fs_open(tmp, "w", mode or tonumber("666", 8))
  if not fd then
    return false, err
  end
  local wrote, werr = uv.fs_write(fd, text, 0)
  uv.fs_close(fd)
  local ok, rerr = wrote, werr
  if wrote then
    ok, rerr = uv.fs_rename(tmp, path)
  end
  if not ok then
    os.remove(tmp)
    return false, rerr
  end
  return true
end

---Moves `src` to `dest` by rename. A file already at `dest` is never written over in place: on
---Unix the rename replaces the name (a Neovim that mapped the old library keeps its inode); on
---Windows, where a loaded DLL cannot be replaced, the old one is first renamed away
---(`<dest>.old-<time>`, removed on a later install when nothing maps it any more).
---@param src string
---@param dest string
---@return boolean ok, string? err
function M.install_file(src, dest)
  if is_windows() and uv.fs_stat(dest) then
    local old = ("%s.old-%d"):format(dest, os.time())
    local ok, err = uv.fs_rename(dest, old)
    if not ok then
      return false, ("cannot move the old %s away: %s"):format(dest, tostring(err))
    end
  end
  local ok, err = uv.fs_rename(src, dest)
  if not ok then
    return false, ("cannot rename %s to %s: %s"):format(src, dest, tostring(err))
  end
  return true
end

---Removes leftovers of earlier installs (`*.old-*` no longer mapped, temporary files).
---@param dir string
function M.sweep(dir)
  for name, kind in vim.fs.dir(dir) do
    if kind == "file" and (name:find("%.old%-%d+$") or name:find("%.part$")) then
      os.remove(dir .. "/" .. name)
    end
  end
end

return M
