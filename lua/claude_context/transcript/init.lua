---@mod claude_context.transcript A conversation as a read-only Markdown buffer
---
--- `transcript(id)` returns at once a buffer named `claude-transcript://<id>`: each prompt a
--- heading, Claude's text as written, each tool call one folded line (tool, file:line) that
--- `<CR>` / `gf` opens, its result folded beneath. The conversation file (Claude Code's
--- `projects/<folder>/<id>.jsonl`) is read and rendered off the main thread by the library
--- (`transcript_read`, crates/core/src/transcript/); the lines are put in the buffer in slices.
--- While the file grows (a running session), only the new bytes are read: the buffer grows, and
--- a window whose cursor was on the last line follows it; other windows keep cursor and scroll.

local M = {}

---@class claude_context.TranscriptOpts
---@field path string? The conversation file (else found by the session id)
---@field on_ready fun(buf: integer)? Once the whole file as it was is in

local uv = vim.uv or vim.loop
local notify = require("claude_context.util.notify")

---Lines put in the buffer per slice of the main thread, at most.
M.SLICE_LINES = 2000

---How long one slice may hold the main thread (ms).
M.SLICE_MS = 8

---The first read takes this many bytes (the first screen comes quickly), later ones
---`READ_BYTES` (the library's pieces are each taken in short slices).
M.FIRST_BYTES = 256 * 1024
M.READ_BYTES = 2 * 1024 * 1024

---The URI scheme of transcript buffers.
M.SCHEME = "claude-transcript://"

---A transcript buffer's state.
---@class claude_context.TranscriptState
---@field id string The session id
---@field path string? The conversation file, once found
---@field offset integer Bytes read so far
---@field prompts integer
---@field levels string The fold levels of the lines put so far
---@field links table<integer, {path: string, lnum: integer?}> Line -> the file it names
---@field empty boolean?
---@field reading boolean?
---@field again boolean? Read again once the read under way ends
---@field watcher any? The file's watcher (uv fs_event or poll)
---@field usage claude_context.UsageFigures?
---@field title string?
---@field put integer? Lines put of the current read
---@field ready boolean?
---@field caught_up boolean?
---@field error string?
---@field done_cbs fun(buf: integer)[]

---State by buffer.
---@type table<integer, claude_context.TranscriptState>
M.bufs = {}

local LEVELS = { a = ">1", ["1"] = "1", b = ">2", ["2"] = "2", ["0"] = "0" }

---'foldexpr' of transcript windows.
---@return string
function M.foldexpr()
  local st = M.bufs[vim.api.nvim_get_current_buf()]
  local c = st and st.levels:sub(vim.v.lnum, vim.v.lnum)
  return LEVELS[c] or "0"
end

---'foldtext' of transcript windows: the fold's first line and how many lines it holds.
---@return string
function M.foldtext()
  local first = vim.fn.getline(vim.v.foldstart)
  return ("%s  [%d lines]"):format(first, vim.v.foldend - vim.v.foldstart + 1)
end

---Sets the window options of window `win` showing a transcript.
---@param win integer
function M.window_options(win)
  local wo = vim.wo[win][0]
  wo.foldmethod = "expr"
  wo.foldexpr = "v:lua.require'claude_context.transcript'.foldexpr()"
  wo.foldtext = "v:lua.require'claude_context.transcript'.foldtext()"
  wo.foldlevel = 0
  wo.foldenable = true
  wo.conceallevel = 0
end

local function cwds()
  local out = { vim.fn.getcwd() }
  local names = require("claude_context.agents.names")
  local root = names.project_of and names.project_of(vim.fn.getcwd())
  if root and root ~= out[1] then
    out[#out + 1] = root
  end
  return out
end

---Windows showing `buf` whose cursor is on its last line.
local function at_end(buf)
  local out = {}
  local n = vim.api.nvim_buf_line_count(buf)
  for _, w in ipairs(vim.fn.win_findbuf(buf)) do
    if vim.api.nvim_win_get_cursor(w)[1] >= n then
      out[#out + 1] = w
    end
  end
  return out
end

---Appends `lines` to `buf` (the first answer replaces the empty first line).
local function append(buf, st, lines)
  local followers = at_end(buf)
  vim.bo[buf].modifiable = true
  if st.empty then
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    st.empty = false
  else
    vim.api.nvim_buf_set_lines(buf, -1, -1, false, lines)
  end
  vim.bo[buf].modifiable = false
  local n = vim.api.nvim_buf_line_count(buf)
  for _, w in ipairs(followers) do
    pcall(vim.api.nvim_win_set_cursor, w, { n, 0 })
  end
end

---Puts `body`'s lines into `buf` in slices, then calls `done`.
local function put_lines(buf, st, body, count, done)
  local pos = 1
  local function step()
    if not vim.api.nvim_buf_is_valid(buf) then
      return
    end
    local slice = {}
    local t0 = uv.hrtime()
    while pos <= #body + 1 and #slice < M.SLICE_LINES and (#slice + st.put) < count do
      local nl = body:find("\n", pos, true)
      slice[#slice + 1] = body:sub(pos, (nl or #body + 1) - 1)
      pos = (nl or #body + 1) + 1
      -- Half the slice for cutting lines: putting them in the buffer takes the rest.
      if #slice % 200 == 0 and (uv.hrtime() - t0) > M.SLICE_MS * 5e5 then
        break
      end
    end
    st.put = st.put + #slice
    if #slice > 0 then
      append(buf, st, slice)
    end
    if st.put < count then
      vim.schedule(step)
    else
      done()
    end
  end
  step()
end

local read

---Takes one answer of `transcript_read` into `buf`.
local function take(buf, st, answer)
  local nl = answer:find("\n", 1, true) or (#answer + 1)
  local h = vim.json.decode(answer:sub(1, nl - 1), { luanil = { object = true, array = true } })
  local body = answer:sub(nl + 1)
  if h.reset then
    vim.bo[buf].modifiable = true
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, {})
    vim.bo[buf].modifiable = false
    st.empty, st.levels, st.links = true, "", {}
  end
  local base = st.empty and 0 or vim.api.nvim_buf_line_count(buf)
  for _, l in ipairs(h.links or {}) do
    st.links[base + l[1] + 1] = { path = l[2], lnum = l[3] }
  end
  st.levels = st.levels .. (h.levels or "")
  -- More to read now: the file is longer than what this piece took, and the piece took some
  -- (a last record cut short waits for the watcher: the CLI is still writing it).
  local more = h.offset < h.size and (h.offset > st.offset or h.reset)
  st.path, st.offset, st.prompts = h.path, h.offset, h.prompts
  st.usage = h.usage or st.usage
  st.title = h.title or st.title
  st.put = 0
  put_lines(buf, st, body, h.lines or 0, function()
    st.reading = false
    st.ready = true
    if more or st.again then
      st.again = false
      read(buf)
      return
    end
    st.caught_up = true
    for _, cb in ipairs(st.done_cbs) do
      pcall(cb, buf)
    end
    st.done_cbs = {}
    M.watch(buf)
  end)
end

---Reads what was added to `buf`'s conversation file since the last read (one read at a time:
---a change seen during a read reads again after it).
---@param buf integer
function read(buf)
  local st = M.bufs[buf]
  if not st then
    return
  end
  if st.reading then
    st.again = true
    return
  end
  local native = require("claude_context.native").load()
  st.reading = true
  local opts = {
    offset = st.offset,
    prompts = st.prompts,
    path = st.path,
    id = not st.path and st.id or nil,
    cwds = cwds(),
    max_bytes = st.ready and M.READ_BYTES or M.FIRST_BYTES,
  }
  native.transcript_read(vim.json.encode(opts), function(err, answer)
    if not vim.api.nvim_buf_is_valid(buf) then
      return
    end
    if err then
      st.reading = false
      st.error = err
      if not st.ready then
        vim.bo[buf].modifiable = true
        vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "<!-- " .. tostring(err):gsub("[%c]", " ") .. " -->" })
        vim.bo[buf].modifiable = false
      end
      return
    end
    local ok, e = pcall(take, buf, st, answer)
    if not ok then
      st.reading = false
      notify.prefixed("transcript: " .. tostring(e), vim.log.levels.WARN)
    end
  end)
end

---Watches `buf`'s file for growth (inotify through libuv; a 1 s poll where that fails).
---@param buf integer
function M.watch(buf)
  local st = M.bufs[buf]
  if not st or st.watcher or not st.path then
    return
  end
  local function changed()
    vim.schedule(function()
      if M.bufs[buf] then
        read(buf)
      end
    end)
  end
  local ev = uv.new_fs_event()
  if ev and ev:start(st.path, {}, changed) then
    st.watcher = ev
    return
  end
  if ev then
    ev:close()
  end
  local poll = uv.new_fs_poll()
  poll:start(st.path, 1000, changed)
  st.watcher = poll
end

local function stop(buf)
  local st = M.bufs[buf]
  M.bufs[buf] = nil
  if st and st.watcher and not st.watcher:is_closing() then
    st.watcher:stop()
    st.watcher:close()
  end
end

---Opens the file the line under the cursor names (a tool call, a result) at its line, read
---without waiting on what the path names (claude_context.transcript.jump); elsewhere, `gf`'s own
---behaviour (`fallback`).
---@param fallback string? keys to run when the line has no file
function M.jump(fallback)
  local buf = vim.api.nvim_get_current_buf()
  local st = M.bufs[buf]
  local link = st and st.links[vim.api.nvim_win_get_cursor(0)[1]]
  if not link then
    if fallback then
      pcall(vim.cmd, "normal! " .. fallback)
    end
    return
  end
  require("claude_context.transcript.jump").open(link.path, link.lnum)
end

local function make_buffer(name)
  local buf = vim.api.nvim_create_buf(true, true)
  vim.api.nvim_buf_set_name(buf, name)
  local bo = vim.bo[buf]
  bo.buftype = "nofile"
  bo.bufhidden = "hide"
  bo.swapfile = false
  bo.modifiable = false
  bo.filetype = "markdown"
  vim.keymap.set("n", "<CR>", function()
    M.jump()
  end, { buffer = buf, desc = "claude-context: open the file of this tool call" })
  vim.keymap.set("n", "gf", function()
    M.jump("gf")
  end, { buffer = buf, desc = "claude-context: open the file of this tool call" })
  vim.api.nvim_create_autocmd("BufWinEnter", {
    buffer = buf,
    callback = function()
      M.window_options(vim.api.nvim_get_current_win())
    end,
  })
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    once = true,
    callback = function()
      stop(buf)
    end,
  })
  return buf
end

---The transcript buffer of session `id` (or of the file `opts.path`), made and filled
---off the main thread: returned at once, its lines come in as they are read.
---@param id string a session id
---@param opts claude_context.TranscriptOpts?
---@return integer buf
function M.transcript(id, opts)
  opts = opts or {}
  vim.validate({ id = { id, "string" } })
  local name = M.SCHEME .. id
  local existing
  for b, st in pairs(M.bufs) do
    if st.id == id and vim.api.nvim_buf_is_valid(b) then
      existing = b
    end
  end
  if existing then
    local st = M.bufs[existing]
    if opts.on_ready then
      if st.caught_up and not st.reading then
        opts.on_ready(existing)
      else
        table.insert(st.done_cbs, opts.on_ready)
      end
    end
    return existing
  end
  local buf = make_buffer(name)
  M.bufs[buf] = {
    id = id,
    path = opts.path,
    offset = 0,
    prompts = 0,
    levels = "",
    links = {},
    empty = true,
    done_cbs = opts.on_ready and { opts.on_ready } or {},
  }
  read(buf)
  return buf
end

---Opens the transcript of session `id` (default: the current session's) in the current window.
---@param id string?
---@return integer? buf
function M.open(id)
  if not id or id == "" then
    local cur = require("claude_context.follow.trail").current()
    id = cur and cur.id
  end
  if not id then
    notify.prefixed("no Claude session to show (give its id: :ClaudeContext transcript <id>)")
    return nil
  end
  local buf = M.transcript(id)
  vim.api.nvim_win_set_buf(0, buf)
  M.window_options(vim.api.nvim_get_current_win())
  return buf
end

return M
