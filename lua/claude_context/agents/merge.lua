---@mod claude_context.agents.merge Three-way merge of one file, conflicts never overwritten
---
--- Landing a worktree brings the change `base` → `theirs` (the worktree) into `ours` (the main
--- checkout, with the person's uncommitted edits). A hunk of theirs whose region (in `base`)
--- overlaps a region the person changed is a conflict: it is left out and reported, and the
--- person's text stays. A hunk already in `ours` (landed before) is skipped; every other hunk
--- is applied. A hunk that changes as many lines as it replaces counts line by line. Pure:
--- texts in, text out.

local M = {}

---The lines of `text`, each with its line break (the last may have none).
---@param text string
---@return string[]
function M.lines(text)
  local out = {}
  local pos = 1
  while pos <= #text do
    local nl = text:find("\n", pos, true)
    if not nl then
      out[#out + 1] = text:sub(pos)
      break
    end
    out[#out + 1] = text:sub(pos, nl)
    pos = nl + 1
  end
  return out
end

---The hunks `a` → `b` as `{ s, n, new = {lines} }`: `n` lines of `a` from line `s` are
---replaced (n = 0: the lines are inserted before line `s`).
local function hunks(a, b, la, lb)
  local idx = vim.diff(a, b, { result_type = "indices", algorithm = "histogram" }) or {}
  local out = {}
  for _, h in ipairs(idx) do
    local sa, ca, sb, cb = h[1], h[2], h[3], h[4]
    local s = ca == 0 and sa + 1 or sa
    local new = {}
    for i = sb, sb + cb - 1 do
      new[#new + 1] = lb[i]
    end
    out[#out + 1] = { s = s, n = ca, new = new }
  end
  return out, la
end

---Hunks that replace as many lines as they remove, cut into one hunk per line (so a line the
---person also changed does not hold back its neighbours).
local function per_line(list)
  local out = {}
  for _, h in ipairs(list) do
    if h.n > 1 and #h.new == h.n then
      for i = 0, h.n - 1 do
        out[#out + 1] = { s = h.s + i, n = 1, new = { h.new[i + 1] } }
      end
    else
      out[#out + 1] = h
    end
  end
  return out
end

---Whether hunks x and y (regions of `base`) overlap. An insertion (n = 0) sits before line s:
---it overlaps an insertion at the same place, or a change around that place.
local function overlap(x, y)
  if x.n == 0 and y.n == 0 then
    return x.s == y.s
  end
  if x.n == 0 then
    return y.s < x.s and x.s <= y.s + y.n - 1
  end
  if y.n == 0 then
    return x.s < y.s and y.s <= x.s + x.n - 1
  end
  return x.s <= y.s + y.n - 1 and y.s <= x.s + x.n - 1
end

local function same(x, y)
  return x.s == y.s and x.n == y.n and vim.deep_equal(x.new, y.new)
end

---@class claude_context.MergeResult
---@field text string the merged text (ours when nothing applied)
---@field applied integer hunks of theirs applied
---@field conflicts {line:integer, count:integer}[] hunks of theirs left out (their line in base)

---Merges `base` → `theirs` into `ours`.
---@param base string
---@param ours string
---@param theirs string
---@return claude_context.MergeResult
function M.merge(base, ours, theirs)
  -- Every line with its break (the last line's own break is put back at the end), so that
  -- lines compare alike and join without gluing.
  local function nl(t)
    return (t == "" or t:sub(-1) == "\n") and t or (t .. "\n")
  end
  local lb, lo, lt = M.lines(nl(base)), M.lines(nl(ours)), M.lines(nl(theirs))
  local mine = per_line(hunks(nl(base), nl(ours), lb, lo))
  local theirs_h = per_line(hunks(nl(base), nl(theirs), lb, lt))
  local keep, conflicts = {}, {}
  for _, t in ipairs(theirs_h) do
    local clash, already = false, false
    for _, m in ipairs(mine) do
      if same(t, m) then
        -- Already there (landed before, or the person made the same change).
        already = true
      elseif overlap(t, m) then
        clash = true
      end
    end
    if clash then
      conflicts[#conflicts + 1] = { line = t.s, count = t.n }
    elseif not already then
      keep[#keep + 1] = t
    end
  end
  if #keep == 0 then
    -- Only the last line break may have changed in the worktree.
    local text = M.fix_last_break(ours, base, ours, theirs)
    return { text = text, applied = text ~= ours and 1 or 0, conflicts = conflicts }
  end
  local all = vim.list_extend(vim.list_extend({}, mine), keep)
  table.sort(all, function(x, y)
    if x.s ~= y.s then
      return x.s < y.s
    end
    return x.n < y.n
  end)
  local out, pos = {}, 1
  for _, h in ipairs(all) do
    for i = pos, h.s - 1 do
      out[#out + 1] = lb[i]
    end
    vim.list_extend(out, h.new)
    pos = h.s + h.n
  end
  for i = pos, #lb do
    out[#out + 1] = lb[i]
  end
  return { text = M.fix_last_break(table.concat(out), base, ours, theirs), applied = #keep, conflicts = conflicts }
end

---The merged text's last line break as the side that changed the end has it.
function M.fix_last_break(text, base, ours, theirs)
  local function ends(t)
    return t == "" or t:sub(-1) == "\n"
  end
  local want = ends(ours)
  if ends(theirs) ~= ends(base) and ends(ours) == ends(base) then
    want = ends(theirs)
  end
  if text == "" then
    return text
  end
  if want and text:sub(-1) ~= "\n" then
    return text .. "\n"
  elseif not want and text:sub(-1) == "\n" then
    return text:sub(1, -2)
  end
  return text
end

return M
