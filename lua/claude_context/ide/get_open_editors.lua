-- getOpenEditors: the listed file buffers as {tabs = [{uri, isActive, label, languageId,
-- isDirty, isUntitled, fileName, lineCount}]}.
local util = require("claude_context.ide.util")

return function(_, respond)
  local active = util.active_editor_win()
  local active_buf = active and vim.api.nvim_win_get_buf(active)
  local tabs = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.bo[b].buflisted and util.is_file_buf(b) then
      local path = vim.api.nvim_buf_get_name(b)
      table.insert(tabs, {
        uri = util.uri(path),
        isActive = b == active_buf,
        label = vim.fs.basename(path),
        languageId = util.language_id(b),
        isDirty = vim.bo[b].modified,
        isUntitled = false,
        fileName = path,
        lineCount = vim.api.nvim_buf_is_loaded(b) and vim.api.nvim_buf_line_count(b) or 0,
      })
    end
  end
  respond({ tabs = tabs })
end
