---@mod claude_context.util.windows Where the plugin opens files
---
--- Commands run from Claude's terminal (or a sidebar, a float, a help window) must not replace
--- that window with a file: `edit_target()` finds a window for editing instead.

local M = {}

---Is `win` a window to edit files in: not floating, showing a normal buffer (or an empty one)?
---@param win integer
---@return boolean
function M.is_edit_win(win)
  if not vim.api.nvim_win_is_valid(win) or vim.api.nvim_win_get_config(win).relative ~= "" then
    return false
  end
  local buf = vim.api.nvim_win_get_buf(win)
  if vim.bo[buf].buftype ~= "" or vim.b[buf].claude_context_terminal or vim.wo[win].winfixbuf then
    return false
  end
  return true
end

---A window of the current tab page to edit a file in: the current one when it is fit, else the
---previous one (|CTRL-W_p|), else the first fit one, else a new split left of everything.
---@return integer win
function M.edit_target()
  local cur = vim.api.nvim_get_current_win()
  if M.is_edit_win(cur) then
    return cur
  end
  local prev = vim.fn.win_getid(vim.fn.winnr("#"))
  if prev ~= 0 and M.is_edit_win(prev) then
    return prev
  end
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if M.is_edit_win(w) then
      return w
    end
  end
  if vim.api.nvim_win_get_config(cur).relative ~= "" then
    -- From a float: a split of the window under it would land beside it; use the editor.
    vim.cmd("noautocmd wincmd p")
  end
  vim.cmd("topleft vnew")
  local win = vim.api.nvim_get_current_win()
  vim.bo[vim.api.nvim_win_get_buf(win)].bufhidden = "wipe"
  return win
end

---Makes `edit_target()` current, unless the modifiers (`:tab`, `:vertical`, …) ask for a new tab:
---where a file opened for editing goes (never Claude's terminal).
---@param mods string?
function M.enter_edit_target(mods)
  if not (mods or ""):match("tab") then
    vim.api.nvim_set_current_win(M.edit_target())
  end
end

---`base`, or `fmt:format(base, n)` for the first n = 2, 3, … that no buffer is named yet.
---@param base string
---@param fmt string e.g. "%s (%d)"
---@return string
function M.unused_buffer_name(base, fmt)
  local name, n = base, 1
  while vim.fn.bufexists(name) == 1 do
    n = n + 1
    name = fmt:format(base, n)
  end
  return name
end

return M
