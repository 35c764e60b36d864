---@mod claude_context.review.view The review buffer: a file list, then every file's hunks
---
--- One scratch buffer in a tab page of its own: a header, the file list (state, +/− counts,
--- path), then each file's section (a header line, each hunk's `@@` line with its state, the
--- baseline lines as `-`, Claude's as `+`). Kept and rejected hunks fold to their `@@` line.
--- It is built in slices of a few milliseconds (|vim.schedule()| between them), so a big
--- change set never holds the editor; a file's section is redrawn alone after an action.
--- Up to `review.context` lines of Claude's text above and below a pending hunk frame it.

local M = {}

local model = require("claude_context.review.model")
local text = require("claude_context.review.text")

local ns = vim.api.nvim_create_namespace("claude_context_review_view")
local ns_hl = vim.api.nvim_create_namespace("claude_context_review_view_hl")
local uv = vim.uv or vim.loop

---Milliseconds of work per slice while the view is built.
M.SLICE_MS = 6

---@class claude_context.ReviewView
---@field buf integer
---@field review claude_context.Review
---@field list_row integer the buffer row (1-based) above the file list's first line
---@field built integer files rendered so far
---@field ready boolean every file rendered
---@field marks integer[] per rendered file: the extmark on its section's header
---@field layout {len:integer, rel:integer[], ends:integer[]}[] per rendered file
---@field on_ready fun(v: claude_context.ReviewView)?

---The open view (nil when none).
---@type claude_context.ReviewView?
M.current = nil

local function opts()
  return require("claude_context.config.review").options()
end

local list_line, section = text.list_line, text.section

---Highlights of the view's lines, by their first character (a section's header: "━").
local HL = { ["+"] = "Added", ["-"] = "Removed", ["@"] = "Special" }

---The highlight of view line `l`, or nil.
---@param l string
---@return string?
local function hl_of(l)
  return HL[l:sub(1, 1)] or (l:sub(1, 3) == "━" and "Title") or nil
end

---The views' buffers (the decoration provider below draws only there): buffer -> its first
---section's row (0-based; the header and the file list above it are not highlighted).
---@type table<integer, integer>
local view_bufs = {}

-- The view's lines are highlighted as they are drawn (ephemeral extmarks: no syntax file to
-- load, and a view of thousands of lines costs only the lines on screen, never its build).
vim.api.nvim_set_decoration_provider(ns_hl, {
  on_win = function(_, _, buf)
    return view_bufs[buf] ~= nil
  end,
  on_line = function(_, _, buf, row)
    if row < (view_bufs[buf] or math.huge) then
      return
    end
    local l = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1]
    local hl = l and hl_of(l)
    if hl then
      vim.api.nvim_buf_set_extmark(buf, ns_hl, row, 0, { end_row = row, end_col = #l, hl_group = hl, ephemeral = true })
    end
  end,
})

---Runs `fn()` with the view's buffer modifiable (one 'modifiable' change around the edits, not
---one per edit: each fires OptionSet).
---@param v claude_context.ReviewView
---@param fn fun()
local function editing(v, fn)
  vim.bo[v.buf].modifiable = true
  local ok, err = pcall(fn)
  vim.bo[v.buf].modifiable = false
  if not ok then
    error(err, 0)
  end
end

---Renders the next files until `t0` + |SLICE_MS| (one at least): their sections appended, and
---their list lines filled, each in one change of the buffer.
---@param v claude_context.ReviewView
---@param t0 integer uv.hrtime() at the slice's start
local function render_slice(v, t0)
  local n = #v.review.cs.files
  local first = v.built + 1
  local top = vim.api.nvim_buf_line_count(v.buf)
  local all, list, heads = {}, {}, {}
  local i = first
  repeat
    local f = model.file(v.review, i)
    model.refresh(f)
    local lines, rel, ends = section(f)
    heads[i] = top + #all
    for _, l in ipairs(lines) do
      all[#all + 1] = l
    end
    v.layout[i] = { len = #lines, rel = rel, ends = ends }
    list[#list + 1] = list_line(f)
    i = i + 1
  until i > n or (uv.hrtime() - t0) >= M.SLICE_MS * 1e6
  editing(v, function()
    vim.api.nvim_buf_set_lines(v.buf, top, top, false, all)
    vim.api.nvim_buf_set_lines(v.buf, v.list_row + first - 1, v.list_row + i - 1, false, list)
  end)
  for k = first, i - 1 do
    v.marks[k] = vim.api.nvim_buf_set_extmark(v.buf, ns, heads[k], 0, {})
  end
  v.built = i - 1
end

---Builds the rest of the view in slices.
local function build(v)
  if M.current ~= v or not vim.api.nvim_buf_is_valid(v.buf) then
    return
  end
  local fs = require("claude_context.review.fs")
  if not fs.idle() then
    -- The files' texts are still being read.
    fs.when_idle(function()
      vim.schedule(function()
        build(v)
      end)
    end)
    return
  end
  local n = #v.review.cs.files
  if v.built < n then
    render_slice(v, uv.hrtime())
  end
  if v.built < n then
    vim.schedule(function()
      build(v)
    end)
  else
    v.ready = true
    if v.on_ready then
      v.on_ready(v)
    end
  end
end

---Redraws file `i`'s section and list line (after an action; nothing when not built yet).
---@param v claude_context.ReviewView
---@param i integer
function M.redraw_file(v, i)
  if not (v.marks[i] and vim.api.nvim_buf_is_valid(v.buf)) then
    return
  end
  local f = v.review.files[i]
  local row = vim.api.nvim_buf_get_extmark_by_id(v.buf, ns, v.marks[i], {})[1]
  local lines, rel, ends = section(f)
  editing(v, function()
    vim.api.nvim_buf_set_lines(v.buf, row, row + v.layout[i].len, false, lines)
    vim.api.nvim_buf_set_lines(v.buf, v.list_row + i - 1, v.list_row + i, false, { list_line(f) })
  end)
  v.marks[i] = vim.api.nvim_buf_set_extmark(v.buf, ns, row, 0, { id = v.marks[i] })
  v.layout[i] = { len = #lines, rel = rel, ends = ends }
end

---The header row (1-based) of rendered file `i`'s section.
local function head_row(v, i)
  return vim.api.nvim_buf_get_extmark_by_id(v.buf, ns, v.marks[i], {})[1] + 1
end

---What buffer row `row` (1-based) shows: file index, and the hunk index (nil: the file as a
---whole, on its list line or its header); nil on the header, blank and other lines.
---@param v claude_context.ReviewView
---@param row integer
---@return integer? file, integer? hunk
function M.at(v, row)
  if row > v.list_row and row <= v.list_row + #v.review.cs.files then
    local i = row - v.list_row
    return v.review.files[i] and i or nil
  end
  if v.built == 0 or row < head_row(v, 1) then
    return nil
  end
  local lo, hi = 1, v.built
  while lo < hi do
    local mid = math.floor((lo + hi + 1) / 2)
    if head_row(v, mid) <= row then
      lo = mid
    else
      hi = mid - 1
    end
  end
  local rel = row - head_row(v, lo)
  local lay = v.layout[lo]
  if rel == 0 then
    return lo, nil
  end
  for h = 1, #lay.rel do
    if rel >= lay.rel[h] and rel <= lay.ends[h] then
      return lo, h
    end
  end
  -- The blank line after a section: nothing.
  return nil
end

---The pending hunks rows l1..l2 of the view touch (a file's list line or header: all of its).
---@param v claude_context.ReviewView
---@param l1 integer
---@param l2 integer
---@return {f:claude_context.ReviewFileState, hi:integer}[]
function M.targets(v, l1, l2)
  local out, seen = {}, {}
  local function add(i, hi)
    local key = i .. ":" .. hi
    local f = v.review.files[i]
    if not seen[key] and f.hunks[hi].state == "pending" then
      seen[key] = true
      out[#out + 1] = { f = f, hi = hi }
    end
  end
  for row = l1, l2 do
    local i, hi = M.at(v, row)
    if i and hi then
      add(i, hi)
    elseif i then
      for h = 1, #v.review.files[i].hunks do
        add(i, h)
      end
    end
  end
  return out
end

---The file and line a view row stands for (a `+` line: its line in the file now; `-` or `@@`:
---the hunk's place), for comments and <CR>.
---@param v claude_context.ReviewView
---@param row integer
---@return claude_context.ReviewFileState? f, integer? lnum
function M.file_line(v, row)
  local i, hi = M.at(v, row)
  if not i then
    return nil
  end
  local f = v.review.files[i]
  if not hi or not v.marks[i] then
    local h = f.hunks[1]
    return f, h and h.cur or 1
  end
  local h = f.hunks[hi]
  local rel = row - head_row(v, i) - v.layout[i].rel[hi]
  local base = h.cur or h.b
  if h.state ~= "pending" or rel == 0 then
    return f, math.max(base, 1)
  end
  -- Rows: context above, `-` lines, `+` lines, context below (a side past MAX_SIDE lines shows
  -- MAX_SIDE of them and one "more lines" row).
  local function shown(n)
    return n > text.MAX_SIDE and text.MAX_SIDE + 1 or n
  end
  local above, nold, nnew = #(h.above or {}), shown(#h.old), shown(#h.new)
  if rel <= above then
    return f, math.max(base - above + rel - 1, 1)
  elseif rel <= above + nold then
    return f, math.max(base, 1)
  elseif rel <= above + nold + nnew then
    return f, base + rel - above - nold - 1
  end
  return f, base + h.bc + rel - above - nold - nnew - 1
end

---Moves the cursor to the next (`dir` 1) or previous (-1) pending hunk.
---@param v claude_context.ReviewView
---@param dir integer
function M.jump(v, dir)
  local row = vim.api.nvim_win_get_cursor(0)[1]
  local best
  for i = 1, v.built do
    local hr = head_row(v, i)
    for hi, rel in ipairs(v.layout[i].rel) do
      if v.review.files[i].hunks[hi].state == "pending" then
        local r = hr + rel
        if dir > 0 and r > row and (not best or r < best) then
          best = r
        elseif dir < 0 and r < row and (not best or r > best) then
          best = r
        end
      end
    end
    if dir > 0 and best and hr > best then
      break
    end
  end
  if best then
    vim.api.nvim_win_set_cursor(0, { best, 0 })
  end
end

---Opens the file of the row under the cursor at that line, in a window above the view.
---@param v claude_context.ReviewView
function M.goto_file(v)
  local row = vim.api.nvim_win_get_cursor(0)[1]
  if M.row_is_list(v, row) then
    local i = row - v.list_row
    if v.marks[i] then
      vim.api.nvim_win_set_cursor(0, { head_row(v, i), 0 })
    end
    return
  end
  local f, lnum = M.file_line(v, row)
  if not f then
    return
  end
  -- (The path is the change set's, from a worktree Claude wrote in: never opened by Neovim's
  -- `:split`, a stat then a blocking open by path; read without waiting on what it names.)
  require("claude_context.ide.files").open(f.absolute, { lnum = math.max(lnum or 1, 1), mods = "aboveleft" })
end

---Whether row `row` is a line of the file list.
function M.row_is_list(v, row)
  return row > v.list_row and row <= v.list_row + #v.review.cs.files
end

---The header of the view of change set `cs`: its summary, the keys, the files not kept, a blank line.
---@return string[]
local function view_header(cs)
  local last = cs.turns[#cs.turns]
  local keys = opts().keys
  local header = {
    cs.title or ("Claude's changes: %d turn%s, %d file%s%s"):format(
      #cs.turns,
      #cs.turns == 1 and "" or "s",
      #cs.files,
      #cs.files == 1 and "" or "s",
      last and last.prompt and last.prompt ~= "" and (' — "' .. model.shown(last.prompt) .. '"') or ""
    ),
    ("%s keep  %s reject  %s/%s file  %s/%s all  %s undo  %s/%s hunks  %s open  %s close   (:help claude-context-review)"):format(
      keys.keep,
      keys.reject,
      keys.keep_file,
      keys.reject_file,
      keys.keep_all,
      keys.reject_all,
      keys.undo,
      keys.next_hunk,
      keys.prev_hunk,
      keys.open,
      keys.close
    ),
  }
  -- Files an edit tool changed whose content before it was over the size cap: not kept.
  local not_kept = {}
  for _, t in ipairs(cs.turns) do
    for _, p in ipairs(t.not_kept or {}) do
      not_kept[#not_kept + 1] = model.shown(p)
    end
  end
  if #not_kept > 0 then
    header[#header + 1] = "Not kept (over the size cap before Claude's edit; cannot be restored): "
      .. table.concat(not_kept, ", ")
  end
  for _, note in ipairs(cs.notes or {}) do
    header[#header + 1] = note
  end
  header[#header + 1] = ""
  return header
end

---Shows the view `v` in a new tab page (claude_context.review opens it and maps its keys), `M.current`
---forgotten with its buffer.
local function show_in_tab(v)
  local buf, cs = v.buf, v.review.cs
  vim.cmd("tabnew")
  local scratch = vim.api.nvim_get_current_buf()
  vim.api.nvim_win_set_buf(0, buf)
  if scratch ~= buf and vim.api.nvim_buf_is_valid(scratch) and vim.api.nvim_buf_get_name(scratch) == "" then
    pcall(vim.api.nvim_buf_delete, scratch, { force = true })
  end
  vim.wo[0][0].foldenable = false
  vim.wo[0][0].wrap = false
  view_bufs[buf] = v.list_row + #cs.files + 1
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    once = true,
    callback = function()
      view_bufs[buf] = nil
      if M.current == v then
        M.current = nil
      end
    end,
  })
  if #cs.files > 0 then
    pcall(vim.api.nvim_win_set_cursor, 0, { v.list_row + 1, 0 })
  end
end

---Opens the view of `review` (replacing an open one). The header and file list appear at once;
---the sections are added in slices. `on_ready` runs when the whole view is built.
---@param review claude_context.Review
---@param o {on_ready?: fun(v: claude_context.ReviewView)}?
---@return claude_context.ReviewView
function M.open(review, o)
  M.close()
  local cs = review.cs
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  vim.bo[buf].buftype = "nofile"
  pcall(vim.api.nvim_buf_set_name, buf, "claude-review://" .. vim.fn.fnamemodify(cs.root, ":t"))
  local header = view_header(cs)
  local list_row = #header
  local list = {}
  for i, rf in ipairs(cs.files) do
    list[i] = list_line(nil, rf)
  end
  list[#list + 1] = ""
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.list_extend(header, list))
  vim.bo[buf].modifiable = false
  ---@type claude_context.ReviewView
  local v = {
    buf = buf,
    review = review,
    list_row = list_row,
    built = 0,
    ready = false,
    marks = {},
    layout = {},
    on_ready = o and o.on_ready,
  }
  M.current = v
  show_in_tab(v)
  vim.schedule(function()
    -- Its own slice: FileType looks for ftplugins on the whole 'runtimepath'.
    if vim.api.nvim_buf_is_valid(buf) then
      vim.bo[buf].filetype = "claude-review"
    end
    vim.schedule(function()
      build(v)
    end)
  end)
  return v
end

---Closes the view (its tab page, or the buffer when it is the last one).
function M.close()
  local v = M.current
  M.current = nil
  if not (v and vim.api.nvim_buf_is_valid(v.buf)) then
    return
  end
  for _, w in ipairs(vim.fn.win_findbuf(v.buf)) do
    if #vim.api.nvim_list_tabpages() > 1 then
      pcall(vim.api.nvim_win_close, w, true)
    end
  end
  pcall(vim.api.nvim_buf_delete, v.buf, { force = true })
end

return M
