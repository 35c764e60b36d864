---@mod claude_context.ide.slices Work spread over event-loop turns, so the editor never waits
---
--- `sliced` runs a piece of work a few milliseconds per turn, `each` a function on each item of a
--- list that way; `find_text` searches a buffer that way.

local M = {}

local uv = vim.uv or vim.loop

---Runs `piece()` over event-loop turns, for `slice_ms` per turn (at least one piece each),
---with a timer between turns (not |vim.schedule()|: keys and requests are read in between).
---`piece` returns true while there is more to do. Before each turn `alive()`, when given, must
---hold, else the work stops quietly (the view it was for is gone).
---@param slice_ms number
---@param piece fun(): boolean?
---@param alive (fun(): boolean?)?
function M.sliced(slice_ms, piece, alive)
  local function step()
    if alive and not alive() then
      return
    end
    local t0 = uv.hrtime()
    repeat
      if not piece() then
        return
      end
    until uv.hrtime() - t0 >= slice_ms * 1e6
    vim.defer_fn(step, 0)
  end
  step()
end

---Calls `fn(item, i)` for each item of `list` in order, over event-loop turns as |sliced| does
---(`slice_ms` per turn), then `done()` (at once for an empty list).
---@param list any[]
---@param slice_ms number
---@param fn fun(item: any, i: integer)
---@param done fun()?
function M.each(list, slice_ms, fn, done)
  local i = 1
  M.sliced(slice_ms, function()
    if i > #list then
      if done then
        done()
      end
      return false
    end
    fn(list[i], i)
    i = i + 1
    return true
  end)
end

---Lines searched per block; blocks go on for `find_slice_ms` per event-loop turn.
M.find_block = 2000
M.find_slice_ms = 2

---Finds `text` (plain) from (row, col) on (1-based row, 0-based byte col), reading the buffer a
---block at a time and yielding between slices (a big file never holds the editor); calls
---`done(s, e)` with the start and the exclusive end as {row, col}, or `done(nil)`.
---@param buf integer
---@param text string
---@param row integer
---@param col integer
---@param done fun(s: integer[]?, e: integer[]?)
function M.find_text(buf, text, row, col, done)
  local parts = vim.split(text, "\n", { plain = true })
  local first = parts[1]
  local r = row
  local function matches_at(rr, s)
    -- The lines after the first must follow: fetched on demand (a multi-line text is rare).
    local following = vim.api.nvim_buf_get_lines(buf, rr, rr + #parts - 1, false)
    local line = vim.api.nvim_buf_get_lines(buf, rr - 1, rr, false)[1]
    if line:sub(s) ~= parts[1] then
      return false
    end
    for i = 2, #parts do
      local l = following[i - 1]
      if not l or (i < #parts and l ~= parts[i]) or (i == #parts and l:sub(1, #parts[i]) ~= parts[i]) then
        return false
      end
    end
    return true
  end
  M.sliced(M.find_slice_ms, function()
    local count = vim.api.nvim_buf_is_valid(buf) and vim.api.nvim_buf_line_count(buf) or 0
    if r > count then
      done(nil)
      return false
    end
    local block = vim.api.nvim_buf_get_lines(buf, r - 1, math.min(count, r - 1 + M.find_block), false)
    for i, line in ipairs(block) do
      local rr = r + i - 1
      local s = line:find(first, (rr == row) and (col + 1) or 1, true)
      if s then
        if #parts == 1 then
          done({ rr, s - 1 }, { rr, s - 1 + #text })
          return false
        elseif matches_at(rr, s) then
          done({ rr, s - 1 }, { rr + #parts - 1, #parts[#parts] })
          return false
        end
      end
    end
    r = r + #block
    return true
  end)
end

return M
