-- getCurrentSelection: the active editor's selection (or cursor), or
-- {success = false, message = "No active editor found"}.
local util = require("claude_context.ide.util")

return function(_, respond)
  local win = util.active_editor_win()
  if not win then
    return respond({ success = false, message = "No active editor found" })
  end
  respond(util.selection_of(win))
end
