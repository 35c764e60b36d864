---@mod claude_context.conversations.commands :ClaudeContext conversations / resume
---
--- `conversations [text]`: the project's conversations (those that mention `text`) in the
--- picker; `resume [id]`: resumes conversation `id` in Claude's terminal (the picker without
--- one). Both complete conversation ids (claude_context.complete's `conversations`, from the last
--- listing; a completion asks for a new one in the background).

local M = {}

local notify = require("claude_context.util.notify")

local function conversations()
  return require("claude_context.conversations")
end

---The project's conversation ids (from the last listing; asks for a fresh one for the next
---completion, off the main thread). `:ClaudeContext transcript` completes them too.
---@return string[]
function M.ids()
  pcall(conversations().list, {}, function() end)
  return require("claude_context.complete").conversations()
end

---Completes the project's conversation ids (M.ids).
---@param arglead string
---@return string[]
function M.complete_ids(arglead)
  return require("claude_context.complete").matching(M.ids(), arglead)
end

---Adds the subcommands to :ClaudeContext.
---@param commands claude_context.Commands
function M.register(commands)
  commands.register("conversations", {
    desc = "the project's Claude conversations (and its worktrees'): search, transcript, resume, fork: conversations [text]",
    group = "sessions",
    run = function(_, args)
      local q = #args > 0 and table.concat(args, " ") or nil
      require("claude_context.conversations.picker").pick({ query = q })
    end,
  })
  commands.register("resume", {
    desc = "resume a conversation of the project in Claude's terminal: resume [id] (the picker without one)",
    group = "sessions",
    run = function(_, args)
      local id = args[1]
      if not id then
        return require("claude_context.conversations.picker").pick()
      end
      if not conversations().valid_id(id) then
        return notify.error(("claude-context: not a session id: %s"):format(vim.inspect(id)))
      end
      local ok, err = conversations().resume(id)
      if not ok then
        notify.error("claude-context: " .. tostring(err))
      end
    end,
    complete = M.complete_ids,
  })
end

return M
