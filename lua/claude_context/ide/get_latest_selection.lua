-- getLatestSelection: the last selection recorded in a file buffer, or
-- {success = false, message = "No selection available"}.
return function(_, respond)
  local latest = require("claude_context.ide.selection").latest()
  if not latest then
    return respond({ success = false, message = "No selection available" })
  end
  respond(latest)
end
