---@mod claude_context.util.typing When the person last pressed a key
---
--- A diff that arrives while the person types must not take the cursor (see
--- :help claude-context-diff-focus): in Normal mode "typing" means a key pressed within
--- `diff.typing_ms`. setup() installs the tracker (one |vim.on_key()| callback, no allocation).

local M = {}

local uv = vim.uv or vim.loop

---uv.now() of the last key, 0 before any.
M.last = 0

local ns

---Starts tracking keys (idempotent).
function M.install()
  if ns then
    return
  end
  ns = vim.api.nvim_create_namespace("claude_context_typing")
  vim.on_key(function(_, typed)
    if typed and typed ~= "" then
      M.last = uv.now()
    end
  end, ns)
end

---Milliseconds since the last key (math.huge before any).
---@return number
function M.since()
  if M.last == 0 then
    return math.huge
  end
  uv.update_time()
  return uv.now() - M.last
end

return M
