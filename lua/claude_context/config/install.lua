---@mod claude_context.config.install Options of the installer (`setup{install = …}`)
---
--- `install = { url = … }`: where `:ClaudeContext build` downloads the native library from
--- (read by claude_context.install).

local M = {}

---@class claude_context.InstallConfig
---@field url string? Base URL of the release assets (default: the project's releases)

---Checks `setup{install = …}`; raises a clear error on a typo or a wrong type.
---@param o claude_context.InstallConfig?
---@return claude_context.InstallConfig? o
function M.resolve(o)
  if o == nil then
    return nil
  end
  if type(o) ~= "table" then
    error(("claude-context: option install must be a table, got %s"):format(type(o)), 0)
  end
  for k in pairs(o) do
    if k ~= "url" then
      error(("claude-context: unknown option install.%s (see :help claude-context-build)"):format(tostring(k)), 0)
    end
  end
  if o.url ~= nil and type(o.url) ~= "string" then
    error("claude-context: option install.url must be a string", 0)
  end
  return o
end

return M
