---@mod claude_context.sessions.route Which Claude session gets the selection and @-mentions
---
--- The bridge sends `selection_changed` and `at_mentioned` to the session the person works
--- with: the Claude terminal last entered (focused, or last used), or with `terminal.per_tab`
--- the tab page's session; else the current session. It pairs a connected Claude Code with a
--- terminal by the pid the CLI sent in `ide_connected` (the terminal job's, or a descendant's).
--- Claude Code started outside Neovim gets them when no Claude terminal of this Neovim is in use
--- (none is running, or its Claude is not connected). Off with `sessions.route = false`.

local M = {}

---The Claude terminal the selection and mentions go to.
---@class claude_context.RouteTarget
---@field name string The terminal's name
---@field pid integer Its job's process id

---The terminal's sessions, when the terminal was used (looking loads nothing: without it there
---is no Claude terminal to route to).
---@return claude_context.TerminalSessions?
local function terminals()
  return package.loaded["claude_context.terminal.sessions"]
end

---The state of the Claude terminal last entered, if any.
---@type claude_context.TerminalState?
M.last = nil

---The bridge's port (read once per start).
---@type integer?
M.port = nil

---The route last sent.
---@type {target: integer?, terminals: integer[], name: string?, port: integer}?
M.sent = nil

local function running_pid(st)
  if not (st and st.job and st.buf and vim.api.nvim_buf_is_valid(st.buf)) then
    return nil
  end
  local ok, pid = pcall(vim.fn.jobpid, st.job)
  if ok and type(pid) == "number" and pid > 0 then
    return pid
  end
  return nil
end

local function per_tab()
  local ok, o = pcall(require("claude_context.config.terminal").options)
  return ok and o.per_tab
end

local function enabled()
  return require("claude_context.config.sessions").options().route ~= false
end

---The session the person works with: `{ name, pid }`, or nil.
---@return claude_context.RouteTarget?
function M.target()
  local sessions = terminals()
  if not sessions then
    return nil
  end
  local st
  if per_tab() then
    sessions.sync_tab()
    st = sessions.current
  else
    st = M.last
    if not running_pid(st) then
      st = sessions.current
    end
  end
  local pid = running_pid(st)
  if not pid then
    return nil
  end
  return { name = st.name or sessions.name, pid = pid }
end

---Tells the bridge the current route (cheap: only when it changed).
function M.update()
  local native = require("claude_context.native").get()
  if not native or not native.route then
    return
  end
  if not M.port then
    local ok, status = pcall(native.status)
    if not ok or not status then
      return
    end
    M.port = vim.json.decode(status).port
  end
  local port = M.port
  if not enabled() then
    pcall(native.route, port, nil)
    M.sent = nil
    return
  end
  local pids = {}
  for _, st in pairs((terminals() or {}).by_name or {}) do
    local pid = running_pid(st)
    if pid then
      table.insert(pids, pid)
    end
  end
  table.sort(pids)
  local t = M.target()
  local route = { target = t and t.pid or nil, terminals = pids, name = t and t.name or nil, port = port }
  if M.sent and vim.deep_equal(M.sent, route) then
    return
  end
  M.sent = route
  pcall(native.route, port, vim.json.encode({ target = route.target, terminals = pids }))
end

---Where a routed notification goes now: "Claude in <name>" (the terminal the person works
---with), "Claude Code started outside Neovim", or "Claude" (no route).
---@return string
function M.describe()
  M.update()
  local native = require("claude_context.native").get()
  if not (native and native.route_to_target and M.sent and M.sent.target) then
    return "Claude"
  end
  local status = vim.json.decode(native.status() or "{}")
  local pids = {}
  for _, c in ipairs(status.clients or {}) do
    if type(c.ide_connected_pid) == "number" then
      table.insert(pids, c.ide_connected_pid)
    end
  end
  if native.route_to_target(M.sent.port, vim.json.encode(pids)) then
    return ("Claude in %s"):format(M.sent.name)
  end
  return "Claude Code started outside Neovim"
end

---The terminal of `buf` (if one is) becomes the one the person works with; the route follows.
---@param buf integer?
local function remember(buf)
  for _, st in pairs((terminals() or {}).by_name or {}) do
    if st.buf == buf then
      M.last = st
    end
  end
  M.update()
end

---A terminal was entered: it becomes the one the person works with.
---@param buf integer
function M.entered(buf)
  if not vim.b[buf].claude_context_terminal then
    return
  end
  remember(buf)
end

---The bridge stops: its route is forgotten.
function M.stop()
  local native = require("claude_context.native").get()
  if native and native.route and M.port then
    pcall(native.route, M.port, nil)
  end
  M.sent, M.port = nil, nil
end

local group

---Installs the autocmds (idempotent) and sends the first route.
function M.start()
  group = group
    or require("claude_context.util.autocmds").group("ClaudeContextRoute", {
      {
        { "BufEnter", "TermEnter" },
        function(ev)
          M.entered(ev.buf)
        end,
        desc = "claude-context: the Claude terminal entered gets the selection and mentions",
      },
      {
        "TabEnter",
        function()
          M.update()
        end,
      },
      {
        "User",
        function(ev)
          remember(ev.data and ev.data.buf)
        end,
        pattern = "ClaudeContextTerminalOpen",
      },
      {
        { "TermClose", "BufWipeout" },
        function()
          vim.schedule(M.update)
        end,
      },
    })
  M.sent, M.port = nil, nil
  M.update()
end

return M
