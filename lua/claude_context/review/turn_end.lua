---@mod claude_context.review.turn_end A turn that ended becomes the active review
---
--- The review listens to one signal of a turn's end: `User ClaudeContextTurnCheckpointed`, which
--- the bridge's `turn_checkpointed` fires (claude_context.checkpoints) once the turn's end
--- checkpoint is in its project's journal, so the turn's change set can be read at once. A turn
--- Claude finished (its `Stop`) becomes the active review (signs), opened with
--- `review.auto_open`. The session's state (`done`, claude_context.sessions.state) is the marks'
--- and the notifications' business, not the review's.
---
--- `start()` (plugin/claude_context.lua, at startup) only makes the autocommand: the review's code
--- loads when a turn ends.

local M = {}

---The data of `User ClaudeContextTurnCheckpointed` (the bridge's `turn_checkpointed`).
---@class claude_context.TurnEnd
---@field root string the turn's project
---@field turn {id: string, session: string} the turn's journal record (and more fields)
---@field event string? the hook event that ended it: "Stop", "SessionEnd", "UserPromptSubmit" (the next prompt)

---Listens to the turns' end (once; again clears the first).
function M.start()
  require("claude_context.util.autocmds").group("ClaudeContextReview", {
    {
      "User",
      function(ev)
        M.on_turn_end(ev.data)
      end,
      pattern = "ClaudeContextTurnCheckpointed",
      desc = "claude-context: review the turn that ended",
    },
  })
end

---Whether the turn of project `root` is one this editor reviews: a session in a worktree of its
---own (a background session) records its turns there, reviewed only when this editor works in
---that worktree.
---@param root string
---@return boolean
local function reviewed_here(root)
  return not root:find("/.claude/worktrees/", 1, true) or vim.startswith(vim.fn.getcwd() .. "/", root .. "/")
end

---Change set `cs` of the turn that ended becomes the active review (opened with
---`review.auto_open`); the review the person already acts on stays when it is that turn's.
---@param cs claude_context.ChangeSet
---@param auto_open boolean
local function take(cs, auto_open)
  local R = require("claude_context.review")
  local view = require("claude_context.review.view")
  if R.review and require("claude_context.review.model").same_changes(R.review.cs, cs) then
    -- This turn's review is the active one already (the person opened it as the turn ended):
    -- it stays, with what was kept, rejected and can be undone.
    if auto_open and not view.current then
      R.open_view(R.review)
    end
    return
  end
  if auto_open then
    R.open(cs)
  elseif not view.current then
    -- (A review in the view stays the active one until it is closed.)
    R.set_active(require("claude_context.review.model").new(cs))
  end
end

---A turn's end checkpoint exists (`User ClaudeContextTurnCheckpointed`): a turn Claude finished
---becomes the active review, that turn's change set exactly.
---@param data claude_context.TurnEnd
function M.on_turn_end(data)
  if type(data) ~= "table" or type(data.turn) ~= "table" or data.event ~= "Stop" then
    return
  end
  local root, id = data.root, data.turn.id
  if type(root) ~= "string" or type(id) ~= "string" or not reviewed_here(root) then
    return
  end
  local o = require("claude_context.config.review").options()
  if not (o.auto_open or o.signs) then
    return
  end
  require("claude_context.review").load({ root = root, turn = id }, function(err, cs)
    if not err and cs and #cs.files > 0 then
      take(cs, o.auto_open)
    end
  end)
end

return M
