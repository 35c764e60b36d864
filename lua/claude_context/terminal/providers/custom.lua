---@mod claude_context.terminal.providers.custom A provider table of your own
---
--- `terminal.provider = { open = …, show = …, hide = … }`: its `open` is called as the
--- interface says (|claude_context.TerminalProvider|); an error it raises, or a result that is
--- not a terminal buffer and a job, is reported as the provider's failure.

local M = {}

---@param user claude_context.TerminalProvider
---@return claude_context.TerminalProvider
function M.new(user)
  return {
    open = function(cmd, env, cwd)
      local ok, buf, job = pcall(user.open, cmd, env, cwd)
      if not ok then
        error("the terminal provider failed: " .. tostring(buf), 0)
      end
      if type(buf) ~= "number" or not vim.api.nvim_buf_is_valid(buf) or type(job) ~= "number" or job <= 0 then
        error("the terminal provider returned no terminal buffer and job", 0)
      end
      return buf, job
    end,
    show = user.show,
    hide = user.hide,
  }
end

return M
