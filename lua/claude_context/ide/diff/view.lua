---@mod claude_context.ide.diff.view A diff view on screen
---
--- A view is a new tab with two windows: on the left the file as it is on disk (read-only, or
--- empty for a new file), on the right Claude's proposal (buftype=acwrite); or, with the inline
--- layout, the proposal alone with the removed lines as virtual lines. Both buffers are scratch
--- buffers of ours, wiped when the view closes: the person's own buffer of the file is never
--- touched. The tab carries `t:claude_context_diff` (the view's name) and the proposal buffer
--- `b:claude_context_diff`, so closeAllDiffTabs closes ours only.

local M = {}

local util = require("claude_context.ide.util")
local cfg = require("claude_context.ide.diff.config")
local inline = require("claude_context.ide.diff.inline")
local notify = util.notify

---A proposal the bridge prepared off the main thread (crates/core/src/proposal.rs: Summary).
---@class claude_context.PreparedProposal
---@field id integer
---@field is_new boolean
---@field old_lines integer
---@field new_lines integer
---@field bytes integer Both sides together
---@field hunks integer
---@field old_eol boolean
---@field old_crlf boolean
---@field new_eol boolean
---@field new_crlf boolean

---@class claude_context.DiffView
---@field name string tab_name
---@field old_path string
---@field new_path string
---@field contents string? the proposal as sent (nil when the bridge keeps it)
---@field is_new boolean the file does not exist yet
---@field dirty boolean the person's buffer of the file had unsaved changes
---@field own_buf integer? the person's buffer of the file, when openDiff arrived
---@field respond fun(result: claude_context.ToolResult?, err: string?)? nil once answered or cancelled
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
---@field prep claude_context.PreparedProposal? the bridge's prepared proposal
---@field hunks integer[][]? the prepared hunks (vim.diff() "indices")
---@field large boolean? bigger than diff.diffmode_max_bytes: inline, marks placed in slices
---@field bytes integer both sides' size
---@field old_size integer? the old file's size (a direct call without the bridge)
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

local function winbar_escape(s)
  return (s:gsub("%%", "%%%%"))
end

---Views that hid the tabline (see open_tab()); the person's 'showtabline' comes back when none
---is left or they enter a diff tab.
local tabline_hidden_by = {}

---Puts 'showtabline' back to 1 (only if the plugin set it to 0 and nobody changed it since).
local function restore_tabline()
  if next(tabline_hidden_by) == nil then
    return
  end
  tabline_hidden_by = {}
  if vim.o.showtabline == 0 then
    vim.o.showtabline = 1
  end
end

---@param v claude_context.DiffView
local function hide_tabline(v)
  tabline_hidden_by[v.name] = true
  vim.o.showtabline = 0
  vim.api.nvim_create_autocmd("TabEnter", {
    group = group,
    callback = function()
      if vim.t.claude_context_diff then
        restore_tabline()
        return true
      end
      return not next(tabline_hidden_by)
    end,
    desc = "claude-context: the tabline back when entering a diff tab",
  })
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
  if tabline_hidden_by[v.name] then
    tabline_hidden_by[v.name] = nil
    if next(tabline_hidden_by) == nil then
      -- Restored once the tab is gone: with one tab page left the tabline stays hidden anyway.
      tabline_hidden_by[v.name] = true
      restore_tabline()
    end
  end
end

---The view's filetype: as the person's buffer of the file has it, else from the file name and
---the proposal's first lines.
---@param v claude_context.DiffView
---@return string?
local function filetype_of(v)
  local own = v.own_buf and vim.api.nvim_buf_is_valid(v.own_buf) and v.own_buf or nil
  if own and vim.bo[own].filetype ~= "" then
    return vim.bo[own].filetype
  end
  return vim.filetype.match({ filename = v.old_path, contents = vim.api.nvim_buf_get_lines(v.prop_buf, 0, 64, false) })
end

---Gives the filled buffers their roles: the file side read-only, the proposal a buffer `:w`
---writes through us, both with the file's filetype. Done before `show`, in a turn of its own.
---@param v claude_context.DiffView
function M.set_up_buffers(v)
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
end

---diff.tab = "current": splits of a file window in the person's tab page (never of Claude's
---terminal, whose fixed width the splits leave alone). Nothing to come back from when busy:
---not entered.
---@param v claude_context.DiffView
---@param busy string? why the cursor stays where it is
local function open_in_place(v, busy)
  local target = require("claude_context.util.windows").edit_target()
  v.tab = vim.api.nvim_get_current_tabpage()
  v.in_place = true
  local vertical = v.layout ~= "horizontal"
  if v.layout == "inline" then
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
end

---diff.tab = "new": a tab page of its own (entered; open() comes back when busy).
---@param v claude_context.DiffView
---@param busy string?
local function open_tab(v, busy)
  if busy and vim.o.showtabline == 1 and #vim.api.nvim_list_tabpages() == 1 then
    -- The tabline would appear in the person's tab page and take a line from every window
    -- there: Claude's terminal would be resized (and the CLI redraw) on open and again on
    -- close. Keep it hidden while the diff waits unseen; entering the diff tab brings it back.
    hide_tabline(v)
  end
  vim.cmd("tabnew")
  v.tab = vim.api.nvim_get_current_tabpage()
  local placeholder = vim.api.nvim_get_current_buf()
  local first = vim.api.nvim_get_current_win()
  if v.layout == "inline" then
    v.prop_win = first
    vim.api.nvim_win_set_buf(first, v.prop_buf)
  else
    v.orig_win = first
    vim.api.nvim_win_set_buf(v.orig_win, v.orig_buf)
    vim.cmd(v.layout == "horizontal" and "rightbelow split" or "rightbelow vsplit")
    v.prop_win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(v.prop_win, v.prop_buf)
  end
  if vim.api.nvim_buf_is_valid(placeholder) and placeholder ~= v.orig_buf and placeholder ~= v.prop_buf then
    pcall(vim.api.nvim_buf_delete, placeholder, { force = true })
  end
  vim.t[v.tab].claude_context_diff = v.name
end

---Shows the difference: the inline marks, or Vim's diff mode in both windows.
---@param v claude_context.DiffView
local function mark_changes(v)
  if v.layout ~= "inline" then
    for _, w in ipairs({ v.orig_win, v.prop_win }) do
      vim.api.nvim_win_call(w, function()
        vim.cmd("diffthis")
      end)
    end
    return
  end
  inline.render(v)
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
          inline.render(v, inline.hunks(v))
        end
      end,
      desc = "claude-context: keep the inline diff's marks current",
    })
  end
end

---The winbars: what each side is, and how to decide.
---@param v claude_context.DiffView
---@param rel string the file's name for people
local function set_winbars(v, rel)
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
end

---The decisions (claude_context.ide.diff.decide's `accept` and `reject`, which close the view).
---@class claude_context.DiffDecisions
---@field accept fun(v: claude_context.DiffView)
---@field reject fun(v: claude_context.DiffView)

---The decisions: `:w` accepts, `:q` (edited or not) and wiping either side reject.
---@param v claude_context.DiffView
---@param decide claude_context.DiffDecisions
local function bind_decisions(v, decide)
  vim.api.nvim_create_autocmd("BufWriteCmd", {
    group = group,
    buffer = v.prop_buf,
    callback = function()
      decide.accept(v)
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
          decide.reject(v)
        end
      end,
      desc = "claude-context: closing a side of the diff rejects it",
    })
  end
end

---When the person is busy: back where they were, and told where the diff is.
---@param v claude_context.DiffView
---@param busy string
---@param rel string
local function step_aside(v, busy, rel)
  if not v.in_place then
    -- Back where the person was, in the same event-loop turn (nothing was drawn meanwhile):
    -- Insert, Terminal-Job or Visual mode goes on in their window, and their keys stay theirs.
    v.unfocused = true
    if vim.api.nvim_tabpage_is_valid(v.prev_tab) then
      vim.api.nvim_set_current_tabpage(v.prev_tab)
    end
    if vim.api.nvim_win_is_valid(v.prev_win) then
      vim.api.nvim_set_current_win(v.prev_win)
    end
  end
  notify(
    ("Claude proposes a change to %s: diff in tab %d, not focused (%s); :ClaudeContext diff goes there"):format(
      rel,
      vim.api.nvim_tabpage_get_number(v.tab),
      busy
    )
  )
end

---Sets up the view's tab, windows and autocommands (its buffers are filled and set up:
---`set_up_buffers`); `decide` answers the person's `:w` and `:q`.
---@param v claude_context.DiffView
---@param decide claude_context.DiffDecisions
function M.show(v, decide)
  v.prev_tab = vim.api.nvim_get_current_tabpage()
  v.prev_win = vim.api.nvim_get_current_win()
  local o = cfg.options()
  local busy = cfg.busy_reason(o)
  v.layout = v.large and "inline" or o.layout
  if o.tab == "current" then
    open_in_place(v, busy)
  else
    open_tab(v, busy)
  end
  mark_changes(v)
  local rel = vim.fn.fnamemodify(v.old_path, ":~:.")
  set_winbars(v, rel)
  v.tick = vim.api.nvim_buf_get_changedtick(v.prop_buf)
  bind_decisions(v, decide)
  if v.dirty then
    notify(
      ("%s has unsaved changes; the proposal is based on the file on disk. Accepting it lets Claude write the file."):format(
        rel
      ),
      vim.log.levels.WARN
    )
  end
  if busy then
    step_aside(v, busy, rel)
  end
  vim.api.nvim_exec_autocmds("User", {
    pattern = "ClaudeContextDiffOpened",
    modeline = false,
    data = { name = v.name, file = v.old_path, tab = v.tab, focused = not busy, buf = v.prop_buf },
  })
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

return M
