---@mod claude_context.util.autocmds The plugin's autocommand groups, each made in one call
---
--- `group(name, list)` creates (clearing) an augroup and its autocommands from a list of
--- `{ events, callback, pattern = …, desc = … }`, so that a module's `start` says which events it
--- follows and what it does on each, not the plumbing of each `nvim_create_autocmd` call.

local M = {}

---@class claude_context.Autocmd
---@field [1] string|string[] the events
---@field [2] fun(ev: vim.api.keyset.create_autocmd.callback_args) the callback (returning true would delete the autocommand)
---@field pattern string|string[]?
---@field desc string?

---Creates the augroup `name` (cleared) with one autocommand per entry of `list`.
---@param name string
---@param list claude_context.Autocmd[]
---@return integer group
function M.group(name, list)
  local group = vim.api.nvim_create_augroup(name, { clear = true })
  for _, a in ipairs(list) do
    vim.api.nvim_create_autocmd(a[1], { group = group, callback = a[2], pattern = a.pattern, desc = a.desc })
  end
  return group
end

return M
