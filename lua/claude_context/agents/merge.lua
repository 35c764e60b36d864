---@mod claude_context.agents.merge Three-way merge of files, conflicts never overwritten, off the main thread
---
--- Landing a worktree brings the change `base` → `theirs` (the worktree) into `ours` (the main
--- checkout, with the person's uncommitted edits). A hunk of theirs whose region (in `base`)
--- overlaps a region the person changed is a conflict: it is left out and reported, and the
--- person's text stays. A hunk already in `ours` (landed before) is skipped; every other hunk
--- is applied. A hunk that changes as many lines as it replaces counts line by line. The merge
--- is the core's (crates/core/src/merge.rs), run on a thread of its own: texts in, texts out.

local M = {}

---@class claude_context.MergeConflict
---@field line integer the hunk's first line in base (of an insertion: the line it goes before)
---@field count integer the lines of base it replaces

---@class claude_context.MergeResult
---@field text string the merged text (ours when nothing applied)
---@field applied integer hunks of theirs applied
---@field conflicts claude_context.MergeConflict[] hunks of theirs left out

---@class claude_context.MergeTexts
---@field base string
---@field ours string
---@field theirs string

---The results `out` (the native `worktree.merge`'s answer) holds, `n` of them.
---@param out string
---@param n integer
---@return claude_context.MergeResult[]
function M.decode(out, n)
  local results, pos = {}, 1
  for i = 1, n do
    local nl = assert(out:find("\n", pos, true), "the merge's answer is cut short")
    local head = {}
    for num in out:sub(pos, nl - 1):gmatch("%d+") do
      head[#head + 1] = tonumber(num)
    end
    local conflicts = {}
    for c = 1, head[2] do
      conflicts[c] = { line = head[1 + 2 * c], count = head[2 + 2 * c] }
    end
    local len = head[#head]
    results[i] = { text = out:sub(nl + 1, nl + len), applied = head[1], conflicts = conflicts }
    pos = nl + 1 + len
  end
  return results
end

---Merges each of `files` (base → theirs into ours), off the main thread; `cb(nil, results)`
---later, in the same order, or `cb(err)`.
---@param files claude_context.MergeTexts[]
---@param cb fun(err?:string, results?:claude_context.MergeResult[])
function M.merge_all(files, cb)
  if #files == 0 then
    return vim.schedule(function()
      cb(nil, {})
    end)
  end
  local native = require("claude_context.native")
  local api, err = native.get()
  if not api or not api.worktree or not api.worktree.merge then
    return vim.schedule(function()
      cb(err or "the native library has no merge (rebuild it: make)")
    end)
  end
  local texts = {}
  for _, f in ipairs(files) do
    texts[#texts + 1] = f.base
    texts[#texts + 1] = f.ours
    texts[#texts + 1] = f.theirs
  end
  local ok, perr = pcall(api.worktree.merge, texts, function(merr, out)
    if merr then
      return cb(merr)
    end
    local dok, results = pcall(M.decode, out or "", #files)
    if not dok then
      return cb(tostring(results))
    end
    cb(nil, results)
  end)
  if not ok then
    vim.schedule(function()
      cb(native.message(perr))
    end)
  end
end

---Merges `base` → `theirs` into `ours`, off the main thread; `cb(nil, result)` or `cb(err)`.
---@param base string
---@param ours string
---@param theirs string
---@param cb fun(err?:string, result?:claude_context.MergeResult)
function M.merge(base, ours, theirs, cb)
  M.merge_all({ { base = base, ours = ours, theirs = theirs } }, function(err, results)
    cb(err, results and results[1])
  end)
end

return M
