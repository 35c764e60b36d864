---@mod claude_context.review.actions Keep, reject and undo hunks, on disk and in buffers
---
--- Keep marks a hunk accepted (nothing is written). Reject puts the hunk's baseline lines back
--- in place of Claude's: on disk (the disk text with that region replaced, written atomically)
--- and, when the file is loaded, in its buffer (|nvim_buf_set_lines()| of that region only, so
--- the person's unsaved edits elsewhere stay). A hunk whose region the person edited (on disk
--- or in the buffer) is a conflict: reject refuses it. Undo reverses the last keep or reject
--- the same careful way. A file Claude created is removed on reject; one Claude deleted is
--- restored. Binary and too large files can only be kept.

local M = {}

local H = require("claude_context.review.hunks")
local model = require("claude_context.review.model")
local fs = require("claude_context.review.fs")

---What a reject or undo refused: "conflict" or another message.
---@alias claude_context.ReviewRefusal string

---After our own write, buffer `buf` sees the disk change on its next check without a prompt:
---unmodified, it is reloaded (the same lines; Neovim then knows the file's new time, so a later
---`:w` does not warn); modified, it is left as it is while the disk holds what we wrote.
---@param buf integer
---@param text string
local function quiet_reload(buf, text)
  vim.api.nvim_create_autocmd("FileChangedShell", {
    buffer = buf,
    once = true,
    callback = function()
      if not vim.bo[buf].modified then
        vim.v.fcs_choice = "reload"
      elseif fs.read(vim.api.nvim_buf_get_name(buf)) == text then
        vim.v.fcs_choice = ""
      else
        vim.v.fcs_choice = "ask"
      end
    end,
    desc = "claude-context: the review wrote this file",
  })
end

---Reloads the unmodified buffer `buf` from disk (a file the review created or removed).
local function reload(buf)
  if buf and not vim.bo[buf].modified then
    vim.api.nvim_buf_call(buf, function()
      pcall(vim.cmd, "silent! edit")
    end)
  end
end

---Puts hunk `hi` of `f` into state `to` ("rejected": its baseline lines; "pending": Claude's
---lines back, the undo of a reject) on disk and in its loaded buffer.
---@param f claude_context.ReviewFileState
---@param hi integer
---@param to "rejected"|"pending"
---@return boolean ok, claude_context.ReviewRefusal? err
function M.swap(f, hi, to)
  local h = f.hunks[hi]
  if h.opaque then
    return false, ("%s: a %s file can only be kept (its contents are not in the change set)"):format(f.path, f.file.status == "binary" and "binary" or "too large")
  end
  local exp, regions = model.expected(f)
  local r = regions[hi]
  local with = to == "rejected" and h.old or h.new
  local text, rerr = fs.read(f.absolute)
  if not text and rerr ~= "missing" then
    return false, rerr
  end
  local disk = H.split(text)
  local ds = H.locate(H.diff(exp, disk.lines), r[1], r[2])
  if not ds then
    return false, "conflict"
  end
  local buf = model.loaded_buf(f.absolute)
  if f.kind ~= "text" then
    -- Created or deleted: the whole file goes or comes back.
    local exists = to == "rejected" and f.kind == "added" or to == "pending" and f.kind == "deleted"
    if exists then
      if text == nil then
        return false, ("%s is gone"):format(f.path)
      end
      local ok, err = fs.remove(f.absolute, f.root)
      if not ok then
        return false, err
      end
      if buf and not vim.bo[buf].modified then
        pcall(vim.api.nvim_buf_delete, buf, {})
      end
    else
      local content = to == "rejected" and f.file.before or f.file.after
      local ok, err = fs.write(f.absolute, content or "", { new = true, root = f.root })
      if not ok then
        return false, err
      end
      reload(buf)
    end
    h.state = to
    return true
  end
  local bs, was_modified
  if buf then
    bs = H.locate(H.diff(exp, model.buf_lines(buf)), r[1], r[2])
    if not bs then
      return false, "conflict"
    end
    was_modified = vim.bo[buf].modified
  end
  local lines = H.replace(disk.lines, ds, r[2], with)
  local eol = disk.eol
  if ds + r[2] - 1 >= #disk.lines then
    -- The region reaches the end: its side decides the final newline.
    eol = (to == "rejected" and f.before or f.after).eol
  end
  local new_text = H.join(lines, eol)
  local ok, err = fs.write(f.absolute, new_text, { root = f.root })
  if not ok then
    return false, err
  end
  if buf then
    vim.api.nvim_buf_set_lines(buf, bs - 1, bs - 1 + r[2], false, model.to_buf(buf, with))
    quiet_reload(buf, new_text)
    if not was_modified then
      vim.bo[buf].modified = false
      pcall(vim.cmd.checktime, buf)
    end
  end
  h.state = to
  return true
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
---@return claude_context.ReviewOutcome
function M.apply(review, targets, action, reason)
  local step = { review = review, items = {} }
  local out = { done = 0, refused = {} }
  for _, t in ipairs(targets) do
    local h = t.f.hunks[t.hi]
    if h.state == "pending" then
      local ok, err = true, nil
      if action == "keep" then
        h.state = "kept"
      else
        ok, err = M.swap(t.f, t.hi, "rejected")
        if ok then
          h.reason = reason
        end
      end
      if ok then
        out.done = out.done + 1
        table.insert(step.items, { f = t.f, hi = t.hi, from = "pending", to = h.state })
      else
        local why = err == "conflict" and "you changed these lines after Claude: not overwritten (edit them by hand, or keep the hunk)" or err
        table.insert(out.refused, { path = t.f.path, line = h.cur or h.b, why = why })
      end
    end
  end
  if #step.items > 0 then
    table.insert(M.stack, step)
  end
  for _, t in ipairs(targets) do
    model.refresh(t.f)
  end
  return out
end

---Undoes the last keep or reject. Returns the step undone (nil when there is none) and the
---refusals (a rejected hunk whose lines were edited since stays rejected).
---@return claude_context.ReviewUndo? step, {path:string, line:integer, why:string}[] refused
function M.undo()
  local step = table.remove(M.stack)
  local refused = {}
  if not step then
    return nil, refused
  end
  for i = #step.items, 1, -1 do
    local it = step.items[i]
    local h = it.f.hunks[it.hi]
    if h.state == it.to then
      if it.to == "rejected" then
        local ok, err = M.swap(it.f, it.hi, "pending")
        if ok then
          h.reason = nil
        else
          local why = err == "conflict" and "you changed these lines since the reject: not overwritten" or err
          table.insert(refused, { path = it.f.path, line = h.cur or h.b, why = why })
        end
      else
        h.state = it.from
      end
    end
    model.refresh(it.f)
  end
  return step, refused
end

---Forgets the undo steps (a new change set is reviewed).
function M.reset()
  M.stack = {}
end

return M
