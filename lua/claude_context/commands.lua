---@mod claude_context.commands :ClaudeContext {subcommand}
---
--- Subcommands are registered by name with `register(name, spec)`; the command's completion
--- lists them. Modules add their own (context, ask, open, …). A subcommand completes its
--- arguments with its own `complete` (claude_context.complete makes one from a source per
--- argument: branches, worktrees, sessions, turn numbers) and says where `:ClaudeContext`
--- without arguments lists it with `group` (one of M.GROUPS).

---The `:ClaudeContext` command's registry (the feature modules' `register(commands)` add to it).
---@class claude_context.Commands
local M = {}

---@alias claude_context.CommandOpts vim.api.keyset.create_user_command.command_args

---@class claude_context.Subcommand
---@field run fun(opts: claude_context.CommandOpts, args: string[]) opts: the user command's opts (range, line1, …)
---@field complete (fun(arglead: string, args: string[]): string[])?
---@field desc string
---@field group string? one of M.GROUPS' names (else M.GROUP_OF[name], else "Other")

---@type table<string, claude_context.Subcommand>
M.subcommands = {}

---The groups `:ClaudeContext` without arguments shows, in order: each with what it is for and the
---subcommands the plugin registers in it (one registered elsewhere says its own `group`).
M.GROUPS = {
  { "terminal", "Claude's terminal", { "open", "focus", "close", "sessions", "model", "send-text", "compose" } },
  { "context", "Send context to Claude", { "send", "add", "add-terminal", "add-diagnostics", "add-quickfix" } },
  {
    "changes",
    "Claude's changes: diffs, review, rewind",
    { "accept", "reject", "diff", "review", "checkpoints", "rewind", "edit", "edit!" },
  },
  { "sessions", "Many sessions", { "new", "agents", "attach", "permissions", "land", "discard" } },
  { "sub-agent", "The sub-agent (execute_claude)", { "ask", "history", "session", "reset", "cancel" } },
  { "memory", "Memory bank and decisions", { "context", "memory", "decision" } },
  {
    "bridge",
    "The bridge and setup",
    { "start", "stop", "restart", "status", "info", "log", "build", "claude-plugin", "mcp-command" },
  },
}

---The group of each subcommand M.GROUPS names.
M.GROUP_OF = {}
for _, g in ipairs(M.GROUPS) do
  for _, name in ipairs(g[3]) do
    M.GROUP_OF[name] = g[1]
  end
end

---@param name string
---@param spec claude_context.Subcommand
function M.register(name, spec)
  M.subcommands[name] = spec
end

local function cc()
  return require("claude_context")
end

-- Several lines never go to the command line (a hit-enter prompt would stall Claude's calls):
-- claude_context.util.output shows them in a floating window, a single line through vim.notify.
local function echo(lines, title)
  require("claude_context.util.output").show(lines, { title = title or "claude-context" })
end

local err = require("claude_context.util.notify").error

M.register("start", {
  desc = "start the bridge",
  run = function()
    local ok, e = cc().start()
    if not ok then
      err(e)
    end
  end,
})

M.register("stop", {
  desc = "stop the bridge and remove its lock file",
  run = function()
    cc().stop()
  end,
})

M.register("restart", {
  desc = "stop and start the bridge (new port and token)",
  run = function()
    local ok, e = cc().restart()
    if not ok then
      err(e)
    end
  end,
})

---Lines of `:ClaudeContext status` (the token masked).
---@return string[]
function M.status_lines()
  local st = cc().status()
  if not st then
    local _, missing = require("claude_context.native").get()
    return { missing or "claude-context: bridge stopped (:ClaudeContext start)" }
  end
  local lines = {
    ("claude-context %s: listening on %s"):format(st.version, st.url),
    ("  lock file: %s"):format(st.lock_file or "(none)"),
    ("  token:     %s"):format(st.token),
    ("  workspace: %s"):format(table.concat(st.workspace_folders or {}, ", ")),
    ("  clients:   %d"):format(#(st.clients or {})),
  }
  -- JSON null (a client that has not said its name or pid) decodes to vim.NIL, a truthy value.
  local function v(x)
    return x ~= vim.NIL and x or nil
  end
  for _, c in ipairs(st.clients or {}) do
    table.insert(
      lines,
      ("    #%d [%s] %s %s (%s)%s%s, %ds"):format(
        c.id,
        v(c.surface) or "?",
        v(c.name) or "?",
        v(c.version) or "",
        v(c.protocol_version) or "not initialized",
        v(c.ide_connected_pid) and (" ide pid " .. c.ide_connected_pid) or "",
        c.tools_listed and ", tools listed" or "",
        c.connected_secs or 0
      )
    )
  end
  return lines
end

M.register("status", {
  desc = "show port, lock file and connected clients",
  run = function()
    echo(M.status_lines(), "claude-context status")
  end,
})

M.register("info", {
  desc = "show the project info (fs-get-project-info)",
  run = function()
    local r, e = cc().call_tool_sync("fs-get-project-info", {})
    if not r then
      return err(e)
    end
    local info = r.structuredContent or {}
    local lines = { "claude-context project info:" }
    for _, k in ipairs({
      "project_root",
      "project_root_source",
      "cwd",
      "relative_cwd",
      "env_mcp_project_root",
      "nvim_version",
      "os",
      "plugin_version",
    }) do
      if info[k] ~= nil then
        table.insert(lines, ("  %-20s %s"):format(k, tostring(info[k])))
      end
    end
    echo(lines, "claude-context info")
  end,
})

M.register("log", {
  desc = "open the plugin's log file",
  run = function()
    vim.cmd.split(vim.fn.fnameescape(require("claude_context.config").log_file()))
  end,
})

-- context, memory, decision (the memory bank and the WRAP decision status).
require("claude_context.context").register(M)
-- open, sessions, model, send-text, compose, focus, close, mcp-command
require("claude_context.terminal.commands").register(M)

---@param o claude_context.CommandOpts
function M.run(o)
  -- Run during Neovim's startup, before the start setup() deferred: the bridge first.
  cc().activate()
  local args = o.fargs
  local name = args[1]
  if not name then
    echo(M.overview_lines(), "claude-context: :ClaudeContext {subcommand}")
    return
  end
  local sub = M.subcommands[name]
  if not sub then
    err(("unknown subcommand %q; try one of: %s"):format(name, table.concat(M.names(), ", ")))
    return
  end
  sub.run(o, vim.list_slice(args, 2))
end

---@return string[]
function M.names()
  local names = vim.tbl_keys(M.subcommands)
  table.sort(names)
  return names
end

---The lines of `:ClaudeContext` without arguments: the bridge's state in one line, then every
---subcommand under its group, one line each.
---@return string[]
function M.overview_lines()
  local st = package.loaded["claude_context._native"] and cc().status() or nil
  local lines = {
    st and ("bridge listening on %s, %d client(s)  (:ClaudeContext status)"):format(st.url, #(st.clients or {}))
      or "bridge not running  (:ClaudeContext start)",
  }
  local by_group, width = {}, 0
  for name, sub in pairs(M.subcommands) do
    local g = sub.group or M.GROUP_OF[name] or "other"
    by_group[g] = by_group[g] or {}
    table.insert(by_group[g], name)
    width = math.max(width, #name)
  end
  local order = vim.list_extend(vim.deepcopy(M.GROUPS), { { "other", "Other" } })
  for _, g in ipairs(order) do
    local names = by_group[g[1]]
    if names then
      table.sort(names)
      table.insert(lines, "")
      table.insert(lines, g[2])
      for _, n in ipairs(names) do
        table.insert(lines, ("  %-" .. width .. "s  %s"):format(n, M.subcommands[n].desc or ""))
      end
    end
  end
  table.insert(lines, "")
  table.insert(lines, "<Tab> completes subcommands and their arguments; :help :ClaudeContext")
  return lines
end

---@param arglead string
---@param cmdline string
---@return string[]
function M.complete(arglead, cmdline)
  local args = vim.split(cmdline, "%s+", { trimempty = true })
  -- Drop the command name (and a range before it).
  table.remove(args, 1)
  local completing_sub = #args == 0 or (#args == 1 and arglead ~= "")
  if completing_sub then
    return vim.tbl_filter(function(n)
      return vim.startswith(n, arglead)
    end, M.names())
  end
  local sub = M.subcommands[args[1]]
  if sub and sub.complete then
    return sub.complete(arglead, args)
  end
  return {}
end

-- :ClaudeContext build (a verified prebuilt library, else cargo).
require("claude_context.install").register(M)
-- Subcommands of other modules: :ClaudeContext send / add / accept / reject.
require("claude_context.ide.commands").register(M)
-- Subcommands of other modules.
require("claude_context.ask").register_commands(M)
-- add-terminal, add-diagnostics, add-quickfix
require("claude_context.context_files").register(M)
-- review [N] | keep | reject | undo | comment | send | quickfix (Claude's changes, hunk by hunk)
require("claude_context.review.commands").register(M)
-- checkpoints, rewind
require("claude_context.checkpoints").register(M)
-- claude-plugin
require("claude_context.claude_plugin").register(M)

require("claude_context.agents.commands").register(M)
-- edit (Claude's change to a range, shown in place)
require("claude_context.edit.commands").register(M)
-- transcript, follow, trail, usage
require("claude_context.transcript.commands").register(M)
-- conversations, resume
require("claude_context.conversations.commands").register(M)

return M
