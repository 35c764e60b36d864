---@mod claude_context.edit.hunks An answer's hunks in the buffer, kept or rejected one by one
---
--- When the answer has streamed in, each hunk shows where it is: its new lines highlighted as
--- added, the lines it removed as virtual lines above them. The review's keys (option
--- `review.keys`: `a` keep, `x` reject, `]c`/`[c` move, `gA`/`gX` all) act on the hunk under the
--- cursor while hunks are pending, and do what they always do elsewhere. A reject writes the old
--- lines back in the edit's undo step, so `u` still undoes the whole edit at once. A change of
--- the person's inside the hunks ends the review (their text is kept, nothing more is written).

local M = {}

local live = require("claude_context.edit.live")

M.ns = vim.api.nvim_create_namespace("claude_context_edit_hunks")

---@class claude_context.EditHunk
---@field old string[] the lines it removed
---@field start integer where its new lines start in the range (1-based)
---@field count integer how many new lines it has
---@field state "pending"|"kept"|"rejected"

---@class claude_context.EditHunks
---@field buf integer
---@field mark integer extmark at the range's first row
---@field cur string[] the range's lines as the review left them
---@field hunks claude_context.EditHunk[]
---@field tick integer
---@field seq integer?
---@field saved vim.api.keyset.get_keymap[] the buffer's own mappings the review's keys covered
---@field augroup integer
---@field row0 integer? the range's first row as last painted
---@field painted integer? how many paints were started (a paint in slices goes on while it is the last)

---The reviews under way, by buffer.
---@type table<integer, claude_context.EditHunks>
M.active = {}

local ACTIONS = { "keep", "reject", "next_hunk", "prev_hunk", "keep_all", "reject_all" }

local function keys()
  return require("claude_context.config.review").options().keys
end

---The hunks between `old` and `new`.
---@param old string[]
---@param new string[]
---@return claude_context.EditHunk[]
function M.diff(old, new)
  local a = table.concat(old, "\n") .. "\n"
  local b = table.concat(new, "\n") .. "\n"
  local out = {}
  for _, h in ipairs(vim.diff(a, b, { result_type = "indices" })) do
    local as, ac, bs, bc = h[1], h[2], h[3], h[4]
    out[#out + 1] =
      { old = vim.list_slice(old, as, as + ac - 1), start = bc > 0 and bs or bs + 1, count = bc, state = "pending" }
  end
  return out
end

local function top(H)
  return vim.api.nvim_buf_get_extmark_by_id(H.buf, M.ns, H.mark, {})[1]
end

---Whether the range still holds the review's lines (a change elsewhere rebases it).
local function intact(H)
  if vim.api.nvim_buf_get_changedtick(H.buf) == H.tick then
    return true
  end
  local t = top(H)
  local got = t and vim.api.nvim_buf_get_lines(H.buf, t, t + #H.cur, false) or {}
  if not vim.deep_equal(got, H.cur) then
    return false
  end
  H.tick, H.seq = vim.api.nvim_buf_get_changedtick(H.buf), nil
  return true
end

local function virt(lines)
  return vim.tbl_map(function(l)
    return { { l, "DiffDelete" } }
  end, lines)
end

---How many hunks one main-thread slice paints when the hunks are first shown (the rest in the
---slices after it).
M.PAINT_CHUNK = 50

---Paints the pending hunks from the `from`-th on, at most `n` of them (all when nil), the range
---starting at row `t`. Returns the index to go on from, or nil when all are painted.
local function paint_from(H, t, from, n)
  local k = keys()
  local hint = ("  %s keep · %s reject"):format(k.keep, k.reject)
  local last = vim.api.nvim_buf_line_count(H.buf) - 1
  local stop = n and math.min(#H.hunks, from + n - 1) or #H.hunks
  for i = from, stop do
    local h = H.hunks[i]
    if h.state == "pending" then
      local row = t + h.start - 1
      if h.count > 0 then
        vim.api.nvim_buf_set_extmark(H.buf, M.ns, row, 0, {
          end_row = row + h.count,
          hl_group = "DiffAdd",
          hl_eol = true,
          virt_text = { { hint, "Comment" } },
          virt_lines = #h.old > 0 and virt(h.old) or nil,
          virt_lines_above = true,
          priority = 150,
        })
      elseif row <= last then
        vim.api.nvim_buf_set_extmark(H.buf, M.ns, row, 0, { virt_lines = virt(h.old), virt_lines_above = true })
      else
        vim.api.nvim_buf_set_extmark(H.buf, M.ns, last, 0, { virt_lines = virt(h.old) })
      end
    end
  end
  return stop < #H.hunks and stop + 1 or nil
end

---Shows the pending hunks: all of them at once, or (`chunk`) the first `chunk` now and the
---rest in the main-thread slices after, while the review and its range stay as they are (a
---later full paint, a keep or a reject, takes over).
---@param H claude_context.EditHunks
---@param chunk integer?
local function paint(H, chunk)
  vim.api.nvim_buf_clear_namespace(H.buf, M.ns, 0, -1)
  H.mark = vim.api.nvim_buf_set_extmark(H.buf, M.ns, H.row0, 0, { id = H.mark, right_gravity = false })
  H.painted = (H.painted or 0) + 1
  local gen = H.painted
  local function go(from)
    local nxt = paint_from(H, top(H), from, chunk)
    if nxt then
      vim.schedule(function()
        if M.active[H.buf] == H and H.painted == gen and intact(H) then
          go(nxt)
        end
      end)
    end
  end
  go(1)
end

---The pending hunk at row `row` (0-based), or nil.
local function at(H, row)
  local t = top(H)
  for i, h in ipairs(H.hunks) do
    local s = t + h.start - 1
    if h.state == "pending" and row >= s and row < s + math.max(h.count, 1) then
      return i
    end
  end
end

---`buf`, 0 meaning the current buffer (as in Neovim's own API).
---@param buf integer
---@return integer
local function bufnr(buf)
  return buf == 0 and vim.api.nvim_get_current_buf() or buf
end

---Ends the review of `buf` (0: the current buffer): its marks and keys go.
---@param buf integer
---@param msg string?
function M.stop(buf, msg)
  buf = bufnr(buf)
  local H = M.active[buf]
  if not H then
    return
  end
  M.active[buf] = nil
  pcall(vim.api.nvim_del_augroup_by_id, H.augroup)
  if vim.api.nvim_buf_is_valid(buf) then
    vim.api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
    for _, name in ipairs(ACTIONS) do
      local lhs = keys()[name]
      if lhs and lhs ~= "" then
        pcall(vim.keymap.del, "n", lhs, { buffer = buf })
      end
    end
    for _, m in ipairs(H.saved) do
      pcall(vim.fn.mapset, "n", false, m)
    end
  end
  if msg then
    require("claude_context.util.notify").prefixed(msg)
  end
end

local function tally(H)
  local kept, rejected = 0, 0
  for _, h in ipairs(H.hunks) do
    kept = kept + (h.state == "kept" and 1 or 0)
    rejected = rejected + (h.state == "rejected" and 1 or 0)
  end
  return kept, rejected
end

---Rejects hunk `i`: its old lines back in its place.
local function reject(H, i)
  local h = H.hunks[i]
  local row = top(H) + h.start - 1
  live.write(H, function()
    vim.api.nvim_buf_set_lines(H.buf, row, row + h.count, false, h.old)
  end)
  local cur = vim.list_slice(H.cur, 1, h.start - 1)
  vim.list_extend(cur, h.old)
  vim.list_extend(cur, vim.list_slice(H.cur, h.start + h.count))
  H.cur = cur
  local delta = #h.old - h.count
  for j = i + 1, #H.hunks do
    H.hunks[j].start = H.hunks[j].start + delta
  end
  h.count, h.state = #h.old, "rejected"
end

---Acts on the review of `buf` (0: the current buffer): "keep"/"reject" the hunk at `row`,
---"keep_all"/"reject_all".
---@param buf integer
---@param action string
---@param row integer? 0-based (default the cursor's)
---@return boolean acted
function M.act(buf, action, row)
  buf = bufnr(buf)
  local H = M.active[buf]
  if not H then
    return false
  end
  if not intact(H) then
    M.stop(buf, "edit: the lines under review changed; the hunks are no longer shown (your text is kept)")
    return false
  end
  row = row or (vim.api.nvim_win_get_cursor(0)[1] - 1)
  local targets = {}
  if action == "keep_all" or action == "reject_all" then
    for i = #H.hunks, 1, -1 do
      if H.hunks[i].state == "pending" then
        targets[#targets + 1] = i
      end
    end
  else
    targets = { at(H, row) }
  end
  if #targets == 0 then
    return false
  end
  for _, i in ipairs(targets) do
    if action:match("^reject") then
      reject(H, i)
    else
      H.hunks[i].state = "kept"
    end
  end
  H.row0 = top(H)
  paint(H)
  local kept, rejected = tally(H)
  if kept + rejected == #H.hunks then
    M.stop(buf, ("edit: %d hunk(s) kept, %d rejected (u undoes the whole edit)"):format(kept, rejected))
  end
  return true
end

---Moves the cursor to the next (dir 1) or previous (-1) pending hunk of `buf` (0: the current
---buffer); false when there is none.
---@param buf integer
---@param dir integer
---@return boolean
function M.jump(buf, dir)
  buf = bufnr(buf)
  local H = M.active[buf]
  if not H then
    return false
  end
  local t = top(H)
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  local best
  for _, h in ipairs(H.hunks) do
    local s = t + h.start - 1
    if h.state == "pending" and ((dir > 0 and s > row) or (dir < 0 and s < row)) then
      if not best or (dir > 0 and s < best) or (dir < 0 and s > best) then
        best = s
      end
    end
  end
  if not best then
    return false
  end
  vim.api.nvim_win_set_cursor(0, { math.min(best + 1, vim.api.nvim_buf_line_count(buf)), 0 })
  return true
end

---The key `name` of the review in `buf`: acts when there is something to act on, else the key
---does what it always does.
local function press(buf, name, lhs)
  local H = M.active[buf]
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  local applies
  if not H then
    applies = false
  elseif name == "next_hunk" or name == "prev_hunk" or name == "keep_all" or name == "reject_all" then
    applies = true
  else
    applies = at(H, row) ~= nil
  end
  if not applies then
    return lhs
  end
  return ("<Cmd>lua require('claude_context.edit.hunks').key(%d, %q)<CR>"):format(buf, name)
end

---Runs the review's key `name` in `buf` (mapped by |show|).
---@param buf integer
---@param name string
function M.key(buf, name)
  if name == "next_hunk" then
    M.jump(buf, 1)
  elseif name == "prev_hunk" then
    M.jump(buf, -1)
  else
    M.act(buf, name)
  end
end

local function map(H)
  for _, name in ipairs(ACTIONS) do
    local lhs = keys()[name]
    if lhs and lhs ~= "" then
      local m = vim.fn.maparg(lhs, "n", false, true)
      if type(m) == "table" and m.buffer == 1 then
        H.saved[#H.saved + 1] = m
      end
      vim.keymap.set("n", lhs, function()
        return press(H.buf, name, lhs)
      end, { buffer = H.buf, expr = true, nowait = true, desc = "claude-context edit: " .. name:gsub("_", " ") })
    end
  end
end

---Shows the hunks between `old` and `new`, which `buf` (0: the current buffer) holds from row
---`row0` on, and
---maps the keys. `w` carries the edit's undo step on (its `seq`, `tick`).
---@param buf integer
---@param row0 integer
---@param old string[]
---@param new string[]
---@param w {seq: integer?, tick: integer}
---@return claude_context.EditHunks?
function M.show(buf, row0, old, new, w)
  buf = bufnr(buf)
  M.stop(buf)
  local H = {
    buf = buf,
    row0 = row0,
    cur = new,
    hunks = M.diff(old, new),
    tick = w.tick,
    seq = w.seq,
    saved = {},
  }
  if #H.hunks == 0 then
    return nil
  end
  M.active[buf] = H
  paint(H, M.PAINT_CHUNK)
  map(H)
  H.augroup = vim.api.nvim_create_augroup("claude_context_edit_hunks_" .. buf, { clear = true })
  vim.api.nvim_create_autocmd({ "TextChanged", "TextChangedI" }, {
    group = H.augroup,
    buffer = buf,
    callback = function()
      if M.active[buf] == H and not intact(H) then
        M.stop(buf, "edit: the lines under review changed (undone?); the hunks are no longer shown")
      end
    end,
  })
  vim.api.nvim_create_autocmd("BufWipeout", {
    group = H.augroup,
    buffer = buf,
    callback = function()
      M.stop(buf)
    end,
  })
  return H
end

return M
