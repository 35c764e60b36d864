-- saveDocument {filePath}: writes the buffer if it has unsaved changes;
-- {success, filePath, saved, message}.
local util = require("claude_context.ide.util")
local files = require("claude_context.ide.files")

return require("claude_context.ide").deferred(function(params, respond)
  if type(params.filePath) ~= "string" or params.filePath == "" then
    return respond(nil, "saveDocument: filePath must be a non-empty string")
  end
  local fp = params.filePath
  local buf = util.find_buf(util.abspath(fp))
  if not buf or not vim.api.nvim_buf_is_loaded(buf) then
    return respond({ success = false, filePath = fp, saved = false, message = "Document not open: " .. fp })
  end
  if not vim.bo[buf].modified then
    return respond({ success = true, filePath = fp, saved = false, message = "Document had no unsaved changes" })
  end
  -- Writing opens the file: one replaced by a FIFO (or a device) would block the editor until a
  -- reader comes. Only a regular file (or none: a new file) is written.
  local _, why = files.regular_file(vim.api.nvim_buf_get_name(buf), math.huge)
  if why then
    return respond({ success = false, filePath = fp, saved = false, message = "Could not save " .. fp .. ": " .. why })
  end
  local ok, err = pcall(vim.api.nvim_buf_call, buf, function()
    vim.cmd("silent update")
  end)
  if not ok or vim.bo[buf].modified then
    return respond({
      success = false,
      filePath = fp,
      saved = false,
      message = "Could not save " .. fp .. ": " .. tostring(err or "the write did not happen"),
    })
  end
  respond({ success = true, filePath = fp, saved = true, message = "Document saved" })
end)
