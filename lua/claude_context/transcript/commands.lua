---@mod claude_context.transcript.commands :ClaudeContext transcript / follow / trail / usage

local M = {}

local complete = require("claude_context.complete")

---Registers the subcommands with claude_context.commands.
---@param commands claude_context.Commands
function M.register(commands)
  commands.register("transcript", {
    desc = "a conversation as a read-only Markdown buffer (default: the current session's)",
    group = "sessions",
    -- The sessions the bridge knows, and the project's conversations (:ClaudeContext conversations).
    complete = complete.args(complete.any(complete.session_ids, function()
      return require("claude_context.conversations.commands").ids()
    end)),
    run = function(_, args)
      require("claude_context.transcript").open(args[1])
    end,
  })
  commands.register("follow", {
    desc = "follow the agent: show each file it reads or edits (toggle; on | off)",
    group = "sessions",
    complete = complete.args({ "on", "off" }),
    run = function(_, args)
      local want = ({ on = true, off = false })[args[1] or ""]
      local on = require("claude_context.follow").follow(want)
      require("claude_context.util.notify").prefixed(on and "following the agent" or "not following")
    end,
  })
  commands.register("trail", {
    desc = "a session's trail (files its tools read or edited) as the location list",
    group = "sessions",
    complete = complete.args(complete.session_ids),
    run = function(_, args)
      require("claude_context.follow").trail(args[1])
    end,
  })
  commands.register("usage", {
    desc = "what each session cost (Claude Code's own figures)",
    group = "sessions",
    run = function()
      local usage = require("claude_context.usage")
      usage.refresh(function()
        local lines = {}
        for _, e in ipairs(usage.usage()) do
          lines[#lines + 1] = ("%-10s %-8s %s  +%s -%s  api %s ms"):format(
            (e.name or "?"):gsub("%c", " "),
            e.session:sub(1, 8),
            e.cost_usd and ("$%.4f"):format(e.cost_usd) or "$?",
            e.lines_added or "?",
            e.lines_removed or "?",
            e.api_ms or "?"
          )
        end
        require("claude_context.util.output").show(
          #lines > 0 and lines or { "no sessions" },
          { title = "Claude usage" }
        )
      end)
    end,
  })
end

return M
