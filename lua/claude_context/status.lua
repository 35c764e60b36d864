---@mod claude_context.status Claude at a glance: statusline text, a lualine component, events
---
--- The text comes from `require("claude_context").status()`'s at-a-glance fields (`activity`,
--- `ide_clients`, `diffs_waiting`, `runs`: see claude_context.bridge, which makes them).
--- `User ClaudeContextConnected` / `ClaudeContextDisconnected` fire as clients come and go
--- (`data = { id, name, surface }`), checked once a second while the bridge runs.

local M = {}

---One connected client (crates/core/src/server/mod.rs: ClientStatus).
---@class claude_context.ClientStatus
---@field id integer
---@field addr string
---@field surface "ide"|"mcp" The lock file's URL, or `/mcp`
---@field name string?
---@field version string?
---@field protocol_version string?
---@field ide_connected_pid integer?
---@field tools_listed boolean The client has asked for `tools/list`
---@field connected_secs integer
---@field in_flight integer Requests read and not yet answered
---@field queued_bytes integer Bytes of answers waiting for the client to read them
---@field inflight_bytes integer Bytes of the requests in flight

---The bridge's status (crates/core/src/server/mod.rs: Status), with the at-a-glance fields.
---@class claude_context.Status
---@field running boolean
---@field port integer
---@field url string
---@field lock_file string?
---@field token string Masked
---@field clients claude_context.ClientStatus[]
---@field workspace_folders string[]
---@field uptime_secs integer
---@field version string
---@field tools string[]
---@field sessions claude_context.Session[] The Claude Code sessions heard of through hooks
---@field activity "disconnected"|"idle"|"busy"|"waiting"
---@field ide_clients integer Claude Code sessions connected as the IDE
---@field mcp_clients integer Clients of the /mcp door
---@field diffs_waiting integer Diffs waiting for your decision
---@field runs integer :ClaudeContext ask runs in flight

---What `User ClaudeContextConnected` / `ClaudeContextDisconnected` carry.
---@class claude_context.ClientEvent
---@field id integer
---@field name string?
---@field surface "ide"|"mcp"|nil

local uv = vim.uv or vim.loop

---How often connections are checked for the events, in milliseconds.
M.WATCH_MS = 1000

local function nonnil(x)
  return x ~= vim.NIL and x or nil
end

---The text for a statusline: "" when the bridge is stopped, else e.g. "Claude: idle",
---"Claude: busy", "Claude: diff waiting", "Claude: not connected", with the number of IDE
---sessions when more than one and the runs in flight.
---@return string
function M.text()
  local st = require("claude_context.bridge").status()
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
---@return claude_context.LualineComponent
function M.lualine()
  return {
    M.text,
    cond = function()
      return require("claude_context.bridge").is_running()
    end,
  }
end

---Client ids seen at the last check: id -> {id, name, surface}.
---@type table<integer, claude_context.ClientEvent>
M._seen = {}
local timer

---Compares the connected clients with the last check and fires the events.
function M.check()
  local st = require("claude_context.bridge").status()
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
