---@mod claude_context.ide.snapshot The editor snapshot the read-only IDE tools answer from
---
--- `getOpenEditors`, `getDiagnostics`, `checkDocumentDirty`, `getLatestSelection` and
--- `closeAllDiffTabs` (with no diff open) are answered on the bridge's threads from a mirror of
--- the editor state in Rust (crates/core/src/editor.rs), so they answer even while Neovim sits
--- at a hit-enter prompt, the `-- More --` pager or a long `:!make`. Autocommands push *deltas*
--- — the new state of the one buffer an event concerns — never a rescan; the only full scan is
--- at start. A delta is JSON handed to `native.snapshot()`, which only queues it.

local M = {}

---One buffer as the snapshot holds it (crates/core/src/editor.rs).
---@class claude_context.BufRow
---@field buf integer
---@field name string
---@field filetype string
---@field modified boolean
---@field listed boolean
---@field loaded boolean
---@field lines integer
---@field file boolean It holds a file

---A diagnostic in the protocol's shape (getDiagnostics).
---@class claude_context.Diagnostic
---@field message string
---@field severity "Error"|"Warning"|"Info"|"Hint"
---@field range {start: claude_context.Position, end: claude_context.Position}
---@field source string?
---@field code string|integer|nil

local util = require("claude_context.ide.util")

local native
---@type table<integer, claude_context.BufRow> buffer -> the row pushed last (file buffers, or once were)
local rows = {}
local active
local diff_count
local group

---@param delta string JSON of one delta
local function push(delta)
  if native then
    native.snapshot(delta)
  end
end

---The row of `buf` now; `over` overrides fields the event is about to change.
---@param buf integer
---@param over table<string, any>? fields of claude_context.BufRow
---@return claude_context.BufRow
local function row_of(buf, over)
  local loaded = vim.api.nvim_buf_is_loaded(buf)
  local r = {
    buf = buf,
    name = vim.api.nvim_buf_get_name(buf),
    filetype = vim.bo[buf].filetype,
    modified = vim.bo[buf].modified,
    listed = vim.bo[buf].buflisted,
    loaded = loaded,
    lines = loaded and vim.api.nvim_buf_line_count(buf) or 0,
    file = util.is_file_buf(buf),
  }
  for k, v in pairs(over or {}) do
    r[k] = v
  end
  if not r.loaded then
    r.lines = 0
  end
  return r
end

local FIELDS = { "name", "filetype", "modified", "listed", "loaded", "lines", "file" }

local function same(a, b)
  for _, k in ipairs(FIELDS) do
    if a[k] ~= b[k] then
      return false
    end
  end
  return true
end

---@type table<integer, boolean> file buffers whose changes we follow (nvim_buf_attach)
local attached = {}

---Follows `buf`'s text changes: its line count and 'modified' flag. BufModifiedSet and
---TextChanged fire only when Neovim is back in its main loop (not after changes made through
---the API by a plugin), so `on_lines` — called at every change, synchronously — checks them.
---@param buf integer
local function attach(buf)
  if attached[buf] then
    return
  end
  attached[buf] = vim.api.nvim_buf_attach(buf, false, {
    on_lines = function(_, b, _, _, last_old, last_new)
      if not native or not rows[b] then
        attached[b] = nil
        return true -- detach
      end
      local r = rows[b]
      -- Called once per changed line by some commands (`:%s`): the common case returns at once.
      if r.modified and last_old == last_new then
        return
      end
      if not r.modified or vim.api.nvim_buf_line_count(b) ~= r.lines then
        M.note_buf(b)
      end
    end,
    on_reload = function(_, b)
      M.note_buf(b)
    end,
    on_detach = function(_, b)
      attached[b] = nil
    end,
  }) or nil
end

---Pushes `buf`'s row when it changed (a buffer that never held a file is not pushed).
---@param buf integer
---@param over table<string, any>? fields the event is about to change (BufDelete: listed = false, …)
function M.note_buf(buf, over)
  if not native or not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  local old = rows[buf]
  if not old and not util.is_file_buf(buf) then
    return
  end
  local r = row_of(buf, over)
  if old and same(old, r) then
    return
  end
  rows[buf] = r.file and r or nil
  push(vim.json.encode({ k = "buf", rows = { r } }))
  if r.file and r.loaded then
    attach(buf)
  end
end

---The line count only (TextChanged fires at each change: one API call when nothing changed).
---@param buf integer
local function note_lines(buf)
  local old = rows[buf]
  if old and vim.api.nvim_buf_is_loaded(buf) and vim.api.nvim_buf_line_count(buf) ~= old.lines then
    M.note_buf(buf)
  end
end

---A buffer wiped out.
---@param buf integer
function M.gone(buf)
  if rows[buf] then
    rows[buf] = nil
    push(vim.json.encode({ k = "gone", bufs = { buf } }))
  end
end

---Pushes the active editor's buffer when it changed.
function M.note_active()
  if not native then
    return
  end
  local win = util.active_editor_win()
  local buf = win and vim.api.nvim_win_get_buf(win) or nil
  if buf ~= active then
    active = buf
    push(vim.json.encode({ k = "active", buf = buf or vim.NIL }))
  end
end

local SEVERITY = { "Error", "Warning", "Info", "Hint" }

---`buf`'s diagnostics in the protocol's shape (getDiagnostics), sorted by position. Columns
---are converted to UTF-16 only on lines that are not ASCII; each line is read once.
---@param buf integer
---@return claude_context.Diagnostic[]
function M.diagnostics_of(buf)
  local ds = vim.diagnostic.get(buf)
  table.sort(ds, function(a, b)
    if a.lnum ~= b.lnum then
      return a.lnum < b.lnum
    end
    return (a.col or 0) < (b.col or 0)
  end)
  local lines = {}
  local function u16(l, col)
    col = col or 0
    if col <= 0 then
      return 0
    end
    local line = lines[l]
    if not line then
      line = vim.api.nvim_buf_get_lines(buf, l, l + 1, false)[1] or ""
      lines[l] = line
    end
    if not line:find("[\128-\255]") then
      return math.min(col, #line)
    end
    return util.u16(line, col)
  end
  local out = {}
  for i, d in ipairs(ds) do
    local el = d.end_lnum or d.lnum
    local ec = d.end_col or d.col
    out[i] = {
      message = tostring(d.message),
      severity = SEVERITY[d.severity] or "Error",
      range = {
        start = { line = d.lnum, character = u16(d.lnum, d.col) },
        ["end"] = { line = el, character = u16(el, ec) },
      },
      source = type(d.source) == "string" and d.source or nil,
      code = (type(d.code) == "string" or type(d.code) == "number") and d.code or nil,
    }
  end
  return out
end

---Pushes `buf`'s diagnostics (DiagnosticChanged names the buffer).
---@param buf integer
function M.note_diagnostics(buf)
  if not native or not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  local items = M.diagnostics_of(buf)
  push('{"k":"diag","buf":' .. buf .. ',"items":' .. (#items > 0 and vim.json.encode(items) or "[]") .. "}")
end

---Pushes how many diff views of ours are open (claude_context.ide.diff calls it; with no diff
---module loaded there is none: looking loads nothing).
function M.note_diffs()
  local diff = package.loaded["claude_context.ide.diff"]
  if not native or not diff then
    return
  end
  local n = vim.tbl_count(diff.views)
  if n ~= diff_count then
    diff_count = n
    push(('{"k":"diffs","n":%d}'):format(n))
  end
end

---Pushes the latest selection; `params` is the JSON of its `selection_changed` notification
---(`{text, filePath, fileUrl, selection}`), reused rather than encoded again.
---@param params string
function M.note_selection(params)
  if native and params:sub(1, 1) == "{" and #params > 2 then
    if native.snapshot_selection then
      native.snapshot_selection(params) -- wrapped on the Rust side: no copy of a big text here
    else
      push('{"k":"selection","sel":{"success":true,' .. params:sub(2) .. "}")
    end
  end
end

---Pushes a slice of a big selection's text being read (`selection.lua`): `part` is JSON string
---content (encoded, without quotes), parts of one read in order; the bridge joins them.
---@param job {id: integer}
---@param part string
function M.note_selection_part(job, part)
  push('{"k":"sel_part","j":' .. job.id .. ',"t":"' .. part .. '"}')
end

---The read of `job` is complete: the latest selection is its parts' text with `meta` (the JSON of
---`{filePath, fileUrl, selection}`).
---@param job {id: integer}
---@param meta string
function M.note_selection_end(job, meta)
  push('{"k":"sel_end","j":' .. job.id .. ',"meta":' .. meta .. "}")
end

---Starts mirroring into the running bridge: a reset, one full scan, then deltas.
---@param augroup integer the IDE autocommand group
function M.start(augroup)
  local ok, n = pcall(require("claude_context.native").load)
  if not ok or not n.snapshot then
    native = nil
    return
  end
  native = n
  group = augroup
  rows, active, diff_count, attached = {}, nil, nil, {}
  push('{"k":"reset"}')
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    M.note_buf(b)
    if rows[b] and vim.api.nvim_buf_is_loaded(b) and #vim.diagnostic.get(b) > 0 then
      M.note_diagnostics(b)
    end
  end
  M.note_active()
  M.note_diffs()

  local function au(events, fn, desc)
    vim.api.nvim_create_autocmd(events, { group = group, callback = fn, desc = "claude-context snapshot: " .. desc })
  end
  au({
    "BufAdd",
    "BufNew",
    "BufFilePost",
    "BufModifiedSet",
    "FileType",
    "BufReadPost",
    "BufNewFile",
    "BufWritePost",
    "BufEnter",
  }, function(ev)
    M.note_buf(ev.buf)
  end, "a buffer added, renamed, modified, loaded or written")
  au("OptionSet", function(ev)
    local o = ev.match
    if o == "buflisted" or o == "buftype" or o == "modified" or o == "filetype" then
      M.note_buf(vim.api.nvim_get_current_buf())
    end
  end, "a buffer listed or unlisted, or its buftype changed")
  au({ "TextChanged", "TextChangedI", "TextChangedP" }, function(ev)
    note_lines(ev.buf)
  end, "the line count")
  au("BufDelete", function(ev)
    M.note_buf(ev.buf, { listed = false, loaded = false }) -- :bdelete unloads too
  end, "a buffer deleted (unlisted)")
  au("BufUnload", function(ev)
    M.note_buf(ev.buf, { loaded = false })
  end, "a buffer unloaded")
  au("BufWipeout", function(ev)
    M.gone(ev.buf)
    vim.schedule(M.note_active)
  end, "a buffer wiped out")
  au({ "WinEnter", "BufEnter", "BufWinEnter", "TabEnter" }, M.note_active, "the active editor")
  au("WinClosed", function()
    vim.schedule(M.note_active)
  end, "the active editor's window closed")
  au("DiagnosticChanged", function(ev)
    M.note_diagnostics(ev.buf)
  end, "a buffer's diagnostics")
end

---Stops mirroring (the bridge stopped; its autocommands go with the IDE group).
function M.stop()
  native = nil
  rows, active, diff_count = {}, nil, nil
end

return M
