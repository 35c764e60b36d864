---@mod claude_context.ide.files Files on disk for the IDE tools: which may be opened, and their lines
---
--- Only regular files: a FIFO, socket or device opened by Neovim blocks its main loop (a FIFO
--- until a writer comes) or never ends (/dev/zero); a huge sparse file would be read into memory
--- whole. The IDE handlers check with a stat, which does not open the file, first.

local M = {}

local notify = require("claude_context.util.notify")

local uv = vim.uv or vim.loop

---The largest file the IDE handlers open or read (`openFile`, the old file of `openDiff`): 64 MiB.
M.MAX_FILE_BYTES = 64 * 1024 * 1024

local KINDS = {
  fifo = "a FIFO (named pipe)",
  socket = "a socket",
  char = "a character device",
  block = "a block device",
  directory = "a directory",
}

---Why `st` (an fs_stat result of `path`) may not be opened, or nil when it may: it must be a
---regular file of at most `max` bytes.
---@param path string
---@param st {type: string, size: integer}
---@param max integer
---@return string?
local function refusal(path, st, max)
  if st.type ~= "file" then
    return ("%s is %s, not a regular file: refused"):format(path, KINDS[st.type] or st.type)
  end
  if st.size > max then
    return ("%s is %d bytes, more than the %d bytes (%d MiB) the editor opens for Claude: refused"):format(
      path,
      st.size,
      max,
      math.floor(max / 1048576)
    )
  end
  return nil
end

---Checks, without opening it (a stat: symlinks are followed, nothing blocks), that `path` is a
---regular file of at most `max` bytes (default `MAX_FILE_BYTES`).
---Returns the stat when it is; `nil, nil` when nothing is there; `nil, why` when refused.
---@param path string absolute
---@param max integer?
---@return {type: string, size: integer}? st, string? err the fs_stat result
function M.regular_file(path, max)
  local st, err, code = uv.fs_stat(path)
  if not st then
    if code == "ENOENT" or code == "ENOTDIR" then
      return nil, nil
    end
    return nil, ("cannot stat %s: %s"):format(path, tostring(err))
  end
  local why = refusal(path, st, max or M.MAX_FILE_BYTES)
  if why then
    return nil, why
  end
  return st, nil
end

---Lines of a file on disk, with how it ended: `lines, eol, crlf` (nil, err when unreadable, not a
---regular file, or larger than `max` bytes, default `MAX_FILE_BYTES`), read by
---claude_context.util.small_file: opened non-blocking and checked on the open descriptor, so a file
---swapped for a FIFO after a check cannot block.
---@param path string
---@param max integer?
---@return string[]? lines, boolean|string eol_or_err, boolean? crlf
function M.read_lines(path, max)
  max = max or M.MAX_FILE_BYTES
  local data, err, judged = require("claude_context.util.small_file").read(path, max)
  if not data then
    -- (Refused by what it is or its size: said as the IDE handlers say it.)
    return nil, judged and refusal(path, judged, max) or err
  end
  return M.split(data)
end

---Splits text into buffer lines: `lines, eol, crlf` (eol: the text ended with a newline; crlf:
---every line ended with CR LF, which is stripped).
---@param text string
---@return string[] lines, boolean eol, boolean crlf
function M.split(text)
  local lines = vim.split(text, "\n", { plain = true })
  local eol = false
  if #lines > 1 and lines[#lines] == "" then
    table.remove(lines)
    eol = true
  end
  -- CR LF files: every line that has an ending ends with CR (the last line of a file without a
  -- final newline keeps whatever it has).
  local n = eol and #lines or #lines - 1
  local crlf = n > 0
  for i = 1, n do
    if lines[i]:sub(-1) ~= "\r" then
      crlf = false
      break
    end
  end
  if crlf then
    for i = 1, n do
      lines[i] = lines[i]:sub(1, -2)
    end
  end
  return lines, eol, crlf
end

---Whether `err` (from `read_lines`) says nothing is at the path.
---@param err string?
---@return boolean
local function is_missing(err)
  return type(err) == "string" and (err:match("^ENOENT") or err:match("^ENOTDIR")) ~= nil
end

---The loaded, listed buffer of `path`: the buffer that has it loaded (`opts.buf`, else the one
---named `path`), or one Neovim loads once `read_lines` read a regular file there (at most
---`opts.max` bytes, judged on the descriptor). Returns nil, why not and whether nothing is at
---the path.
---@param path string absolute
---@param opts {buf?: integer, max?: integer}?
---@return integer? buf, string? err, boolean? missing
function M.load_buffer(path, opts)
  opts = opts or {}
  local buf = opts.buf
  if not (buf and vim.api.nvim_buf_is_loaded(buf)) then
    -- What the path names now, by a stat (which opens nothing: a FIFO's writer is not woken);
    -- what is read is judged again on the open descriptor, whatever was swapped in meanwhile.
    local st, why = M.regular_file(path, opts.max)
    if not st then
      return nil, why or ("%s: no such file or directory"):format(path), why == nil
    end
    local lines, err = M.read_lines(path, opts.max)
    if not lines then
      -- (No buffer is made for what was refused.)
      return nil, tostring(err), is_missing(err --[[@as string]])
    end
    -- A regular file, judged on its descriptor: Neovim's own read loads the buffer now (it
    -- records the file's time, so `:checktime` and 'autoread' reload it and a write over a
    -- newer file warns; it reads the undo file, sets 'readonly', runs BufRead in the buffer).
    -- A filler by BufReadCmd would leave none of that (a buffer never reloaded, Claude's later
    -- edit overwritten by the next :w). What is left: a FIFO swapped in between this read and
    -- Neovim's open, microseconds apart.
    buf = buf or vim.fn.bufadd(path)
    if not vim.api.nvim_buf_is_loaded(buf) then
      local ok, err = pcall(vim.fn.bufload, buf)
      if not ok then
        return nil, tostring(err)
      end
    end
  end
  vim.bo[buf].buflisted = true
  return buf
end

---Opens `path` in the current window (with `opts.mods`, `:tab`, `:vertical`, `:aboveleft`…, in
---a new one they describe) at line `opts.lnum`: the buffer that has it loaded, else the file
---loaded by `load_buffer`. A file that cannot be opened (a FIFO, a device, a directory, over
---`opts.max` bytes, missing) is said in a message. Returns whether it opened.
---@param path string absolute
---@param opts {lnum?: integer, mods?: string, max?: integer}?
---@return boolean
function M.open(path, opts)
  opts = opts or {}
  local buf = require("claude_context.ide.util").find_buf(path)
  local err
  buf, err = M.load_buffer(path, { buf = buf, max = opts.max })
  if not buf then
    notify.prefixed(
      ("cannot open %s: %s"):format(vim.fn.strtrans(path), vim.fn.strtrans(err or "")),
      vim.log.levels.WARN
    )
    return false
  end
  -- (`:buffer`, as `:edit` would: the place left goes in the jump list.)
  local mods = opts.mods or ""
  vim.cmd((mods ~= "" and (mods .. " sbuffer ") or "buffer ") .. buf)
  if opts.lnum then
    local lnum = math.min(math.max(opts.lnum, 1), vim.api.nvim_buf_line_count(buf))
    pcall(vim.api.nvim_win_set_cursor, 0, { lnum, 0 })
  end
  return true
end

---Joins buffer lines back into text (the inverse of `split`).
---@param lines string[]
---@param eol boolean
---@param crlf boolean
---@return string
function M.join(lines, eol, crlf)
  local nl = crlf and "\r\n" or "\n"
  local text = table.concat(lines, nl)
  if eol then
    text = text .. nl
  end
  return text
end

return M
