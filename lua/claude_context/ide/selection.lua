---@mod claude_context.ide.selection `selection_changed` notifications and the latest selection
---
--- Cursor moves and visual selections in file buffers (not terminals, help, scratch or plugin
--- buffers) are recorded and, debounced, sent to every connected client as
--- `selection_changed {text, filePath, fileUrl, selection}`. Leaving Visual mode sends the
--- selection it had at once (so a quick select-then-switch-to-Claude is not lost to the
--- debounce). Identical consecutive notifications are sent once.

local M = {}

local util = require("claude_context.ide.util")
local slices = require("claude_context.ide.slices")
local uv = vim.uv or vim.loop

---@type claude_context.Selection? the latest selection recorded in a file buffer
local latest
---@type claude_context.SlicedRead? the sliced read in progress
local reading
local last_sent
local timer
local debounce_ms = 100
-- setup{ide = {track_selection}}: off means no selection_changed at all.
local tracking = true
local VISUAL = { v = true, V = true, ["\22"] = true }

---@type string? the JSON of the latest selection's notification (resent to a new client as is)
local latest_params

---The native module when its bridge runs, else nil.
---@return claude_context.NativeApi?
local function running_native()
  local ok, native = pcall(require("claude_context.native").load)
  return ok and native.status() and native or nil
end

---Sends `params` (the JSON of a `selection_changed` notification) to every client, unless it is
---what was sent last.
---@param params string
---@return boolean sent
local function broadcast(params)
  latest_params = params
  if params == last_sent then
    return false
  end
  last_sent = params
  local native = running_native()
  if native then
    native.broadcast("selection_changed", params)
  end
  return true
end

---Has the bridge send the big selection of the sliced read `job` from its snapshot (it encodes
---it; nil `job`: the latest selection, whichever it is), unless it is what was sent last.
---@param job {id: integer}?
local function broadcast_big(job)
  latest_params = nil
  local key = "big:" .. (job and job.id or (M.last_big and M.last_big.id) or 0)
  if job and key == last_sent then
    return
  end
  last_sent = key
  local native = running_native()
  if native then
    native.broadcast_selection(job and job.id or nil)
  end
end

---Sends `sel` to every client (unless it is what was sent last) and records it as the latest.
---@param sel claude_context.Selection
function M.publish(sel)
  latest = sel
  reading, M.last_big = nil, nil -- a newer selection: a sliced read still going is out of date
  local params = vim.json.encode({
    text = sel.text,
    filePath = sel.filePath,
    fileUrl = sel.fileUrl,
    selection = sel.selection,
  })
  if broadcast(params) then
    -- getLatestSelection answers from the bridge's snapshot (no main thread needed).
    require("claude_context.ide.snapshot").note_selection(params)
  end
end

---Records the current window's selection now, when it shows a file.
---What the selection of `win` depends on (buffer, name, text version, mode, both ends): a
---settled selection equal to the last one read is not read again (its text can be megabytes).
---@param win integer
---@return string
local function selection_key(win)
  local buf = vim.api.nvim_win_get_buf(win)
  local mode = vim.api.nvim_get_mode().mode
  local cur = vim.api.nvim_win_get_cursor(win)
  local v = VISUAL[mode:sub(1, 1)] and vim.fn.getpos("v") or { 0, 0, 0, 0 }
  return table.concat({
    buf,
    vim.api.nvim_buf_get_name(buf),
    vim.api.nvim_buf_get_changedtick(buf),
    mode,
    cur[1],
    cur[2],
    v[2],
    v[3],
    v[4],
  }, "\0")
end

local last_key

---Lines a big whole-line selection is read in per turn of the event loop.
M.slice_lines = 2500

---Sliced reads started (tests).
M.sliced_reads = 0

---A big whole-line selection read in slices: lines `s`..`e` of `buf` at changedtick `tick`.
---@class claude_context.SlicedRead
---@field id integer
---@field buf integer
---@field tick integer
---@field s integer
---@field e integer

---The last big selection read in slices (nil once a newer one is published).
---@type claude_context.SlicedRead?
M.last_big = nil

---Lines `from`..`to` (1-based) of `buf` joined by newlines, as a JSON string. Joined by
---Vimscript's join() (in C): one string in Lua's heap rather than one per line (thousands of
---short strings per slice make LuaJIT's collector and string table work in long pieces).
---@param buf integer
---@param from integer
---@param to integer
---@return string json
local function slice_json(buf, from, to)
  local ok, text = pcall(vim.api.nvim_eval, ('join(getbufline(%d, %d, %d), "\\n")'):format(buf, from, to))
  -- A NUL in a line comes back as a newline: then the count is off, and the Lua way is exact.
  if not (ok and type(text) == "string" and vim.fn.count(text, "\n") == to - from) then
    text = table.concat(vim.api.nvim_buf_get_lines(buf, from - 1, to, false), "\n")
  end
  return vim.json.encode(text)
end

---Reads the whole-line selection `s`..`e` (1-based) of `buf` a slice per turn of the event
---loop (keystrokes and RPCs get their turn in between), then publishes it. Each slice is
---encoded to JSON as it is read and handed to the bridge's snapshot; at the end the bridge
---encodes the notification from its snapshot and sends it (`native.broadcast_selection`), so
---the editor never holds, copies or encodes the whole text.
---Dropped when a newer selection is published or read, when the buffer changes,
---or while in Visual mode, when the selection no longer is this one.
---@param buf integer
---@param s integer
---@param e integer
local function read_sliced(buf, s, e)
  local tick = vim.api.nvim_buf_get_changedtick(buf)
  M.sliced_reads = M.sliced_reads + 1
  local job = { id = M.sliced_reads, buf = buf, tick = tick, s = s, e = e }
  local snapshot = require("claude_context.ide.snapshot")
  local from = s
  reading = job
  -- Whether this read still stands; a read that no longer does is dropped.
  local function alive()
    if reading ~= job then
      return false
    end
    if
      not vim.api.nvim_buf_is_valid(buf)
      or vim.api.nvim_buf_get_changedtick(buf) ~= tick
      or (VISUAL[vim.api.nvim_get_mode().mode:sub(1, 1)] and not M.is_current(job))
    then
      reading, last_key = nil, nil
      return false
    end
    return true
  end
  -- The last slice is in: the selection is published.
  local function finish()
    local last = vim.api.nvim_buf_get_lines(buf, e - 1, e, false)[1] or ""
    local path = vim.api.nvim_buf_get_name(buf)
    local meta = {
      filePath = path,
      fileUrl = util.uri(path),
      selection = {
        start = { line = s - 1, character = 0 },
        ["end"] = { line = e - 1, character = util.u16(last, #last) },
        isEmpty = false,
      },
    }
    local tail = vim.json.encode(meta)
    reading = nil
    M.last_big = job
    -- The editor keeps no copy of the text (the bridge has it, and answers getLatestSelection
    -- from its snapshot): only if Lua asks (the handler used while the snapshot is not live)
    -- are the lines read again, in one piece.
    latest = setmetatable(
      { success = true, filePath = meta.filePath, fileUrl = meta.fileUrl, selection = meta.selection },
      {
        __index = function(_, k)
          if k == "text" and vim.api.nvim_buf_is_valid(buf) then
            return table.concat(vim.api.nvim_buf_get_lines(buf, s - 1, e, false), "\n")
          end
        end,
      }
    )
    snapshot.note_selection_end(job, tail)
    broadcast_big(job)
  end
  -- One slice per turn (a budget of 0 ms: slices.sliced yields after each piece).
  slices.sliced(0, function()
    local to = math.min(from + M.slice_lines - 1, e)
    local json = slice_json(buf, from, to)
    -- The slice as a JSON string without its quotes; slices are joined by an encoded newline.
    local part = (from > s and "\\n" or "") .. json:sub(2, -2)
    snapshot.note_selection_part(job, part)
    from = to + 1
    if from <= e then
      return true
    end
    finish()
    return false
  end, alive)
end

---Whether `job`'s lines are the Visual-line selection now (in Visual mode) or the last one (after
---it, the `'<` and `'>` marks).
---@param job claude_context.SlicedRead
---@return boolean
function M.is_current(job)
  if vim.api.nvim_get_current_buf() ~= job.buf then
    return false
  end
  local mode = vim.api.nvim_get_mode().mode
  local a, b
  if mode == "V" then
    a, b = vim.fn.line("v"), vim.fn.line(".")
  elseif not VISUAL[mode:sub(1, 1)] and vim.fn.visualmode() == "V" then
    a, b = vim.fn.line("'<"), vim.fn.line("'>")
  else
    return false
  end
  return math.min(a, b) == job.s and math.max(a, b) == job.e
end

---The last big Visual-line selection read (or being read) is `buf`'s lines `s`..`e` as they are.
---@param buf integer
---@param s integer
---@param e integer
---@return boolean
local function already_read(buf, s, e)
  local j = reading or M.last_big
  return j ~= nil
    and j.buf == buf
    and j.s == s
    and j.e == e
    and j.tick == vim.api.nvim_buf_get_changedtick(buf)
    and (reading ~= nil or latest ~= nil)
end

---The lines of `win`'s Visual-line selection when it is bigger than a slice.
---@param win integer
---@return integer? s, integer? e
local function big_linewise(win)
  if vim.api.nvim_get_mode().mode ~= "V" or win ~= vim.api.nvim_get_current_win() then
    return nil
  end
  local a, b = vim.fn.line("v"), vim.fn.line(".")
  local s, e = math.min(a, b), math.max(a, b)
  if e - s + 1 > M.slice_lines then
    return s, e
  end
  return nil
end

function M.flush()
  if timer then
    timer:stop()
  end
  local win = vim.api.nvim_get_current_win()
  if util.is_file_buf(vim.api.nvim_win_get_buf(win)) then
    local key = selection_key(win)
    if key == last_key and latest then
      return -- the same settled selection: read once, sent once
    end
    last_key = key
    local bs, be = big_linewise(win)
    local buf = vim.api.nvim_win_get_buf(win)
    if bs then
      if already_read(buf, bs, be) then
        return -- being read (or read) already: the same lines
      end
      return read_sliced(buf, bs, be)
    end
    M.publish(util.selection_of(win))
  end
end

local function schedule_flush()
  if not util.is_file_buf(vim.api.nvim_get_current_buf()) then
    return
  end
  timer = timer or uv.new_timer()
  timer:stop()
  timer:start(debounce_ms, 0, function()
    vim.schedule(M.flush)
  end)
end

local function on_mode_changed()
  local ev = vim.v.event
  local old, new = (ev.old_mode or ""):sub(1, 1), (ev.new_mode or ""):sub(1, 1)
  if VISUAL[old] and not VISUAL[new] then
    -- Leaving Visual mode: send the selection it had, now.
    if timer then
      timer:stop()
    end
    local win = util.active_editor_win()
    if not win then
      return
    end
    last_key = nil -- what flush reads next is new again
    local buf = vim.api.nvim_win_get_buf(win)
    if old == "V" and win == vim.api.nvim_get_current_win() then
      local a, b = vim.fn.line("'<"), vim.fn.line("'>")
      if a > 0 and b - a + 1 > M.slice_lines then
        if not already_read(buf, a, b) then
          read_sliced(buf, a, b)
        end
        return
      end
    end
    local sel = util.last_visual(win)
    if sel then
      M.publish(sel)
    end
  else
    schedule_flush()
  end
end

---Installs the autocommands into `group`.
---@param group integer
---@param opts claude_context.IdeConfig
function M.start(group, opts)
  debounce_ms = opts.selection_debounce_ms or 100
  tracking = opts.track_selection ~= false
  if not tracking then
    return
  end
  vim.api.nvim_create_autocmd({ "CursorMoved", "CursorMovedI", "BufEnter", "WinEnter" }, {
    group = group,
    callback = schedule_flush,
    desc = "claude-context: selection_changed (debounced)",
  })
  vim.api.nvim_create_autocmd("ModeChanged", {
    group = group,
    callback = on_mode_changed,
    desc = "claude-context: leaving Visual mode sends the selection at once",
  })
end

function M.stop()
  if timer then
    timer:stop()
    if not timer:is_closing() then
      timer:close()
    end
    timer = nil
  end
end

---The latest selection recorded (or, when none was yet, the active editor's current one).
---@return claude_context.Selection?
function M.latest()
  if latest then
    -- (A big one read in slices reads its text again when `.text` is asked for: see read_sliced.)
    return latest
  end
  local win = util.active_editor_win()
  return win and util.selection_of(win) or nil
end

---Sends the latest selection again (a client just connected).
function M.resend()
  if not tracking then
    return
  end
  last_sent = nil
  if latest and latest_params then
    broadcast(latest_params) -- as it was encoded
    return
  end
  if latest and M.last_big then
    broadcast_big(nil) -- a big one: from the bridge's snapshot, never encoded here
    return
  end
  local sel = M.latest()
  if sel then
    M.publish(sel)
  end
end

---Forgets everything (tests).
function M.reset()
  latest, last_sent, last_key, reading, latest_params, M.last_big = nil, nil, nil, nil, nil, nil
end

return M
