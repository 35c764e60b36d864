---@mod claude_context.ide.util What the IDE tools share: paths, file buffers, the active editor,
--- selections in the protocol's shape.

local M = {}

---A position of the IDE protocol (0-based line, UTF-16 character).
---@class claude_context.Position
---@field line integer
---@field character integer

---A range of the IDE protocol.
---@class claude_context.Range
---@field start claude_context.Position
---@field end claude_context.Position
---@field isEmpty boolean

---A region's text and range.
---@class claude_context.Region
---@field text string
---@field selection claude_context.Range

---A selection as the IDE protocol sends it (`getCurrentSelection`, `selection_changed`).
---@class claude_context.Selection: claude_context.Region
---@field success boolean
---@field filePath string
---@field fileUrl string

local uv = vim.uv or vim.loop

---An absolute, normalised path: `~` expanded, relative paths against Neovim's cwd, `file://`
---URIs decoded. Environment variables and wildcards are NOT expanded (paths come from a client).
---@param p string
---@return string
function M.abspath(p)
  if p:match("^file://") then
    p = vim.uri_to_fname(p)
  end
  if p == "~" or p:sub(1, 2) == "~/" then
    p = (vim.env.HOME or "") .. p:sub(2)
  end
  if p:sub(1, 1) ~= "/" and not p:match("^%a:[/\\]") then
    p = vim.fn.getcwd() .. "/" .. p
  end
  return vim.fs.normalize(p, { expand_env = false })
end

---Does `buf` hold a file (not a terminal, help, scratch or plugin buffer)?
---@param buf integer
---@return boolean
function M.is_file_buf(buf)
  if not vim.api.nvim_buf_is_valid(buf) or vim.bo[buf].buftype ~= "" then
    return false
  end
  local name = vim.api.nvim_buf_get_name(buf)
  return name ~= "" and not name:match("^%a[%w+.-]*://")
end

---The buffer holding `path`, if any (listed or not): by name, else the same file reached by
---another path (symlinks). Cheap with thousands of buffers: when Neovim knows no buffer of that
---name or of that file (|bufexists()|: its own loop, comparing names and the device and inode
---each buffer's file had when it was opened), nothing is asked of each buffer from Lua; else
---names are compared first, and only buffers whose file name (last component) matches are
---resolved (one |uv.fs_realpath()| each, never one per buffer).
---@param path string absolute
---@return integer?
function M.find_buf(path)
  if vim.fn.bufexists(path) == 0 then
    return nil
  end
  local bufs = vim.api.nvim_list_bufs()
  for _, b in ipairs(bufs) do
    if vim.api.nvim_buf_get_name(b) == path and M.is_file_buf(b) then
      return b
    end
  end
  local real = uv.fs_realpath(path)
  if not real then
    return nil
  end
  -- "/" .. the file name, compared at the end of each buffer name (a pattern anchored at the
  -- end would be tried from every position of every name).
  local tail1, tail2 = "/" .. vim.fs.basename(path), "/" .. vim.fs.basename(real)
  for _, b in ipairs(bufs) do
    local name = vim.api.nvim_buf_get_name(b)
    if
      (name:sub(-#tail1) == tail1 or name:sub(-#tail2) == tail2)
      and M.is_file_buf(b)
      and uv.fs_realpath(name) == real
    then
      return b
    end
  end
  return nil
end

---The buffer for a `file://` URI or a path. Claude Code sends `file://` + the path as is (not
---percent-encoded), other clients may encode: both are tried.
---@param uri string
---@return integer? buf, string path
function M.buf_for_uri(uri)
  local candidates = {}
  if uri:match("^file://") then
    table.insert(candidates, M.abspath((uri:gsub("^file://", ""))))
    local ok, decoded = pcall(vim.uri_to_fname, uri)
    if ok then
      table.insert(candidates, M.abspath(decoded))
    end
  else
    table.insert(candidates, M.abspath(uri))
  end
  for _, p in ipairs(candidates) do
    local b = M.find_buf(p)
    if b then
      return b, p
    end
  end
  return nil, candidates[#candidates]
end

---A `file://` URI, percent-encoded.
---@param path string
---@return string
function M.uri(path)
  return vim.uri_from_fname(path)
end

---The filetype of a buffer as a language id (`plaintext` when none).
---@param buf integer
---@return string
function M.language_id(buf)
  local ft = vim.bo[buf].filetype
  return ft ~= "" and ft or "plaintext"
end

---A byte column (0-based) as a UTF-16 character index on `line`.
---@param line string
---@param col integer
---@return integer
function M.u16(line, col)
  if col <= 0 then
    return 0
  end
  col = math.min(col, #line)
  -- ASCII (most lines): bytes are UTF-16 code units, no conversion.
  if not line:find("[\128-\255]") then
    return col
  end
  return vim.str_utfindex(line, "utf-16", col, false)
end

--- The active editor: the current window if it shows a file, else the file window used last
--- (the person may be typing in Claude's terminal), else any window showing a file.

local last_file_win

---Remembers the current window when it shows a file (called on WinEnter/BufEnter).
function M.note_window()
  local w = vim.api.nvim_get_current_win()
  if M.is_file_buf(vim.api.nvim_win_get_buf(w)) and vim.api.nvim_win_get_config(w).relative == "" then
    last_file_win = w
  end
end

---@return integer? win
function M.active_editor_win()
  local cur = vim.api.nvim_get_current_win()
  if M.is_file_buf(vim.api.nvim_win_get_buf(cur)) then
    return cur
  end
  if
    last_file_win
    and vim.api.nvim_win_is_valid(last_file_win)
    and M.is_file_buf(vim.api.nvim_win_get_buf(last_file_win))
  then
    return last_file_win
  end
  local tab = vim.api.nvim_get_current_tabpage()
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
    if M.is_file_buf(vim.api.nvim_win_get_buf(w)) and vim.api.nvim_win_get_config(w).relative == "" then
      return w
    end
  end
  return nil
end

---A window to show a file in: the active editor window, else a new split beside whatever is
---current (never a terminal, a sidebar or a floating window).
---@return integer win
function M.editor_win_for_open()
  local w = M.active_editor_win()
  if w then
    return w
  end
  local cur = vim.api.nvim_get_current_win()
  local buf = vim.api.nvim_win_get_buf(cur)
  local empty = vim.api.nvim_buf_get_name(buf) == ""
    and vim.bo[buf].buftype == ""
    and not vim.bo[buf].modified
    and vim.api.nvim_buf_line_count(buf) <= 1
  if empty and vim.api.nvim_win_get_config(cur).relative == "" then
    return cur
  end
  vim.cmd("aboveleft vsplit")
  return vim.api.nvim_get_current_win()
end

---@param buf integer
---@param l integer 0-based
---@return string
local function line_of(buf, l)
  return vim.api.nvim_buf_get_lines(buf, l, l + 1, false)[1] or ""
end

---The protocol's selection for a region of `buf`: `pos1`/`pos2` as `getpos()` returns them,
---`mode` one of `v`, `V`, CTRL-V. Nil when the region is empty or invalid.
---@param buf integer
---@param pos1 integer[]
---@param pos2 integer[]
---@param mode string
---@return claude_context.Region?
function M.region(buf, pos1, pos2, mode)
  if mode == "V" and pos1[2] > 0 and pos2[2] > 0 then
    -- Whole lines: read them directly (getregion/getregionpos take seconds on a 200,000-line
    -- `ggVG`); only the last line's length is converted to UTF-16.
    local s, e = math.min(pos1[2], pos2[2]), math.max(pos1[2], pos2[2])
    local lines = vim.api.nvim_buf_get_lines(buf, s - 1, e, false)
    if #lines == 0 then
      return nil
    end
    local last = lines[#lines]
    return {
      text = table.concat(lines, "\n"),
      selection = {
        start = { line = s - 1, character = 0 },
        ["end"] = { line = s - 1 + #lines - 1, character = last:find("[\128-\255]") and M.u16(last, #last) or #last },
        isEmpty = false,
      },
    }
  end
  local ok, regs = pcall(vim.fn.getregionpos, pos1, pos2, { type = mode, eol = true })
  if not ok or type(regs) ~= "table" or #regs == 0 then
    return nil
  end
  local ok2, lines = pcall(vim.fn.getregion, pos1, pos2, { type = mode })
  if not ok2 then
    return nil
  end
  local s, e = regs[1][1], regs[#regs][2]
  local sl, el = s[2] - 1, e[2] - 1
  local sline, eline = line_of(buf, sl), line_of(buf, el)
  -- getregionpos: start is the first byte (1-based), end the last byte (inclusive, 1-based,
  -- #line + 1 when the newline is included). As 0-based exclusive: the same number, clamped.
  local start = { line = sl, character = M.u16(sline, s[3] - 1) }
  local finish = { line = el, character = M.u16(eline, e[3]) }
  return {
    text = table.concat(lines, "\n"),
    selection = { start = start, ["end"] = finish, isEmpty = false },
  }
end

---The cursor of `win` as an empty selection.
---@param win integer
---@return claude_context.Region
function M.cursor(win)
  local buf = vim.api.nvim_win_get_buf(win)
  local pos = vim.api.nvim_win_get_cursor(win)
  local l = pos[1] - 1
  local p = { line = l, character = M.u16(line_of(buf, l), pos[2]) }
  return { text = "", selection = { start = p, ["end"] = vim.deepcopy(p), isEmpty = true } }
end

local VISUAL = { v = true, V = true, ["\22"] = true }

---The current selection of `win`: the visual selection when `win` is the current window in
---Visual mode, else the cursor. Returns the protocol's
---`{success, text, filePath, fileUrl, selection}`.
---@param win integer
---@return claude_context.Selection
function M.selection_of(win)
  local buf = vim.api.nvim_win_get_buf(win)
  local path = vim.api.nvim_buf_get_name(buf)
  local r
  local mode = vim.api.nvim_get_mode().mode:sub(1, 1)
  if win == vim.api.nvim_get_current_win() and VISUAL[mode] then
    r = M.region(buf, vim.fn.getpos("v"), vim.fn.getpos("."), mode)
  end
  r = r or M.cursor(win)
  return {
    success = true,
    text = r.text,
    filePath = path,
    fileUrl = M.uri(path),
    selection = r.selection,
  }
end

---The last Visual selection of `buf` (marks `'<`, `'>`), or nil.
---@param win integer
---@return claude_context.Selection?
function M.last_visual(win)
  local buf = vim.api.nvim_win_get_buf(win)
  return vim.api.nvim_win_call(win, function()
    local mode = vim.fn.visualmode()
    local a, b = vim.fn.getpos("'<"), vim.fn.getpos("'>")
    if mode == "" or a[2] == 0 or b[2] == 0 then
      return nil
    end
    local r = M.region(buf, a, b, mode)
    if not r then
      return nil
    end
    local path = vim.api.nvim_buf_get_name(buf)
    return { success = true, text = r.text, filePath = path, fileUrl = M.uri(path), selection = r.selection }
  end)
end

---A one-line message, prefixed "claude-context: " once (messages from the loader already
---carry the prefix).
M.notify = require("claude_context.util.notify").prefixed

---A size for people: "512 B", "4.0 KiB", "5.2 MiB".
---@param n integer
---@return string
function M.human_bytes(n)
  if n < 1024 then
    return ("%d B"):format(n)
  elseif n < 1048576 then
    return ("%.1f KiB"):format(n / 1024)
  end
  return ("%.1f MiB"):format(n / 1048576)
end

return M
