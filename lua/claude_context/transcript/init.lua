---@mod claude_context.transcript A conversation as a read-only Markdown buffer
---
--- `transcript(id)` returns at once a buffer named `claude-transcript://<id>`: each prompt a
--- heading, Claude's text as written, each tool call one folded line (tool, file:line) that
--- `<CR>` / `gf` opens, its result folded beneath. The conversation file (Claude Code's
--- `projects/<folder>/<id>.jsonl`) is read and rendered off the main thread by the library
--- (`transcript_read`, crates/core/src/transcript/); the lines are put in the buffer in slices
--- sized by time (`SLICE_MS`), then its filetype (markdown) is set and its syntax loaded, each in
--- a turn of its own. While the file grows (a running session), only the new bytes are read: the
--- buffer grows, and a window whose cursor was on the last line follows it; other windows keep
--- cursor and scroll.

local M = {}

---@class claude_context.TranscriptOpts
---@field path string? The conversation file (else found by the session id)
---@field on_ready fun(buf: integer)? Once the whole file as it was is in

local uv = vim.uv or vim.loop
local notify = require("claude_context.util.notify")

---Lines cut from an answer and put in the buffer at a time (one `nvim_buf_set_lines`).
M.BATCH_LINES = 250

---How long one slice may hold the main thread (ms): batches are put until it is spent, then the
---rest waits for the next turn of the event loop (the slices are sized by time, not by count).
M.SLICE_MS = 3

---The first read takes this many bytes (the first screen comes quickly), later ones
---`READ_BYTES` (the library's pieces are each taken in short slices).
M.FIRST_BYTES = 256 * 1024
M.READ_BYTES = 2 * 1024 * 1024

---The URI scheme of transcript buffers.
M.SCHEME = "claude-transcript://"

---How far back the transcript's legacy syntax looks to find its state (`:syntax sync minlines=`
---and `maxlines=`, set on the transcript buffer only once its syntax is loaded): Neovim's Markdown
---syntax has no bound, and at 50 MB it walked the lines hidden in closed folds on the first
---screen, and re-synced on `G`, for over 100 ms (BENCHMARKS.md).
M.SYNC_MINLINES = 1
M.SYNC_MAXLINES = 1

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
---@field typed boolean? Its filetype set (once the first read caught up, or failed)
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

---Appends `lines` to `buf` (the first answer replaces the empty first line). Once the file as it
---was is in, a window whose cursor is on the last line follows the new lines; while it comes in,
---none does (the transcript opens at its start, as a file does: a window kept at the end of a
---large Markdown buffer has Neovim's syntax re-synced there at each redraw, over 100 ms at 50 MB).
local function append(buf, st, lines)
  local followers = st.caught_up and at_end(buf) or {}
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

---The lines of `text` from byte `pos` on, at most `max`; returns them and the position after
---them.
---@param text string
---@param pos integer
---@param max integer
---@return string[] lines, integer pos
local function cut(text, pos, max)
  local n, lines = #text, {}
  while pos <= n + 1 and #lines < max do
    local nl = text:find("\n", pos, true) or (n + 1)
    lines[#lines + 1] = text:sub(pos, nl - 1)
    pos = nl + 1
  end
  return lines, pos
end

---Puts the `count` lines of `answer` from byte `pos` on into `buf`, a batch at a time, in slices
---of the main thread of at most `SLICE_MS` each (the first in the next turn: the answer's own
---turn only reads its header), then calls `done`.
---@param buf integer
---@param st claude_context.TranscriptState
---@param answer string
---@param pos integer
---@param count integer
---@param done fun()
local function put_lines(buf, st, answer, pos, count, done)
  local function step()
    if not vim.api.nvim_buf_is_valid(buf) then
      return
    end
    local t0, batch = uv.hrtime(), nil
    repeat
      batch, pos = cut(answer, pos, math.min(M.BATCH_LINES, count - st.put))
      st.put = st.put + #batch
      if #batch > 0 then
        append(buf, st, batch)
      end
    until st.put >= count or #batch == 0 or (uv.hrtime() - t0) > M.SLICE_MS * 1e6
    if st.put < count and #batch > 0 then
      vim.schedule(step)
    else
      done()
    end
  end
  vim.schedule(step)
end

---Whether `eventignore` holds `event` (or all).
---@param event string
---@return boolean
local function ignored(event)
  for e in vim.o.eventignore:lower():gmatch("[^,]+") do
    if e == "all" or e == event:lower() then
      return true
    end
  end
  return false
end

---Loads the syntax that `buf`'s filetype chose ('syntax'), as its `FileType` would have, in a turn
---of its own: Neovim's Markdown syntax (syntax/markdown.vim and the HTML, CSS and JavaScript
---syntax it includes) is the largest single cost of a transcript on the main thread. Nothing when
---the syntax is off, already loaded, or tree-sitter highlights the buffer.
---@param buf integer
local function load_syntax(buf)
  if not vim.api.nvim_buf_is_valid(buf) or ignored("Syntax") then
    return
  end
  local syntax = vim.bo[buf].syntax
  if syntax == "" or vim.b[buf].current_syntax ~= nil or vim.b[buf].ts_highlight then
    return
  end
  vim.api.nvim_buf_call(buf, function()
    pcall(vim.api.nvim_exec_autocmds, "Syntax", { pattern = syntax, modeline = false })
    if vim.b[buf].current_syntax ~= nil then
      -- (Buffer-local, as the syntax it bounds: other Markdown buffers keep theirs.)
      pcall(vim.cmd, ("syntax sync minlines=%d maxlines=%d"):format(M.SYNC_MINLINES, M.SYNC_MAXLINES))
    end
  end)
end

---Sets `buf`'s filetype, markdown (the person's Markdown plugins, ftplugins and `FileType`
---autocommands run as for any Markdown buffer), with its `Syntax` event held back to a turn of
---its own (`load_syntax`). Called once the file as it was is in: the lines are put while no
---syntax, tree-sitter parser or plugin watches the buffer (with one attached, each change is
---theirs to handle: a tree-sitter parser's edit of a 50 MB Markdown tree took longer than a
---slice), and the buffer's filetype and syntax come in two more short turns.
---@param buf integer
local function set_filetype(buf)
  if not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  local ei = vim.o.eventignore
  vim.o.eventignore = (ei == "" and "" or ei .. ",") .. "Syntax"
  local ok, err = pcall(function()
    vim.bo[buf].filetype = "markdown"
  end)
  vim.o.eventignore = ei
  if not ok then
    notify.prefixed("transcript: " .. tostring(err), vim.log.levels.WARN)
  end
  vim.schedule(function()
    load_syntax(buf)
  end)
end

local read

---The file as it was is in `buf`: the callbacks waiting for it are called.
---@param buf integer
---@param st claude_context.TranscriptState
local function caught_up(buf, st)
  st.caught_up = true
  for _, cb in ipairs(st.done_cbs) do
    pcall(cb, buf)
  end
  st.done_cbs = {}
end

---Takes one answer of `transcript_read` into `buf`.
local function take(buf, st, answer)
  local nl = answer:find("\n", 1, true) or (#answer + 1)
  local h = vim.json.decode(answer:sub(1, nl - 1), { luanil = { object = true, array = true } })
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
  put_lines(buf, st, answer, nl + 1, h.lines or 0, function()
    st.reading = false
    st.ready = true
    if more or st.again then
      st.again = false
      read(buf)
      return
    end
    M.watch(buf)
    if st.typed then
      caught_up(buf, st)
      return
    end
    st.typed = true
    vim.schedule(function()
      set_filetype(buf)
      caught_up(buf, st)
    end)
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
      if not st.typed then
        st.typed = true
        vim.schedule(function()
          set_filetype(buf)
        end)
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

---Watches `buf`'s file for growth (inotify through libuv; a 1 s poll where that fails), then
---reads once more: what the CLI appended between the last read and the watch's start (the end
---of a turn, say, with nothing written after it) gives no event.
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
  else
    if ev then
      ev:close()
    end
    local poll = uv.new_fs_poll()
    poll:start(st.path, 1000, changed)
    st.watcher = poll
  end
  changed()
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
  -- (Read-only: no undo to keep, which would hold every line a second time.)
  bo.undolevels = -1
  bo.modifiable = false
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
