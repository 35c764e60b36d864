---@mod claude_context.ide.diff The diff views of openDiff
---
--- A view is a new tab with two windows: on the left the file as it is on disk (read-only, or
--- empty for a new file), on the right Claude's proposal (buftype=acwrite). Both are scratch
--- buffers of ours, wiped when the view closes: the person's own buffer of the file is never
--- touched. The tab carries `t:claude_context_diff` (the view's name) and the proposal buffer
--- `b:claude_context_diff`, so closeAllDiffTabs closes ours only.
---
--- Decisions: `:w` in the proposal (or `:ClaudeContext accept`) accepts, with the person's edits
--- to the proposal; closing either side (`:q`, `:tabclose`, …) or `:ClaudeContext reject`
--- rejects. Nothing is written to disk here: after FILE_SAVED Claude Code writes the file, and
--- an unmodified buffer of it is reloaded when that happens.

local M = {}

local util = require("claude_context.ide.util")
local uv = vim.uv or vim.loop

---@class claude_context.DiffView
---@field name string tab_name
---@field old_path string
---@field new_path string
---@field contents string? the proposal as sent (nil when the bridge keeps it)
---@field is_new boolean the file does not exist yet
---@field dirty boolean the person's buffer of the file had unsaved changes
---@field respond fun(result: table?, err: string?)? nil once answered or cancelled
---@field tab integer?
---@field prev_tab integer?
---@field orig_buf integer?
---@field prop_buf integer?
---@field orig_win integer?
---@field prop_win integer?
---@field tick integer proposal's changedtick after setup
---@field eol boolean
---@field crlf boolean
---@field closed boolean?
---@field cancelled boolean?
---@field unfocused boolean? opened without taking the cursor (the person was typing)
---@field decision "accepted"|"rejected"|"cancelled"|nil how it ended (User ClaudeContextDiffClosed)
---@field partial {taken: integer, total: integer}? accepted in part (:[range]ClaudeContext accept)
---@field layout string?
---@field in_place boolean? splits in the person's tab page (diff.tab = "current")
---@field prev_win integer?
---@field prep table? the bridge's prepared proposal (id, sizes, line endings, number of hunks)
---@field hunks integer[][]? the prepared hunks (vim.diff() "indices")
---@field large boolean? bigger than diff.diffmode_max_bytes: inline, marks placed in slices
---@field bytes integer both sides' size
---@field mem_old string[]? lines to fill from (a direct call without the bridge)
---@field mem_new string[]?
---@field accepting boolean? an edited proposal's lines are on their way to the bridge
---@field render integer? generation of the inline marks

---@type table<string, claude_context.DiffView>
M.views = {}

---Views whose openDiff arrived but whose tab is not on screen yet (set up on the next event-loop
---turn): closeAllDiffTabs rejects and counts them too.
---@type table<claude_context.DiffView, true>
M.opening = {}

local group = vim.api.nvim_create_augroup("ClaudeContextDiff", { clear = true })

local notify = require("claude_context.ide.util").notify

---A buffer name nobody uses yet.
local function unique_name(base)
  local name, n = base, 1
  while vim.fn.bufexists(name) == 1 do
    n = n + 1
    name = ("%s [%d]"):format(base, n)
  end
  return name
end

local function winbar_escape(s)
  return (s:gsub("%%", "%%%%"))
end

---An empty scratch buffer of ours (filled a slice at a time by `build`).
local function scratch(name)
  local b = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(b, unique_name(name))
  vim.bo[b].bufhidden = "wipe"
  vim.bo[b].swapfile = false
  vim.bo[b].undolevels = -1 -- filling it is not an edit to undo (set back once filled)
  return b
end

---Views that hid the tabline (see show()); the person's 'showtabline' comes back when none is
---left or they enter a diff tab.
M.tabline_hidden_by = {}

---@param v claude_context.DiffView
function M.hide_tabline(v)
  M.tabline_hidden_by[v.name] = true
  vim.o.showtabline = 0
  vim.api.nvim_create_autocmd("TabEnter", {
    group = group,
    callback = function()
      if vim.t.claude_context_diff then
        M.restore_tabline()
        return true
      end
      return not next(M.tabline_hidden_by)
    end,
    desc = "claude-context: the tabline back when entering a diff tab",
  })
end

---Puts 'showtabline' back to 1 (only if the plugin set it to 0 and nobody changed it since).
function M.restore_tabline()
  if next(M.tabline_hidden_by) == nil then
    return
  end
  M.tabline_hidden_by = {}
  if vim.o.showtabline == 0 then
    vim.o.showtabline = 1
  end
end

---Closes the view's windows (its tab goes away with them) and wipes its buffers. Idempotent.
---@param v claude_context.DiffView
function M.close(v)
  if v.closed then
    return
  end
  v.closed = true
  if M.views[v.name] == v then
    M.views[v.name] = nil
    require("claude_context.ide.snapshot").note_diffs()
  end
  local was_current = v.tab and vim.api.nvim_get_current_tabpage() == v.tab
  local cur_win = vim.api.nvim_get_current_win()
  local in_view = cur_win == v.prop_win or cur_win == v.orig_win
  for _, w in ipairs({ v.prop_win, v.orig_win }) do
    if w and vim.api.nvim_win_is_valid(w) then
      if #vim.api.nvim_list_wins() == 1 then
        -- The last window of the last tab cannot close: leave an empty buffer in it.
        vim.api.nvim_win_set_buf(w, vim.api.nvim_create_buf(true, false))
        pcall(vim.api.nvim_win_call, w, function()
          vim.cmd("diffoff")
        end)
        vim.wo[w].winbar = ""
      else
        pcall(vim.api.nvim_win_close, w, true)
      end
    end
  end
  for _, b in ipairs({ v.prop_buf, v.orig_buf }) do
    if b and vim.api.nvim_buf_is_valid(b) then
      pcall(vim.api.nvim_buf_delete, b, { force = true })
    end
  end
  if was_current and v.prev_tab and vim.api.nvim_tabpage_is_valid(v.prev_tab) then
    vim.api.nvim_set_current_tabpage(v.prev_tab)
  end
  if v.in_place and in_view and v.prev_win and vim.api.nvim_win_is_valid(v.prev_win) then
    vim.api.nvim_set_current_win(v.prev_win)
  end
  if v.tab then
    pcall(vim.api.nvim_exec_autocmds, "User", {
      pattern = "ClaudeContextDiffClosed",
      modeline = false,
      data = { name = v.name, file = v.old_path, tab = v.tab, decision = v.decision or "closed", hunks = v.partial },
    })
  end
  if M.tabline_hidden_by[v.name] then
    M.tabline_hidden_by[v.name] = nil
    if next(M.tabline_hidden_by) == nil then
      -- Restored once the tab is gone: with one tab page left the tabline stays hidden anyway.
      M.tabline_hidden_by[v.name] = true
      M.restore_tabline()
    end
  end
end

---Answers the waiting openDiff (once). Returns false when it was answered already.
---@param v claude_context.DiffView
---@param result table
---@return boolean
local function answer(v, result)
  local r = v.respond
  if not r then
    return false
  end
  v.respond = nil
  r(result)
  return true
end

---Reloads `path`'s buffer when Claude Code writes the file (it does so after FILE_SAVED), if
---the buffer has no unsaved changes. Watches the directory for a while, debounced.
---@param path string
local function reload_when_written(path)
  local buf = util.find_buf(path)
  if not buf or not vim.api.nvim_buf_is_loaded(buf) or vim.bo[buf].modified then
    return
  end
  local w, t, life = uv.new_fs_event(), uv.new_timer(), uv.new_timer()
  if not (w and t and life) then
    return
  end
  local base = vim.fs.basename(path)
  local function stop()
    for _, h in ipairs({ w, t, life }) do
      if not h:is_closing() then
        h:close()
      end
    end
  end
  local ok = w:start(vim.fs.dirname(path), {}, function(err, fname)
    if err or fname ~= base then
      return
    end
    t:stop()
    t:start(50, 0, function()
      vim.schedule(function()
        -- (Only a regular file is re-read: one replaced by a FIFO would block the editor.)
        if vim.api.nvim_buf_is_valid(buf) and not vim.bo[buf].modified and util.regular_file(path) then
          pcall(vim.cmd, "checktime " .. buf)
        end
      end)
    end)
  end)
  if not ok then
    stop()
    return
  end
  life:start(30000, 0, stop)
end

---Answers FILE_SAVED with `result`, then: the proposal counts as written, the file's buffer
---reloads when Claude Code writes it, the view closes.
---@param v claude_context.DiffView
---@param result table
local function saved(v, result)
  answer(v, result)
  if vim.api.nvim_buf_is_valid(v.prop_buf) then
    vim.bo[v.prop_buf].modified = false
  end
  reload_when_written(v.old_path)
  vim.schedule(function()
    M.close(v)
  end)
end

---Reads the edited proposal's lines a slice at a time into the bridge's prepared proposal, then
---calls `done(ok)`. The buffer is not modifiable meanwhile, so what is pushed is one version.
---@param v claude_context.DiffView
---@param done fun(ok: boolean)
local function push_lines(v, done)
  local native = require("claude_context.native").get()
  local buf = v.prop_buf
  vim.bo[buf].modifiable = false
  local from, total = 0, vim.api.nvim_buf_line_count(buf)
  util.sliced(M.slice_ms, function()
    local to = math.min(total, from + M.chunk_lines)
    if not native.proposal_collect(v.prep.id, buf, from, to) then
      done(false)
      return false
    end
    from = to
    if from >= total then
      done(true)
      return false
    end
    return true
  end, function()
    return not v.closed and v.respond ~= nil and vim.api.nvim_buf_is_valid(buf)
  end)
end

---Accepts: answers FILE_SAVED with the proposal as it is now, closes the view. Unedited, the
---answer is exactly what Claude sent (kept by the bridge when it prepared the view); an edited
---prepared proposal's lines go to the bridge in slices first.
---@param v claude_context.DiffView
---@return boolean answered (or on its way)
function M.accept(v)
  if v.closed or not v.respond or v.accepting then
    return false
  end
  v.decision = v.decision or "accepted"
  local eol, crlf = vim.bo[v.prop_buf].eol, vim.bo[v.prop_buf].fileformat == "dos"
  local edited = vim.api.nvim_buf_get_changedtick(v.prop_buf) ~= v.tick
  if not edited then
    saved(v, v.prep and { result = "FILE_SAVED", unchanged = true } or { result = "FILE_SAVED", contents = v.contents })
  elseif v.prep then
    v.accepting = true
    push_lines(v, function(ok)
      if ok then
        saved(v, { result = "FILE_SAVED", pushed = true, eol = eol, crlf = crlf })
      else
        saved(v, { result = "FILE_SAVED", contents = util.join(vim.api.nvim_buf_get_lines(v.prop_buf, 0, -1, false), eol, crlf) })
      end
    end)
  else
    saved(v, { result = "FILE_SAVED", contents = util.join(vim.api.nvim_buf_get_lines(v.prop_buf, 0, -1, false), eol, crlf) })
  end
  return true
end

---The proposal's hunks against the file on disk: `{a_start, a_count, b_start, b_count}` (1-based,
---as |vim.diff()| gives them with result_type = "indices").
---@param v claude_context.DiffView
---@return integer[][] hunks, string[] old_lines, string[] new_lines
function M.hunks(v)
  local old_lines = vim.api.nvim_buf_get_lines(v.orig_buf, 0, -1, false)
  local new_lines = vim.api.nvim_buf_get_lines(v.prop_buf, 0, -1, false)
  if v.is_new then
    old_lines = {}
  end
  local a = #old_lines > 0 and (table.concat(old_lines, "\n") .. "\n") or ""
  local b = #new_lines > 0 and (table.concat(new_lines, "\n") .. "\n") or ""
  local hunks = vim.diff(a, b, { result_type = "indices" }) --[[@as integer[][] ]]
  return hunks, old_lines, new_lines
end

---Does hunk `h` touch lines l1..l2 of `side` ("a": the file on disk, "b": the proposal)? A hunk
---with no lines on that side sits between two lines: it counts when the range reaches either.
local function touches(h, side, l1, l2)
  local start, count = h[1], h[2]
  if side == "b" then
    start, count = h[3], h[4]
  end
  if count == 0 then
    return l1 <= start + 1 and l2 >= start
  end
  return l1 <= start + count - 1 and l2 >= start
end

---Partial accept: answers FILE_SAVED with the file on disk plus only the hunks that touch
---lines l1..l2 (of the proposal, or of the file side when `side` is "a"); closes the view.
---@param v claude_context.DiffView
---@param l1 integer
---@param l2 integer
---@param side "a"|"b"
---@return integer? taken, integer total (nil taken: answered already)
function M.accept_range(v, l1, l2, side)
  -- `accepting`: a whole accept's lines are on their way; it was asked first and stands.
  if v.closed or not v.respond or v.accepting then
    return nil, 0
  end
  if v.prep and v.hunks and vim.api.nvim_buf_get_changedtick(v.prop_buf) == v.tick then
    -- Unedited and prepared: the bridge composes the text from its own copy of both sides;
    -- only the chosen hunks' numbers cross (a big file is not read back here).
    local take = {}
    for i, h in ipairs(v.hunks) do
      if touches(h, side, l1, l2) then
        take[#take + 1] = i - 1
      end
    end
    if #take == 0 then
      return 0, #v.hunks
    end
    v.decision = "accepted"
    v.partial = { taken = #take, total = #v.hunks }
    saved(v, { result = "FILE_SAVED", take = take })
    return #take, #v.hunks
  end
  local hunks, old_lines, new_lines = M.hunks(v)
  local out, taken, pos = {}, 0, 1
  for _, h in ipairs(hunks) do
    local a_start, a_count, b_start, b_count = h[1], h[2], h[3], h[4]
    -- Lines before the hunk (for a pure insertion a_start is the line it goes after).
    local a_first = a_count == 0 and a_start + 1 or a_start
    for i = pos, a_first - 1 do
      table.insert(out, old_lines[i])
    end
    if touches(h, side, l1, l2) then
      taken = taken + 1
      for i = b_start, b_start + b_count - 1 do
        table.insert(out, new_lines[i])
      end
    else
      for i = a_first, a_first + a_count - 1 do
        table.insert(out, old_lines[i])
      end
    end
    pos = a_first + a_count
  end
  for i = pos, #old_lines do
    table.insert(out, old_lines[i])
  end
  if taken == 0 then
    return 0, #hunks
  end
  local contents = util.join(out, vim.bo[v.prop_buf].eol, vim.bo[v.prop_buf].fileformat == "dos")
  if #out == 0 then
    contents = ""
  end
  v.decision = "accepted"
  v.partial = { taken = taken, total = #hunks }
  saved(v, { result = "FILE_SAVED", contents = contents })
  return taken, #hunks
end

local inline_ns = vim.api.nvim_create_namespace("claude_context_diff_inline")

---The inline layout: the proposal in one buffer, added and changed lines highlighted
---(DiffAdd / DiffChange), the file's removed lines shown above them as virtual lines (DiffDelete;
---at most `M.max_virt_lines` per change, the rest counted). The marks are placed a slice of
---`M.slice_ms` at a time: a big diff's go on over the next event-loop turns.
---@param v claude_context.DiffView
---@param hunks integer[][]? default: the prepared hunks, or computed (|vim.diff()|)
function M.inline(v, hunks)
  hunks = hunks or v.hunks or M.hunks(v)
  v.render = (v.render or 0) + 1
  local gen = v.render
  vim.api.nvim_buf_clear_namespace(v.prop_buf, inline_ns, 0, -1)
  local nlines = vim.api.nvim_buf_line_count(v.prop_buf)
  local function mark(h)
    local a_start, a_count, b_start, b_count = h[1], h[2], h[3], h[4]
    if b_count > M.chunk_lines then
      -- One range for a big block (a mark per line would be a mark per line of the file).
      vim.api.nvim_buf_set_extmark(v.prop_buf, inline_ns, b_start - 1, 0, {
        end_row = b_start - 1 + b_count,
        end_col = 0,
        hl_group = a_count > 0 and "DiffChange" or "DiffAdd",
        hl_eol = true,
        sign_text = "+",
        sign_hl_group = "DiffAdd",
      })
    else
      for i = b_start, b_start + b_count - 1 do
        vim.api.nvim_buf_set_extmark(v.prop_buf, inline_ns, i - 1, 0, {
          line_hl_group = a_count > 0 and "DiffChange" or "DiffAdd",
          sign_text = "+",
          sign_hl_group = "DiffAdd",
        })
      end
    end
    if a_count > 0 then
      local shown = math.min(a_count, M.max_virt_lines)
      local virt = {}
      for _, l in ipairs(vim.api.nvim_buf_get_lines(v.orig_buf, a_start - 1, a_start - 1 + shown, false)) do
        virt[#virt + 1] = { { "- " .. l, "DiffDelete" } }
      end
      if a_count > shown then
        virt[#virt + 1] = { { ("- … %d more removed lines"):format(a_count - shown), "DiffDelete" } }
      end
      -- Above the hunk's first line; a deletion (after line b_start) above the line after it,
      -- or below the last line when it was at the end.
      local row = b_count > 0 and b_start - 1 or b_start
      local above = true
      if row >= nlines then
        row, above = math.max(0, nlines - 1), false
      end
      vim.api.nvim_buf_set_extmark(v.prop_buf, inline_ns, row, 0, { virt_lines = virt, virt_lines_above = above })
    end
  end
  local i = 1
  util.sliced(M.slice_ms, function()
    if i > #hunks then
      return false
    end
    mark(hunks[i])
    i = i + 1
    return i <= #hunks
  end, function()
    return not v.closed and v.render == gen and vim.api.nvim_buf_is_valid(v.prop_buf)
  end)
end

---Rejects: answers DIFF_REJECTED, closes the view.
---@param v claude_context.DiffView
---@return boolean answered
function M.reject(v)
  if v.respond then
    v.decision = v.decision or "rejected"
  end
  local answered = answer(v, { result = "DIFF_REJECTED", tab_name = v.name })
  vim.schedule(function()
    M.close(v)
  end)
  return answered
end

---Options under `diff` in setup() (see :help claude-context-diff-focus).
---@class claude_context.DiffConfig
---@field focus "normal"|"always"|"never" When the diff tab takes the cursor (default "normal")
---@field typing_ms integer A key pressed this recently counts as typing (default 1000)
---@field layout "vertical"|"horizontal"|"inline" Side by side, one above the other, or one buffer
---@field tab "new"|"current" A tab page of its own, or splits in the current one
---@field diffmode_max_bytes integer Bigger diffs (both sides together) are shown inline, without Vim's diff mode
M.defaults = { focus = "normal", typing_ms = 1000, layout = "vertical", tab = "new", diffmode_max_bytes = 2 * 1024 * 1024 }

local FOCUS = { normal = true, always = true, never = true }
local LAYOUT = { vertical = true, horizontal = true, inline = true }
local TAB = { new = true, current = true }

---Validates `setup{diff = …}` and merges it over the defaults.
---@param user table?
---@return claude_context.DiffConfig
function M.resolve(user)
  user = user or {}
  if type(user) ~= "table" then
    error(("claude-context: option diff must be a table, got %s"):format(type(user)), 0)
  end
  for k in pairs(user) do
    if M.defaults[k] == nil then
      error(("claude-context: unknown option diff.%s (see :help claude-context-diff-focus)"):format(tostring(k)), 0)
    end
  end
  local o = vim.tbl_extend("force", M.defaults, user)
  if not FOCUS[o.focus] then
    error("claude-context: option diff.focus must be one of normal, always, never", 0)
  end
  if not LAYOUT[o.layout] then
    error("claude-context: option diff.layout must be one of vertical, horizontal, inline", 0)
  end
  if not TAB[o.tab] then
    error("claude-context: option diff.tab must be new or current", 0)
  end
  if type(o.typing_ms) ~= "number" or o.typing_ms < 0 then
    error("claude-context: option diff.typing_ms must be a number >= 0", 0)
  end
  if type(o.diffmode_max_bytes) ~= "number" or o.diffmode_max_bytes < 0 then
    error("claude-context: option diff.diffmode_max_bytes must be a number >= 0", 0)
  end
  return o
end

---@return claude_context.DiffConfig
function M.options()
  local ok, o = pcall(M.resolve, require("claude_context.config").options.diff)
  return ok and o or vim.deepcopy(M.defaults)
end

-- "Typing" is more than a mode: a key pressed a moment ago in Normal mode counts too.
local typing = require("claude_context.typing")
typing.install()

---Why the diff must not take the cursor now, or nil when it may: the person is in a mode other
---than Normal (Insert, Replace, Visual, Select, Command-line, Terminal-Job, an operator
---pending), or pressed a key within `typing_ms`.
---@param o claude_context.DiffConfig
---@return string? reason
function M.busy_reason(o)
  if o.focus == "always" then
    return nil
  elseif o.focus == "never" then
    return "diff.focus = never"
  end
  local mode = vim.api.nvim_get_mode()
  local m = mode.mode
  if mode.blocking then
    return "Neovim is waiting for a key"
  elseif m == "t" then
    return "you are typing in a terminal"
  elseif m:sub(1, 1) == "i" or m:sub(1, 1) == "R" then
    return "you are in Insert mode"
  elseif m:match("^[vVsS\22\19]") then
    return "you are in Visual or Select mode"
  elseif m:sub(1, 1) == "c" or m:sub(1, 1) == "r" then
    return "you are on the command line"
  elseif m:sub(1, 2) == "no" then
    return "an operator is pending"
  elseif o.typing_ms > 0 and typing.since() < o.typing_ms then
    return "you are typing"
  end
  return nil
end

--- Building a view never holds the editor for long (issue 10): the bridge prepared the lines
--- and the hunks off the main thread (crates/core/src/proposal.rs); here they are pulled a chunk
--- at a time and put into the buffers, each slice at most `M.slice_ms` of work, with a timer
--- between slices so keys and other requests get their turn.

---Work per event-loop turn while building a view (milliseconds).
M.slice_ms = 2
---Bytes of lines pulled from the bridge per chunk; lines put from memory per chunk.
M.chunk_bytes = 64 * 1024
M.chunk_lines = 2000
---Removed lines shown per hunk in the inline view (the rest are counted).
M.max_virt_lines = 200

---How each side is filled: `fill(buf, from)` puts the next chunk of lines at line `from`
---(0-based) and returns how many it put (0: done), or nil when the proposal is gone. From the
---bridge the lines go straight into the buffer (no Lua string per line); from memory (a direct
---call without the bridge) `M.chunk_lines` at a time.
---@param v claude_context.DiffView
---@return fun(buf: integer, from: integer): integer? old, fun(buf: integer, from: integer): integer? new
local function sources(v)
  if v.prep then
    local native = require("claude_context.native").get()
    local function side(name)
      return function(buf, from)
        return native.proposal_fill(v.prep.id, name, buf, from, M.chunk_bytes)
      end
    end
    return side("old"), side("new")
  end
  local function slicer(lines)
    return function(buf, from)
      if from >= #lines then
        return 0
      end
      local chunk = vim.list_slice(lines, from + 1, math.min(#lines, from + M.chunk_lines))
      vim.api.nvim_buf_set_lines(buf, from == 0 and 0 or from, from == 0 and -1 or from, false, chunk)
      return #chunk
    end
  end
  return slicer(v.mem_old), slicer(v.mem_new)
end

---Fills the view's buffers (and, prepared, loads the hunks) a slice per event-loop turn, then
---calls `done(err)`. Stops quietly when the view is closed or cancelled meanwhile.
---@param v claude_context.DiffView
---@param done fun(err: string?)
local function build(v, done)
  v.orig_buf = scratch(("claude-context://%s (%s)"):format(v.name, v.is_new and "new file" or "original"))
  v.prop_buf = scratch(("claude-context://%s (proposed)"):format(v.name))
  local old_src, new_src = sources(v)
  ---@type {buf: integer, src: fun(buf: integer, from: integer): integer?, n: integer, skip: boolean?}[]
  local fills = {
    { buf = v.orig_buf, src = old_src, n = 0, skip = v.is_new },
    { buf = v.prop_buf, src = new_src, n = 0 },
  }
  local hunk_from = v.prep and v.prep.hunks > 0 and 0 or nil
  if v.prep then
    v.hunks = {}
  end
  local native = v.prep and require("claude_context.native").get()

  ---One piece of work; false when everything is done.
  local function piece()
    for _, f in ipairs(fills) do
      if not f.skip then
        local put = f.src(f.buf, f.n) -- the first chunk replaces the buffer's one empty line
        if put == nil then
          error("the proposal is gone (the call ended)", 0)
        end
        if put == 0 then
          f.skip = true
        end
        f.n = f.n + put
        return true
      end
    end
    if hunk_from then
      local flat = native.proposal_hunks(v.prep.id, hunk_from, 4096)
      if flat == nil then
        error("the proposal is gone (the call ended)", 0)
      end
      for i = 1, #flat, 4 do
        v.hunks[#v.hunks + 1] = { flat[i], flat[i + 1], flat[i + 2], flat[i + 3] }
      end
      hunk_from = hunk_from + #flat / 4
      if #flat == 0 or hunk_from >= v.prep.hunks then
        hunk_from = nil
      end
      return true
    end
    return false
  end

  util.sliced(M.slice_ms, function()
    local ok, more = pcall(piece)
    if not ok then
      done(tostring(more))
      return false
    end
    if not more then
      for _, b in ipairs({ v.orig_buf, v.prop_buf }) do
        vim.bo[b].undolevels = -123456 -- the global value again
      end
      done(nil)
    end
    return more
  end, function()
    return not v.closed and not v.cancelled
  end)
end

---The view's filetype: as the person's buffer of the file has it, else from the file name and
---the proposal's first lines.
---@param v claude_context.DiffView
---@return string?
local function filetype_of(v)
  local own = util.find_buf(v.old_path)
  if own and vim.bo[own].filetype ~= "" then
    return vim.bo[own].filetype
  end
  return vim.filetype.match({ filename = v.old_path, contents = vim.api.nvim_buf_get_lines(v.prop_buf, 0, 64, false) })
end

---Sets up the view's tab, windows and autocommands (its buffers are filled).
---@param v claude_context.DiffView
local function show(v)
  local ft = filetype_of(v)
  for _, b in ipairs({ v.orig_buf, v.prop_buf }) do
    if ft then
      pcall(function()
        if v.large then
          -- Highlighted, but without FileType autocommands: a language server or a parser
          -- started on a file this big would hold the editor.
          vim.bo[b].syntax = ft
        else
          vim.bo[b].filetype = ft
        end
      end)
    end
  end
  vim.bo[v.orig_buf].modifiable = false
  vim.bo[v.orig_buf].readonly = true

  vim.bo[v.prop_buf].buftype = "acwrite"
  vim.bo[v.prop_buf].eol = v.eol
  vim.bo[v.prop_buf].fixeol = v.eol
  vim.bo[v.prop_buf].fileformat = v.crlf and "dos" or "unix"
  vim.bo[v.prop_buf].modified = false
  vim.b[v.prop_buf].claude_context_diff = v.name

  v.prev_tab = vim.api.nvim_get_current_tabpage()
  local prev_win = vim.api.nvim_get_current_win()
  v.prev_win = prev_win
  local o = M.options()
  local busy = M.busy_reason(o)
  v.layout = v.large and "inline" or o.layout
  local layout = v.layout
  if o.tab == "current" then
    -- In the person's tab page: splits of a file window (never of Claude's terminal, whose
    -- fixed width the splits leave alone). Nothing to come back from when busy: not entered.
    local target = require("claude_context.windows").edit_target()
    v.tab = vim.api.nvim_get_current_tabpage()
    v.in_place = true
    local vertical = layout ~= "horizontal"
    if layout == "inline" then
      v.prop_win = vim.api.nvim_open_win(v.prop_buf, false, { split = "above", win = target })
    else
      v.orig_win = vim.api.nvim_open_win(v.orig_buf, false, { split = vertical and "left" or "above", win = target })
      v.prop_win = vim.api.nvim_open_win(v.prop_buf, false, { split = vertical and "right" or "below", win = v.orig_win })
    end
    if busy then
      v.unfocused = true
    else
      vim.api.nvim_set_current_win(v.prop_win)
    end
  else
    if busy and vim.o.showtabline == 1 and #vim.api.nvim_list_tabpages() == 1 then
      -- The tabline would appear in the person's tab page and take a line from every window
      -- there: Claude's terminal would be resized (and the CLI redraw) on open and again on
      -- close. Keep it hidden while the diff waits unseen; entering the diff tab brings it back.
      M.hide_tabline(v)
    end
    vim.cmd("tabnew")
    v.tab = vim.api.nvim_get_current_tabpage()
    local placeholder = vim.api.nvim_get_current_buf()
    local first = vim.api.nvim_get_current_win()
    if layout == "inline" then
      v.prop_win = first
      vim.api.nvim_win_set_buf(first, v.prop_buf)
    else
      v.orig_win = first
      vim.api.nvim_win_set_buf(v.orig_win, v.orig_buf)
      vim.cmd(layout == "horizontal" and "rightbelow split" or "rightbelow vsplit")
      v.prop_win = vim.api.nvim_get_current_win()
      vim.api.nvim_win_set_buf(v.prop_win, v.prop_buf)
    end
    if vim.api.nvim_buf_is_valid(placeholder) and placeholder ~= v.orig_buf and placeholder ~= v.prop_buf then
      pcall(vim.api.nvim_buf_delete, placeholder, { force = true })
    end
    vim.t[v.tab].claude_context_diff = v.name
  end
  if layout == "inline" then
    M.inline(v)
    if not v.large then
      -- Small: recomputed as the person edits. Large: the marks move with the edits (a new
      -- diff of the whole file per change would hold the editor).
      -- Not at every key typed in Insert mode (a whole diff each time): after a Normal-mode
      -- change and when Insert mode ends.
      vim.api.nvim_create_autocmd({ "TextChanged", "InsertLeave" }, {
        group = group,
        buffer = v.prop_buf,
        callback = function()
          if not v.closed then
            M.inline(v, M.hunks(v))
          end
        end,
        desc = "claude-context: keep the inline diff's marks current",
      })
    end
  else
    for _, w in ipairs({ v.orig_win, v.prop_win }) do
      vim.api.nvim_win_call(w, function()
        vim.cmd("diffthis")
      end)
    end
  end

  local rel = vim.fn.fnamemodify(v.old_path, ":~:.")
  local left = v.is_new and (rel .. " (new file)")
    or v.dirty and (rel .. " on disk; your buffer has unsaved changes")
    or (rel .. " (on disk)")
  if v.orig_win then
    vim.wo[v.orig_win].winbar = " " .. winbar_escape(left)
    vim.wo[v.prop_win].winbar = " " .. winbar_escape("Proposed by Claude: :w accept, :q reject")
  else
    local large = v.large and (", %s: shown inline"):format(util.human_bytes(v.bytes)) or ""
    vim.wo[v.prop_win].winbar = " "
      .. winbar_escape(("Claude's proposal for %s (- removed, + added%s): :w accept, :q reject"):format(left, large))
  end
  v.tick = vim.api.nvim_buf_get_changedtick(v.prop_buf)

  vim.api.nvim_create_autocmd("BufWriteCmd", {
    group = group,
    buffer = v.prop_buf,
    callback = function()
      M.accept(v)
      -- A BufWriteCmd that wrote resets 'modified' (so that :wq goes on to quit).
      vim.bo[v.prop_buf].modified = false
    end,
    desc = "claude-context: accept the proposal",
  })
  -- `:q` in an edited proposal rejects it, as the winbar says: without this, 'bufhidden' wipe
  -- turns it into E37 (No write since last change). `:w` is the way to keep the edits.
  vim.api.nvim_create_autocmd("QuitPre", {
    group = group,
    buffer = v.prop_buf,
    callback = function()
      if not v.closed and vim.api.nvim_get_current_buf() == v.prop_buf then
        vim.bo[v.prop_buf].modified = false
      end
    end,
    desc = "claude-context: :q rejects the proposal, edited or not",
  })
  for _, b in ipairs({ v.orig_buf, v.prop_buf }) do
    vim.api.nvim_create_autocmd("BufWipeout", {
      group = group,
      buffer = b,
      callback = function()
        if not v.closed then
          M.reject(v)
        end
      end,
      desc = "claude-context: closing a side of the diff rejects it",
    })
  end
  if v.dirty then
    notify(
      ("%s has unsaved changes; the proposal is based on the file on disk. Accepting it lets Claude write the file."):format(rel),
      vim.log.levels.WARN
    )
  end
  if busy and not v.in_place then
    -- Back where the person was, in the same event-loop turn (nothing was drawn meanwhile):
    -- Insert, Terminal-Job or Visual mode goes on in their window, and their keys stay theirs.
    v.unfocused = true
    if vim.api.nvim_tabpage_is_valid(v.prev_tab) then
      vim.api.nvim_set_current_tabpage(v.prev_tab)
    end
    if vim.api.nvim_win_is_valid(prev_win) then
      vim.api.nvim_set_current_win(prev_win)
    end
  end
  if busy then
    notify(
      ("Claude proposes a change to %s: diff in tab %d, not focused (%s); :ClaudeContext diff goes there"):format(
        rel,
        vim.api.nvim_tabpage_get_number(v.tab),
        busy
      )
    )
  end
  vim.api.nvim_exec_autocmds("User", {
    pattern = "ClaudeContextDiffOpened",
    modeline = false,
    data = { name = v.name, file = v.old_path, tab = v.tab, focused = not busy, buf = v.prop_buf },
  })
  return nil
end

---`:ClaudeContext diff`: goes to the proposal window of the diff waiting (the only one, or the
---one of the current tab).
---@return boolean ok, string? err
function M.focus()
  local v, err = M.current()
  if not v then
    return false, err
  end
  if not (v.prop_win and vim.api.nvim_win_is_valid(v.prop_win)) then
    return false, "the diff " .. v.name .. " has no window"
  end
  if vim.api.nvim_get_mode().mode:sub(1, 1) ~= "n" then
    vim.cmd("stopinsert")
  end
  vim.api.nvim_set_current_win(v.prop_win)
  return true
end

---openDiff: opens the view and answers when the person decides. Returns the cancel function
---(the client went away: the view closes, nothing is written).
---
---From the bridge, `params.prepared` describes a proposal prepared off the main thread (see
---crates/core/src/proposal.rs); called directly, `params.new_file_contents` holds the text.
---@param params {old_file_path: string, new_file_path: string, new_file_contents: string?, tab_name: string, prepared: table?}
---@param respond fun(result: table?, err: string?)
---@return fun()? cancel
function M.open(params, respond)
  local prep = type(params.prepared) == "table" and params.prepared or nil
  for _, k in ipairs({ "old_file_path", "new_file_path", "tab_name", not prep and "new_file_contents" or nil }) do
    if type(params[k]) ~= "string" then
      respond(nil, ("openDiff: %s must be a string"):format(k))
      return nil
    end
  end
  local old_path = util.abspath(params.old_file_path)
  local is_new, old_size
  if prep then
    is_new = prep.is_new == true
  else
    -- The old file is read into the left side: a regular file of a sane size, or nothing (a
    -- new file). A FIFO, socket or device is refused here, at once, without opening it.
    local st, why = util.regular_file(old_path)
    if why then
      respond(nil, "openDiff: " .. why)
      return nil
    end
    is_new, old_size = st == nil, st and st.size or 0
  end
  local buf = util.find_buf(old_path)
  ---@type claude_context.DiffView
  local v = {
    name = params.tab_name,
    old_path = old_path,
    new_path = util.abspath(params.new_file_path),
    contents = params.new_file_contents,
    prep = prep,
    is_new = is_new,
    dirty = buf ~= nil and vim.bo[buf].modified,
    respond = respond,
    tick = 0,
    eol = true,
    crlf = false,
  }
  M.opening[v] = true
  local function fail(err)
    M.close(v)
    if v.respond then
      local r = v.respond
      v.respond = nil
      r(nil, "openDiff: cannot show the diff: " .. tostring(err))
    end
  end
  -- From the event queue: a safe point to make tabs and windows (not inside the bridge's wake-up).
  vim.schedule(function()
    M.opening[v] = nil
    if v.cancelled or v.closed then
      return
    end
    local previous = M.views[v.name]
    if previous then
      M.reject(previous)
      M.close(previous)
    end
    M.views[v.name] = v
    require("claude_context.ide.snapshot").note_diffs()
    if prep then
      v.eol, v.crlf, v.bytes = prep.new_eol, prep.new_crlf, prep.bytes
    else
      local old_text = {}
      if not is_new then
        local lines, err = util.read_lines(old_path)
        if not lines then
          return fail(("cannot read %s: %s"):format(old_path, err))
        end
        old_text = lines
      end
      v.mem_old = old_text
      v.mem_new, v.eol, v.crlf = util.split(v.contents)
      v.bytes = #v.contents + old_size
    end
    v.large = v.bytes > M.options().diffmode_max_bytes
    local ok, err = pcall(build, v, function(berr)
      v.mem_old, v.mem_new = nil, nil
      if v.closed or v.cancelled then
        return
      end
      if berr then
        return fail(berr)
      end
      local sok, serr = pcall(show, v)
      if not sok or serr then
        fail(serr)
      end
    end)
    if not ok then
      fail(err)
    end
  end)
  return function()
    v.cancelled = true
    M.opening[v] = nil
    v.decision = v.decision or "cancelled"
    v.respond = nil
    vim.schedule(function()
      if not v.closed and v.tab then
        notify(("Claude stopped waiting: closed the diff %s (nothing was written)"):format(v.name))
      end
      M.close(v)
    end)
  end
end

---The view the person means: the one in the current tab, else the only one pending.
---@return claude_context.DiffView? view, string? err
function M.current()
  local name = vim.t.claude_context_diff
  if name and M.views[name] then
    return M.views[name]
  end
  local buf = vim.api.nvim_get_current_buf()
  for _, v in pairs(M.views) do
    if buf == v.prop_buf or buf == v.orig_buf then
      return v
    end
  end
  local pending = vim.tbl_filter(function(v)
    return v.respond ~= nil
  end, vim.tbl_values(M.views))
  if #pending == 1 then
    return pending[1]
  elseif #pending == 0 then
    return nil, "no diff from Claude is waiting for a decision"
  end
  return nil, ("%d diffs are waiting; run this in the tab of the one you mean"):format(#pending)
end

---Closes the view called `name` (a pending one is rejected), and any orphaned tab of ours with
---that name. Returns whether anything was closed.
---@param name string
---@return boolean
function M.close_named(name)
  local closed = false
  local v = M.views[name]
  if v then
    M.reject(v)
    M.close(v)
    closed = true
  end
  for _, tab in ipairs(vim.api.nvim_list_tabpages()) do
    if vim.t[tab].claude_context_diff == name and #vim.api.nvim_list_tabpages() > 1 then
      pcall(vim.cmd, "tabclose! " .. vim.api.nvim_tabpage_get_number(tab))
      closed = true
    end
  end
  return closed
end

---Closes every view of ours (pending ones are rejected, also those not on screen yet) and
---orphaned tabs marked as ours.
---@return integer count
function M.close_all()
  local n = 0
  for v in pairs(M.opening) do
    M.opening[v] = nil
    if not v.cancelled and v.respond then
      M.reject(v)
      M.close(v)
      n = n + 1
    end
  end
  for _, v in ipairs(vim.tbl_values(M.views)) do
    M.reject(v)
    M.close(v)
    n = n + 1
  end
  for _, tab in ipairs(vim.api.nvim_list_tabpages()) do
    if vim.api.nvim_tabpage_is_valid(tab) and vim.t[tab].claude_context_diff and #vim.api.nvim_list_tabpages() > 1 then
      pcall(vim.cmd, "tabclose! " .. vim.api.nvim_tabpage_get_number(tab))
      n = n + 1
    end
  end
  return n
end

return M
