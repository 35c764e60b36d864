---@mod claude_context.config.ide Options of the Claude Code IDE integration (`setup{ide = …}`)

local M = {}

---@class claude_context.IdeConfig
---@field track_selection boolean Send selection_changed as the cursor/selection moves
---@field selection_debounce_ms integer Wait this long after the last move before sending
---@field mention_queue_ms integer Keep @-mentions made while no Claude Code is connected
---@field name string The lock file's `ideName`, what Claude Code's /ide shows: `{project}` (the project directory's name), `{pid}` and `{servername}` are filled in

---What setup() takes for claude_context.IdeConfig: every field optional (the defaults fill the rest).
---@class claude_context.IdeConfig.Partial
---@field track_selection? boolean Send selection_changed as the cursor/selection moves
---@field selection_debounce_ms? integer Wait this long after the last move before sending
---@field mention_queue_ms? integer Keep @-mentions made while no Claude Code is connected
---@field name? string The lock file's `ideName`, what Claude Code's /ide shows: `{project}` (the project directory's name), `{pid}` and `{servername}` are filled in
M.defaults = {
  track_selection = true,
  selection_debounce_ms = 100,
  mention_queue_ms = 30000,
  name = "Neovim ({project}, pid {pid})",
}

---Checks `setup{ide = …}` and merges it over the defaults.
---@param user claude_context.IdeConfig.Partial?
---@return claude_context.IdeConfig
function M.resolve(user)
  vim.validate("ide", user, "table", true)
  local o = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), user or {})
  vim.validate("ide.track_selection", o.track_selection, "boolean")
  vim.validate("ide.selection_debounce_ms", o.selection_debounce_ms, "number")
  vim.validate("ide.mention_queue_ms", o.mention_queue_ms, "number")
  vim.validate("ide.name", o.name, function(v)
    return type(v) == "string" and vim.trim(v) ~= ""
  end, "a non-empty string")
  return o
end

---The lock file's `ideName`: `ide.name` with `{project}` (the name of the project root, else of
---the current directory), `{pid}` and `{servername}` filled in. Two Neovims in one project
---differ by pid.
---@param cfg claude_context.Config
---@return string
function M.ide_name(cfg)
  local root = cfg.project_root and vim.fn.expand(cfg.project_root) or vim.fn.getcwd()
  local project = vim.fn.fnamemodify(vim.fs.normalize(root), ":t")
  if project == "" then
    project = root
  end
  local values = { project = project, pid = tostring(vim.fn.getpid()), servername = vim.v.servername or "" }
  local name = (cfg.ide and cfg.ide.name or M.defaults.name):gsub("{(%w+)}", function(k)
    return values[k]
  end)
  -- One line, and no longer than the native side takes.
  name = name:gsub("%c", " ")
  return vim.fn.strcharpart(name, 0, 200)
end

return M
