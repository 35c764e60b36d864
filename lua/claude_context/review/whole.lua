---@mod claude_context.review.whole Reject and undo of a file the review takes whole
---
--- A binary file, one over the size cap and one whose name is not UTF-8 are one pseudo-hunk:
--- the change set holds no text of them to put back line by line. Their reject restores the
--- file from the checkpoint at the turn's start (the bridge's store: by the name's bytes, the
--- contents it stored), and only while the file still holds exactly what the turn left: a file
--- the person changed since is theirs, a conflict, never overwritten. The bridge checkpoints the
--- project right before it writes; the undo of the reject restores the file from that
--- checkpoint, under the same condition. A file with unsaved changes in a buffer, one another
--- session's turn changed too, or one over the cap at the turn's start (its contents were never
--- stored) is refused with the reason.

local M = {}

local model = require("claude_context.review.model")

---Why the whole file `f` cannot go to state `to` now (nil: it can).
---@param f claude_context.ReviewFileState
---@param to string
---@return string?
local function refusal(f, to)
  local name = model.shown(f.path)
  if not (f.checkpoints and f.file.key) then
    return ("%s: the bridge gave no checkpoints for this file (update the native library)"):format(name)
  end
  if f.file.shared then
    return ("%s: another session's turn changed it too; :ClaudeContext rewind decides per turn"):format(name)
  end
  if f.restoring then
    return ("%s: its last reject or undo is still being written: try again in a moment"):format(name)
  end
  if to == "pending" and not f.restored then
    return ("%s: nothing to undo"):format(name)
  end
  local buf = model.loaded_buf(f.absolute)
  if buf and vim.bo[buf].modified then
    return ("%s has unsaved changes: write or undo them first"):format(name)
  end
end

---What a restore's report says of the one file (nil: it was written or removed).
---@param report claude_context.RewindReport
---@param to string
---@return string?
local function outcome(report, to)
  if #(report.written or {}) + #(report.removed or {}) > 0 then
    return nil
  end
  if (report.conflicts or {})[1] then
    return to == "rejected" and "the file changed since Claude's turn (it is yours now: kept)"
      or "the file changed since the reject (kept)"
  end
  local x = (report.failed or {})[1]
  return x and x.why or "it already holds that content"
end

---Moves the whole file `f`'s pseudo-hunk `h` to `to` ("rejected": the file as before the turn;
---"pending": the undo of that). Asynchronous: `h.state` is `to` at once; when the bridge refuses
---or fails, `h.state` goes back and `on_fail(f, message)` runs.
---@param f claude_context.ReviewFileState
---@param h claude_context.ReviewHunk
---@param to "rejected"|"pending"
---@param on_fail fun(f: claude_context.ReviewFileState, msg: string)
---@return boolean ok, string? err
function M.swap(f, h, to, on_fail)
  local why = refusal(f, to)
  if why then
    return false, why
  end
  local from = h.state
  local ck = to == "rejected" and f.checkpoints or f.restored
  local opts = { root = f.root, path = f.file.key, target = ck.before, expected = ck.after }
  f.restoring = true
  require("claude_context.review.source").restore_file(opts, function(err, report)
    f.restoring = nil
    local fail = err or outcome(report, to)
    if fail then
      if h.state == to then
        h.state = from
      end
      local verb = to == "rejected" and "not rejected" or "not undone"
      return on_fail(f, ("review: %s %s: %s"):format(model.shown(f.path), verb, fail))
    end
    f.restored = to == "rejected" and report.checkpoints or nil
    require("claude_context.review.written").follow(model.loaded_buf(f.absolute), #(report.removed or {}) > 0)
  end)
  h.state = to
  return true
end

return M
