---@mod claude_context.config.edit Options of edit in place (`setup{edit = …}`)
---
--- Defaults, checks and the LuaCATS class side by side (see :help claude-context-edit).

local M = {}

---Options under `edit` in setup() (see :help claude-context-edit).
---@class claude_context.EditConfig
---@field persist boolean Let the edit process keep its conversation on disk like any Claude Code session (default false)
---@field context_lines integer Lines above and below the range sent along (default 30)
---@field history integer Instructions the prompt's <Up> remembers (default 50)
---@field max_edits_per_process integer Edits one warm process answers before a fresh one takes over (default 20)
---@field cancel_key string Key that stops the edit under way in the buffer (default "<C-c>"; "" for none)

---What setup() takes for claude_context.EditConfig: every field optional (the defaults fill the rest).
---@class claude_context.EditConfig.Partial
---@field persist? boolean Let the edit process keep its conversation on disk like any Claude Code session (default false)
---@field context_lines? integer Lines above and below the range sent along (default 30)
---@field history? integer Instructions the prompt's <Up> remembers (default 50)
---@field max_edits_per_process? integer Edits one warm process answers before a fresh one takes over (default 20)
---@field cancel_key? string Key that stops the edit under way in the buffer (default "<C-c>"; "" for none)
M.defaults = { persist = false, context_lines = 30, history = 50, max_edits_per_process = 20, cancel_key = "<C-c>" }

local TYPES = {
  persist = "boolean",
  context_lines = "number",
  history = "number",
  max_edits_per_process = "number",
  cancel_key = "string",
}

---Validates `setup{edit = …}` and merges it over the defaults.
---@param user claude_context.EditConfig.Partial?
---@return claude_context.EditConfig
function M.resolve(user)
  user = user or {}
  if type(user) ~= "table" then
    error(("claude-context: option edit must be a table, got %s"):format(type(user)), 0)
  end
  for k, v in pairs(user) do
    if M.defaults[k] == nil then
      error(("claude-context: unknown option edit.%s (see :help claude-context-edit)"):format(tostring(k)), 0)
    end
    if type(v) ~= TYPES[k] then
      error(("claude-context: option edit.%s must be a %s, got %s"):format(k, TYPES[k], type(v)), 0)
    end
  end
  local o = vim.tbl_extend("force", M.defaults, user)
  for _, k in ipairs({ "context_lines", "history" }) do
    if o[k] < 0 then
      error(("claude-context: option edit.%s must be a number >= 0"):format(k), 0)
    end
  end
  if o.max_edits_per_process < 1 then
    error("claude-context: option edit.max_edits_per_process must be at least 1", 0)
  end
  return o
end

---The effective options (the defaults when the given ones are wrong: setup() reported that).
---@return claude_context.EditConfig
function M.options()
  local ok, o = pcall(M.resolve, require("claude_context.config").options.edit)
  return ok and o or vim.deepcopy(M.defaults)
end

return M
