---@mod claude_context.review.fs The review's file writes: atomic, never through a symlink
---
--- A reject or its undo changes a file of the person's project. The new bytes go to a fresh
--- temporary file in the same directory (created exclusively, mode of the file it replaces),
--- are fsynced, and the temporary file is renamed over the name. A name that is a symlink or
--- not a regular file is refused, so nothing is written through a link. `write_async` does the
--- checks at once, and the temporary file, write, fsync and rename on libuv's thread pool, so
--- the editor never waits for the disk; while it is under way, `read` gives
--- the text being written (later writes of the same file wait for it, the last text wins).

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
---Writes under way: path -> { latest = text, cbs = {…}, next = { text, opts, cbs }? }.
local inflight = {}

---@param path string
---@return string? bytes, string? err
function M.read(path)
  if inflight[path] then
    return inflight[path].latest
  end
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

---Project roots, resolved.
local real_roots = {}

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
  -- The project root itself is the person's (resolved once).
  local r = real_roots[root] or uv.fs_realpath(root)
  real_roots[root] = r
  if not (dir and r) or not (dir == r or vim.startswith(dir, r .. "/")) then
    return false, ("%s is not inside the project %s (a directory on the way is a link): not written"):format(path, root)
  end
  return true
end

---The checks of a write and its temporary file: `{ tmp, fd, mode }` (`opts.checks_only`: only
---`{ mode }`), or nil and a message.
---@return {tmp:string, fd:integer, mode:integer}? job, string? err
local function prepare(path, opts)
  local inside, ierr = M.inside(path, opts.root)
  if not inside then
    return nil, ierr
  end
  local kind, st = M.kind(path)
  if opts.new and kind ~= "missing" then
    return nil, ("%s exists"):format(path)
  elseif not opts.new and kind ~= "file" then
    return nil, kind == "missing" and ("%s is gone"):format(path) or ("%s is a %s, not a regular file: not written"):format(path, kind)
  end
  local mode = st and bit.band(st.mode, 4095) or 420
  if opts.checks_only then
    return { mode = mode }
  end
  local dir = vim.fs.dirname(path)
  local tmp, fd, err
  for _ = 1, 10 do
    tmp = M.tmp_name(path)
    fd, err = uv.fs_open(tmp, "wx", mode)
    if fd then
      break
    end
  end
  if not fd then
    return nil, ("cannot create a temporary file in %s: %s"):format(dir, tostring(err))
  end
  return { tmp = tmp, fd = fd, mode = mode }
end

---A fresh temporary name beside `path`.
---@param path string
---@return string
function M.tmp_name(path)
  return ("%s/.%s.cc-review-%d-%d"):format(vim.fs.dirname(path), vim.fs.basename(path), uv.os_getpid(), math.random(1, 2 ^ 30))
end

---Writes `text` to `path` atomically. `opts.new`: the file must not exist (else it must be a
---regular file, whose mode is kept). `opts.root`: the file's directory must be inside it.
---@param path string
---@param text string
---@param opts {new?:boolean, root?:string}?
---@return boolean ok, string? err
function M.write(path, text, opts)
  opts = opts or {}
  M.flush(path)
  local job, perr = prepare(path, opts)
  if not job then
    return false, perr
  end
  local tmp, fd, mode = job.tmp, job.fd, job.mode
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

---Runs the slow part of write `job` on the thread pool; `done(ok, err)` on the main thread.
local function run(path, text, job, done)
  local function fail(err)
    if job.fd then
      pcall(uv.fs_close, job.fd)
    end
    if job.tmp then
      uv.fs_unlink(job.tmp)
    end
    vim.schedule(function()
      done(false, ("cannot write %s: %s"):format(path, tostring(err)))
    end)
  end
  local function write_from(off)
    uv.fs_write(job.fd, text:sub(off + 1), off, function(err, n)
      if err then
        return fail(err)
      end
      if off + n < #text then
        return write_from(off + n)
      end
      uv.fs_fsync(job.fd, function(ferr)
        if ferr then
          return fail(ferr)
        end
        uv.fs_close(job.fd, function()
          uv.fs_chmod(job.tmp, job.mode, function()
            uv.fs_rename(job.tmp, path, function(rerr)
              if rerr then
                uv.fs_unlink(job.tmp)
              end
              vim.schedule(function()
                done(not rerr, rerr and ("cannot write %s: %s"):format(path, tostring(rerr)) or nil)
              end)
            end)
          end)
        end)
      end)
    end)
  end
  -- The temporary file is created exclusively (a new name on a clash, 10 tries).
  local tries = 0
  local function open()
    tries = tries + 1
    local tmp = M.tmp_name(path)
    uv.fs_open(tmp, "wx", job.mode, function(err, fd)
      if not fd then
        if tries < 10 then
          return open()
        end
        return fail(("cannot create a temporary file: %s"):format(tostring(err)))
      end
      job.tmp, job.fd = tmp, fd
      write_from(0)
    end)
  end
  open()
end

local leave_installed = false

---Like |M.write| (an existing regular file), the disk work on libuv's thread pool: the checks
---now (false and a message when they fail), then the temporary file, write, fsync and rename;
---`cb(ok, err)` on the main thread once the file is renamed into place. Writes of one path go one after the other; a
---write asked for while one is under way waits, and of several waiting only the last is done
---(each text is the whole file: the last one holds the others' changes).
---@param path string
---@param text string
---@param opts {root?:string}?
---@param cb fun(ok:boolean, err?:string)
---@return boolean ok, string? err
function M.write_async(path, text, opts, cb)
  opts = opts or {}
  local cur = inflight[path]
  if cur then
    cur.latest = text
    cur.next = cur.next or { opts = opts, cbs = {} }
    cur.next.text = text
    table.insert(cur.next.cbs, cb)
    return true
  end
  local job, err = prepare(path, { root = opts.root, checks_only = true })
  if not job then
    return false, err
  end
  if not leave_installed then
    leave_installed = true
    vim.api.nvim_create_autocmd("VimLeavePre", {
      callback = function()
        M.flush()
      end,
      desc = "claude-context: finish the review's file writes",
    })
  end
  local entry = { latest = text, cbs = { cb } }
  inflight[path] = entry
  local function done(ok, werr)
    local nxt = entry.next
    inflight[path] = nil
    -- The next write starts first, so that these callbacks see it under way.
    if nxt then
      local started, serr = M.write_async(path, nxt.text, nxt.opts, function(ok2, err2)
        for _, f in ipairs(nxt.cbs) do
          f(ok2, err2)
        end
      end)
      if not started then
        for _, f in ipairs(nxt.cbs) do
          f(false, serr)
        end
      end
    end
    for _, f in ipairs(entry.cbs) do
      f(ok, werr)
    end
  end
  run(path, text, job, done)
  return true
end

---Whether no write is under way (of `path`, or of any file).
---@param path string?
---@return boolean
function M.idle(path)
  if path then
    return inflight[path] == nil
  end
  return next(inflight) == nil
end

---Waits (at most `ms`, default 5000) until the writes under way (of `path`, or all) are done.
---@param path string?
---@param ms integer?
function M.flush(path, ms)
  if M.idle(path) then
    return
  end
  vim.wait(ms or 5000, function()
    return M.idle(path)
  end, 5)
end

---Removes the regular file `path` (a symlink or anything else is refused; `root`: as for
---|M.write|).
---@param path string
---@param root string?
---@return boolean ok, string? err
function M.remove(path, root)
  M.flush(path)
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
