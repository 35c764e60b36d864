---@mod claude_context.transcript.jump Opening the file a transcript's tool call names
---
--- `<CR>` / `gf` on a tool call's line: the file opens in the current window at the line. The
--- path comes from what the model called a tool with, so it is never opened by Neovim's own
--- `:edit` (a stat, then a blocking open by path: a FIFO swapped in between would hold the
--- editor until a writer comes). A buffer that has the file loaded is shown as it is; otherwise
--- the file is read through claude_context.ide.files (claude_context.util.small_file: a
--- non-blocking open, judged on the open descriptor, capped) and the buffer named after it is
--- loaded with those lines by a buffer-local `BufReadCmd` in place of Neovim's read, then its
--- `BufReadPost` autocommands run (filetype detection, the person's set-up) as after a read. A
--- FIFO, device or directory, or a file over the cap, is refused with a message; nothing waits.

local M = {}

local notify = require("claude_context.util.notify")

---The largest file a jump opens (bytes).
M.MAX_BYTES = 64 * 1024 * 1024

---Puts `lines` into `buf` as the text read from its file: not undoable, not modified, with the
---file's line endings.
---@param buf integer
---@param lines string[]
---@param eol boolean
---@param crlf boolean?
local function fill(buf, lines, eol, crlf)
  local bo = vim.bo[buf]
  local undolevels = bo.undolevels
  bo.undolevels = -1
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  bo.undolevels = undolevels
  bo.fileformat = crlf and "dos" or "unix"
  bo.endofline = eol
  bo.modified = false
end

---Loads `path` into a buffer of its name without Neovim opening the path; returns the buffer, or
---nil and why not.
---@param path string
---@return integer? buf, string? err
local function load(path)
  local lines, eol, crlf = require("claude_context.ide.files").read_lines(path, M.MAX_BYTES)
  if not lines then
    return nil, tostring(eol)
  end
  local buf = vim.fn.bufadd(path)
  if vim.api.nvim_buf_is_loaded(buf) then
    return buf
  end
  vim.bo[buf].buflisted = true
  local id = vim.api.nvim_create_autocmd("BufReadCmd", {
    buffer = buf,
    once = true,
    callback = function()
      fill(buf, lines, eol == true, crlf)
    end,
  })
  local ok, err = pcall(vim.fn.bufload, buf)
  -- (Gone once it ran; a load that failed before it leaves none behind.)
  pcall(vim.api.nvim_del_autocmd, id)
  if not ok then
    return nil, tostring(err)
  end
  pcall(vim.api.nvim_exec_autocmds, "BufReadPost", { buffer = buf })
  return buf
end

---Opens `path` in the current window at line `lnum`: its buffer when one has it loaded, else the
---file read without waiting on what the path names. Returns whether it opened.
---@param path string
---@param lnum integer?
---@return boolean
function M.open(path, lnum)
  local buf = require("claude_context.ide.util").find_buf(path)
  local err
  if not (buf and vim.api.nvim_buf_is_loaded(buf)) then
    buf, err = load(path)
  end
  if not buf then
    notify.prefixed(
      ("cannot open %s: %s"):format(vim.fn.strtrans(path), vim.fn.strtrans(err or "")),
      vim.log.levels.WARN
    )
    return false
  end
  -- (`:buffer`, as `:edit` would: the transcript's place goes in the jump list.)
  vim.cmd("buffer " .. buf)
  if lnum then
    pcall(vim.api.nvim_win_set_cursor, 0, { math.min(math.max(lnum, 1), vim.api.nvim_buf_line_count(buf)), 0 })
  end
  return true
end

return M
