---@mod claude_context.code.load A file loaded into a hidden buffer without blocking the editor
---
--- The file is read off the main thread (libuv's thread pool, a chunk at a time) and each
--- chunk's lines appended to the buffer in a slice of its own; then its `BufReadPost`
--- autocommands run (filetype detection), as when a buffer is read, and the person's servers
--- already running for that filetype and root are attached (else `FileType` runs: the person's
--- LSP set-up decides). Installed as methods of the request tasks (claude_context.code.task).

local L = {}

local unpack = unpack or table.unpack ---@diagnostic disable-line: deprecated

local function pack(...)
  return { n = select("#", ...), ... }
end

---Adds `fs` and `fill` to `Task`; `M` is claude_context.code.task.
function L.install(Task, M)
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

  ---Loads `buf` with the text of `path` without blocking the editor: the file is read off the
  ---main thread (libuv's thread pool) a chunk at a time and each chunk's lines appended in its
  ---own slice; the buffer is not modifiable meanwhile. Then its `BufReadPost` autocommands run
  ---(filetype detection, the person's LSP set-up), as when a buffer is read. No swap file.
  ---Returns (true) or (nil, err); a partly filled buffer is unloaded by `release`.
  function Task:fill(buf, path)
    local uv = vim.uv
    -- Loaded empty: the buffer-local BufReadCmd takes the place of reading the file.
    vim.bo[buf].swapfile = false
    vim.api.nvim_create_autocmd("BufReadCmd", { buffer = buf, once = true, callback = function() end })
    local ok, err = pcall(vim.fn.bufload, buf)
    if not ok then
      return nil, err
    end
    M.loading[buf] = true
    M.hidden[buf].loading = true
    M.hidden[buf].filler = self
    pcall(vim.api.nvim_exec_autocmds, "BufReadPre", { buffer = buf, modeline = false })
    local modifiable = vim.bo[buf].modifiable
    local dos, noeol, bomb = nil, false, false
    vim.bo[buf].undolevels = -1
    vim.bo[buf].modifiable = false
    local function finish(ok2, e)
      M.loading[buf] = nil
      if self.fds then
        for fd in pairs(self.fds) do
          pcall(uv.fs_close, fd)
        end
        self.fds = nil
      end
      if not vim.api.nvim_buf_is_valid(buf) then
        return nil, "the buffer was closed while it was loading"
      end
      vim.bo[buf].modifiable = modifiable
      vim.bo[buf].undolevels = -123456
      if not ok2 then
        return nil, e
      end
      if dos then
        vim.bo[buf].fileformat = "dos"
      end
      vim.bo[buf].endofline = not noeol
      vim.bo[buf].bomb = bomb
      vim.bo[buf].modified = false
      if M.hidden[buf] then
        M.hidden[buf].loading = nil
      end
      -- The person's autocommands: BufReadPost (filetype detection) with FileType held back,
      -- in a slice of its own. Then the servers: those already running for this filetype
      -- and a root holding the file are attached directly (what FileType would do through
      -- the person's set-up, at a fraction of the cost, and nobody sees this buffer's syntax
      -- or ftplugins); with none, FileType runs (their set-up decides), in its own slice.
      local ei = vim.o.eventignore
      vim.o.eventignore = (ei == "" and "" or ei .. ",") .. "FileType"
      local aok = pcall(vim.api.nvim_exec_autocmds, "BufReadPost", { buffer = buf })
      vim.o.eventignore = ei
      self:yield()
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
        self:yield()
        return true
      end
      for _, c in ipairs(running) do
        pcall(vim.lsp.buf_attach_client, buf, c.id)
        self:check_slice()
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
    -- Non-blocking open: a FIFO put in the file's place is refused, never waited on.
    local oerr, fd = self:fs(uv.fs_open, path, uv.constants.O_RDONLY + (uv.constants.O_NONBLOCK or 0), 0)
    if not fd then
      return finish(false, oerr)
    end
    self.fds = { [fd] = true }
    local serr, st = self:fs(uv.fs_fstat, fd)
    if not st or st.type ~= "file" then
      return finish(false, serr or "not a regular file")
    end
    local offset, first = 0, true
    local carry = {}
    local function append(lines)
      if self.done or not vim.api.nvim_buf_is_valid(buf) then
        return
      end
      vim.bo[buf].modifiable = true
      vim.api.nvim_buf_set_lines(buf, first and 0 or -1, -1, false, lines)
      vim.bo[buf].modifiable = false
      first = false
    end
    while not self.done do
      local rerr, data = self:fs(uv.fs_read, fd, M.read_chunk, offset)
      if rerr then
        return finish(false, rerr)
      end
      if self.done then
        break
      end
      if not data or data == "" then
        break
      end
      if offset == 0 and data:sub(1, 3) == "\239\187\191" then
        data = data:sub(4)
        bomb = true
      end
      offset = offset + #data
      if offset > M.max_file_bytes then
        return finish(false, ("too large to load (over %d bytes)"):format(M.max_file_bytes))
      end
      local lines, pos = {}, 1
      while true do
        local nl = data:find("\n", pos, true)
        if not nl then
          break
        end
        carry[#carry + 1] = data:sub(pos, nl - 1)
        local line = table.concat(carry)
        carry = {}
        if dos == nil then
          dos = line:sub(-1) == "\r"
        end
        if dos and line:sub(-1) == "\r" then
          line = line:sub(1, -2)
        end
        lines[#lines + 1] = line
        pos = nl + 1
      end
      if pos <= #data then
        carry[#carry + 1] = data:sub(pos)
      end
      if #lines > 0 then
        append(lines)
      end
      self:check_slice()
    end
    if self.done then
      return finish(false, "cancelled")
    end
    local rest = table.concat(carry)
    if rest ~= "" then
      append({ rest })
      noeol = true
    end
    return finish(true)
  end
end

return L
