---@mod claude_context.sessions.hooks Claude Code hooks for the sessions the plugin starts
---
--- `:ClaudeContext open` starts `claude` with `--settings=<json>` holding hooks whose command
--- is the plugin's relay binary in its hook mode (`claude-context-mcp hook <Event>`). Claude Code
--- adds settings given with `--settings` to the person's own (user, project, local): hooks of
--- every source run, so the person's hooks keep running beside these. The hook finds the bridge
--- through `CLAUDE_CODE_SSE_PORT` and the lock file (its token never appears on a command line),
--- and `CLAUDE_CONTEXT_SESSION` in the job's environment names the terminal the session runs in.
---
--- Off with `setup{ sessions = { hooks = false } }`; not added when the command line carries its
--- own `--settings` (the CLI takes one).
---
--- Bash edits (`sessions.bash_edits`, default on): the settings also turn on Claude Code's report
--- of what each Bash call changed (`bashEditDiffEnabled`, Claude Code 2.1.269 and later: its
--- PostToolUse input carries `tool_response.bashEditDiff`), and a hook after each Bash call
--- that Claude waits for (so it comes before the turn's Stop) sends it to the bridge: the
--- turn claims those files, named by the command (the review shows it beside their hunks).
--- Only these sessions' settings: the person's own settings files are not touched. Older CLIs
--- send no report; their Bash changes are found by the turn's end checkpoint, as before.

local M = {}

---One hook of Claude Code's settings: the binary run in its hook mode (`command`), or a call of
---the bridge's hook tool over the session's MCP connection (`mcp_tool`).
---@class claude_context.Hook
---@field type "command"|"mcp_tool"
---@field command string? The binary (`command`)
---@field args string[]? Its arguments (`command`)
---@field server string? The MCP server (`mcp_tool`)
---@field tool string? The tool (`mcp_tool`)
---@field input table<string, string>? The tool's input, Claude Code interpolating `${…}` (`mcp_tool`)
---@field timeout integer Seconds
---@field async boolean? Claude Code goes on without waiting

---The hooks of one event for the tools `matcher` names (all when nil).
---@class claude_context.HookEntry
---@field matcher string?
---@field hooks claude_context.Hook[]

---The tools whose edits a turn records (PreToolUse runs before each of them).
M.EDIT_TOOLS = "Edit|Write|MultiEdit|NotebookEdit"

---The tools of the report after every tool but Bash (a regular expression: Bash has its own hook
---after it, waited for).
M.NOT_BASH = "^(?!Bash$)"

---Claude Code's setting that makes a Bash call's PostToolUse carry what it changed.
M.BASH_EDIT_SETTING = "bashEditDiffEnabled"

---How long Claude Code waits for the hook tool (the hook before every tool), in seconds.
M.TOOL_HOOK_TIMEOUT_S = 2

---The environment variable naming the plugin's terminal a session runs in.
M.ENV = "CLAUDE_CONTEXT_SESSION"

---How long Claude Code lets one hook run, in seconds (the binary gives up after about one).
M.TIMEOUT_S = 10

---The oldest Claude Code whose hooks take the exec form (`args`) this plugin's hooks use (the
---Rust side's fact: claude_context.cli.versions), nil while the native library is missing.
---@return string?
function M.min_cli()
  local v = require("claude_context.cli").versions()
  return v and v.hooks
end

---Whether the CLI of `version_text` (`claude --version`'s output) runs these hooks; nil when the
---text names no version (or the native library, which knows the oldest, is missing).
---@param version_text string
---@return boolean?
function M.cli_supported(version_text)
  local v = (version_text or ""):match("(%d+%.%d+%.%d+)")
  local min = M.min_cli()
  if not v or not min then
    return nil
  end
  return vim.version.ge(vim.version.parse(v), vim.version.parse(min))
end

---The hook binary's path, or nil.
---@return string?
function M.binary()
  for _, p in ipairs(require("claude_context.native").relay_candidates()) do
    if vim.fn.executable(p) == 1 then
      return p
    end
  end
  return nil
end

---One hook: the binary in its hook mode, run directly (Claude Code's exec form: no shell, so no
---quoting and no shell's start-up on every tool call).
---@param bin string
---@param event string
---@param timeout integer seconds
---@param async boolean? Claude Code goes on without waiting (for events that only report)
---@return claude_context.Hook
local function command(bin, event, timeout, async)
  return { type = "command", command = bin, args = { "hook", event }, timeout = timeout, async = async or nil }
end

---A hook as Claude Code's `mcp_tool` hook: a call of the bridge's hook tool over the MCP
---connection the session already has (`--mcp-config`), so no process starts on every tool
---call. Claude Code interpolates the hook input's fields; of the tool's input only the path (a
---write's content is never sent). A hooks module (Claude Code 2.1.287+) would carry it dearer:
---its only way to the bridge is `$.mcp.call`, a whole tool call of Claude Code's own
---(BENCHMARKS.md, "Hooks modules").
---@param event string
---@return claude_context.Hook
function M.tool_hook(event)
  local ht = require("claude_context.native").load().hook_tool
  return {
    type = "mcp_tool",
    server = ht.server,
    tool = ht.tool,
    input = {
      hook_event_name = event,
      session_id = "${session_id}",
      cwd = "${cwd}",
      tool_name = "${tool_name}",
      file_path = "${tool_input.file_path}",
      notebook_path = "${tool_input.notebook_path}",
      -- A Read's first line (the follow window shows the file there).
      offset = "${tool_input.offset}",
      permission_mode = "${permission_mode}",
    },
    -- Claude waits for these on every tool call: a bridge that hangs costs at most this.
    timeout = M.TOOL_HOOK_TIMEOUT_S,
  }
end

---A hook event the plugin registers, as the library lists it (`hook::Event`, the one list).
---@class claude_context.HookEventSpec
---@field name string the event (`PreToolUse`, …)
---@field edit_tools_only boolean only for the edit tools (`M.EDIT_TOOLS`)
---@field report_only boolean Claude Code goes on without waiting

---The hook events the plugin registers, in order (the library owns the list).
---@return claude_context.HookEventSpec[]
function M.events()
  return require("claude_context.native").load().hook_events
end

---The `hooks` table of the settings, for binary `bin`: an entry for each event of `M.events()`.
---@param bin string
---@param mcp boolean? the session has the bridge's MCP server (`--mcp-config`): the hook before a tool calls it
---@return table<string, claude_context.HookEntry[]> by event
function M.hooks_table(bin, mcp)
  local t = {}
  for _, e in ipairs(M.events()) do
    local matcher = e.edit_tools_only and M.EDIT_TOOLS or nil
    t[e.name] = { { matcher = matcher, hooks = { command(bin, e.name, M.TIMEOUT_S, e.report_only) } } }
  end
  -- A tool call's hook. With the bridge's server: one hook before every tool, over the
  -- session's MCP connection (no process): Claude waits for it, so that an edit tool's file
  -- is captured before it changes, and a session that waited for a permission is seen
  -- working again when Claude goes on. No hook after the tool: each hook Claude Code runs
  -- costs every tool call several milliseconds (BENCHMARKS.md, "Session-state hooks").
  -- Without it: the binary before the edit tools (waited for) and after every tool, only a
  -- report Claude does not wait for (a late one never moves a finished session).
  if mcp then
    t.PreToolUse = { { hooks = { M.tool_hook("PreToolUse") } } }
    t.PostToolUse = nil
  elseif M.bash_edits() and t.PostToolUse then
    t.PostToolUse[1].matcher = M.NOT_BASH
  end
  -- What a Bash call changed (Claude Code's report), waited for: it must come before the Stop.
  if M.bash_edits() then
    t.PostToolUse = t.PostToolUse or {}
    table.insert(t.PostToolUse, { matcher = "Bash", hooks = { command(bin, "PostToolUse", M.TIMEOUT_S) } })
  end
  -- Plans and questions the person answers in Neovim (claude_context.sessions.plans).
  local review = M.review_entry(bin)
  if review then
    table.insert(t.PreToolUse, review)
  end
  return t
end

---The PreToolUse entry that holds `ExitPlanMode` / `AskUserQuestion` until the person decided
---in Neovim (`sessions.plan_review`, `sessions.questions`), with the long timeout
---`sessions.plan_timeout`; nil when both are off.
---@param bin string
---@return claude_context.HookEntry?
function M.review_entry(bin)
  local o = require("claude_context.config.sessions").options()
  local tools = {}
  if o.plan_review ~= false then
    table.insert(tools, "ExitPlanMode")
  end
  if o.questions ~= false then
    table.insert(tools, "AskUserQuestion")
  end
  if #tools == 0 then
    return nil
  end
  return {
    matcher = table.concat(tools, "|"),
    hooks = { command(bin, "PreToolUse", o.plan_timeout or 3600) },
  }
end

---Whether the hooks are wanted (`sessions.hooks`, default true).
---@return boolean
function M.enabled()
  local o = require("claude_context.config.sessions").options()
  return o.hooks ~= false
end

---Whether Bash edits are named (`sessions.bash_edits`, default true; needs the hooks).
---@return boolean
function M.bash_edits()
  local o = require("claude_context.config.sessions").options()
  return o.hooks ~= false and o.bash_edits ~= false
end

---The `--settings` table of a session the plugin starts: its hooks for binary `bin` and, with
---Bash edits named, Claude Code's setting that reports them.
---@param bin string
---@param mcp boolean?
---@return {hooks: table<string, claude_context.HookEntry[]>, [string]: boolean}
function M.settings_table(bin, mcp)
  local s = { hooks = M.hooks_table(bin, mcp) }
  if M.bash_edits() then
    s[M.BASH_EDIT_SETTING] = true
  end
  return s
end

local function has_settings(argv)
  for _, a in ipairs(argv or {}) do
    if a == "--settings" or vim.startswith(a, "--settings=") then
      return true
    end
  end
  return false
end

---Whether `argv` gives the session the bridge's MCP server: the `--mcp-config` file
---`:ClaudeContext open` writes.
---@param argv string[]?
---@return boolean
function M.has_bridge_server(argv)
  local dir = require("claude_context.native").mcp_config_dir() .. "/"
  for _, a in ipairs(argv or {}) do
    local file = a:match("^%-%-mcp%-config=(.+)$")
    if file and vim.startswith(file, dir) then
      return true
    end
  end
  return false
end

---The `--settings=<json>` argument, or nil and why not.
---@param argv string[]? the command line so far (a `--settings` of the person's wins)
---@return string? arg, string? why
function M.settings_arg(argv)
  local json, why = M.settings_json(argv)
  return json and "--settings=" .. json, why
end

---The `--settings` JSON of a terminal's session, or nil and why not.
---@param argv string[]? the command line so far (a `--settings` of the person's wins)
---@return string? json, string? why
function M.settings_json(argv)
  if not M.enabled() then
    return nil, "sessions.hooks = false"
  end
  if has_settings(argv) then
    return nil, "the command line has its own --settings"
  end
  local bin = M.binary()
  if not bin then
    return nil, "claude-context-mcp is not built"
  end
  return vim.json.encode(M.settings_table(bin, M.has_bridge_server(argv)))
end

---Adds the terminal's name to the job's environment.
---@param env table<string,string>
---@param name string the terminal session's name
function M.add_env(env, name)
  env[M.ENV] = name
end

return M
