---@mod claude_context.agents.launch The command line of a background session
---
--- `claude --bg --worktree NAME [prompt]` with the plugin's MCP server (the relay binary, which
--- finds the editor at each connection) and its hooks, the person's terminal permission mode
--- and arguments: nothing in it names this editor's port or token.

local M = {}

---The plugin's MCP server for a background session: the relay binary, as stdio server (it
---finds the editor each time the session connects; with none it exits at once).
---@param relay string
---@return string json
function M.mcp_config(relay)
  local server = "claude-context"
  local native = require("claude_context.native").get()
  if native and native.hook_tool and native.hook_tool.server then
    server = native.hook_tool.server
  end
  return vim.json.encode({ mcpServers = { [server] = { type = "stdio", command = relay, args = {} } } })
end

---The `--settings` JSON of a background session: the plugin's hooks (the binary in its hook
---mode before edit tools, so nothing waits on an editor that is gone) and `terminal.env` (Claude
---Code's service may already run with another environment; settings reach the session).
---@param relay string
---@param env table<string,string>?
---@return string? json
function M.settings(relay, env)
  local hooks = require("claude_context.sessions.hooks")
  local s = {}
  if hooks.enabled() then
    s = hooks.settings_table(relay, false)
    -- The person answers a permission in Neovim, maybe much later: the hook may wait as long as
    -- a plan review (Claude Code's own dialog stands meanwhile; a timeout is no answer).
    local wait = require("claude_context.config.sessions").options().plan_timeout or 3600
    for _, entry in ipairs(s.hooks.PermissionRequest or {}) do
      for _, hk in ipairs(entry.hooks or {}) do
        hk.timeout = wait
      end
    end
  end
  if env and next(env) then
    s.env = {}
    for k, v in pairs(env) do
      s.env[k] = tostring(v)
    end
  end
  return next(s) and vim.json.encode(s) or nil
end

---The argv of `claude --bg --worktree NAME` (claude_context.cli.argv): the plugin's MCP server
---and hooks, the permission mode (`opts.permission_mode`, chosen for this session, wins over
---the args; `terminal.permission_mode` does not), `terminal.args`, then the prompt.
---@param exe string
---@param name string
---@param prompt string?
---@param opts {permission_mode?:string|false}?
---@return string[]? argv, string? err
function M.argv(exe, name, prompt, opts)
  opts = opts or {}
  local ok, topts = pcall(require("claude_context.config.terminal").options)
  if not ok then
    return nil, tostring(topts)
  end
  local relay = require("claude_context.sessions.hooks").binary()
  if not relay then
    return nil, "claude-context-mcp is not built (run `make` in the plugin's directory)"
  end
  local mode = opts.permission_mode
  if mode == nil then
    mode = topts.permission_mode
  end
  local built, argv = pcall(require("claude_context.cli").argv, {
    head = { exe, "--bg", "--worktree", name },
    mcp_config = topts.mcp_config ~= false and M.mcp_config(relay) or nil,
    permission_mode = mode or nil,
    mode_wins = opts.permission_mode ~= nil,
    args = topts.args,
    settings = M.settings(relay, topts.env),
    tail = prompt and prompt ~= "" and { prompt } or nil,
  })
  if not built then
    return nil, require("claude_context.native").message(argv)
  end
  return argv
end

return M
