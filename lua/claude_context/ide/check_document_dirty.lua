-- checkDocumentDirty {filePath}: {success = true, filePath, isDirty, isUntitled}, or
-- {success = false, message = "Document not open: <path>"}.
local util = require("claude_context.ide.util")

return function(params, respond)
  if type(params.filePath) ~= "string" or params.filePath == "" then
    return respond(nil, "checkDocumentDirty: filePath must be a non-empty string")
  end
  local buf = util.find_buf(util.abspath(params.filePath))
  if not buf or not vim.api.nvim_buf_is_loaded(buf) then
    return respond({ success = false, message = "Document not open: " .. params.filePath })
  end
  respond({ success = true, filePath = params.filePath, isDirty = vim.bo[buf].modified, isUntitled = false })
end
