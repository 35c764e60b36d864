---@mod claude_context claude-context.nvim
---
--- Public API. `setup(opts)` merges options, and with `auto_start` starts the bridge: a Rust
--- WebSocket MCP server on 127.0.0.1 that Claude Code finds through its lock file.

---The public API, `require("claude_context")` (:help claude-context-api). The functions defined
---below with `function M.…` are its methods too; the fields are those that load a feature on
---first use.
---@class claude_context.API
---@field version string The plugin's version
---@field _setup_done boolean? setup() (or a start) resolved the options
---A conversation as a buffer (claude_context.transcript): `transcript(id, opts)` returns it.
---@field transcript fun(id: string, opts: claude_context.TranscriptOpts?): integer
---Follow the agent (claude_context.follow): on, off, or toggled (nil); returns whether it is on.
---@field follow fun(on: boolean?, opts: claude_context.FollowOpts?): boolean
---What each session cost (claude_context.usage).
---@field usage fun(): claude_context.Usage[]
local M = {}

local config = require("claude_context.config")
local bridge = require("claude_context.bridge")
M.version = require("claude_context.version")

local notify = require("claude_context.util.notify")

-- The bridge's life (claude_context.bridge, below the features that call it there):
-- `is_running()`, `start(o)`, `status()`; `stop(o)` and `restart()` below.
M.is_running, M.start, M.status = bridge.is_running, bridge.start, bridge.status

---What setup() turns on: the reload of changed buffers, the key tracker, the Connected /
---Disconnected events, and (with `auto_start`, unless stop() came first) the bridge.
---@param start boolean
local function activate(start)
  -- Buffers Claude changes on disk are reloaded (terminal.reload, on by default).
  local reload = require("claude_context.util.reload")
  if config.options.terminal == nil or require("claude_context.config.terminal").options().reload then
    reload.install()
  else
    reload.uninstall()
  end
  -- The key tracker behind "typing": a diff that arrives while the person types does not take
  -- the cursor.
  require("claude_context.util.typing").install()
  -- User ClaudeContextConnected / Disconnected.
  require("claude_context.status").watch()
  if start and config.options.auto_start and not M.is_running() then
    local ok, err = M.start({ silent = true })
    if not ok then
      notify(err, vim.log.levels.ERROR)
    end
  end
end

---What setup() left for the first turn of the event loop: nil, or { start = whether the bridge
---is to start }.
---@type {start: boolean}?
local pending

---Configures the plugin; starts the bridge unless `auto_start = false`. Every option section is
---checked here (claude_context.config); a feature's own code loads when it is first used.
---Called during Neovim's startup (from init.lua), it only checks the options: loading the
---library and binding the port wait for the first turn of the event loop (vim.schedule), so
---startup stays short and the bridge listens before anything typed reaches Claude's `/ide`. A
---:ClaudeContext command run before that (`nvim +"ClaudeContext open"`) does it first.
---@param opts claude_context.UserConfig?
function M.setup(opts)
  config.resolve(opts)
  bridge.setup_done = true
  pending = { start = true }
  if vim.v.vim_did_enter == 1 then
    M.activate()
    return
  end
  vim.schedule(function()
    -- Neovim quitting during its startup (`nvim +qa`) runs this while it exits, after
    -- VimLeavePre: a bridge started then would never be stopped.
    if vim.v.exiting == vim.NIL then
      M.activate()
    end
  end)
end

---Does now what setup() deferred, if anything (the commands call it first).
function M.activate()
  local p = pending
  pending = nil
  if p then
    activate(p.start)
    -- Features that follow the options hear it (plugin/claude_context.lua: claudecode.nvim's
    -- commands, the check for a second bridge).
    vim.api.nvim_exec_autocmds("User", { pattern = "ClaudeContextSetup", modeline = false })
  end
end

---Background sessions of this project still running from before this Neovim started (in its
---git worktrees, `.claude/worktrees/`): Claude Code's list is read (off the main thread) so that
---the statusline and the notifications know them before any of their hooks arrives.
local function look_for_background_sessions()
  if package.loaded["claude_context.agents"] or not M.is_running() then
    return
  end
  local names = require("claude_context.agents.names")
  local root = names.project_of(vim.fn.getcwd())
  local st = root and vim.uv.fs_stat(root .. "/" .. names.DIR)
  if st and st.type == "directory" then
    pcall(M.agents)
  end
end

-- Whoever starts the bridge (start(), the terminal's open), the background sessions are looked
-- for a moment after it is up, off the startup path, and a background session's first hook
-- loads their feature (in the bridge's autocommand group: stop() removes it).
vim.api.nvim_create_autocmd("User", {
  group = vim.api.nvim_create_augroup("ClaudeContextBackgroundSessions", { clear = true }),
  pattern = "ClaudeContextStarted",
  callback = function()
    local group = vim.api.nvim_create_augroup("ClaudeContext", { clear = false })
    -- A background session's hook reaches an editor that has not used the background sessions
    -- yet (a restarted Neovim): that feature loads and reads Claude Code's list, so agents() and
    -- the statusline know the project's background sessions, those no hook reported too.
    vim.api.nvim_create_autocmd("User", {
      group = group,
      pattern = "ClaudeContextSessionState",
      callback = function(ev)
        if package.loaded["claude_context.agents"] then
          return true
        end
        local s = type(ev.data) == "table" and ev.data.session
        if type(s) == "table" and s.terminal == nil and require("claude_context.agents.names").of_any(s.cwd) then
          vim.schedule(function()
            pcall(M.agents)
          end)
          return true
        end
      end,
      desc = "claude-context: a background session's hook loads the background sessions' list",
    })
    vim.defer_fn(look_for_background_sessions, 200)
  end,
  desc = "claude-context: look for the background sessions once the bridge runs",
})

---Stops the bridge and removes its lock file.
---@param o {silent:boolean}?
---@return boolean stopped
function M.stop(o)
  -- A start setup() deferred does not undo this stop.
  if pending then
    pending.start = false
  end
  return bridge.stop(o)
end

---@return boolean ok, string? err
function M.restart()
  M.stop({ silent = true })
  return M.start()
end

---The turns of the Claude Code sessions the bridge heard of through hooks, oldest first (of
---session `session` when given): `{ id, session, name, prompt, start_ms, end_ms, files }`.
---@param session string?
---@return claude_context.Turn[]
function M.turns(session)
  return require("claude_context.sessions.state").turns(session)
end

-- A conversation as a buffer, following the agent, what sessions cost (features loaded on first
-- use): `transcript(id)`, `follow(on, opts)`, `usage()`.
M.transcript = function(...)
  return require("claude_context.transcript").transcript(...)
end
M.follow = function(...)
  return require("claude_context.follow").follow(...)
end
M.usage = function(...)
  local usage = require("claude_context.usage")
  usage.start()
  return usage.usage(...)
end

-- Background sessions in worktrees (claude_context.agents and its modules, features loaded on
-- first use): each function calls the module that owns it.

---Starts a background session in worktree `name` (`claude --bg --worktree name [prompt]`).
---@param name string
---@param prompt string?
---@param opts claude_context.NewAgentOpts?
---@return boolean? ok, string? err
function M.new(name, prompt, opts)
  return require("claude_context.agents").new(name, prompt, opts)
end

---Every Claude Code session of the project (claude_context.agents.list), from the cache at once.
---The background sessions' feature loads with it (claude_context.agents: it tells of the
---sessions that ended).
---@return claude_context.Agent[]
function M.agents()
  require("claude_context.agents")
  return require("claude_context.agents.list").list()
end

---Opens background session `name` in a terminal (`claude attach`).
---@param name string
---@param cb fun(err: string?, buf: integer?)?
function M.attach(name, cb)
  return require("claude_context.agents").attach(name, cb)
end

---Lands worktree `name` into the main checkout (claude_context.agents.land).
---@param name string
---@param opts claude_context.LandOpts?
function M.land(name, opts)
  return require("claude_context.agents.land").land(name, opts)
end

---Stops session `name` and removes its worktree, its work kept on its branch
---(claude_context.agents.discard).
---@param name string
---@param cb fun(err: string?, info: {branch: string, commit: string?}?)?
function M.discard(name, cb)
  return require("claude_context.agents.discard").discard(name, cb)
end

---The permission requests waiting for the person (claude_context.sessions.permissions).
---@return claude_context.PermissionRequest[]
function M.permissions()
  return require("claude_context.sessions.permissions").list()
end

---Answers permission request `id` ("allow" or "deny", with an optional reason for Claude).
---@param id string|integer
---@param decision "allow"|"deny"
---@param reason string?
---@return boolean? ok, string? err
function M.decide(id, decision, reason)
  return require("claude_context.sessions.permissions").decide(id, decision, reason)
end

---Edit in place (claude_context.edit, loaded on first use): `edit({buf, range, instruction})`
---rewrites the range as the instruction says, Claude's change shown as a diff in the buffer.
---@param opts claude_context.EditOpts?
function M.edit(opts)
  return require("claude_context.edit").edit(opts)
end

---Claude Code's conversations of this project (claude_context.conversations, loaded on first
---use), newest first: `on_done(list, err)` with `{ id, title, cwd, branch, worktree, started_ms,
---updated_ms, prompts, first_prompt, last_prompt, cost_usd, running, bytes }`; `opts.all`: every
---project's; `opts.query`: only those whose messages contain the text, each with `matches`.
---@param opts claude_context.ConversationsOpts?
---@param on_done fun(list: claude_context.Conversation[], err: string?)
function M.conversations(opts, on_done)
  return require("claude_context.conversations").list(opts, on_done)
end

---What a bridge tool answers: MCP's CallToolResult, or an error.
---@class claude_context.ToolResult
---@field content {type: string, text: string?}[]?
---@field structuredContent any?
---@field isError boolean?
---@field error {code: integer, message: string}?

---Calls a bridge tool; `cb(result)` gets the MCP CallToolResult table (or `{error=…}`).
---@param name string
---@param args table<string, any>? The tool's arguments
---@param cb fun(result: claude_context.ToolResult)
function M.call_tool(name, args, cb)
  local native, missing = require("claude_context.native").get()
  if not native then
    -- Before the library is built: the same one-line message as every command, no traceback.
    cb({ error = { code = -32603, message = missing } })
    return
  end
  local a = (args and next(args)) and vim.json.encode(args) or "{}"
  native.call_tool(name, a, function(err, json, code)
    if err then
      return cb({ error = { code = code or -32603, message = err } })
    end
    cb(vim.json.decode(json, { luanil = { object = true, array = true } }))
  end)
end

---Calls a tool and waits (for commands run by the person; never used by the bridge itself).
---@param name string
---@param args table<string, any>?
---@param timeout_ms integer?
---@return claude_context.ToolResult? result, string? err
function M.call_tool_sync(name, args, timeout_ms)
  local result
  M.call_tool(name, args, function(r)
    result = r
  end)
  vim.wait(timeout_ms or 10000, function()
    return result ~= nil
  end, 5)
  if not result then
    return nil, ("%s did not answer in time"):format(name)
  end
  if result.error then
    return nil, result.error.message
  end
  return result
end

return M
