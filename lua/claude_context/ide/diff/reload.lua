---@mod claude_context.ide.diff.reload A file's buffer brought to what Claude Code wrote, a slice at a time
---
--- After FILE_SAVED Claude Code writes the file; an unmodified buffer of it is reloaded. Neovim's
--- own reload (`:checktime`) reads and splits the whole file in one go: for a file of 100,000
--- lines that holds the editor 50–120 ms. A big buffer is therefore reloaded here instead, from
--- the accept on (`watch`), whoever notices the write first: Neovim takes note of the file's new
--- time and size (its `FileChangedShell` answered "nothing to do": no reload of its own, no
--- warning later), the file is read off the main thread (libuv's pool), and the buffer's lines
--- are replaced a chunk per slice (`diff.config`'s pace), the buffer not modifiable and without
--- a swap file meanwhile; then it is unmodified again, as after a reload. Like Neovim's reload
--- of a file over 'undoreload' lines, it keeps no undo step. A small buffer, or one whose
--- encoding or format is not plain UTF-8 text, is left to Neovim (quick, or needed).

local M = {}

local uv = vim.uv or vim.loop
local slices = require("claude_context.ide.slices")
local cfg = require("claude_context.ide.diff.config")

---Buffers with fewer lines (and fewer bytes than `min_bytes`) are reloaded by Neovim.
M.min_lines = 20000
M.min_bytes = 1024 * 1024
---Lines deleted per piece when the file got shorter.
M.delete_lines = 1000
---Buffers being reloaded here: buf -> true, or the reload to run after (written again).
M.running = {}
---Lines split and put by the native side (`buf_put_text`) when it is there; false: in Lua.
M.native = true
---Counts, for the specs: pieces put by the native side.
M.stats = { native_pieces = 0 }
---The largest file read (the diff views' own limit).
M.max_bytes = 64 * 1024 * 1024

local function big(buf)
  local n = vim.api.nvim_buf_line_count(buf)
  return n >= M.min_lines or vim.api.nvim_buf_get_offset(buf, n) >= M.min_bytes
end

---Text this module splits as Neovim would: UTF-8 (or plain ASCII), unix or dos line endings.
local function plain(buf)
  local bo = vim.bo[buf]
  return not bo.binary
    and (bo.fileencoding == "" or bo.fileencoding == "utf-8")
    and (bo.fileformat == "unix" or bo.fileformat == "dos")
end

---Reads `path` off the main thread; `done(data)` or `done(nil)` (not a regular file, too big,
---unreadable). A FIFO put in its place is never waited on.
local function read(path, done)
  local flags = uv.constants.O_RDONLY + (uv.constants.O_NONBLOCK or 0)
  uv.fs_open(path, flags, 0, function(oerr, fd)
    if oerr or not fd then
      return vim.schedule_wrap(done)(nil)
    end
    uv.fs_fstat(fd, function(serr, st)
      if serr or not st or st.type ~= "file" or st.size > M.max_bytes then
        uv.fs_close(fd)
        return vim.schedule_wrap(done)(nil)
      end
      uv.fs_read(fd, st.size, 0, function(rerr, data)
        uv.fs_close(fd)
        vim.schedule_wrap(done)(not rerr and data or nil)
      end)
    end)
  end)
end

---The lines of `data` from byte `off` to the end of the first line past `chunk` bytes, and where
---that piece ends (without the native library: split in Lua; a CR before each LF dropped when
---`dos`).
---@return string[] lines, integer nl
local function lua_piece(data, off, chunk, dos)
  local nl = data:find("\n", math.min(#data, off + chunk), true) or #data
  local lines = vim.split(data:sub(off, nl), "\n", { plain = true })
  if data:sub(nl, nl) == "\n" then
    lines[#lines] = nil
  end
  if dos then
    for i, l in ipairs(lines) do
      if l:sub(-1) == "\r" then
        lines[i] = l:sub(1, -2)
      end
    end
  end
  return lines, nl
end

---Replaces `buf`'s lines with `data`'s, a chunk per piece; `done(ok)` at the end.
local function refill(buf, data, done)
  local dos = vim.bo[buf].fileformat == "dos"
  local modifiable, swapfile = vim.bo[buf].modifiable, vim.bo[buf].swapfile
  vim.bo[buf].modifiable = false
  vim.bo[buf].undolevels = -1
  -- No swap file meanwhile (the buffer has no unsaved change to keep): Neovim would write the
  -- blocks being replaced to it as it goes, up to 12 ms per chunk for a big file. It comes
  -- back afterwards, created at the next change as for a buffer just read.
  vim.bo[buf].swapfile = false
  local off, pos, tick = 1, 0, vim.api.nvim_buf_get_changedtick(buf)
  local rest = vim.api.nvim_buf_line_count(buf) -- old lines not replaced yet, from `pos`
  if data:sub(1, 3) == "\239\187\191" then
    off = 4
  end
  local eol = data:sub(-1) == "\n"
  local function put(s, e, lines)
    vim.bo[buf].modifiable = true
    vim.api.nvim_buf_set_lines(buf, s, e, false, lines)
    vim.bo[buf].modifiable = false
    tick = vim.api.nvim_buf_get_changedtick(buf)
  end
  local function finish(ok)
    if vim.api.nvim_buf_is_valid(buf) then
      vim.bo[buf].modifiable = modifiable
      vim.bo[buf].undolevels = -123456
      vim.bo[buf].swapfile = swapfile
      if ok then
        vim.bo[buf].endofline = eol or #data == 0
        vim.bo[buf].modified = false
      end
    end
    done(ok)
  end
  local native = M.native and require("claude_context.native").get()
  native = native and native.buf_put_text and native
  slices.sliced(cfg.slice_ms, function()
    if native and off <= #data then
      -- Split and put by the native side: no Lua string per line (their garbage made Lua's
      -- collector take up to 9 ms in one piece of a 5 MB reload).
      vim.bo[buf].modifiable = true
      local ok, next, n, take = pcall(native.buf_put_text, buf, pos, rest, data, off - 1, cfg.chunk_bytes, dos)
      vim.bo[buf].modifiable = false
      if not ok then
        finish(false)
        return false
      end
      tick = vim.api.nvim_buf_get_changedtick(buf)
      M.stats.native_pieces = M.stats.native_pieces + 1
      rest, pos, off = rest - take, pos + n, next + 1
      return true
    end
    if off <= #data then
      local lines, nl = lua_piece(data, off, cfg.chunk_bytes, dos)
      local take = math.min(#lines, rest)
      put(pos, pos + take, lines)
      rest, pos, off = rest - take, pos + #lines, nl + 1
      return true
    end
    if rest > 0 and pos > 0 then
      local n = math.min(rest, M.delete_lines)
      put(pos, pos + n, {})
      rest = rest - n
      return true
    end
    if rest > 0 then
      put(0, -1, {}) -- an empty file: the buffer's one empty line
      rest = 0
    end
    finish(true)
    return false
  end, function()
    if vim.api.nvim_buf_is_valid(buf) and vim.api.nvim_buf_get_changedtick(buf) == tick then
      return true
    end
    -- Changed meanwhile by someone else (not by typing: it is not modifiable): read whole.
    finish(false)
    return false
  end)
end

---Reloads `buf` from `path` in slices (Neovim has noted the file's new time). `done(how)`, when
---given, gets "slices", "neovim" (the refill was interrupted: read whole by Neovim) or "kept"
---(the buffer was modified meanwhile: left as it is).
---@param buf integer
---@param path string
---@param done fun(how: string)?
local function sliced(buf, path, done)
  done = done or function() end
  if M.running[buf] then
    -- Written again while a reload runs: once more after it.
    M.running[buf] = function()
      sliced(buf, path, done)
    end
    return
  end
  M.running[buf] = true
  local finished = done
  done = function(how)
    local again = M.running[buf]
    M.running[buf] = nil
    if type(again) == "function" then
      return again()
    end
    finished(how)
  end
  read(path, function(data)
    if not data or not vim.api.nvim_buf_is_valid(buf) or vim.bo[buf].modified then
      return done("kept")
    end
    refill(buf, data, function(ok)
      if not ok and vim.api.nvim_buf_is_valid(buf) and not vim.bo[buf].modified then
        pcall(vim.api.nvim_buf_call, buf, function()
          vim.cmd("silent! edit!")
        end)
      end
      done(ok and "slices" or "neovim")
    end)
  end)
end

---Whether `buf` is reloaded here (big, plain text) rather than by Neovim.
function M.sliced(buf)
  return vim.api.nvim_buf_is_valid(buf) and big(buf) and plain(buf)
end

---From now until `stop()`: whoever notices that Claude Code wrote the file (the watch after
---FILE_SAVED, the terminal's `:checktime`, focus), `buf` is reloaded in slices, never by Neovim
---in one go ('autoread' off for the buffer meanwhile, its `FileChangedShell` answered here).
---@param buf integer
---@param path string
---@return fun() stop
function M.watch(buf, path)
  local id
  local function stop()
    if id then
      pcall(vim.api.nvim_del_autocmd, id)
      id = nil
      if vim.api.nvim_buf_is_valid(buf) then
        vim.api.nvim_buf_call(buf, function()
          vim.cmd("setlocal autoread<")
        end)
      end
    end
  end
  id = vim.api.nvim_create_autocmd("FileChangedShell", {
    buffer = buf,
    callback = function()
      -- Neovim has noted the file's time; the buffer may not be changed here: just after.
      -- Anything but a plain change of an unmodified buffer: Neovim asks, as without us.
      if vim.v.fcs_reason ~= "changed" or vim.bo[buf].modified then
        vim.v.fcs_choice = "ask"
        return
      end
      vim.v.fcs_choice = ""
      do
        vim.schedule(function()
          if vim.api.nvim_buf_is_valid(buf) and not vim.bo[buf].modified then
            sliced(buf, path)
          end
        end)
      end
    end,
    desc = "claude-context: the file Claude Code writes is reloaded in slices",
  })
  vim.api.nvim_buf_call(buf, function()
    vim.cmd("setlocal noautoread")
  end)
  return stop
end

return M
