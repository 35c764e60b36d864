---@mod claude_context.agents.pickers.select The sessions picker through vim.ui.select
---
--- |vim.ui.select()| (or what replaces it: dressing.nvim, snacks' or fzf-lua's ui_select). It has
--- no keys of its own: the entry chosen opens the actions menu.

local M = {}

---@return boolean
function M.available()
  return true
end

---@param p claude_context.AgentsPick
function M.pick(p)
  vim.ui.select(p.entries, {
    prompt = p.prompt,
    kind = p.source and ("claude_context." .. p.source) or "claude_context.agents",
    format_item = p.format,
  }, function(e)
    p.closed()
    if e then
      p.default(e)
    end
  end)
end

return M
