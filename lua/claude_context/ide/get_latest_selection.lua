-- getLatestSelection: the last selection recorded in a file buffer, or
-- {success = false, message = "No selection available"}.
return function(_, respond)
  local latest = require("claude_context.ide.selection").latest()
  if not latest then
    return respond({ success = false, message = "No selection available" })
  end
  -- Named field by field: a big selection's text is read only when asked for (selection.lua).
  respond({
    success = latest.success,
    text = latest.text or "",
    filePath = latest.filePath,
    fileUrl = latest.fileUrl,
    selection = latest.selection,
  })
end
