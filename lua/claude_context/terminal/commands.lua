---@mod claude_context.terminal.commands The terminal's :ClaudeContext subcommands
---
--- open, sessions, model, send-text, compose, focus, close and mcp-command.

local M = {}

local notify = require("claude_context.util.notify")

local function terminal()
  return require("claude_context.terminal")
end

---Arguments `:ClaudeContext open` completes (the claude CLI's own), and values after some.
local OPEN_ARGS = {
  "--continue",
  "--resume",
  "--model",
  "--permission-mode",
  "--add-dir",
  "--allowedTools",
  "--disallowedTools",
  "--append-system-prompt",
  "--verbose",
  "--debug",
}
local OPEN_VALUES = {
  ["--model"] = { "sonnet", "opus", "haiku", "opusplan" },
}

---The words of `list` that start with `arglead`.
local function matching(list, arglead)
  return vim.tbl_filter(function(x)
    return vim.startswith(x, arglead)
  end, list)
end

---Completion of `:ClaudeContext open {args}`.
---@param arglead string
---@param args string[] the words so far (args[1] is "open")
---@return string[]
local function complete_open(arglead, args)
  local prev = args[#args]
  if arglead ~= "" then
    prev = args[#args - 1]
  end
  local values = OPEN_VALUES[prev or ""]
  if prev == "--permission-mode" then
    values = require("claude_context.config.terminal").permission_modes() or {}
  end
  return matching(values or OPEN_ARGS, arglead)
end

---The paths where `claude-context-mcp` may have been built, in order of preference.
---@return string[]
function M.mcp_binary_candidates()
  return require("claude_context.native").relay_candidates()
end

---The `claude mcp add` line registering the relay, or nil and why not.
---@return string? line, string? err
function M.mcp_command()
  local candidates = M.mcp_binary_candidates()
  for _, p in ipairs(candidates) do
    if vim.fn.executable(p) == 1 then
      local arg = p:match("^[%w%./_%-+=:@]+$") and p or vim.fn.shellescape(p)
      return ("claude mcp add claude-context -- %s"):format(arg)
    end
  end
  return nil,
    ("claude-context-mcp is not built (looked for %s): run `make` in %s"):format(
      table.concat(candidates, ", "),
      require("claude_context.native").plugin_root()
    )
end

---Reports a failed action's message as an error.
local or_error = notify.check

local function sessions_command(_, args)
  local sessions = require("claude_context.terminal.sessions")
  local function go(name)
    if name and name ~= "" then
      or_error(terminal().switch(name))
    end
  end
  if args[1] then
    return go(args[1])
  end
  vim.ui.select(sessions.list(), {
    prompt = "Claude session",
    kind = "claude_context.ask",
    format_item = function(it)
      -- What its Claude does (state, project, elapsed, prompt), from the hooks.
      local doing = require("claude_context.sessions.state").describe(it.name)
      return ("%s%s (%s)%s"):format(
        it.current and "* " or "  ",
        it.name,
        it.running and "running" or "not running",
        doing and (": " .. doing) or ""
      )
    end,
  }, function(choice)
    go(choice and choice.name)
  end)
end

local function mcp_command_command()
  local line, err = M.mcp_command()
  if not line then
    notify.error(err)
    return
  end
  local copied = false
  if vim.fn.has("clipboard") == 1 then
    copied = pcall(vim.fn.setreg, "+", line)
  end
  -- A window (the line is long, and meant to be copied): no hit-enter prompt.
  require("claude_context.util.output").show(
    { line, copied and "(copied to the + register)" or nil },
    { title = "claude mcp add", float = true }
  )
end

---Adds the terminal's subcommands to :ClaudeContext.
---@param commands claude_context.Commands
function M.register(commands)
  commands.register("open", {
    desc = "toggle a terminal running claude, connected to the bridge ([args] for a new one)",
    run = function(_, args)
      or_error(terminal().toggle(args))
    end,
    complete = complete_open,
  })
  commands.register("sessions", {
    desc = "switch to (or start) the Claude terminal session {name}; without a name, pick one",
    run = sessions_command,
    complete = function(arglead)
      local names = vim.tbl_map(function(it)
        return it.name
      end, require("claude_context.terminal.sessions").list())
      return matching(names, arglead)
    end,
  })
  commands.register("model", {
    desc = "pick a model: /model in the running claude, else start claude with --model",
    run = function(_, args)
      terminal().pick_model(args[1])
    end,
    complete = function(arglead)
      return matching(terminal().models, arglead)
    end,
  })
  commands.register("send-text", {
    desc = "type {text} (or the range's lines) into Claude's prompt",
    run = function(o, args)
      require("claude_context.terminal.input").send_text_command(o, args)
    end,
  })
  commands.register("compose", {
    desc = "a buffer for a long prompt; :w sends it to Claude",
    run = function()
      require("claude_context.terminal.input").compose()
    end,
  })
  commands.register("focus", {
    desc = "the cursor into Claude's terminal; hide it when the cursor is there",
    run = function()
      or_error(terminal().focus())
    end,
  })
  commands.register("close", {
    desc = "end the claude terminal started by :ClaudeContext open",
    run = function()
      if not require("claude_context.terminal.sessions").current.buf then
        notify("no claude terminal is open")
        return
      end
      terminal().close()
    end,
  })
  commands.register("mcp-command", {
    desc = "print the `claude mcp add` line for claude-context-mcp",
    run = mcp_command_command,
  })
end

return M
