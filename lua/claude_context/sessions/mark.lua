---@mod claude_context.sessions.mark A state mark for each Claude terminal (winbar, tabline)
---
--- With `sessions.mark = true` (the default) the windows showing a Claude terminal get a
--- winbar with its session's state: a glyph, the state and the prompt's first line. For a
--- tabline, `require("claude_context.sessions.mark").tab(tabnr)` is the glyph of the tab page's
--- session (`terminal.per_tab`), "" when it has none. Updated from `User
--- ClaudeContextSessionState` (no work at redraw beyond a table look-up).

local M = {}

---The glyph of each state (change it to taste).
M.glyphs = { working = "◐", waiting = "●", done = "✓", idle = "○", ended = "·" }

---The last session view seen for each terminal name.
---@type table<string, claude_context.Session>
M.by_terminal = {}

local function enabled()
  return require("claude_context.config.sessions").options().mark ~= false
end

---The terminal name of buffer `buf`, if it is a Claude terminal of this Neovim.
---@param buf integer
---@return string?
local function terminal_of(buf)
  local term = package.loaded["claude_context.terminal.sessions"]
  if not term then
    return nil
  end
  for name, st in pairs(term.by_name) do
    if st.buf == buf then
      return name
    end
  end
  return nil
end

---The mark of terminal `name`: glyph and state, or "".
---@param name string?
---@param long boolean? with the prompt
---@return string
function M.mark(name, long)
  local s = name and M.by_terminal[name]
  if not s or not s.state then
    return ""
  end
  local text = ("%s %s"):format(M.glyphs[s.state] or "?", s.state)
  if long and type(s.prompt) == "string" and s.prompt ~= "" then
    text = text .. " · " .. vim.fn.strcharpart(s.prompt, 0, 60)
  end
  return text
end

---The winbar of the window being drawn (`%{%…%}` in 'winbar').
---@return string
function M.winbar()
  local win = vim.g.statusline_winid or vim.api.nvim_get_current_win()
  local ok, buf = pcall(vim.api.nvim_win_get_buf, win)
  if not ok then
    return ""
  end
  local text = M.mark(terminal_of(buf), true)
  return (text:gsub("%%", "%%%%"))
end

---The glyph of tab page `tabnr`'s session ("" when none), for a tabline.
---@param tabnr integer? the tab page number (default the current)
---@return string
function M.tab(tabnr)
  local tab = tabnr and vim.api.nvim_list_tabpages()[tabnr] or vim.api.nvim_get_current_tabpage()
  if not tab then
    return ""
  end
  local ok, name = pcall(vim.api.nvim_tabpage_get_var, tab, "claude_context_session")
  if not ok then
    name = "main"
  end
  local s = M.by_terminal[name]
  return s and (M.glyphs[s.state] or "") or ""
end

local WINBAR = "%{%v:lua.require'claude_context.sessions.mark'.winbar()%}"

---Gives the windows showing Claude terminals the winbar (or takes it away when off).
function M.refresh()
  local on = enabled()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    local buf = vim.api.nvim_win_get_buf(win)
    local has = vim.wo[win].winbar == WINBAR
    local want = on
      and vim.b[buf].claude_context_terminal == true
      and terminal_of(buf) ~= nil
      and M.by_terminal[terminal_of(buf)] ~= nil
    if want and not has and vim.api.nvim_win_get_config(win).relative == "" then
      vim.wo[win].winbar = WINBAR
    elseif not want and has then
      vim.wo[win].winbar = ""
    end
  end
end

local group

---Installs the autocmds (idempotent).
function M.start()
  if group then
    return
  end
  group = vim.api.nvim_create_augroup("ClaudeContextSessionMark", { clear = true })
  vim.api.nvim_create_autocmd("User", {
    group = group,
    pattern = "ClaudeContextSessionState",
    callback = function(ev)
      local s = ev.data and ev.data.session
      if type(s) == "table" and type(s.terminal) == "string" then
        M.by_terminal[s.terminal] = s
        M.refresh()
      end
    end,
  })
  vim.api.nvim_create_autocmd({ "BufWinEnter", "WinNew", "TermOpen" }, {
    group = group,
    callback = function()
      vim.schedule(M.refresh)
    end,
  })
end

return M
