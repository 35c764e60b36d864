---@mod claude_context.bridge The bridge's life: start, stop, status
---
--- The bridge is the native library's server (a WebSocket MCP server on 127.0.0.1 that Claude
--- Code finds through its lock file). `require("claude_context")` offers these functions as its
--- public API (`start`, `stop`, `is_running`, `status`); the features below the entry module
--- (the terminal, the statusline) call them here, so that none of them requires the entry
--- module, which forwards to features.
---
--- `status()` carries, besides the bridge's own fields:
---   `activity`       "disconnected" | "idle" | "busy" | "waiting" (a diff waits for you)
---   `ide_clients`    Claude Code sessions connected as the IDE
---   `mcp_clients`    clients of the /mcp door
---   `diffs_waiting`  diffs waiting for your decision
---   `runs`           :ClaudeContext ask runs in flight
---   `sessions`       the sessions the hooks reported (claude_context.sessions.state)
--- "busy": Claude's terminal printed within the last `BUSY_MS`, or a run is in flight.

local M = {}

local config = require("claude_context.config")
local state = require("claude_context.state")
local notify = require("claude_context.util.notify")

---Whether the options were resolved (setup() ran, or start() did it with the defaults).
M.setup_done = false

local group

---The editor-state autocommands of a running bridge, and its stop when Neovim exits.
local function install_autocmds()
  group = vim.api.nvim_create_augroup("ClaudeContext", { clear = true })
  vim.api.nvim_create_autocmd({ "WinEnter", "TabEnter", "BufEnter", "LspAttach", "FocusGained" }, {
    group = group,
    callback = state.schedule_push,
    desc = "claude-context: keep the editor snapshot current",
  })
  -- A new working directory reaches the bridge at once (not on the next tick): the hook door
  -- takes a session's events only in a folder the editor knows, and a Claude started right
  -- after a :cd sends its first event from there.
  vim.api.nvim_create_autocmd("DirChanged", {
    group = group,
    callback = function()
      state.push()
    end,
    desc = "claude-context: the bridge knows the working directory at once",
  })
  -- vim.lsp.buf.add_workspace_folder() / remove_workspace_folder() only notify the server.
  vim.api.nvim_create_autocmd("LspNotify", {
    group = group,
    callback = function(ev)
      if ev.data and ev.data.method == "workspace/didChangeWorkspaceFolders" then
        state.schedule_push()
      end
    end,
    desc = "claude-context: follow LSP workspace folders added or removed",
  })
  vim.api.nvim_create_autocmd("LspDetach", {
    group = group,
    -- The detaching client is still listed during the event: look again a moment later.
    callback = function()
      vim.defer_fn(state.push, 20)
    end,
    desc = "claude-context: drop a detached LSP client's folders",
  })
  vim.api.nvim_create_autocmd("VimLeavePre", {
    group = group,
    callback = function()
      M.stop({ silent = true })
    end,
    desc = "claude-context: stop the bridge and remove the lock file",
  })
end

---Whether the bridge runs (the library loaded and its server up).
---@return boolean
function M.is_running()
  local ok, native = require("claude_context.native").try_load()
  return ok and require("claude_context.native").load().status() ~= nil or false
end

---Starts the bridge (no-op when it runs).
---@param o {silent:boolean}?
---@return boolean ok, string? err
function M.start(o)
  o = o or {}
  if not M.setup_done then
    config.resolve(config.options)
    M.setup_done = true
  end
  local ok, native = pcall(require("claude_context.native").load)
  if not ok then
    return false, native
  end
  local ok_log, log_err = pcall(native.set_log, config.log_file(), config.options.log_level)
  if not ok_log then
    return false, require("claude_context.native").message(log_err)
  end
  local ok2, res = pcall(native.start, config.to_native(config.options), vim.json.encode(state.collect()))
  if not ok2 then
    return false, require("claude_context.native").message(res)
  end
  install_autocmds()
  -- selection_changed tracking and the active-editor window (the bridge's calls of the editor
  -- reach their handlers through claude_context.rpc's table of methods).
  require("claude_context.ide").start()
  -- Session states from Claude Code's hooks: their autocmds.
  require("claude_context.sessions.state").start()
  -- The selection and mentions go to the Claude session the person works with.
  require("claude_context.sessions.route").start()
  -- The state mark in the Claude terminals' winbar.
  require("claude_context.sessions.mark").start()
  local st = vim.json.decode(res)
  if not o.silent then
    notify(("bridge listening on 127.0.0.1:%d"):format(st.port))
  end
  vim.api.nvim_exec_autocmds("User", { pattern = "ClaudeContextStarted", modeline = false, data = st })
  return true
end

---Stops the bridge and removes its lock file.
---@param o {silent:boolean}?
---@return boolean stopped
function M.stop(o)
  o = o or {}
  local ok, native = require("claude_context.native").try_load()
  if not ok then
    return false
  end
  native = require("claude_context.native").load()
  if package.loaded["claude_context.sessions.route"] then
    require("claude_context.sessions.route").stop()
  end
  local stopped = native.stop()
  if group then
    pcall(vim.api.nvim_del_augroup_by_id, group)
    group = nil
  end
  if package.loaded["claude_context.ide"] then
    require("claude_context.ide").stop()
  end
  if not o.silent then
    notify(stopped and "bridge stopped" or "bridge was not running")
  end
  return stopped
end

---The bridge's status (port, lock file, clients, masked token), or nil when stopped.
---@return claude_context.Status?
function M.status()
  local ok = require("claude_context.native").try_load()
  if not ok then
    return nil
  end
  local s = require("claude_context.native").load().status()
  -- activity, ide_clients, mcp_clients, diffs_waiting, runs: see decorate.
  if not s then
    return nil
  end
  local st = M.decorate(vim.json.decode(s))
  -- sessions: see claude_context.sessions.state.
  st.sessions = vim.tbl_map(require("claude_context.sessions.state").clean, st.sessions or {})
  return st
end

local uv = vim.uv or vim.loop

---Terminal output within this many milliseconds counts as Claude working.
M.BUSY_MS = 1500

local function nonnil(x)
  return x ~= vim.NIL and x or nil
end

---Adds the at-a-glance fields to a bridge status table (in place).
---@param st claude_context.Status the bridge's status, decoded
---@return claude_context.Status st
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

return M
