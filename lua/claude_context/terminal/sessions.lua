---@mod claude_context.terminal.sessions Claude terminal sessions of this Neovim
---
--- Each session is a state `{ buf, job, cmd, mcp_config, port, provider, name, last_output }`;
--- `current` is the current session's (an empty table when it has no terminal). With
--- `terminal.per_tab`, each tab page has its own session.

---@class claude_context.TerminalSessions
local M = {}

---A Claude terminal session of this Neovim (fields nil until its terminal starts).
---@class claude_context.TerminalState
---@field buf integer?
---@field job integer?
---@field cmd string[]?
---@field mcp_config string?
---@field port integer?
---@field provider claude_context.TerminalProvider?
---@field name string?
---@field last_output integer? uv.now() of its last output
---@field started_ms integer? uv.now() when its job started

---One line of |list|.
---@class claude_context.TerminalSession
---@field name string
---@field running boolean
---@field current boolean
---@field buf integer?

---Sessions by name ("main" first).
---@type table<string, claude_context.TerminalState>
M.by_name = {}
---The current session's name.
M.name = "main"
---The current session's state.
---@type claude_context.TerminalState
M.current = {}

---Whether `state`'s job (default: the current session's) runs in a buffer that still exists.
---@param state claude_context.TerminalState?
---@return boolean
function M.job_running(state)
  local s = state or M.current
  if not (s.job and s.buf and vim.api.nvim_buf_is_valid(s.buf)) then
    return false
  end
  return vim.fn.jobwait({ s.job }, 0)[1] == -1
end

---@return integer[] windows of the current tab page showing the current session's terminal
function M.windows()
  local out = {}
  local buf = M.current.buf
  if not (buf and vim.api.nvim_buf_is_valid(buf)) then
    return out
  end
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(w) == buf then
      table.insert(out, w)
    end
  end
  return out
end

---Makes `state` the current session's (a terminal just started).
---@param state claude_context.TerminalState
function M.adopt(state)
  state.name = M.name
  M.current = state
  M.by_name[M.name] = state
end

---The session's buffer is gone: forget it.
---@param state claude_context.TerminalState
function M.forget(state)
  if state.name and M.by_name[state.name] == state then
    M.by_name[state.name] = nil
  end
  if M.current == state then
    M.current = {}
  end
end

---Makes `name` the current session.
---@param name string
function M.select(name)
  if name ~= M.name then
    M.name = name
    M.current = M.by_name[name] or {}
  end
end

---With `per_tab`, makes the current tab page's session (named after the tab page, kept in
---`t:claude_context_session`) the current one.
function M.sync_tab()
  local ok, o = pcall(require("claude_context.config.terminal").options)
  if not (ok and o.per_tab) then
    return
  end
  local name = vim.t.claude_context_session
  if not name then
    name = "tab " .. vim.api.nvim_get_current_tabpage()
    vim.t.claude_context_session = name
  end
  M.select(name)
end

---The sessions: `{ name, running, current, buf }`, "main" first, then by name.
---@return claude_context.TerminalSession[]
function M.list()
  local names = vim.tbl_keys(M.by_name)
  if not M.by_name[M.name] and not vim.tbl_contains(names, M.name) then
    table.insert(names, M.name)
  end
  table.sort(names, function(a, b)
    if a == "main" or b == "main" then
      return a == "main" and b ~= "main"
    end
    return a < b
  end)
  return vim.tbl_map(function(n)
    local st = M.by_name[n] or {}
    local running = st.job ~= nil and vim.fn.jobwait({ st.job }, 0)[1] == -1
    return { name = n, running = running, current = n == M.name, buf = st.buf }
  end, names)
end

---A buffer name for the terminal nobody uses yet: `claude://<project>` (the working directory's
---name), `claude://<project> (2)` and so on.
---@return string
function M.buffer_name()
  local base = "claude://" .. vim.fn.fnamemodify(vim.fn.getcwd(), ":t")
  if M.name ~= "main" then
    base = ("%s [%s]"):format(base, M.name)
  end
  return require("claude_context.util.windows").unused_buffer_name(base, "%s (%d)")
end

return M
