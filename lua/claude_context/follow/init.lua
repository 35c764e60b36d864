---@mod claude_context.follow Follow the agent: each file a session reads or edits, at its line
---
--- `follow(true|false, {session = id})` (`:ClaudeContext follow`, a toggle): while on, each file
--- the session's tools read or edit (the hook before each tool: claude_context.follow.trail) is
--- shown at its line in one window of the plugin's own, split off once and reused — never the
--- person's current window: their window, cursor, mode and typed keys stay as they are (the
--- window is filled without being entered). A file no buffer has loaded is shown as a read-only
--- view (`claude-follow://FILE`), read without waiting on what the path names. Without a session: the current session's (the
--- current Claude terminal's), whichever that is when the call comes.
---
--- `trail(session)` (`:ClaudeContext trail`): the session's trail (file, line, tool, time) as
--- the current window's location list.

local M = {}

---@class claude_context.FollowOpts
---@field session string? Follow this session only (default: the one you work with)

local trail = require("claude_context.follow.trail")
local notify = require("claude_context.util.notify")

---Files larger than this are not loaded into the follow window (bytes).
M.MAX_BYTES = 8 * 1024 * 1024

---What is followed: nil when off, else `{ session = id? }` (nil: the current session).
---@type {session: string?}?
M.following = nil

---The follow window (made once, while following; reused).
---@type integer?
M.win = nil

---The last file shown: `{ file, line, tool, session, shown_ms }` (for the tests and benches).
M.last = nil

local ns = vim.api.nvim_create_namespace("claude_context_follow")

---Whether following is on.
---@return boolean
function M.enabled()
  return M.following ~= nil
end

local function window()
  if M.win and vim.api.nvim_win_is_valid(M.win) then
    return M.win
  end
  local scratch = vim.api.nvim_create_buf(false, true)
  vim.bo[scratch].bufhidden = "wipe"
  local width = math.max(40, math.floor(vim.o.columns * 0.4))
  -- A split of the whole editor, not entered: the person's window stays current.
  M.win = vim.api.nvim_open_win(scratch, false, { split = "right", win = -1, width = width })
  vim.wo[M.win].winfixwidth = true
  vim.wo[M.win].cursorline = true
  vim.w[M.win].claude_context_follow = true
  return M.win
end

---Views of files no buffer has loaded: { [file] = buf } (scratch buffers, wiped when following
---stops).
---@type table<string, integer>
M.views = {}

---A view of `file` (a scratch buffer `claude-follow://FILE` with its lines), read by
---claude_context.ide.files: opened without waiting and checked on the open descriptor, never
---by a check of the path and then an open (a FIFO swapped in between would hold the editor).
---nil when it is not a regular file, is too large or cannot be read.
---@param file string
---@return integer?
local function view_of(file)
  local lines = require("claude_context.ide.files").read_lines(file, M.MAX_BYTES)
  if not lines then
    return nil
  end
  local buf = M.views[file]
  if not (buf and vim.api.nvim_buf_is_valid(buf)) then
    buf = vim.api.nvim_create_buf(false, true)
    vim.bo[buf].bufhidden = "hide"
    vim.b[buf].claude_follow_file = file
    pcall(vim.api.nvim_buf_set_name, buf, "claude-follow://" .. file)
    local ft = vim.filetype.match({ filename = file, contents = lines })
    if ft then
      vim.bo[buf].filetype = ft
    end
    M.views[file] = buf
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  return buf
end

---The buffer that shows `file`: its own when a buffer has it loaded, else a view of it.
---@param file string
---@return integer?
local function buffer_of(file)
  local existing = require("claude_context.ide.util").find_buf(file)
  if existing and vim.api.nvim_buf_is_loaded(existing) then
    return existing
  end
  return view_of(file)
end

---Whether `file` lies in the session's folder `cwd` (lexically, `..` resolved): a tool call
---names any path it likes (the model can call the hook tool itself), and the follow window shows
---the session's files only, never one elsewhere on the person's disk.
---@param file string
---@param cwd string?
---@return boolean
function M.inside(file, cwd)
  if type(cwd) ~= "string" or cwd == "" or not vim.startswith(file, "/") then
    return false
  end
  local f, c = vim.fs.normalize(file), vim.fs.normalize(cwd)
  return f == c or vim.startswith(f, c == "/" and c or (c .. "/"))
end

---Shows `e.file` at `e.line` in the follow window, without entering it; a file outside the
---session's folder (`e.cwd`) is not shown.
---@param session string
---@param e claude_context.TrailEntry
function M.show(session, e)
  if not M.inside(e.file, e.cwd) then
    return
  end
  local buf = buffer_of(e.file)
  if not buf then
    return
  end
  local win = window()
  if vim.api.nvim_win_get_buf(win) ~= buf then
    vim.api.nvim_win_set_buf(win, buf)
  end
  local count = vim.api.nvim_buf_line_count(buf)
  local line = math.min(math.max(e.line or 1, 1), count)
  vim.api.nvim_win_set_cursor(win, { line, 0 })
  local height = vim.api.nvim_win_get_height(win)
  vim.api.nvim_win_call(win, function()
    vim.fn.winrestview({ topline = math.max(1, line - math.floor(height / 3)) })
  end)
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  vim.api.nvim_buf_set_extmark(buf, ns, line - 1, 0, {
    line_hl_group = "Visual",
    virt_text = { { ("  ◂ %s"):format(e.tool), "Comment" } },
    virt_text_pos = "eol",
  })
  M.last = { file = e.file, line = line, tool = e.tool, session = session, shown_ms = vim.uv.now() }
end

local function wanted(session)
  local f = M.following
  if not f then
    return false
  end
  if f.session then
    return f.session == session
  end
  local cur = trail.current()
  return cur == nil or cur.id == session
end

local function on_tool(session, e)
  if wanted(session) then
    M.show(session, e)
  end
end

---Turns following on or off (`on` nil: toggles).
---@param on boolean?
---@param opts claude_context.FollowOpts?
---@return boolean on
function M.follow(on, opts)
  if on == nil then
    on = not M.enabled()
  end
  if not on then
    M.following = nil
    trail.listeners.follow = nil
    if M.win and vim.api.nvim_win_is_valid(M.win) and #vim.api.nvim_list_wins() > 1 then
      pcall(vim.api.nvim_win_close, M.win, false)
    end
    M.win = nil
    for _, buf in pairs(M.views) do
      if vim.api.nvim_buf_is_valid(buf) then
        pcall(vim.api.nvim_buf_delete, buf, { force = true })
      end
    end
    M.views = {}
    return false
  end
  M.following = { session = opts and opts.session or nil }
  trail.listeners.follow = on_tool
  return true
end

---The trail of `session` (default: the current session) as location-list items, oldest first.
---@param session string?
---@return vim.quickfix.entry[] items, string? session
function M.items(session)
  session = session or (trail.current() or {}).id
  local items = {}
  for _, e in ipairs(session and trail.trails[session] or {}) do
    items[#items + 1] = {
      filename = e.file,
      lnum = e.line,
      col = 1,
      text = ("%s %s"):format(os.date("%H:%M:%S", e.wall), e.tool),
    }
  end
  return items, session
end

---Sets the current window's location list to `session`'s trail and opens it.
---@param session string?
---@param opts {open: boolean?}?
---@return vim.quickfix.entry[] items
function M.trail(session, opts)
  local items, id = M.items(session)
  if not id then
    notify.prefixed("no Claude session (one appears once its hooks run)")
    return items
  end
  vim.fn.setloclist(0, {}, " ", { title = ("Claude trail %s"):format(id:sub(1, 8)), items = items })
  if (opts or {}).open ~= false then
    vim.cmd("lopen")
  end
  return items
end

return M
