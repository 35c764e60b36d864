---@mod claude_context.code.task One code-intelligence request, run as a coroutine
---
--- A tool's handler runs as a coroutine that waits for the language servers' callbacks (never
--- for the servers themselves: the editor keeps running). What it set up is tracked so that a
--- cancellation (`notifications/cancelled`, the client gone) or the end of the request undoes
--- it: the LSP requests still running are cancelled (`$/cancelRequest`), timers stopped, and the
--- hidden buffers it loaded are unloaded.

local M = {}

---How long one LSP request may take (ms).
M.request_timeout_ms = 10000
---How long to wait for a server to attach to a file loaded out of sight (ms), when a running
---server handles its filetype; when none does, only `quick_attach_ms`.
M.attach_timeout_ms = 5000
M.quick_attach_ms = 300
---The main-thread budget of one slice of work (ms).
M.slice_ms = 2
---The largest file loaded into a hidden buffer.
M.max_file_bytes = 8 * 1024 * 1024

---Hidden buffers loaded by requests: buf -> { users = n, created = bool }.
M.hidden = {}
---The longest single run of a task's coroutine on the main thread, for the bench: wall time
---(ns) and the process's CPU time (s; what the run cost, without the waits of a busy machine).
M.longest_slice_ns = 0
M.longest_slice_cpu_s = 0

---For the bench: set to a list, it gets every slice over `slice_ms` with where it ended.
M.slow_slices = nil

local Task = {}
Task.__index = Task

local unpack = unpack or table.unpack ---@diagnostic disable-line: deprecated

local function pack(...)
  return { n = select("#", ...), ... }
end

---The buffer holding `path`, if any (by name, then by real path).
---@param path string
---@return integer?
function M.find_buf(path)
  local real = vim.uv.fs_realpath(path) or path
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(b)
    if name ~= "" and (name == path or name == real or vim.uv.fs_realpath(name) == real) then
      return b
    end
  end
end

---Whether `path` lies under one of `roots` once its symlinks are resolved.
---@param path string
---@param roots string[]?
function M.inside(path, roots)
  local real = vim.uv.fs_realpath(path)
  if not real or not roots then
    return false
  end
  for _, r in ipairs(roots) do
    if real == r or vim.startswith(real, r:gsub("/+$", "") .. "/") then
      return true
    end
  end
  return false
end

---Runs `fn(task)` as a coroutine; `respond` gets what it returns (or its error). Returns the
---cancel function for rpc.lua.
---@param fn fun(task: table): any
---@param respond fun(result: any, err: string?)
---@return fun()
function M.run(fn, respond)
  local task = setmetatable({ requests = {}, timers = {}, bufs = {}, done = false }, Task)
  local co
  local function finish(result, err)
    if task.done then
      return
    end
    task.done = true
    task:cleanup()
    respond(result, err)
  end
  co = coroutine.create(function()
    local ok, result, err = xpcall(fn, debug.traceback, task)
    if not ok then
      finish(nil, tostring(result))
    else
      finish(result, err)
    end
  end)
  task.resume = function(...)
    if task.done or coroutine.status(co) ~= "suspended" then
      return
    end
    local t0, c0 = vim.uv.hrtime(), os.clock()
    local ok, err = coroutine.resume(co, ...)
    local took, cpu = vim.uv.hrtime() - t0, os.clock() - c0
    if took > M.longest_slice_ns then
      M.longest_slice_ns = took
    end
    if cpu > M.longest_slice_cpu_s then
      M.longest_slice_cpu_s = cpu
    end
    if M.slow_slices and took > M.slice_ms * 1e6 then
      table.insert(M.slow_slices, { ms = took / 1e6, cpu_ms = cpu * 1000, where = debug.traceback(co) })
    end
    if not ok then
      finish(nil, tostring(err))
    end
  end
  task.started = vim.uv.hrtime()
  task.slice_start = task.started
  vim.schedule(task.resume)
  return function()
    if not task.done then
      task.done = true
      task:cleanup()
    end
  end
end

---Waits for `start(cb)` to call `cb(...)`; returns what it was called with.
function Task:await(start)
  local waiting, sync, result = false, false, nil
  start(function(...)
    if waiting then
      waiting = false
      local args = pack(...)
      -- Resumed from the event loop, not from inside whatever called back.
      vim.schedule(function()
        self.resume(unpack(args, 1, args.n))
      end)
    else
      sync, result = true, pack(...)
    end
  end)
  if sync then
    return unpack(result, 1, result.n)
  end
  waiting = true
  local r = pack(coroutine.yield())
  self.slice_start = vim.uv.hrtime()
  return unpack(r, 1, r.n)
end

---Sleeps `ms` (lets the editor run).
function Task:sleep(ms)
  self:await(function(cb)
    local t = vim.uv.new_timer()
    self.timers[t] = true
    t:start(ms, 0, function()
      self.timers[t] = nil
      t:close()
      cb()
    end)
  end)
end

---Yields to the event loop.
function Task:yield()
  self:await(function(cb)
    vim.schedule(cb)
  end)
end

---Yields to the event loop when this slice has used its budget (`ms`, default `slice_ms`: a
---caller whose steps are long gives less, so that the slice ends within the budget).
function Task:check_slice(ms)
  if (vim.uv.hrtime() - self.slice_start) / 1e6 >= (ms or M.slice_ms) then
    self:yield()
  end
end

---Sends `method` to `client` for `buf`; returns (err, result). Times out with a message; the
---request is cancelled when the task is.
function Task:request(client, method, params, buf, timeout_ms)
  timeout_ms = timeout_ms or M.request_timeout_ms
  return self:await(function(cb)
    local fired = false
    local id
    local timer = vim.uv.new_timer()
    local function once(err, result)
      if fired then
        return
      end
      fired = true
      if id then
        self.requests[id] = nil
      end
      self.timers[timer] = nil
      if not timer:is_closing() then
        timer:stop()
        timer:close()
      end
      cb(err, result)
    end
    local ok, rid = client:request(method, params, function(err, result)
      once(err and (err.message or vim.inspect(err)) or nil, result)
    end, buf)
    if not ok then
      once(("the language server %s did not take %s (it is shutting down?)"):format(client.name, method))
      return
    end
    id = rid
    if not fired then
      self.requests[id] = client
      self.timers[timer] = true
      timer:start(timeout_ms, 0, function()
        vim.schedule(function()
          if not fired then
            pcall(client.cancel_request, client, id)
            once(
              ("the language server %s did not answer %s within %d s (try again when it has finished indexing)"):format(
                client.name,
                method,
                timeout_ms / 1000
              )
            )
          end
        end)
      end)
    end
  end)
end

---Cancels what is still running and unloads the hidden buffers this task loaded.
function Task:cleanup()
  for id, client in pairs(self.requests) do
    pcall(client.cancel_request, client, id)
  end
  self.requests = {}
  for t in pairs(self.timers) do
    if not t:is_closing() then
      t:stop()
      t:close()
    end
  end
  self.timers = {}
  for fd in pairs(self.fds or {}) do
    pcall(vim.uv.fs_close, fd)
  end
  self.fds = nil
  local bufs = self.bufs
  self.bufs = {}
  for buf in pairs(bufs) do
    -- A fill this task left halfway: the requests waiting for it stop waiting (and fail).
    local h = M.hidden[buf]
    if h and h.loading and h.filler == self then
      M.loading[buf] = nil
    end
  end
  vim.schedule(function()
    for buf in pairs(bufs) do
      M.release(buf)
    end
  end)
end

---A hidden buffer is no longer needed by one request: unloaded when no request uses it, unless
---the person has shown, changed or listed it meanwhile.
function M.release(buf)
  local h = M.hidden[buf]
  if not h then
    return
  end
  h.users = h.users - 1
  -- A half-filled buffer whose fill has ended goes, whoever else still holds it.
  if h.users > 0 and not (h.loading and h.filler and h.filler.done) then
    return
  end
  M.hidden[buf] = nil
  M.loading[buf] = nil
  if not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  if h.loading then
    -- Filled in part (the request was cancelled or the read failed): never kept as it is.
    -- Shown meanwhile: read again from the file, whole; else unloaded.
    vim.bo[buf].modifiable = true
    vim.bo[buf].modified = false
    if #vim.fn.win_findbuf(buf) > 0 then
      pcall(vim.api.nvim_buf_call, buf, function()
        vim.cmd("silent! edit!")
      end)
    elseif h.created then
      pcall(vim.api.nvim_buf_delete, buf, { force = true })
    else
      pcall(vim.api.nvim_buf_delete, buf, { unload = true })
    end
    return
  end
  -- Kept when the person has shown it, changed it or listed it (opened it) meanwhile.
  if #vim.fn.win_findbuf(buf) > 0 or vim.bo[buf].modified or vim.bo[buf].buflisted ~= h.listed then
    return
  end
  if h.created then
    pcall(vim.api.nvim_buf_delete, buf, { force = true })
  else
    pcall(vim.api.nvim_buf_delete, buf, { unload = true })
  end
end

---Whether some running client handles `ft`.
local function served(ft)
  for _, c in ipairs(vim.lsp.get_clients()) do
    local fts = c.config and c.config.filetypes
    if fts == nil or vim.tbl_contains(fts, ft) then
      return true
    end
  end
  return false
end

---Hidden buffers being filled: buf -> true (another request waits for the fill to end).
M.loading = {}

---The buffer holding `path`, loaded out of sight when no buffer holds it (then unloaded when
---the task ends). Returns (buf, err).
function Task:buffer(path)
  local buf = M.find_buf(path)
  if buf and vim.api.nvim_buf_is_loaded(buf) then
    -- Another request's hidden buffer: used by this one too, and complete before it is asked.
    local h = M.hidden[buf]
    if h and not self.bufs[buf] then
      h.users = h.users + 1
      self.bufs[buf] = true
    end
    while M.loading[buf] and not self.done do
      self:sleep(5)
    end
    if (h and h.loading) or not vim.api.nvim_buf_is_loaded(buf) then
      return nil, ("cannot load %s"):format(path)
    end
    return buf
  end
  local st = vim.uv.fs_stat(path)
  if not st then
    return nil, ("%s does not exist"):format(path)
  end
  if st.type ~= "file" then
    return nil, ("%s is not a regular file"):format(path)
  end
  if st.size > M.max_file_bytes then
    return nil, ("%s is too large to load (%d bytes)"):format(path, st.size)
  end
  local created = buf == nil
  buf = buf or vim.fn.bufadd(path)
  local h = M.hidden[buf]
  if h then
    h.users = h.users + 1
  else
    M.hidden[buf] = { users = 1, created = created, listed = vim.bo[buf].buflisted }
  end
  self.bufs[buf] = true
  if not vim.api.nvim_buf_is_loaded(buf) then
    -- Read off the main thread and filled a slice at a time (`Task:fill`).
    local ok, err = self:fill(buf, path)
    if not ok then
      return nil, ("cannot load %s: %s"):format(path, err)
    end
  end
  return buf
end

---The clients attached to `buf` (waiting for one to attach to a buffer just loaded).
---@return table[] clients
function Task:clients(buf)
  local clients = vim.lsp.get_clients({ bufnr = buf })
  if #clients > 0 or not M.hidden[buf] then
    return clients
  end
  local limit = served(vim.bo[buf].filetype) and M.attach_timeout_ms or M.quick_attach_ms
  local waited = 0
  while waited < limit and not self.done do
    self:sleep(25)
    waited = waited + 25
    clients = vim.lsp.get_clients({ bufnr = buf })
    if #clients > 0 then
      return clients
    end
  end
  return clients
end

-- Loading a file into a hidden buffer without blocking the editor: the file is read off the
-- main thread (libuv's thread pool, a chunk at a time) and each chunk's lines appended to the
-- buffer in a slice of its own; then its `BufReadPost` autocommands run (filetype detection),
-- as when a buffer is read, and the person's servers already running for that filetype and root
-- are attached (else `FileType` runs: the person's LSP set-up decides).

---How much of a file one read takes (bytes); each read is one slice of the fill.
M.read_chunk = 64 * 1024

---The running clients for filetype `ft` whose root (or a workspace folder) holds `path`.
function M.running_clients(ft, path)
  local real = vim.uv.fs_realpath(path) or path
  local out = {}
  for _, c in ipairs(vim.lsp.get_clients()) do
    local fts = c.config and c.config.filetypes
    if not (c.is_stopped and c:is_stopped()) and fts and vim.tbl_contains(fts, ft) then
      local roots = {}
      if c.root_dir then
        table.insert(roots, c.root_dir)
      end
      for _, w in ipairs(c.workspace_folders or {}) do
        table.insert(roots, vim.uri_to_fname(w.uri))
      end
      for _, r in ipairs(roots) do
        local rr = (vim.uv.fs_realpath(r) or r):gsub("/+$", "")
        if real == rr or vim.startswith(real, rr .. "/") or vim.startswith(path, r:gsub("/+$", "") .. "/") then
          table.insert(out, c)
          break
        end
      end
    end
  end
  return out
end

---Runs the libuv fs call `fn(..., cb)` and waits for its callback; returns (err, result). An
---error raised at once (before any callback) is returned the same way.
function Task:fs(fn, ...)
  local args = pack(...)
  return self:await(function(cb)
    args[args.n + 1] = cb
    local r, e = fn(unpack(args, 1, args.n + 1))
    if r == nil and e ~= nil then
      cb(e)
    end
  end)
end

---Loaded empty (a buffer-local BufReadCmd takes the place of reading the file), marked as
---loading, not modifiable: the fill's state, or nil and the error.
local function begin_fill(task, buf)
  vim.bo[buf].swapfile = false
  vim.api.nvim_create_autocmd("BufReadCmd", { buffer = buf, once = true, callback = function() end })
  local ok, err = pcall(vim.fn.bufload, buf)
  if not ok then
    return nil, err
  end
  M.loading[buf] = true
  M.hidden[buf].loading = true
  M.hidden[buf].filler = task
  pcall(vim.api.nvim_exec_autocmds, "BufReadPre", { buffer = buf, modeline = false })
  local st = { modifiable = vim.bo[buf].modifiable, dos = nil, noeol = false, bomb = false, carry = {}, first = true }
  vim.bo[buf].undolevels = -1
  vim.bo[buf].modifiable = false
  return st
end

---The person's autocommands for a buffer just read: BufReadPost (filetype detection) with
---FileType held back, in a slice of its own. Then the servers: those already running for this
---filetype and a root holding the file are attached directly (what FileType would do through
---the person's set-up, at a fraction of the cost, and nobody sees this buffer's syntax or
---ftplugins); with none, FileType runs (their set-up decides), in its own slice.
local function after_read(task, buf, path)
  local ei = vim.o.eventignore
  vim.o.eventignore = (ei == "" and "" or ei .. ",") .. "FileType"
  local aok = pcall(vim.api.nvim_exec_autocmds, "BufReadPost", { buffer = buf })
  vim.o.eventignore = ei
  task:yield()
  local ft = aok and vim.api.nvim_buf_is_valid(buf) and vim.bo[buf].filetype or ""
  if ft == "" or ei:lower():find("filetype") or ei:find("all") then
    return true
  end
  local function filetype_autocmds()
    pcall(vim.api.nvim_buf_call, buf, function()
      vim.cmd("doautocmd <nomodeline> FileType " .. vim.fn.fnameescape(ft))
    end)
  end
  local running = M.running_clients(ft, path)
  if #running == 0 then
    filetype_autocmds()
    task:yield()
    return true
  end
  for _, c in ipairs(running) do
    pcall(vim.lsp.buf_attach_client, buf, c.id)
    task:check_slice()
  end
  -- Shown in a window after all (the person opened it meanwhile): FileType then.
  vim.api.nvim_create_autocmd("BufWinEnter", {
    buffer = buf,
    once = true,
    callback = function()
      vim.schedule(filetype_autocmds)
    end,
  })
  return true
end

---Ends a fill: the descriptors closed, the buffer's options back, and on success its line
---endings set and `after_read`. Returns (true) or (nil, err).
local function end_fill(task, buf, path, st, ok, err)
  M.loading[buf] = nil
  if task.fds then
    for fd in pairs(task.fds) do
      pcall(vim.uv.fs_close, fd)
    end
    task.fds = nil
  end
  if not vim.api.nvim_buf_is_valid(buf) then
    return nil, "the buffer was closed while it was loading"
  end
  vim.bo[buf].modifiable = st.modifiable
  vim.bo[buf].undolevels = -123456
  if not ok then
    return nil, err
  end
  if st.dos then
    vim.bo[buf].fileformat = "dos"
  end
  vim.bo[buf].endofline = not st.noeol
  vim.bo[buf].bomb = st.bomb
  vim.bo[buf].modified = false
  if M.hidden[buf] then
    M.hidden[buf].loading = nil
  end
  return after_read(task, buf, path)
end

---Appends `lines` to the filling buffer (the first chunk replaces its one empty line).
local function append(task, buf, st, lines)
  if task.done or not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, st.first and 0 or -1, -1, false, lines)
  vim.bo[buf].modifiable = false
  st.first = false
end

---The whole lines of a chunk read (the part after its last newline waits in `st.carry`); the
---line endings decided by the first line (CR LF: `st.dos`).
local function split_chunk(data, st)
  local lines, pos = {}, 1
  while true do
    local nl = data:find("\n", pos, true)
    if not nl then
      break
    end
    st.carry[#st.carry + 1] = data:sub(pos, nl - 1)
    local line = table.concat(st.carry)
    st.carry = {}
    if st.dos == nil then
      st.dos = line:sub(-1) == "\r"
    end
    if st.dos and line:sub(-1) == "\r" then
      line = line:sub(1, -2)
    end
    lines[#lines + 1] = line
    pos = nl + 1
  end
  if pos <= #data then
    st.carry[#st.carry + 1] = data:sub(pos)
  end
  return lines
end

---Reads `fd` a chunk per slice into the buffer. Returns (true) or (nil, err).
local function read_all(task, buf, fd, st)
  local offset = 0
  while not task.done do
    local rerr, data = task:fs(vim.uv.fs_read, fd, M.read_chunk, offset)
    if rerr then
      return nil, rerr
    end
    if task.done or not data or data == "" then
      break
    end
    if offset == 0 and data:sub(1, 3) == "\239\187\191" then
      data = data:sub(4)
      st.bomb = true
    end
    offset = offset + #data
    if offset > M.max_file_bytes then
      return nil, ("too large to load (over %d bytes)"):format(M.max_file_bytes)
    end
    local lines = split_chunk(data, st)
    if #lines > 0 then
      append(task, buf, st, lines)
    end
    task:check_slice()
  end
  if task.done then
    return nil, "cancelled"
  end
  local rest = table.concat(st.carry)
  if rest ~= "" then
    append(task, buf, st, { rest })
    st.noeol = true
  end
  return true
end

---Loads `buf` with the text of `path` without blocking the editor: the file is read off the
---main thread (libuv's thread pool) a chunk at a time and each chunk's lines appended in its
---own slice; the buffer is not modifiable meanwhile. Then its `BufReadPost` autocommands run
---(filetype detection, the person's LSP set-up), as when a buffer is read. No swap file.
---Returns (true) or (nil, err); a partly filled buffer is unloaded by `release`.
function Task:fill(buf, path)
  local uv = vim.uv
  local st, berr = begin_fill(self, buf)
  if not st then
    return nil, berr
  end
  -- Non-blocking open: a FIFO put in the file's place is refused, never waited on.
  local oerr, fd = self:fs(uv.fs_open, path, uv.constants.O_RDONLY + (uv.constants.O_NONBLOCK or 0), 0)
  if not fd then
    return end_fill(self, buf, path, st, false, oerr)
  end
  self.fds = { [fd] = true }
  local serr, stat = self:fs(uv.fs_fstat, fd)
  if not stat or stat.type ~= "file" then
    return end_fill(self, buf, path, st, false, serr or "not a regular file")
  end
  local ok, rerr = read_all(self, buf, fd, st)
  return end_fill(self, buf, path, st, ok, rerr)
end

return M
