---@mod claude_context.code.buffers The files a code-intelligence request reads, in hidden buffers
---
--- A file no buffer holds is loaded out of sight for the time of a request
--- (claude_context.code.task), without blocking the editor: read off the main thread a chunk at
--- a time, each chunk's lines appended in a slice of its own, then the person's servers attached.
--- Several requests share a hidden buffer; the last one done unloads it, unless the person has
--- shown, changed or listed it meanwhile.

local M = {}

---How long to wait for a server to attach to a file loaded out of sight (ms), when a running
---server handles its filetype; when none does, only `quick_attach_ms`.
M.attach_timeout_ms = 5000
M.quick_attach_ms = 300

---The largest file loaded into a hidden buffer.
M.max_file_bytes = 8 * 1024 * 1024

---Hidden buffers loaded by requests: buf -> { users = n, created = bool }.
M.hidden = {}

---How much of a file one read takes (bytes); each read is one slice of the fill (its lines
---appended: a 64 KiB piece took 0.7–1.3 ms of the main thread, BENCHMARKS.md "Shorter slices").
M.read_chunk = 32 * 1024

---Hidden buffers being filled: buf -> true (another request waits for the fill to end).
M.loading = {}

---The requests waiting for a fill to end: buf -> their callbacks (`M.get`).
M.waiting = {}

---The fill of `buf` has ended (done, failed, cancelled or left): the requests waiting for it go on.
local function fill_ended(buf)
  M.loading[buf] = nil
  local cbs = M.waiting[buf]
  M.waiting[buf] = nil
  for _, cb in ipairs(cbs or {}) do
    cb()
  end
end

---The buffer holding `path`, if any (by name, then by real path: claude_context.ide.util's, which
---resolves only the buffers whose file name matches, never one per buffer).
---@param path string
---@return integer?
function M.find_buf(path)
  return require("claude_context.ide.util").find_buf(path)
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
  fill_ended(buf)
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

---What a task ends with: its files closed, and the hidden buffers it used released (a fill it
---left halfway ends: the requests waiting for it go on, and one of them loads the file anew).
function M.release_all(task)
  for fd in pairs(task.fds or {}) do
    pcall(vim.uv.fs_close, fd)
  end
  task.fds = nil
  local bufs, left = task.bufs, {}
  task.bufs = {}
  for buf in pairs(bufs) do
    -- A fill this task left halfway: ended now; the requests waiting for it go on once the
    -- buffer is released (unloaded, when half filled: one of them loads the file anew).
    local h = M.hidden[buf]
    if h and h.filler == task and (h.loading or M.loading[buf]) then
      M.loading[buf] = nil
      left[#left + 1] = buf
    end
  end
  vim.schedule(function()
    for buf in pairs(bufs) do
      M.release(buf)
    end
    for _, buf in ipairs(left) do
      fill_ended(buf)
    end
  end)
end

-- Loading a file into a hidden buffer without blocking the editor: the file is read off the
-- main thread (libuv's thread pool, a chunk at a time) and each chunk's lines appended to the
-- buffer in a slice of its own; then its `BufReadPost` autocommands run (filetype detection),
-- as when a buffer is read, and the person's servers already running for that filetype and root
-- are attached (else `FileType` runs: the person's LSP set-up decides).

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
  -- (The read's last piece ended the slice before: these autocommands are Neovim's and the
  -- person's, and take what they take.)
  task:yield()
  if not vim.api.nvim_buf_is_valid(buf) then
    return nil, "the buffer was closed while it was loading"
  end
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
  fill_ended(buf)
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
local function fill(task, buf, path)
  local uv = vim.uv
  -- The load and the person's `BufReadPre` autocommands take a slice of their own, not the end of
  -- whatever found the file; meanwhile another request waits for this fill (`M.get`).
  M.loading[buf] = true
  M.hidden[buf].filler = task
  task:yield()
  if task.done or not vim.api.nvim_buf_is_valid(buf) then
    fill_ended(buf)
    return nil, task.done and "cancelled" or "the buffer was closed while it was loading"
  end
  local st, berr = begin_fill(task, buf)
  if not st then
    return nil, berr
  end
  -- Non-blocking open: a FIFO put in the file's place is refused, never waited on.
  local oerr, fd = task:fs(uv.fs_open, path, uv.constants.O_RDONLY + (uv.constants.O_NONBLOCK or 0), 0)
  if not fd then
    return end_fill(task, buf, path, st, false, oerr)
  end
  task.fds = { [fd] = true }
  local serr, stat = task:fs(uv.fs_fstat, fd)
  if not stat or stat.type ~= "file" then
    return end_fill(task, buf, path, st, false, serr or "not a regular file")
  end
  local ok, rerr = read_all(task, buf, fd, st)
  return end_fill(task, buf, path, st, ok, rerr)
end

---`task` uses the hidden buffer `buf` too (once).
local function share(task, buf)
  local h = M.hidden[buf]
  if h and not task.bufs[buf] then
    h.users = h.users + 1
    task.bufs[buf] = true
  end
end

---The buffer holding `path` for `task`, loaded out of sight when no buffer holds it (then
---unloaded when the task ends). Returns (buf, err).
function M.get(task, path)
  local buf = M.find_buf(path)
  if buf and M.loading[buf] then
    -- Another request is filling it: shared, and complete before it is asked. (Its request
    -- cancelled before the load began: this one loads it.)
    share(task, buf)
    while M.loading[buf] and not task.done do
      -- Woken when the fill ends (`fill_ended`), not by polling.
      task:await(function(cb)
        M.waiting[buf] = M.waiting[buf] or {}
        table.insert(M.waiting[buf], cb)
      end)
    end
    if task.done then
      return nil, "cancelled"
    end
    buf = vim.api.nvim_buf_is_valid(buf) and buf or M.find_buf(path)
  end
  if buf and vim.api.nvim_buf_is_loaded(buf) then
    share(task, buf)
    local h = M.hidden[buf]
    if h and h.loading then
      -- Filled in part: its fill failed.
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
  if not M.hidden[buf] then
    M.hidden[buf] = { users = 0, created = created, listed = vim.bo[buf].buflisted }
    -- A fill this task waited for was left halfway and its buffer released: this task's use
    -- counted there; it counts in the new one.
    task.bufs[buf] = nil
  end
  share(task, buf)
  if not vim.api.nvim_buf_is_loaded(buf) then
    -- Read off the main thread and filled a slice at a time (`fill`).
    local ok, err = fill(task, buf, path)
    if not ok then
      return nil, ("cannot load %s: %s"):format(path, err)
    end
  end
  return buf
end

---The clients attached to `buf` (waiting, in `task`, for one to attach to a buffer just loaded).
---@return vim.lsp.Client[] clients
function M.clients(task, buf)
  local clients = vim.lsp.get_clients({ bufnr = buf })
  if #clients > 0 or not M.hidden[buf] then
    return clients
  end
  local limit = served(vim.bo[buf].filetype) and M.attach_timeout_ms or M.quick_attach_ms
  local waited = 0
  while waited < limit and not task.done do
    task:sleep(25)
    waited = waited + 25
    clients = vim.lsp.get_clients({ bufnr = buf })
    if #clients > 0 then
      return clients
    end
  end
  return clients
end

return M
