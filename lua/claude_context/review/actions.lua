---@mod claude_context.review.actions Keep, reject and undo hunks, on disk and in buffers
---
--- Keep marks a hunk accepted (nothing is written). Reject puts the hunk's baseline lines back
--- in place of Claude's: on disk (the disk text with that region replaced, written atomically
--- by the native library's file thread, see claude_context.review.fs)
--- and, when the file is loaded, in its buffer (|nvim_buf_set_lines()| of that region only, so
--- the person's unsaved edits elsewhere stay). A hunk whose region the person edited (on disk
--- or in the buffer) is a conflict: reject refuses it. Undo reverses the last keep or reject
--- the same careful way. A file Claude created is removed on reject (and one Claude deleted,
--- restored by a reject, on its undo) only while it holds exactly Claude's text, on disk and in a
--- modified buffer: a line the person added anywhere in it is a conflict, and the file stays.
--- One Claude deleted is restored on reject. A binary or too large file, or one whose name is not
--- UTF-8, is taken whole: see claude_context.review.whole.
---
--- A proposal (a land, see claude_context.review.model's `shows_new`) is the other way round:
--- nothing of it is on disk yet, a keep writes the hunk's new lines (the same careful way: a
--- region the person edited is a conflict, never overwritten), a reject writes nothing, and an
--- undo of a keep puts the old lines back.

local M = {}

local H = require("claude_context.review.hunks")
local model = require("claude_context.review.model")
local fs = require("claude_context.review.fs")
local notify = require("claude_context.util.notify")
local own_writes = require("claude_context.review.written")
local signs = require("claude_context.review.signs")
local view = require("claude_context.review.view")

---What a reject or undo refused: "conflict" or another message.
---@alias claude_context.ReviewRefusal string

---A write the file thread refused after the review showed it done: the message, and the
---file's signs and view section drawn again.
---@param f claude_context.ReviewFileState
---@param msg string
local function failed(f, msg)
  model.refresh(f)
  pcall(function()
    signs.update_file(f)
    local v = view.current
    local i = v and model.index_of(v.review, f)
    if i then
      view.redraw_file(v, i)
    end
  end)
  notify.error(msg)
end

---The past participle of a move to state `to` (for messages).
local function verb(to)
  return to == "rejected" and "rejected" or to == "kept" and "kept" or "undone"
end

---Whether a file Claude created (or one a reject restored) holds exactly what the review
---expects, on disk (`text`) and in its loaded buffer `buf` when that is modified: only then may
---the review remove it. Any other line, next to Claude's or anywhere, is the person's.
---@param f claude_context.ReviewFileState
---@param text string? the disk's text
---@param buf integer?
---@return boolean
function M.whole_file_is_claudes(f, text, buf)
  local exp = model.expected(f)
  local side = f.kind == "added" and f.after or f.before
  if (text or "") ~= H.join(exp, side.eol) then
    return false
  end
  if buf and vim.api.nvim_buf_is_valid(buf) and vim.bo[buf].modified then
    return vim.deep_equal(model.buf_lines(buf), exp)
  end
  return true
end

---Puts hunk `hi` of `f` into state `to` (its lines as |model.shows_new| says: "rejected" its
---baseline lines, "pending" Claude's lines back, the undo of a reject; in a proposal "kept" the
---new lines, "pending" the old ones back) on disk and in its loaded buffer.
---@param f claude_context.ReviewFileState
---@param hi integer
---@param to "rejected"|"pending"|"kept"
---@return boolean ok, claude_context.ReviewRefusal? err
function M.swap(f, hi, to)
  local h = f.hunks[hi]
  if h.opaque then
    if f.proposal then
      return false,
        ("%s: a %s file of a land can only be left out (merge it by hand)"):format(
          model.shown(f.path),
          model.OPAQUE[f.file.status] or "whole"
        )
    end
    return require("claude_context.review.whole").swap(f, h, to, failed)
  end
  if f.kind == "text" then
    return unpack(M.swap_file(f, { hi }, to)[hi])
  end
  local exp, regions = model.expected(f)
  local r = regions[hi]
  local text, rerr = fs.read(f.absolute)
  if not text and rerr ~= "missing" then
    return false, ("%s: %s"):format(f.path, rerr)
  end
  local disk = H.split(text)
  local ds = H.locate(H.diff(exp, disk.lines), r[1], r[2])
  if not ds then
    return false, "conflict"
  end
  -- Created or deleted: the whole file goes or comes back (on the file thread; a refusal
  -- there puts the hunk back as it was).
  local buf = model.loaded_buf(f.absolute)
  local new = model.shows_new(f, to)
  -- Whether the file must go: its side after the move has no file.
  local exists = not new and f.kind == "added" or new and f.kind == "deleted"
  if exists and not M.whole_file_is_claudes(f, text, buf) then
    -- A line the person added (next to Claude's or anywhere) is theirs: the file stays.
    return false, "conflict"
  end
  local from = h.state
  local function written(ok, err)
    if ok then
      own_writes.follow(buf, exists)
      return
    end
    if h.state == to then
      h.state = from
    end
    failed(f, ("review: %s not %s: %s"):format(f.path, verb(to), err))
  end
  local ok, err
  if exists then
    if text == nil then
      return false, ("%s is gone"):format(f.path)
    end
    ok, err = fs.remove_async(f.absolute, { root = f.root }, written)
  else
    local content = new and f.file.after or f.file.before
    ok, err = fs.create_async(f.absolute, content or "", { root = f.root }, written)
  end
  if not ok then
    return false, err
  end
  h.state = to
  return true
end

---Where each hunk of `work` (text hunks of `f`) sits now on disk and in its loaded buffer: the
---work to do, hunks in conflict marked in `res`. Returns nil (with `res` filled) when the file
---can not be read.
---@return {hi: integer, n: integer, ds: integer, bs: integer?, from: string, with: string[]}[]? todo, claude_context.ReviewText? disk, integer? buf
local function locate_work(f, work, to, res)
  local exp, regions = model.expected(f)
  local text, rerr = fs.read(f.absolute)
  if not text then
    for _, hi in ipairs(work) do
      res[hi] = { false, rerr == "missing" and ("%s is gone"):format(f.path) or ("%s: %s"):format(f.path, rerr) }
    end
    return nil
  end
  local disk = H.split(text)
  local dchanges = H.diff(exp, disk.lines)
  local buf = model.loaded_buf(f.absolute)
  local bchanges = buf and H.diff(exp, model.buf_lines(buf))
  local todo = {}
  for _, hi in ipairs(work) do
    local r = regions[hi]
    local ds = H.locate(dchanges, r[1], r[2])
    local bs = buf and H.locate(bchanges, r[1], r[2])
    if not ds or (buf and not bs) then
      res[hi] = { false, "conflict" }
    else
      todo[#todo + 1] = {
        hi = hi,
        n = r[2],
        ds = ds,
        bs = bs,
        from = f.hunks[hi].state,
        with = model.shows_new(f, to) and f.hunks[hi].new or f.hunks[hi].old,
      }
    end
  end
  return todo, disk, buf
end

---The disk text with every region of `todo` replaced (bottom up).
local function swapped_text(f, disk, todo, to)
  table.sort(todo, function(x, y)
    return x.ds > y.ds
  end)
  local lines, eol = disk.lines, disk.eol
  if todo[1].ds + todo[1].n - 1 >= #lines then
    -- The last region reaches the end: its side decides the final newline.
    eol = (model.shows_new(f, to) and f.after or f.before).eol
  end
  for _, t in ipairs(todo) do
    lines = H.replace(lines, t.ds, t.n, t.with)
  end
  return H.join(lines, eol)
end

---The callback of the write of `swap_file`: on failure the hunks go back (file not loaded), on
---success an unmodified buffer is reloaded.
local function on_swap_written(f, todo, to, buf, was_modified)
  return function(written, werr)
    if fs.idle() then
      own_writes.settle()
    end
    if not written then
      if buf then
        notify.error(("review: %s; its buffer and the review show the change, the file does not"):format(werr))
        return
      end
      -- Not loaded: the hunks are as they were (the file was not changed).
      for _, t in ipairs(todo) do
        if f.hunks[t.hi].state == to then
          f.hunks[t.hi].state = t.from
        end
      end
      failed(f, ("review: %s not %s: %s"):format(f.path, verb(to), werr))
    elseif buf and not was_modified and fs.idle() and vim.api.nvim_buf_is_loaded(buf) and not vim.bo[buf].modified then
      -- (Only once the last write of the file is in place: the buffer holds that text.)
      pcall(vim.cmd.checktime, buf)
    end
  end
end

---Replaces the regions of `todo` in the loaded buffer `buf` (bottom up), which then holds `new_text`.
local function swap_in_buffer(buf, todo, new_text, was_modified)
  table.sort(todo, function(x, y)
    return x.bs > y.bs
  end)
  for _, t in ipairs(todo) do
    vim.api.nvim_buf_set_lines(buf, t.bs - 1, t.bs - 1 + t.n, false, model.to_buf(buf, t.with))
  end
  own_writes.quiet_reload(buf, new_text)
  if not was_modified then
    vim.bo[buf].modified = false
  end
end

---Puts hunks `his` of the text file `f` into state `to` together: one atomic write of the disk
---text with all their regions replaced, and one |nvim_buf_set_lines()| per hunk in its loaded
---buffer (bottom up, so the rows above stay right). A hunk in conflict is left out.
---@param f claude_context.ReviewFileState
---@param his integer[]
---@param to "rejected"|"pending"|"kept"
---@return table<integer, {[1]:boolean, [2]:string?}> result per hunk index: ok, err
function M.swap_file(f, his, to)
  local res = {}
  local work = {}
  for _, hi in ipairs(his) do
    if f.kind ~= "text" or f.hunks[hi].opaque then
      res[hi] = { M.swap(f, hi, to) }
    else
      work[#work + 1] = hi
    end
  end
  if #work == 0 then
    return res
  end
  local todo, disk, buf = locate_work(f, work, to, res)
  if not todo or #todo == 0 then
    return res
  end
  local new_text = swapped_text(f, disk, todo, to)
  local was_modified = buf and vim.bo[buf].modified
  -- The disk work goes to the thread pool (the checks and the temporary file are done now);
  -- an unmodified buffer is reloaded once the file is in place (see claude_context.review.written).
  local ok, err =
    fs.write_async(f.absolute, new_text, { root = f.root }, on_swap_written(f, todo, to, buf, was_modified))
  for _, t in ipairs(todo) do
    res[t.hi] = { ok, err }
  end
  if not ok then
    return res
  end
  if buf then
    swap_in_buffer(buf, todo, new_text, was_modified)
  end
  for _, t in ipairs(todo) do
    f.hunks[t.hi].state = to
  end
  return res
end

---One undo step: the hunks one command changed, with their previous states.
---@class claude_context.ReviewUndo
---@field review claude_context.Review
---@field items {f:claude_context.ReviewFileState, hi:integer, from:string, to:string, reason?:string}[]

---@type claude_context.ReviewUndo[]
M.stack = {}

---The outcome of keep/reject: hunks done, and the refusals (`{ path, line, why }`).
---@class claude_context.ReviewOutcome
---@field done integer
---@field refused {path:string, line:integer, why:string}[]

---Keeps or rejects the pending hunks `targets` of `review`; one undo step.
---@param review claude_context.Review
---@param targets {f:claude_context.ReviewFileState, hi:integer}[]
---@param action "keep"|"reject"
---@param reason string? why (a reject's)
---@param into claude_context.ReviewUndo? add to this undo step (the caller pushes it) instead of a new one
---@return claude_context.ReviewOutcome
function M.apply(review, targets, action, reason, into)
  local step = into or { review = review, items = {} }
  local out = { done = 0, refused = {} }
  -- Per file, in the order of the targets: a file's hunks are rejected in one write.
  local order, per = {}, {}
  for _, t in ipairs(targets) do
    if t.f.hunks[t.hi].state == "pending" then
      if not per[t.f] then
        per[t.f] = {}
        order[#order + 1] = t.f
      end
      table.insert(per[t.f], t.hi)
    end
  end
  for _, f in ipairs(order) do
    local res = {}
    local to = action == "keep" and "kept" or "rejected"
    if model.shows_new(f, to) == model.shows_new(f, "pending") then
      -- Nothing to write (a keep; in a proposal, a reject).
      for _, hi in ipairs(per[f]) do
        f.hunks[hi].state = to
        res[hi] = { true }
      end
    else
      res = M.swap_file(f, per[f], to)
    end
    for _, hi in ipairs(per[f]) do
      local h = f.hunks[hi]
      local ok, err = res[hi][1], res[hi][2]
      if ok then
        h.reason = action == "reject" and reason or nil
        out.done = out.done + 1
        table.insert(step.items, { f = f, hi = hi, from = "pending", to = h.state })
      else
        local why = err
        if err == "conflict" then
          why = f.proposal
              and "you changed these lines since the land was planned: not overwritten (land again to see them merged)"
            or "you changed these lines after Claude: not overwritten (edit them by hand, or keep the hunk)"
        end
        table.insert(out.refused, { path = model.shown(f.path), line = h.cur or h.b, why = why })
      end
    end
    model.refresh(f)
  end
  if not into then
    M.push(step)
  end
  return out
end

---Records `step` for undo (when it changed anything).
---@param step claude_context.ReviewUndo
function M.push(step)
  if #step.items > 0 then
    table.insert(M.stack, step)
  end
end

---Takes the last undo step off the stack (nil: none).
---@return claude_context.ReviewUndo?
function M.pop()
  return table.remove(M.stack)
end

---Undoes `items` (of one undo step, or a part of it: whole files): kept hunks are pending
---again, rejected ones get Claude's lines back. Returns the refusals (a rejected hunk whose
---lines were edited since stays rejected).
---@param items {f:claude_context.ReviewFileState, hi:integer, from:string, to:string}[]
---@return {path:string, line:integer, why:string}[] refused
function M.undo_items(items)
  local refused = {}
  local order, per = {}, {}
  for i = #items, 1, -1 do
    local it = items[i]
    local h = it.f.hunks[it.hi]
    if h.state == it.to then
      if model.shows_new(it.f, it.to) ~= model.shows_new(it.f, it.from) then
        if not per[it.f] then
          per[it.f] = {}
          order[#order + 1] = it.f
        end
        table.insert(per[it.f], it.hi)
      else
        h.state = it.from
      end
    end
  end
  for _, f in ipairs(order) do
    local res = M.swap_file(f, per[f], "pending")
    for _, hi in ipairs(per[f]) do
      local h = f.hunks[hi]
      if res[hi][1] then
        h.reason, h.sent = nil, nil
      else
        local err = res[hi][2]
        local why = err == "conflict" and "you changed these lines since the reject: not overwritten" or err
        table.insert(refused, { path = model.shown(f.path), line = h.cur or h.b, why = why })
      end
    end
  end
  local seen = {}
  for _, it in ipairs(items) do
    if not seen[it.f] then
      seen[it.f] = true
      model.refresh(it.f)
    end
  end
  return refused
end

---Undoes the last keep or reject at once. Returns the step undone (nil when there is none)
---and the refusals.
---@return claude_context.ReviewUndo? step, {path:string, line:integer, why:string}[] refused
function M.undo()
  local step = M.pop()
  if not step then
    return nil, {}
  end
  return step, M.undo_items(step.items)
end

---Forgets the undo steps (a new change set is reviewed).
function M.reset()
  M.stack = {}
end

---A keep of several files at once (keep all, a Visual range over files) leaves out those that
---run code by themselves (a land's `.envrc`, CI workflow, git hook manager's file: the change
---set's `runs_code`), and says so: each is kept only on its own.
---@param action "keep"|"reject"
---@param targets claude_context.ReviewTarget[]
---@return claude_context.ReviewTarget[] targets
function M.explicit_keeps(action, targets)
  if action ~= "keep" then
    return targets
  end
  local files, left, out = {}, {}, {}
  for _, t in ipairs(targets) do
    files[t.f] = true
  end
  if vim.tbl_count(files) <= 1 then
    return targets
  end
  for _, t in ipairs(targets) do
    if t.f.file.runs_code then
      left[t.f.path] = true
    else
      out[#out + 1] = t
    end
  end
  if next(left) then
    local names = vim.tbl_map(model.shown, vim.tbl_keys(left))
    table.sort(names)
    notify(
      ("review: not kept with the others, they run code by themselves (keep each on its own after reading it): %s"):format(
        table.concat(names, ", ")
      ),
      vim.log.levels.WARN
    )
  end
  return out
end

return M
