---@mod claude_context.ide.diff.decide The person's decision on a diff view
---
--- `:w` in the proposal (or `:ClaudeContext accept`) accepts, with the person's edits to the
--- proposal; `:[range]ClaudeContext accept` takes only the hunks the range touches; closing
--- either side or `:ClaudeContext reject` rejects. Nothing is written to disk here: after
--- FILE_SAVED Claude Code writes the file, and an unmodified buffer of it is reloaded when that
--- happens (a big one in slices: claude_context.ide.diff.reload).

local M = {}

local util = require("claude_context.ide.util")
local files = require("claude_context.ide.files")
local slices = require("claude_context.ide.slices")
local cfg = require("claude_context.ide.diff.config")
local inline = require("claude_context.ide.diff.inline")
local uv = vim.uv

local function close(v)
  require("claude_context.ide.diff.view").close(v)
end

---Answers the waiting openDiff (once). Returns false when it was answered already.
---@param v claude_context.DiffView
---@param result claude_context.ToolResult
---@return boolean
function M.answer(v, result)
  local r = v.respond
  if not r then
    return false
  end
  v.respond = nil
  r(result)
  return true
end

---Reloads `path`'s buffer when Claude Code writes the file (it does so after FILE_SAVED), if
---the buffer has no unsaved changes. Watches the directory for a while, debounced.
---@param path string
local function reload_when_written(path)
  local buf = util.find_buf(path)
  if not buf or not vim.api.nvim_buf_is_loaded(buf) or vim.bo[buf].modified then
    return
  end
  local w, t, life = uv.new_fs_event(), uv.new_timer(), uv.new_timer()
  if not (w and t and life) then
    return
  end
  local base = vim.fs.basename(path)
  -- A big buffer: reloaded in slices, whoever notices the write first.
  local reload = require("claude_context.ide.diff.reload")
  local unwatch = reload.sliced(buf) and reload.watch(buf, path)
  local function stop()
    for _, h in ipairs({ w, t, life }) do
      if not h:is_closing() then
        h:close()
      end
    end
    if unwatch then
      vim.schedule(unwatch)
    end
  end
  local ok = w:start(vim.fs.dirname(path), {}, function(err, fname)
    if err or fname ~= base then
      return
    end
    t:stop()
    t:start(50, 0, function()
      vim.schedule(function()
        -- (Only a regular file is re-read: one replaced by a FIFO would block the editor.)
        if vim.api.nvim_buf_is_valid(buf) and not vim.bo[buf].modified and files.regular_file(path) then
          pcall(vim.cmd, "checktime " .. buf)
        end
      end)
    end)
  end)
  if not ok then
    stop()
    return
  end
  life:start(30000, 0, stop)
end

---Answers FILE_SAVED with `result`, then: the proposal counts as written, the file's buffer
---reloads when Claude Code writes it, the view closes.
---@param v claude_context.DiffView
---@param result claude_context.ToolResult
local function saved(v, result)
  M.answer(v, result)
  if vim.api.nvim_buf_is_valid(v.prop_buf) then
    vim.bo[v.prop_buf].modified = false
  end
  reload_when_written(v.old_path)
  vim.schedule(function()
    close(v)
  end)
end

---Reads the edited proposal's lines a slice at a time into the bridge's prepared proposal, then
---calls `done(ok)`. The buffer is not modifiable meanwhile, so what is pushed is one version.
---@param v claude_context.DiffView
---@param done fun(ok: boolean)
local function push_lines(v, done)
  local native = require("claude_context.native").get()
  local buf = v.prop_buf
  vim.bo[buf].modifiable = false
  local from, total = 0, vim.api.nvim_buf_line_count(buf)
  slices.sliced(cfg.slice_ms, function()
    local to = math.min(total, from + cfg.chunk_lines)
    if not native.proposal_collect(v.prep.id, buf, from, to) then
      done(false)
      return false
    end
    from = to
    if from >= total then
      done(true)
      return false
    end
    return true
  end, function()
    return not v.closed and v.respond ~= nil and vim.api.nvim_buf_is_valid(buf)
  end)
end

---Accepts: answers FILE_SAVED with the proposal as it is now, closes the view. Unedited, the
---answer is exactly what Claude sent (kept by the bridge when it prepared the view); an edited
---prepared proposal's lines go to the bridge in slices first.
---@param v claude_context.DiffView
---@return boolean answered (or on its way)
function M.accept(v)
  if v.closed or not v.respond or v.accepting then
    return false
  end
  v.decision = v.decision or "accepted"
  local eol, crlf = vim.bo[v.prop_buf].eol, vim.bo[v.prop_buf].fileformat == "dos"
  local edited = vim.api.nvim_buf_get_changedtick(v.prop_buf) ~= v.tick
  if not edited then
    saved(v, v.prep and { result = "FILE_SAVED", unchanged = true } or { result = "FILE_SAVED", contents = v.contents })
  elseif v.prep then
    v.accepting = true
    push_lines(v, function(ok)
      if ok then
        saved(v, { result = "FILE_SAVED", pushed = true, eol = eol, crlf = crlf })
      else
        saved(v, {
          result = "FILE_SAVED",
          contents = files.join(vim.api.nvim_buf_get_lines(v.prop_buf, 0, -1, false), eol, crlf),
        })
      end
    end)
  else
    saved(
      v,
      { result = "FILE_SAVED", contents = files.join(vim.api.nvim_buf_get_lines(v.prop_buf, 0, -1, false), eol, crlf) }
    )
  end
  return true
end

---Does hunk `h` touch lines l1..l2 of `side` ("a": the file on disk, "b": the proposal)? A hunk
---with no lines on that side sits between two lines: it counts when the range reaches either.
local function touches(h, side, l1, l2)
  local start, count = h[1], h[2]
  if side == "b" then
    start, count = h[3], h[4]
  end
  if count == 0 then
    return l1 <= start + 1 and l2 >= start
  end
  return l1 <= start + count - 1 and l2 >= start
end

---Partial accept: answers FILE_SAVED with the file on disk plus only the hunks that touch
---lines l1..l2 (of the proposal, or of the file side when `side` is "a"); closes the view.
---@param v claude_context.DiffView
---@param l1 integer
---@param l2 integer
---@param side "a"|"b"
---@return integer? taken, integer total (nil taken: answered already)
function M.accept_range(v, l1, l2, side)
  -- `accepting`: a whole accept's lines are on their way; it was asked first and stands.
  if v.closed or not v.respond or v.accepting then
    return nil, 0
  end
  if v.prep and v.hunks and vim.api.nvim_buf_get_changedtick(v.prop_buf) == v.tick then
    -- Unedited and prepared: the bridge composes the text from its own copy of both sides;
    -- only the chosen hunks' numbers cross (a big file is not read back here).
    local take = {}
    for i, h in ipairs(v.hunks) do
      if touches(h, side, l1, l2) then
        take[#take + 1] = i - 1
      end
    end
    if #take == 0 then
      return 0, #v.hunks
    end
    v.decision = "accepted"
    v.partial = { taken = #take, total = #v.hunks }
    saved(v, { result = "FILE_SAVED", take = take })
    return #take, #v.hunks
  end
  local hunks, old_lines, new_lines = inline.hunks(v)
  local out, taken, pos = {}, 0, 1
  for _, h in ipairs(hunks) do
    local a_start, a_count, b_start, b_count = h[1], h[2], h[3], h[4]
    -- Lines before the hunk (for a pure insertion a_start is the line it goes after).
    local a_first = a_count == 0 and a_start + 1 or a_start
    for i = pos, a_first - 1 do
      table.insert(out, old_lines[i])
    end
    if touches(h, side, l1, l2) then
      taken = taken + 1
      for i = b_start, b_start + b_count - 1 do
        table.insert(out, new_lines[i])
      end
    else
      for i = a_first, a_first + a_count - 1 do
        table.insert(out, old_lines[i])
      end
    end
    pos = a_first + a_count
  end
  for i = pos, #old_lines do
    table.insert(out, old_lines[i])
  end
  if taken == 0 then
    return 0, #hunks
  end
  local contents = files.join(out, vim.bo[v.prop_buf].eol, vim.bo[v.prop_buf].fileformat == "dos")
  if #out == 0 then
    contents = ""
  end
  v.decision = "accepted"
  v.partial = { taken = taken, total = #hunks }
  saved(v, { result = "FILE_SAVED", contents = contents })
  return taken, #hunks
end

---Rejects: answers DIFF_REJECTED, closes the view.
---@param v claude_context.DiffView
---@return boolean answered
function M.reject(v)
  if v.respond then
    v.decision = v.decision or "rejected"
  end
  local answered = M.answer(v, { result = "DIFF_REJECTED", tab_name = v.name })
  vim.schedule(function()
    close(v)
  end)
  return answered
end

return M
