---@mod claude_context.review.text What the review view's lines say
---
--- The words of the view, apart from drawing them: a file's line in the file list and the lines
--- of its section (its header, each hunk's `@@` line with its state, the baseline lines as `-`,
--- Claude's as `+`, and the context around a pending hunk).

local M = {}

local model = require("claude_context.review.model")

---Lines shown of a hunk's side (its baseline or Claude's lines); the rest is one row.
M.MAX_SIDE = 300

---Line counts as "+a −r".
---@param a integer
---@param r integer
---@return string
function M.counts(a, r)
  return ("+%d −%d"):format(a, r)
end

local function display(l)
  if not (l:find("\r", 1, true) or l:find("\n", 1, true)) then
    -- (Most lines: no copy.)
    return l
  end
  return (l:gsub("\r$", ""):gsub("\n", " "))
end

---Appends `list[1..n]` to `lines`, each after `mark` (a view line: see |display|).
---@param lines string[]
---@param mark string
---@param list string[]?
---@param n integer
local function add_lines(lines, mark, list, n)
  local at = #lines
  for k = 1, n do
    lines[at + k] = mark .. display(list[k])
  end
end

---Appends a hunk's side (`mark` "-": its old lines, "+": its new ones): up to |MAX_SIDE| lines,
---then one row saying how many more.
---@param lines string[]
---@param mark string
---@param list string[]
local function add_side(lines, mark, list)
  add_lines(lines, mark, list, math.min(#list, M.MAX_SIDE))
  if #list > M.MAX_SIDE then
    lines[#lines + 1] = ("%s… %d more lines (<CR> opens the file)"):format(mark, #list - M.MAX_SIDE)
  end
end

---What a file of two overlapping sessions' turns that no edit tool of one of them alone
---claimed is marked with.
M.SHARED = "changed while another session was working: it may be that session's too"

---What marks a file that runs code by itself (a land's `.envrc`, CI workflow, git hook
---manager's file, …): it lands only when the person keeps it.
M.RUNS_CODE_MARK = "⚠ runs code"

---Characters of a Bash command shown beside its hunks (its start and its end; `…` between).
M.COMMAND_CHARS = 72

---What the `@@` line of a hunk Bash `commands` changed ends with: the first one, escaped and
---shortened to its start and end (the model's text: no control character reaches the screen),
---and how many more.
---@param commands string[]
---@return string
function M.command_label(commands)
  if #commands == 0 then
    return ""
  end
  local c = model.shown(commands[1])
  local n = vim.fn.strchars(c)
  if n > M.COMMAND_CHARS then
    local tail = math.floor(M.COMMAND_CHARS / 3)
    c = vim.fn.strcharpart(c, 0, M.COMMAND_CHARS - tail - 1) .. "…" .. vim.fn.strcharpart(c, n - tail)
  end
  local more = #commands > 1 and (" (+%d more)"):format(#commands - 1) or ""
  return ("  ← Bash: %s%s"):format(c, more)
end

local KIND = {
  added = "new file",
  deleted = "deleted",
  conflict = "conflict: not landed",
}

---The file list's line of `f` (nil: not built yet, `rf` its change set entry).
function M.list_line(f, rf)
  if not f then
    return ("  %-9s %11s  %s"):format("…", "", model.shown(rf.path))
  end
  local name = model.shown(f.path)
  if f.file.old_path then
    name = model.shown(f.file.old_path) .. " → " .. name
  end
  local extra = f.kind == "opaque" and (" (" .. (model.OPAQUE[f.file.status] or "too large") .. ")")
    or (KIND[f.kind] and (" (" .. KIND[f.kind] .. ")") or "")
  if f.file.shared then
    extra = extra .. " (shared)"
  end
  if f.kind ~= "conflict" and f.file.conflicts then
    extra = extra .. (" (! %d conflict%s, not landed)"):format(#f.file.conflicts, #f.file.conflicts == 1 and "" or "s")
  end
  if f.file.runs_code then
    extra = extra .. " (" .. M.RUNS_CODE_MARK .. ")"
  end
  return ("  %-9s %11s  %s%s"):format(model.state(f), M.counts(f.added, f.removed), name, extra)
end

---The lines of file `f`'s section and where its hunks are in it (0-based offsets from its
---header line).
---@param f claude_context.ReviewFileState
---@return string[] lines, integer[] rel, integer[] ends
function M.section(f)
  local head = "━━ " .. (f.file.old_path and (model.shown(f.file.old_path) .. " → ") or "") .. model.shown(f.path)
  if f.kind == "opaque" then
    head = head
      .. (
        f.file.status == "binary" and "  (binary: keep or reject the whole file)"
        or f.file.status == "odd_name" and "  (its name is not UTF-8: keep or reject the whole file)"
        or "  (too large to show: keep or reject the whole file)"
      )
  elseif KIND[f.kind] then
    head = head .. "  (" .. KIND[f.kind] .. ")"
  end
  local lines = { ("%s  %s  [%s]"):format(head, M.counts(f.added, f.removed), model.state(f)) }
  if f.file.shared then
    lines[#lines + 1] = "   (" .. M.SHARED .. ")"
  end
  if f.file.runs_code then
    lines[#lines + 1] = ("   %s: it %s; it lands only when you keep it"):format(M.RUNS_CODE_MARK, f.file.runs_code)
  end
  -- A land's changes that touch the person's edits: listed, never written.
  for _, c in ipairs(f.file.conflicts or {}) do
    lines[#lines + 1] = ("   ! line %d: %s"):format(
      c.line,
      c.why or "the worktree's change touches your edit here: not landed (your text stays)"
    )
  end
  local rel, ends = {}, {}
  if #f.hunks == 0 and f.kind ~= "conflict" then
    lines[#lines + 1] = "   (renamed; the contents are unchanged)"
  end
  for hi, h in ipairs(f.hunks) do
    rel[hi] = #lines
    local st = h.state
    if st == "pending" and h.conflict then
      st = f.proposal and "conflict: you changed these lines since the land was planned"
        or "conflict: you changed these lines after Claude"
    elseif st == "rejected" and h.reason then
      st = st .. ": " .. h.reason
    end
    if h.opaque then
      lines[#lines + 1] = ("@@ whole file @@ %s"):format(st)
    else
      lines[#lines + 1] = ("@@ -%d,%d +%d,%d @@ %s%s"):format(
        h.a,
        h.ac,
        h.cur or h.b,
        h.bc,
        st,
        M.command_label(model.commands_of(f, h))
      )
    end
    if h.state == "pending" then
      add_lines(lines, " ", h.above, #(h.above or {}))
      add_side(lines, "-", h.old)
      add_side(lines, "+", h.new)
      add_lines(lines, " ", h.below, #(h.below or {}))
    end
    ends[hi] = #lines - 1
  end
  lines[#lines + 1] = ""
  return lines, rel, ends
end

return M
