---@mod claude_context.review.commands :ClaudeContext review [N|keep|reject|undo|comment|send|quickfix|close]
---
--- Registered with the other subcommands; the review's modules load on first use.

local M = {}

local SUBS = { "keep", "reject", "undo", "comment", "send", "quickfix", "close" }

local function review()
  return require("claude_context.review")
end

local function err(msg)
  require("claude_context.util.notify").error(msg)
end

---The lines a command acts on: its range, else the cursor line.
local function lines(o)
  if o.range and o.range > 0 then
    return o.line1, o.line2
  end
  local l = vim.fn.line(".")
  return l, l
end

---Runs `:ClaudeContext review {args}`.
---@param o claude_context.CommandOpts
---@param args string[]
function M.run(o, args)
  local sub = args[1]
  local rest = table.concat(vim.list_slice(args, 2), " ")
  if sub == nil or tonumber(sub) then
    local n = sub and tonumber(sub) or nil
    if n and (n < 1 or n % 1 ~= 0) then
      return err("review: N must be a whole number >= 1")
    end
    return review().show(n)
  end
  if sub == "keep" or sub == "reject" then
    local l1, l2 = lines(o)
    review().act(sub, { line1 = l1, line2 = l2, reason = rest ~= "" and rest or nil })
  elseif sub == "undo" then
    review().undo()
  elseif sub == "comment" then
    local l1, l2 = lines(o)
    review().comment(rest, { line1 = l1, line2 = l2 })
  elseif sub == "send" then
    review().send()
  elseif sub == "quickfix" then
    local n = args[2] and tonumber(args[2]) or nil
    if args[2] and not (n and n >= 1 and n % 1 == 0) then
      return err("review: usage: :ClaudeContext review quickfix [N]")
    end
    review().quickfix(n)
  elseif sub == "close" then
    review().close()
  else
    err(("review: unknown subcommand %q; try a number or one of: %s"):format(sub, table.concat(SUBS, ", ")))
  end
end

---Completes the word after `review`.
---@param arglead string
---@param args string[]
---@return string[]
function M.complete(arglead, args)
  if #args > 2 or (#args == 2 and arglead == "") then
    return {}
  end
  local c = require("claude_context.complete")
  return c.matching(vim.list_extend(c.turns(), SUBS), arglead)
end

---Adds `review` to :ClaudeContext.
---@param commands claude_context.Commands
function M.register(commands)
  commands.register("review", {
    desc = "review the last turn's changes: [N] | keep | reject [reason] | undo | comment {text} | send | quickfix [N] | close",
    run = M.run,
    complete = M.complete,
  })
end

return M
