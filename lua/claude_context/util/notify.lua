---@mod claude_context.util.notify The plugin's one way to tell the person something
---
--- `require("claude_context.util.notify")(msg, level)` shows `msg` through |vim.notify()| with the
--- title "claude-context"; `.prefixed(msg, level)` starts the text with "claude-context: " (once)
--- for messages that would otherwise not say where they come from.

---Callable: `notify(msg, level)` is `notify.notify(msg, level)`.
---@class claude_context.Notify
---@overload fun(msg: string, level: integer?)
local M = {}

---@param msg string
---@param level integer? a vim.log.levels value (default INFO)
function M.notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = "claude-context" })
end

---Like |notify|, the text starting with "claude-context: " (not doubled).
---@param msg string
---@param level integer?
function M.prefixed(msg, level)
  M.notify("claude-context: " .. msg:gsub("^claude%-context: ", ""), level)
end

---An error message.
---@param msg string
function M.error(msg)
  M.notify(msg, vim.log.levels.ERROR)
end

---Reports a failed action's message as an error (nothing when `ok`).
---@param ok boolean?
---@param err string?
function M.check(ok, err)
  if not ok then
    M.error(err or "failed")
  end
end

---An error message starting with "claude-context: ", then `cb(msg)` when there is a `cb`.
---@param cb fun(err:string)?
---@param msg string
function M.fail(cb, msg)
  M.error("claude-context: " .. msg)
  if cb then
    cb(msg)
  end
end

setmetatable(M, {
  __call = function(_, msg, level)
    M.notify(msg, level)
  end,
})
return M
