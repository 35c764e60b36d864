-- What a user's config does with the plugin: `make lint-types` checks this file against lua/
-- and it must be clean (tests/types/check.sh). A partial setup{} is no error (every option is
-- optional in claude_context.UserConfig), and the API's answers have named types.
local cc = require("claude_context")

cc.setup({
  terminal = { side = "left", float = { width = 0.5 } },
  sessions = { notify = false },
  review = { keys = { keep = "k" } },
})

---@type claude_context.Agent[]
local agents = cc.agents()
---@type claude_context.PermissionRequest[]
local asks = cc.permissions()
---@type claude_context.Status?
local status = cc.status()
---@type claude_context.Turn[]
local turns = cc.turns()
cc.land("feature", {
  all = true,
  cb = function(err, report)
    if not err and report then
      print(#report.written, #report.conflicts)
    end
  end,
})
cc.conversations({ query = "parser" }, function(list, err)
  print(err or (list[1] and list[1].title))
end)
---@type string, integer
local name, port = agents[1] and agents[1].name or "", status and status.port or 0
---@type claude_context.Config
local options = require("claude_context.config").options
print(name, port, #asks, #turns, options.ide.track_selection)
