---@mod claude_context.config.security What tools may do beyond the safe defaults (`setup{security = …}`)

local M = {}

---@class claude_context.SecurityConfig
---@field allow_write string[] Protected files (|claude-context-security|) tools may write anyway: globs relative to the project root

---What setup() takes for claude_context.SecurityConfig: every field optional (the defaults fill the rest).
---@class claude_context.SecurityConfig.Partial
---@field allow_write? string[] Protected files (|claude-context-security|) tools may write anyway: globs relative to the project root
M.defaults = { allow_write = {} }

---Checks `setup{security = …}` and merges it over the defaults.
---@param user claude_context.SecurityConfig.Partial?
---@return claude_context.SecurityConfig
function M.resolve(user)
  vim.validate("security", user, "table", true)
  local o = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), user or {})
  vim.validate("security.allow_write", o.allow_write, function(v)
    if type(v) ~= "table" then
      return false
    end
    for _, p in ipairs(v) do
      if type(p) ~= "string" then
        return false
      end
    end
    return true
  end, "a list of glob strings")
  return o
end

---Adds `security` to `t` when it says anything (crates/core/src/config.rs: SecurityConfig).
---@param cfg claude_context.Config
---@param t table<string, any> the native configuration being built (crates/core/src/config.rs)
function M.native(cfg, t)
  -- An empty Lua table would encode as a JSON object: only a non-empty list is sent.
  if #cfg.security.allow_write > 0 then
    t.security = { allow_write = cfg.security.allow_write }
  end
end

return M
