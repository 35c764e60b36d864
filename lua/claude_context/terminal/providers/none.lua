---@mod claude_context.terminal.providers.none Nothing started: you run claude yourself
---
--- The bridge runs; the message says how to connect a claude started by hand.

local M = {}

---@return claude_context.TerminalProvider
function M.new()
  return {
    detached = true,
    open = function(_, env, cwd)
      local port = env.CLAUDE_CODE_SSE_PORT
      require("claude_context.util.notify")(
        ("terminal.provider = none: the bridge runs on port %s; start `claude` yourself in %s and run /ide (or set CLAUDE_CODE_SSE_PORT=%s)"):format(
          port,
          cwd,
          port
        )
      )
    end,
  }
end

return M
