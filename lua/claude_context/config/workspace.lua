---@mod claude_context.config.workspace What the model may reach besides the project root (`setup{workspace = …}`)

local M = {}

---@class claude_context.WorkspaceConfig
---@field extra_roots string[] More directories the model may reach (|claude-context-security-roots|)
---@field allow_lsp_roots boolean Language servers' workspace folders count as roots too (default false)

---What setup() takes for claude_context.WorkspaceConfig: every field optional (the defaults fill the rest).
---@class claude_context.WorkspaceConfig.Partial
---@field extra_roots? string[] More directories the model may reach (|claude-context-security-roots|)
---@field allow_lsp_roots? boolean Language servers' workspace folders count as roots too (default false)
M.defaults = { extra_roots = {}, allow_lsp_roots = false }

---Checks `setup{workspace = …}` and merges it over the defaults.
---@param user claude_context.WorkspaceConfig.Partial?
---@return claude_context.WorkspaceConfig
function M.resolve(user)
  vim.validate("workspace", user, "table", true)
  local o = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), user or {})
  vim.validate("workspace.extra_roots", o.extra_roots, function(v)
    if type(v) ~= "table" then
      return false
    end
    for _, p in ipairs(v) do
      local full = type(p) == "string" and vim.fn.expand(p) or ""
      if not (vim.startswith(full, "/") or full:match("^%a:[/\\]")) then
        return false
      end
    end
    return true
  end, "a list of absolute directory paths (~ expands)")
  vim.validate("workspace.allow_lsp_roots", o.allow_lsp_roots, "boolean")
  return o
end

---Adds `workspace` to `t` when it differs from the defaults (crates/core/src/config.rs).
---@param cfg claude_context.Config
---@param t table<string, any> the native configuration being built (crates/core/src/config.rs)
function M.native(cfg, t)
  local ws = cfg.workspace
  -- Only what differs from the defaults is sent (an empty list would encode as an object).
  if #ws.extra_roots > 0 or ws.allow_lsp_roots then
    t.workspace = {
      extra_roots = vim.tbl_map(function(p)
        return vim.fs.normalize(vim.fn.expand(p))
      end, ws.extra_roots),
      allow_lsp_roots = ws.allow_lsp_roots,
    }
    if #t.workspace.extra_roots == 0 then
      t.workspace.extra_roots = nil
    end
  end
end

return M
