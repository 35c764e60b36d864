---@mod claude_context.edit.commands `:ClaudeContext edit` and `edit!` (the feature loads when first used)

local M = {}

---The edit's options from the user command's `o` and the words after the subcommand.
local function edit_opts(o, args, repeat_last)
  return {
    range = o.range and o.range > 0 and { o.line1, o.line2 } or nil,
    instruction = table.concat(args, " "),
    repeat_last = repeat_last or o.bang,
  }
end

---Registers `:ClaudeContext edit` and `:ClaudeContext edit!`.
---@param commands claude_context.Commands
function M.register(commands)
  local complete = require("claude_context.complete")
  commands.register("edit", {
    desc = "rewrite the range (or the function at the cursor) as you say, Claude's change shown in place",
    group = "changes",
    run = function(o, args)
      require("claude_context.edit").edit(edit_opts(o, args))
    end,
    complete = complete.args(complete.edit_instructions),
  })
  commands.register("edit!", {
    desc = "edit the range (or the function at the cursor) with the last instruction again",
    group = "changes",
    run = function(o, args)
      require("claude_context.edit").edit(edit_opts(o, args, true))
    end,
  })
end

return M
