---@mod claude_context.status Claude at a glance: statusline text, a lualine component, events
---
--- `require("claude_context").status()` carries, besides the bridge's own fields:
---   `activity`       "disconnected" | "idle" | "busy" | "waiting" (a diff waits for you)
---   `ide_clients`    Claude Code sessions connected as the IDE
---   `mcp_clients`    clients of the /mcp door
---   `diffs_waiting`  diffs waiting for your decision
---   `runs`           :ClaudeContext ask runs in flight
--- "busy": Claude's terminal printed within the last `BUSY_MS`, or a run is in flight.
--- `User ClaudeContextConnected` / `ClaudeContextDisconnected` fire as clients come and go
--- (`data = { id, name, surface }`), checked once a second while the bridge runs.

local M = {}

local uv = vim.uv or vim.loop

---Terminal output within this many milliseconds counts as Claude working.
M.BUSY_MS = 1500

---How often connections are checked for the events, in milliseconds.
M.WATCH_MS = 1000

local function nonnil(x)
  return x ~= vim.NIL and x or nil
end

---Adds the at-a-glance fields to a bridge status table (in place).
---@param st table
---@return table st
function M.decorate(st)
  local ide, mcp = 0, 0
  for _, c in ipairs(st.clients or {}) do
    if nonnil(c.surface) == "mcp" then
      mcp = mcp + 1
    else
      ide = ide + 1
    end
  end
  st.ide_clients, st.mcp_clients = ide, mcp
  local diff = package.loaded["claude_context.ide.diff"]
  local waiting = 0
  if diff then
    for _, v in pairs(diff.views) do
      if v.respond then
        waiting = waiting + 1
      end
    end
  end
  st.diffs_waiting = waiting
  local session = package.loaded["claude_context.ask"]
  st.runs = session and vim.tbl_count(session.runs) or 0
  local term = package.loaded["claude_context.terminal"]
  local last = term and term._state and term._state.last_output
  local printing = last ~= nil and (uv.now() - last) < M.BUSY_MS
  if waiting > 0 then
    st.activity = "waiting"
  elseif printing or st.runs > 0 then
    st.activity = "busy"
  elseif ide + mcp == 0 then
    st.activity = "disconnected"
  else
    st.activity = "idle"
  end
  return st
end

---The text for a statusline: "" when the bridge is stopped, else e.g. "Claude: idle",
---"Claude: busy", "Claude: diff waiting", "Claude: not connected", with the number of IDE
---sessions when more than one and the runs in flight.
---@return string
function M.text()
  local st = require("claude_context").status()
  if not st then
    return ""
  end
  local words = {
    disconnected = "not connected",
    idle = "idle",
    busy = "busy",
    waiting = st.diffs_waiting > 1 and (st.diffs_waiting .. " diffs waiting") or "diff waiting",
  }
  local s = "Claude: " .. words[st.activity]
  if st.ide_clients > 1 then
    s = s .. (" (%d sessions)"):format(st.ide_clients)
  end
  if st.runs > 0 then
    s = s .. (" · %d run%s"):format(st.runs, st.runs > 1 and "s" or "")
  end
  return s
end

---A lualine component: `sections = { lualine_x = { require("claude_context.status").lualine() } }`.
---@return table
function M.lualine()
  return {
    M.text,
    cond = function()
      return require("claude_context").is_running()
    end,
  }
end

---Client ids seen at the last check: id -> {id, name, surface}.
---@type table<integer, table>
M._seen = {}
local timer

---Compares the connected clients with the last check and fires the events.
function M.check()
  local st = require("claude_context").status()
  local now = {}
  for _, c in ipairs(st and st.clients or {}) do
    now[c.id] = { id = c.id, name = nonnil(c.name), surface = nonnil(c.surface) }
  end
  local changed = false
  for id, c in pairs(now) do
    if not M._seen[id] then
      changed = true
      vim.api.nvim_exec_autocmds("User", { pattern = "ClaudeContextConnected", data = c, modeline = false })
    end
  end
  for id, c in pairs(M._seen) do
    if not now[id] then
      changed = true
      vim.api.nvim_exec_autocmds("User", { pattern = "ClaudeContextDisconnected", data = c, modeline = false })
    end
  end
  M._seen = now
  if changed then
    pcall(vim.cmd.redrawstatus)
  end
end

---Starts the once-a-second check (idempotent).
function M.watch()
  if timer then
    return
  end
  timer = assert(uv.new_timer())
  timer:start(
    M.WATCH_MS,
    M.WATCH_MS,
    vim.schedule_wrap(function()
      pcall(M.check)
    end)
  )
end

return M
