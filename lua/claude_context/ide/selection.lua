---@mod claude_context.ide.selection `selection_changed` notifications and the latest selection
---
--- Cursor moves and visual selections in file buffers (not terminals, help, scratch or plugin
--- buffers) are recorded and, debounced, sent to every connected client as
--- `selection_changed {text, filePath, fileUrl, selection}`. Leaving Visual mode sends the
--- selection it had at once (so a quick select-then-switch-to-Claude is not lost to the
--- debounce). Identical consecutive notifications are sent once.

local M = {}

local util = require("claude_context.ide.util")
local uv = vim.uv or vim.loop

---@type table? the latest selection recorded in a file buffer (protocol shape, success = true)
local latest
local last_sent
local timer
local debounce_ms = 100
-- setup{ide = {track_selection}}: off means no selection_changed at all.
local tracking = true
local VISUAL = { v = true, V = true, ["\22"] = true }

---Sends `sel` to every client (unless it is what was sent last) and records it as the latest.
---@param sel table
function M.publish(sel)
  latest = sel
  local params = vim.json.encode({
    text = sel.text,
    filePath = sel.filePath,
    fileUrl = sel.fileUrl,
    selection = sel.selection,
  })
  if params == last_sent then
    return
  end
  last_sent = params
  -- getLatestSelection answers from the bridge's snapshot (no main thread needed).
  require("claude_context.ide.snapshot").note_selection(params)
  local ok, native = pcall(require("claude_context.native").load)
  if ok and native.status() then
    native.broadcast("selection_changed", params)
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
M.slice_lines = 5000

---@type table? the sliced read in progress
local reading

---Reads the whole-line selection `s`..`e` (1-based) of `win` a slice per turn of the event
---loop (keystrokes and RPCs get their turn in between), then publishes it. Dropped when the
---selection changes meanwhile (the next settled one is read instead).
---@param win integer
---@param key string
---@param s integer
---@param e integer
local function read_sliced(win, key, s, e)
  local buf = vim.api.nvim_win_get_buf(win)
  local job, parts, from = {}, {}, s
  reading = job
  local function step()
    if reading ~= job then
      return
    end
    if not vim.api.nvim_win_is_valid(win) or vim.api.nvim_get_current_win() ~= win or selection_key(win) ~= key then
      reading, last_key = nil, nil
      return
    end
    local to = math.min(from + M.slice_lines - 1, e)
    parts[#parts + 1] = table.concat(vim.api.nvim_buf_get_lines(buf, from - 1, to, false), "\n")
    from = to + 1
    if from <= e then
      vim.defer_fn(step, 0) -- a timer, not vim.schedule: input is read before the next slice
      return
    end
    reading = nil
    local last = vim.api.nvim_buf_get_lines(buf, e - 1, e, false)[1] or ""
    local path = vim.api.nvim_buf_get_name(buf)
    M.publish({
      success = true,
      text = table.concat(parts, "\n"),
      filePath = path,
      fileUrl = util.uri(path),
      selection = {
        start = { line = s - 1, character = 0 },
        ["end"] = { line = e - 1, character = util.u16(last, #last) },
        isEmpty = false,
      },
    })
  end
  step()
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
    reading = nil
    local bs, be = big_linewise(win)
    if bs then
      return read_sliced(win, key, bs, be)
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
    local sel = win and util.last_visual(win)
    if sel then
      last_key = nil -- what flush reads next is new again
      M.publish(sel)
    end
  else
    schedule_flush()
  end
end

---Installs the autocommands into `group`.
---@param group integer
---@param opts table claude_context.ide options
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
---@return table?
function M.latest()
  if latest then
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
  local sel = M.latest()
  if sel then
    M.publish(sel)
  end
end

---Forgets everything (tests).
function M.reset()
  latest, last_sent, last_key, reading = nil, nil, nil, nil
end

return M
