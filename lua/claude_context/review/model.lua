---@mod claude_context.review.model A change set under review: files, hunks, their states
---
--- A file's hunks are Claude's changes, `before` → `after` of the change set. Each hunk is
--- pending, kept or rejected. What the file should hold now (its "expected" text) is `after`
--- with the rejected hunks' `before` lines put back; the difference between that and the file's
--- current text (its loaded buffer, else the disk) is the person's own editing. A hunk whose
--- region that editing touches is in conflict: it is never overwritten.

local M = {}

local H = require("claude_context.review.hunks")

---Whether a hunk in state `state` of file `f` has its new lines in the file. In an ordinary
---review the change is on disk already (a reject puts the old lines back); in a proposal (a
---land: `cs.proposal`) nothing is written yet, and a keep writes the new lines.
---@param f claude_context.ReviewFileState
---@param state string
---@return boolean
function M.shows_new(f, state)
  if f.proposal then
    return state == "kept"
  end
  return state ~= "rejected"
end

---How many lines hunk `h` of `f` spans in the file now.
---@param f claude_context.ReviewFileState
---@param h claude_context.ReviewHunk
---@return integer
function M.span(f, h)
  return M.shows_new(f, h.state) and h.bc or h.ac
end

---Statuses whose file is one opaque whole: contents not in the change set, or a name that is
---not UTF-8 (the bridge gives it escaped, and its bytes as `key`). Kept as it is, or rejected
---whole from the checkpoints (see claude_context.review.whole).
M.OPAQUE = { binary = "binary", too_large = "too large", odd_name = "name not UTF-8" }

---`name` as the review shows it: control characters and bytes that are not UTF-8 escaped
---(see claude_context.checkpoints's `shown`).
---@param name string?
---@return string
function M.shown(name)
  return require("claude_context.checkpoints").shown(name)
end

---@class claude_context.ReviewHunk
---@field a integer start in `before` (see claude_context.review.hunks for regions)
---@field ac integer lines in `before`
---@field b integer start in `after`
---@field bc integer lines in `after`
---@field old string[] the lines before Claude (its baseline)
---@field new string[] Claude's lines
---@field state "pending"|"kept"|"rejected"
---@field reason? string why it was rejected (given with the reject)
---@field opaque? boolean a whole file's one pseudo-hunk (binary, too large, a name not UTF-8)
---@field conflict? boolean the person edited its region (as of the last refresh)
---@field cur? integer its start in the current text (as of the last refresh; nil in conflict)
---@field above string[]? up to `context` lines of `after` above it (for the view; nil for a whole file's)
---@field sent? boolean its reject's reason went to Claude (claude_context.review.comments)
---@field below string[]? up to `context` lines of `after` below it (for the view; nil for a whole file's)

---@class claude_context.ReviewFileState
---@field file claude_context.ReviewFile the change set's entry
---@field path string project-relative
---@field absolute string
---@field root string the change set's root
---@field kind "text"|"added"|"deleted"|"opaque"|"conflict"
---@field proposal? boolean the change set is a proposal (see |shows_new|)
---@field checkpoints? {before:integer, after:integer} the change set's checkpoints (a reject of a whole file restores it from them)
---@field restored? {before:integer, after:integer} the checkpoints around a whole file's reject (its undo restores `before`)
---@field restoring? boolean a whole file's reject or undo is being written
---@field before claude_context.ReviewText
---@field after claude_context.ReviewText
---@field hunks claude_context.ReviewHunk[]
---@field added integer lines Claude added
---@field removed integer lines Claude removed

---A hunk a keep or a reject acts on: file state `f`'s hunk `hi`.
---@class claude_context.ReviewTarget
---@field f claude_context.ReviewFileState
---@field hi integer

---@class claude_context.Review
---@field cs claude_context.ChangeSet
---@field files claude_context.ReviewFileState[] (the change set's order)
---@field by_abs table<string, claude_context.ReviewFileState>
---@field context integer lines of context shown around a hunk (option review.context)

---Splits a file state's `before` / `after` text into lines on first use.
local lazy_texts = {
  __index = function(f, k)
    if k == "before" or k == "after" then
      local v = H.split(rawget(f, "file")[k])
      rawset(f, k, v)
      return v
    end
  end,
}

---Whether change sets `a` and `b` hold the same changes: the same project, the same turns ended
---alike, between the same checkpoints (a turn's change set loaded twice).
---@param a claude_context.ChangeSet?
---@param b claude_context.ChangeSet?
---@return boolean
function M.same_changes(a, b)
  if not (a and b) or a.root ~= b.root or #(a.turns or {}) ~= #(b.turns or {}) or a.proposal or b.proposal then
    return false
  end
  for i, t in ipairs(a.turns or {}) do
    local u = b.turns[i]
    if t.id ~= u.id or t.ended_ms ~= u.ended_ms then
      return false
    end
  end
  local ca, cb = a.checkpoints or {}, b.checkpoints or {}
  return ca.before == cb.before and ca.after == cb.after
end

---A review of change set `cs` (all hunks pending). Hunks are computed here, one vim.diff per
---file; callers that must not block slice the work with `file(review, i)`.
---@param cs claude_context.ChangeSet
---@return claude_context.Review
function M.new(cs)
  local ok, o = pcall(function()
    return require("claude_context.config.review").options()
  end)
  -- The files' current texts are read on the native file thread (see claude_context.review.fs);
  -- the view is built once they are in.
  local paths = {}
  for _, rf in ipairs(cs.files) do
    if not M.OPAQUE[rf.status] then
      paths[#paths + 1] = rf.absolute or (cs.root .. "/" .. rf.path)
    end
  end
  require("claude_context.review.fs").load(cs.root, paths)
  return { cs = cs, files = {}, by_abs = {}, context = ok and o.context or 2 }
end

---Builds (once) and returns the state of the change set's i-th file.
---@param review claude_context.Review
---@param i integer
---@return claude_context.ReviewFileState
function M.file(review, i)
  local f = review.files[i]
  if f then
    return f
  end
  local rf = review.cs.files[i]
  local absolute = rf.absolute or (review.cs.root .. "/" .. rf.path)
  -- `before` and `after` (the texts as lines) are split when first needed: the view needs only
  -- the hunks' lines.
  f = setmetatable({
    file = rf,
    path = rf.path,
    absolute = absolute,
    root = review.cs.root,
    proposal = review.cs.proposal or nil,
    checkpoints = review.cs.checkpoints,
    hunks = {},
    added = 0,
    removed = 0,
  }, lazy_texts) --[[@as claude_context.ReviewFileState]]
  if rf.status == "conflict" then
    -- (A land's file whose every change touches the person's edits: shown, nothing to act on.)
    f.kind = "conflict"
  elseif M.OPAQUE[rf.status] then
    f.kind = "opaque"
    f.hunks[1] = { a = 1, ac = 0, b = 1, bc = 0, old = {}, new = {}, state = "pending", opaque = true }
  else
    if rf.before == nil and rf.status ~= "deleted" then
      f.kind = "added"
    elseif rf.after == nil then
      f.kind = "deleted"
    else
      f.kind = "text"
    end
    local changes = H.diff_text(H.terminated(rf.before), H.terminated(rf.after))
    -- From `before`: each hunk's old lines; from `after`: its new lines, then the context above
    -- and below it. (Each text scanned once for all its hunks.)
    local C = f.kind == "text" and (review.context or 0) or 0
    local old_want, want = {}, {}
    for i, c in ipairs(changes) do
      local top = math.max(1, c.b - C)
      old_want[i] = { c.a, c.ac }
      want[i] = { c.b, c.bc }
      want[#changes + 2 * i - 1] = { top, c.b - top }
      want[#changes + 2 * i] = { c.b + c.bc, C }
    end
    local olds = H.lines_at(rf.before, old_want)
    local news = H.lines_at(rf.after, want)
    for i, c in ipairs(changes) do
      local h = c --[[@as claude_context.ReviewHunk]]
      h.old = olds[i]
      h.new = news[i]
      h.above = news[#changes + 2 * i - 1]
      h.below = news[#changes + 2 * i]
      h.state = "pending"
      f.hunks[#f.hunks + 1] = h
      f.added = f.added + c.bc
      f.removed = f.removed + c.ac
    end
    if f.kind ~= "text" and #f.hunks == 0 then
      -- An empty file created or deleted: one empty hunk stands for it.
      f.hunks[1] = { a = 1, ac = 0, b = 1, bc = 0, old = {}, new = {}, state = "pending" }
    end
  end
  review.files[i] = f
  review.by_abs[absolute] = f
  return f
end

---Whether a Bash command's hunk `c` (its line ranges as the command left the file) and the
---review's hunk `h` (its lines in `after`) meet (a hunk of no lines stands at its line).
local function meets(c, h)
  local c1, h1 = c.new_start or 0, h.b
  local c2, h2 = c1 + math.max(c.new_lines or 0, 1) - 1, h1 + math.max(h.bc, 1) - 1
  return c1 <= h2 + 1 and h1 <= c2 + 1
end

---The Bash commands that changed hunk `h` of file `f` (the change set's `commands`, Claude
---Code's report: the model's text, to show escaped): a command whose hunks meet it, or one
---known only to have changed the file (no hunks, or none that meets any of the file's hunks:
---later edits moved its lines).
---@param f claude_context.ReviewFileState
---@param h claude_context.ReviewHunk
---@return string[]
function M.commands_of(f, h)
  local out = {}
  for _, c in ipairs(f.file.commands or {}) do
    local hunks = c.hunks or {}
    local function any(pred)
      for _, ch in ipairs(hunks) do
        if pred(ch) then
          return true
        end
      end
      return false
    end
    local placed = any(function(ch)
      for _, fh in ipairs(f.hunks) do
        if meets(ch, fh) then
          return true
        end
      end
      return false
    end)
    local mine = any(function(ch)
      return meets(ch, h)
    end)
    if (mine or not placed) and not vim.tbl_contains(out, c.command) then
      out[#out + 1] = c.command
    end
  end
  return out
end

---Builds every file's state (tests and small change sets).
---@param review claude_context.Review
function M.build_all(review)
  for i = 1, #review.cs.files do
    M.file(review, i)
  end
end

---The pending hunks of file `f` (those `where(h)` holds for, when given), as targets of a keep
---or reject.
---@param f claude_context.ReviewFileState
---@param where (fun(h: claude_context.ReviewHunk): boolean)?
---@return claude_context.ReviewTarget[]
function M.pending_of(f, where)
  local out = {}
  for hi, h in ipairs(f.hunks) do
    if h.state == "pending" and (not where or where(h)) then
      out[#out + 1] = { f = f, hi = hi }
    end
  end
  return out
end

---Every pending hunk of the review, as targets (each file built).
---@param review claude_context.Review
---@return {f:claude_context.ReviewFileState, hi:integer}[]
function M.pending(review)
  local out = {}
  for i = 1, #review.cs.files do
    vim.list_extend(out, M.pending_of(M.file(review, i)))
  end
  return out
end

---The text the file should hold now: `after` with rejected hunks reverted; and each hunk's
---region in it ({start, count}).
---@param f claude_context.ReviewFileState
---@return string[] lines, {[1]:integer,[2]:integer}[] regions
function M.expected(f)
  local al = f.after.lines
  local out, regions = {}, {}
  local next_line = 1
  for hi, h in ipairs(f.hunks) do
    for i = next_line, h.b - 1 do
      out[#out + 1] = al[i]
    end
    local lines = M.shows_new(f, h.state) and h.new or h.old
    regions[hi] = { #out + 1, #lines }
    for _, l in ipairs(lines) do
      out[#out + 1] = l
    end
    next_line = h.b + h.bc
  end
  for i = next_line, #al do
    out[#out + 1] = al[i]
  end
  return out, regions
end

---The loaded buffer of `path`, if any.
---@param path string
---@return integer?
function M.loaded_buf(path)
  -- By the exact name: bufnr() would also take a buffer whose name only starts with it.
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.api.nvim_buf_get_name(b) == path then
      return b
    end
  end
end

---Buffer `buf`'s lines as the file's lines are split (a "dos" buffer's lines get their "\r").
---@param buf integer
---@return string[]
function M.buf_lines(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  if vim.bo[buf].fileformat == "dos" then
    for i, l in ipairs(lines) do
      lines[i] = l .. "\r"
    end
  end
  if #lines == 1 and lines[1] == "" then
    -- An empty buffer (an empty file) has one empty line.
    return {}
  end
  return lines
end

---Lines to put into buffer `buf` (a "dos" buffer's lines lose their "\r").
---@param buf integer
---@param lines string[]
---@return string[]
function M.to_buf(buf, lines)
  if vim.bo[buf].fileformat ~= "dos" then
    return lines
  end
  return vim.tbl_map(function(l)
    return (l:gsub("\r$", ""))
  end, lines)
end

---The file's current lines: its loaded buffer's, else the disk's ({} when it does not exist);
---nil and a message when it cannot be read.
---@param f claude_context.ReviewFileState
---@return string[]? lines, string? err
function M.current_lines(f)
  -- A file Claude created or deleted is judged by the disk (a buffer of a deleted file still
  -- shows its old lines).
  local buf = f.kind == "text" and M.loaded_buf(f.absolute)
  if buf then
    return M.buf_lines(buf)
  end
  local text, err = require("claude_context.review.fs").read(f.absolute)
  if not text and err ~= "missing" then
    return nil, err
  end
  return H.split(text).lines
end

---Updates each hunk's `conflict` and `cur` against `lines` (default: the current lines).
---@param f claude_context.ReviewFileState
---@param lines string[]?
function M.refresh(f, lines)
  if f.kind == "opaque" or f.kind == "conflict" then
    return
  end
  if not lines and not (f.kind == "text" and M.loaded_buf(f.absolute)) then
    local text, err = require("claude_context.review.fs").read(f.absolute)
    local moved = false
    for _, h in ipairs(f.hunks) do
      moved = moved or h.state ~= "pending"
    end
    -- What the file holds with every hunk pending: Claude's text (a proposal: the old one).
    local side = f.proposal and f.file.before or f.file.after
    if not moved and (text == side or (err == "missing" and side == nil)) then
      -- The usual case: the file holds what it should; no diff needed.
      for _, h in ipairs(f.hunks) do
        h.cur, h.conflict = f.proposal and h.a or h.b, false
      end
      return
    end
    lines = (text or err == "missing") and H.split(text).lines or {}
  end
  lines = lines or M.current_lines(f) or {}
  local exp, regions = M.expected(f)
  local changes = H.diff(exp, lines)
  for hi, h in ipairs(f.hunks) do
    local s, err = H.locate(changes, regions[hi][1], regions[hi][2])
    h.cur = s
    -- A file created or deleted is one region: any line the person added to it is theirs.
    h.conflict = err ~= nil or (f.kind ~= "text" and #changes > 0)
  end
end

---A file's state: "conflict" (a pending hunk is), "pending", "kept" (every hunk), "rejected"
---(every hunk), or "partly" (some kept, some rejected).
---@param f claude_context.ReviewFileState
---@return string
function M.state(f)
  if f.kind == "conflict" then
    -- (A land's file whose every change touches the person's edits: left out.)
    return "conflict"
  end
  local kept, rejected, pending, conflict = 0, 0, 0, false
  for _, h in ipairs(f.hunks) do
    if h.state == "pending" then
      pending = pending + 1
      conflict = conflict or h.conflict == true
    elseif h.state == "kept" then
      kept = kept + 1
    else
      rejected = rejected + 1
    end
  end
  if conflict then
    return "conflict"
  elseif pending > 0 then
    return "pending"
  elseif rejected == 0 then
    return "kept"
  elseif kept == 0 then
    return "rejected"
  end
  return "partly"
end

---The file of absolute path `path` in the review (built when needed).
---@param review claude_context.Review
---@param path string
---@return claude_context.ReviewFileState?
function M.find(review, path)
  if review.by_abs[path] then
    return review.by_abs[path]
  end
  for i, rf in ipairs(review.cs.files) do
    if not review.files[i] and (rf.absolute or (review.cs.root .. "/" .. rf.path)) == path then
      return M.file(review, i)
    end
  end
end

---The index of file state `f` in `review`'s files, or nil.
---@param review claude_context.Review
---@param f claude_context.ReviewFileState
---@return integer?
function M.index_of(review, f)
  for i, x in pairs(review.files) do
    if x == f then
      return i
    end
  end
end

return M
