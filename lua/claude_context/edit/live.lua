---@mod claude_context.edit.live The answer streaming into the buffer as a diff in place
---
--- While the answer streams, its lines are inserted above the range's old lines (highlighted as
--- added) and the old lines stay below them (highlighted as removed); when it ends the old lines
--- go and the hunks are shown (claude_context.edit.hunks). Every write of one edit is one undo
--- step (`undojoin`). The range is tracked by an extmark: an edit the person makes elsewhere
--- moves it (the stream goes on where the range now is); one inside the range refuses the answer,
--- and the person's text is kept. Lines outside the range are never written.

local M = {}

M.ns = vim.api.nvim_create_namespace("claude_context_edit")

---@class claude_context.EditLive
---@field buf integer
---@field old string[] the range's lines when the edit started
---@field new string[] the answer's lines written so far
---@field mark integer the extmark at the range's first row (it stays above what is inserted there)
---@field tick integer b:changedtick after the last write
---@field seq integer? the undo sequence number after the first write
---@field add integer? the extmark highlighting the new lines
---@field del integer? the extmark highlighting the old lines

local function tick(buf)
  return vim.api.nvim_buf_get_changedtick(buf)
end

---Starts showing an edit of rows [s, e) of `buf`.
---@param buf integer
---@param s integer
---@param e integer
---@return claude_context.EditLive
function M.start(buf, s, e)
  local l = {
    buf = buf,
    old = vim.api.nvim_buf_get_lines(buf, s, e, false),
    new = {},
    mark = vim.api.nvim_buf_set_extmark(buf, M.ns, s, 0, { right_gravity = false }),
    tick = tick(buf),
  }
  M.paint(l)
  return l
end

---The range's first row now.
---@param l claude_context.EditLive
---@return integer
function M.top(l)
  return vim.api.nvim_buf_get_extmark_by_id(l.buf, M.ns, l.mark, {})[1]
end

local function same(a, b)
  if #a ~= #b then
    return false
  end
  for i = 1, #a do
    if a[i] ~= b[i] then
      return false
    end
  end
  return true
end

---Whether the range holds what the edit put there (the new lines, then the old ones): true when
---nothing changed the buffer since, or when the changes were elsewhere (the extmark moved with
---them).
---@param l claude_context.EditLive
---@return boolean
function M.intact(l)
  if not vim.api.nvim_buf_is_valid(l.buf) then
    return false
  end
  if tick(l.buf) == l.tick then
    return true
  end
  local top = M.top(l)
  if not top then
    return false
  end
  local n = #l.new
  local got = vim.api.nvim_buf_get_lines(l.buf, top, top + n + #l.old, false)
  if not same(vim.list_slice(got, 1, n), l.new) or not same(vim.list_slice(got, n + 1), l.old) then
    return false
  end
  -- Rebased: the person's change was elsewhere. Their change is the last undo step now.
  l.tick, l.seq = tick(l.buf), nil
  return true
end

---Highlights the new lines as added and the old ones as removed.
---@param l claude_context.EditLive
function M.paint(l)
  local top = M.top(l)
  local n = #l.new
  local function mark(id, s, e, hl)
    if e <= s then
      if id then
        vim.api.nvim_buf_del_extmark(l.buf, M.ns, id)
      end
      return nil
    end
    return vim.api.nvim_buf_set_extmark(
      l.buf,
      M.ns,
      s,
      0,
      { id = id, end_row = e, hl_group = hl, hl_eol = true, priority = 150 }
    )
  end
  l.add = mark(l.add, top, top + n, "DiffAdd")
  l.del = mark(l.del, top + n, top + n + #l.old, "DiffDelete")
end

---Runs `fn` in the buffer as part of the edit's undo step (a new step for the first write, or
---after the person changed the buffer).
---@param l claude_context.EditLive
---@param fn fun()
function M.write(l, fn)
  vim.api.nvim_buf_call(l.buf, function()
    if l.seq and vim.fn.changenr() == l.seq then
      pcall(vim.cmd, "silent! undojoin")
    else
      -- Close the undo step before: the edit starts its own.
      vim.bo[l.buf].undolevels = vim.bo[l.buf].undolevels
    end
    fn()
    l.seq = vim.fn.changenr()
  end)
  l.tick = tick(l.buf)
end

---Inserts the answer's next lines below those written so far. Returns false (nothing written)
---when the person changed the range.
---@param l claude_context.EditLive
---@param lines string[]
---@return boolean
function M.append(l, lines)
  if #lines == 0 then
    return true
  end
  if not M.intact(l) then
    return false
  end
  local at = M.top(l) + #l.new
  M.write(l, function()
    vim.api.nvim_buf_set_lines(l.buf, at, at, false, lines)
  end)
  vim.list_extend(l.new, lines)
  M.paint(l)
  return true
end

---Takes the edit's lines out again: the buffer as it was (its undo step undone when it is the
---last one; else the new lines deleted), when the range still holds what the edit wrote.
---Returns whether the buffer is as it was.
---@param l claude_context.EditLive
---@return boolean
function M.revert(l)
  local ok = M.intact(l)
  if ok and #l.new > 0 then
    local undone = false
    if l.seq and tick(l.buf) == l.tick then
      vim.api.nvim_buf_call(l.buf, function()
        if vim.fn.changenr() == l.seq then
          vim.cmd("silent undo")
          -- Nothing undone in a buffer without undo ('undolevels' -1): the lines go below.
          undone = tick(l.buf) ~= l.tick
        end
      end)
    end
    if not undone then
      local top = M.top(l)
      vim.api.nvim_buf_set_lines(l.buf, top, top + #l.new, false, {})
    end
    l.new = {}
  end
  M.clear(l)
  return ok
end

---Ends the stream: the old lines go (the answer's take their place). The edit then holds the
---answer's lines alone (still highlighted as added, its `old` empty: a `revert` takes the whole
---edit back). Returns the range's first row and the lines it replaced, or nil when the person
---changed the range meanwhile (nothing is written then).
---@param l claude_context.EditLive
---@return integer? top, string[] old
function M.settle(l)
  local old = l.old
  if not M.intact(l) then
    return nil, old
  end
  local top = M.top(l)
  if #old > 0 then
    local at = top + #l.new
    M.write(l, function()
      vim.api.nvim_buf_set_lines(l.buf, at, at + #old, false, {})
    end)
  end
  l.old = {}
  M.paint(l)
  return top, old
end

---Removes the edit's highlights and its extmark.
---@param l claude_context.EditLive
function M.clear(l)
  if vim.api.nvim_buf_is_valid(l.buf) then
    for _, id in pairs({ l.add, l.del, l.mark }) do
      pcall(vim.api.nvim_buf_del_extmark, l.buf, M.ns, id)
    end
  end
  l.add, l.del = nil, nil
end

return M
