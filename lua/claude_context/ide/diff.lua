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
---@field contents string the proposal as sent
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

---@type table<string, claude_context.DiffView>
M.views = {}

---Views whose openDiff arrived but whose tab is not on screen yet (set up on the next event-loop
---turn): closeAllDiffTabs rejects and counts them too.
---@type table<claude_context.DiffView, true>
M.opening = {}

local group = vim.api.nvim_create_augroup("ClaudeContextDiff", { clear = true })

local function notify(msg, level)
  vim.notify("claude-context: " .. msg, level or vim.log.levels.INFO, { title = "claude-context" })
end

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

local function scratch(name, lines, ft)
  local b = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(b, unique_name(name))
  vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
  vim.bo[b].bufhidden = "wipe"
  vim.bo[b].swapfile = false
  if ft then
    pcall(function()
      vim.bo[b].filetype = ft
    end)
  end
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

---The final contents of the proposal: exactly what Claude sent when the person did not edit it.
---@param v claude_context.DiffView
---@return string
local function final_contents(v)
  if vim.api.nvim_buf_get_changedtick(v.prop_buf) == v.tick then
    return v.contents
  end
  local lines = vim.api.nvim_buf_get_lines(v.prop_buf, 0, -1, false)
  return util.join(lines, vim.bo[v.prop_buf].eol, vim.bo[v.prop_buf].fileformat == "dos")
end

---Accepts: answers FILE_SAVED with the proposal as it is now, closes the view.
---@param v claude_context.DiffView
---@return boolean answered
function M.accept(v)
  if v.closed or not v.respond then
    return false
  end
  local contents = final_contents(v)
  v.decision = v.decision or "accepted"
  answer(v, { result = "FILE_SAVED", contents = contents })
  vim.bo[v.prop_buf].modified = false
  reload_when_written(v.old_path)
  vim.schedule(function()
    M.close(v)
  end)
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
  if v.closed or not v.respond then
    return nil, 0
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
  answer(v, { result = "FILE_SAVED", contents = contents })
  vim.bo[v.prop_buf].modified = false
  reload_when_written(v.old_path)
  vim.schedule(function()
    M.close(v)
  end)
  return taken, #hunks
end

local inline_ns = vim.api.nvim_create_namespace("claude_context_diff_inline")

---The inline layout: the proposal in one buffer, added and changed lines highlighted
---(DiffAdd / DiffChange), the file's removed lines shown above them as virtual lines (DiffDelete).
---@param v claude_context.DiffView
function M.inline(v)
  vim.api.nvim_buf_clear_namespace(v.prop_buf, inline_ns, 0, -1)
  local hunks, old_lines, new_lines = M.hunks(v)
  for _, h in ipairs(hunks) do
    local a_start, a_count, b_start, b_count = h[1], h[2], h[3], h[4]
    local virt = {}
    for i = (a_count == 0 and a_start + 1 or a_start), (a_count == 0 and a_start or a_start + a_count - 1) do
      table.insert(virt, { { "- " .. (old_lines[i] or ""), "DiffDelete" } })
    end
    for i = b_start, b_start + b_count - 1 do
      vim.api.nvim_buf_set_extmark(v.prop_buf, inline_ns, i - 1, 0, {
        line_hl_group = a_count > 0 and "DiffChange" or "DiffAdd",
        sign_text = "+",
        sign_hl_group = "DiffAdd",
      })
    end
    if #virt > 0 then
      -- Above the hunk's first line; a deletion (after line b_start) above the line after it,
      -- or below the last line when it was at the end.
      local row = b_count > 0 and b_start - 1 or b_start
      local above = true
      if row >= #new_lines then
        row, above = math.max(0, #new_lines - 1), false
      end
      vim.api.nvim_buf_set_extmark(v.prop_buf, inline_ns, row, 0, { virt_lines = virt, virt_lines_above = above })
    end
  end
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
M.defaults = { focus = "normal", typing_ms = 1000, layout = "vertical", tab = "new" }

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

---Sets up the view's tab, windows and autocommands.
---@param v claude_context.DiffView
local function show(v)
  local old_lines = {}
  if not v.is_new then
    local lines, err = util.read_lines(v.old_path)
    if not lines then
      return ("cannot read %s: %s"):format(v.old_path, err)
    end
    old_lines = lines
  end
  local new_lines, eol, crlf = util.split(v.contents)
  -- Highlight as the person's buffer of the file is, else as the file name says.
  local own = util.find_buf(v.old_path)
  local ft = own and vim.bo[own].filetype ~= "" and vim.bo[own].filetype
    or vim.filetype.match({ filename = v.old_path, contents = new_lines })

  v.orig_buf = scratch(
    ("claude-context://%s (%s)"):format(v.name, v.is_new and "new file" or "original"),
    old_lines,
    ft
  )
  vim.bo[v.orig_buf].modifiable = false
  vim.bo[v.orig_buf].readonly = true

  v.prop_buf = scratch(("claude-context://%s (proposed)"):format(v.name), new_lines, ft)
  vim.bo[v.prop_buf].buftype = "acwrite"
  vim.bo[v.prop_buf].eol = eol
  vim.bo[v.prop_buf].fixeol = eol
  vim.bo[v.prop_buf].fileformat = crlf and "dos" or "unix"
  vim.bo[v.prop_buf].modified = false
  vim.b[v.prop_buf].claude_context_diff = v.name

  v.prev_tab = vim.api.nvim_get_current_tabpage()
  local prev_win = vim.api.nvim_get_current_win()
  v.prev_win = prev_win
  local o = M.options()
  local busy = M.busy_reason(o)
  v.layout = o.layout
  if o.tab == "current" then
    -- In the person's tab page: splits of a file window (never of Claude's terminal, whose
    -- fixed width the splits leave alone). Nothing to come back from when busy: not entered.
    local target = require("claude_context.windows").edit_target()
    v.tab = vim.api.nvim_get_current_tabpage()
    v.in_place = true
    local vertical = o.layout ~= "horizontal"
    if o.layout == "inline" then
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
    if o.layout == "inline" then
      v.prop_win = first
      vim.api.nvim_win_set_buf(first, v.prop_buf)
    else
      v.orig_win = first
      vim.api.nvim_win_set_buf(v.orig_win, v.orig_buf)
      vim.cmd(o.layout == "horizontal" and "rightbelow split" or "rightbelow vsplit")
      v.prop_win = vim.api.nvim_get_current_win()
      vim.api.nvim_win_set_buf(v.prop_win, v.prop_buf)
    end
    if vim.api.nvim_buf_is_valid(placeholder) and placeholder ~= v.orig_buf and placeholder ~= v.prop_buf then
      pcall(vim.api.nvim_buf_delete, placeholder, { force = true })
    end
    vim.t[v.tab].claude_context_diff = v.name
  end
  if o.layout == "inline" then
    M.inline(v)
    vim.api.nvim_create_autocmd({ "TextChanged", "TextChangedI" }, {
      group = group,
      buffer = v.prop_buf,
      callback = function()
        if not v.closed then
          M.inline(v)
        end
      end,
      desc = "claude-context: keep the inline diff's marks current",
    })
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
    vim.wo[v.prop_win].winbar = " " .. winbar_escape(("Claude's proposal for %s (- removed, + added): :w accept, :q reject"):format(left))
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
---@param params {old_file_path: string, new_file_path: string, new_file_contents: string, tab_name: string}
---@param respond fun(result: table?, err: string?)
---@return fun()? cancel
function M.open(params, respond)
  for _, k in ipairs({ "old_file_path", "new_file_path", "new_file_contents", "tab_name" }) do
    if type(params[k]) ~= "string" then
      respond(nil, ("openDiff: %s must be a string"):format(k))
      return nil
    end
  end
  local old_path = util.abspath(params.old_file_path)
  -- The old file is read into the left side: a regular file of a sane size, or nothing (a new
  -- file). A FIFO, socket or device is refused here, at once, without opening it.
  local st, why = util.regular_file(old_path)
  if why then
    respond(nil, "openDiff: " .. why)
    return nil
  end
  local buf = util.find_buf(old_path)
  ---@type claude_context.DiffView
  local v = {
    name = params.tab_name,
    old_path = old_path,
    new_path = util.abspath(params.new_file_path),
    contents = params.new_file_contents,
    is_new = st == nil,
    dirty = buf ~= nil and vim.bo[buf].modified,
    respond = respond,
    tick = 0,
    eol = true,
    crlf = false,
  }
  M.opening[v] = true
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
    local ok, err = pcall(show, v)
    if not ok or err then
      M.close(v)
      if v.respond then
        local r = v.respond
        v.respond = nil
        r(nil, "openDiff: cannot show the diff: " .. tostring(err))
      end
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
