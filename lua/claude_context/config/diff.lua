---@mod claude_context.config.diff Options of the diff views (`setup{diff = …}`)
---
--- Defaults, checks and the LuaCATS class side by side (see :help claude-context-diff-focus).

local M = {}

---Options under `diff` in setup() (see :help claude-context-diff-focus).
---@class claude_context.DiffConfig
---@field focus "normal"|"always"|"never" When the diff tab takes the cursor (default "normal")
---@field typing_ms integer A key pressed this recently counts as typing (default 1000)
---@field layout "vertical"|"horizontal"|"inline" Side by side, one above the other, or one buffer
---@field tab "new"|"current" A tab page of its own, or splits in the current one
---@field diffmode_max_bytes integer Bigger diffs (both sides together) are shown inline, without Vim's diff mode

---What setup() takes for claude_context.DiffConfig: every field optional (the defaults fill the rest).
---@class claude_context.DiffConfig.Partial
---@field focus? "normal"|"always"|"never" When the diff tab takes the cursor (default "normal")
---@field typing_ms? integer A key pressed this recently counts as typing (default 1000)
---@field layout? "vertical"|"horizontal"|"inline" Side by side, one above the other, or one buffer
---@field tab? "new"|"current" A tab page of its own, or splits in the current one
---@field diffmode_max_bytes? integer Bigger diffs (both sides together) are shown inline, without Vim's diff mode
M.defaults =
  { focus = "normal", typing_ms = 1000, layout = "vertical", tab = "new", diffmode_max_bytes = 2 * 1024 * 1024 }

local FOCUS = { normal = true, always = true, never = true }
local LAYOUT = { vertical = true, horizontal = true, inline = true }
local TAB = { new = true, current = true }

---Validates `setup{diff = …}` and merges it over the defaults.
---@param user claude_context.DiffConfig.Partial?
---@return claude_context.DiffConfig
function M.resolve(user)
  user = user or {}
  if type(user) ~= "table" then
    error(("claude-context: option diff must be a table, got %s"):format(type(user)), 0)
  end
  for k in pairs(user) do
    if M.defaults[k] == nil then
      error(("claude-context: unknown option diff.%s (see :help claude-context-diff-focus)"):format(tostring(k)), 0)
    end
  end
  local o = vim.tbl_extend("force", M.defaults, user)
  if not FOCUS[o.focus] then
    error("claude-context: option diff.focus must be one of normal, always, never", 0)
  end
  if not LAYOUT[o.layout] then
    error("claude-context: option diff.layout must be one of vertical, horizontal, inline", 0)
  end
  if not TAB[o.tab] then
    error("claude-context: option diff.tab must be new or current", 0)
  end
  if type(o.typing_ms) ~= "number" or o.typing_ms < 0 then
    error("claude-context: option diff.typing_ms must be a number >= 0", 0)
  end
  if type(o.diffmode_max_bytes) ~= "number" or o.diffmode_max_bytes < 0 then
    error("claude-context: option diff.diffmode_max_bytes must be a number >= 0", 0)
  end
  return o
end

---The effective options (the defaults when the given ones are wrong: setup() reported that).
---@return claude_context.DiffConfig
function M.options()
  local ok, o = pcall(M.resolve, require("claude_context.config").options.diff)
  return ok and o or vim.deepcopy(M.defaults)
end

return M
