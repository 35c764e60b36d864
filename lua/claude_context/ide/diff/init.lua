---@mod claude_context.ide.diff The diff views of openDiff
---
--- openDiff opens a view (claude_context.ide.diff.view) whose buffers are filled a slice at a
--- time (.fill), shown side by side or inline (.inline), and answered when the person decides
--- (.decide). The pacing and the focus rule are in .config.

local M = {}

local util = require("claude_context.ide.util")
local files = require("claude_context.ide.files")
local cfg = require("claude_context.ide.diff.config")
local view = require("claude_context.ide.diff.view")
local decide = require("claude_context.ide.diff.decide")
local notify = util.notify

---Open views by name (read by status(), the snapshot and the tests).
M.views = view.views
M.accept = decide.accept
M.accept_range = decide.accept_range
M.reject = decide.reject
M.focus = view.focus
M.current = view.current

---The view's record for `params` (checked), or nil after answering the error.
---@return claude_context.DiffView?
local function new_view(params, respond)
  local prep = type(params.prepared) == "table" and params.prepared or nil
  for _, k in ipairs({ "old_file_path", "new_file_path", "tab_name", not prep and "new_file_contents" or nil }) do
    if type(params[k]) ~= "string" then
      respond(nil, ("openDiff: %s must be a string"):format(k))
      return nil
    end
  end
  local old_path = util.abspath(params.old_file_path)
  local is_new, old_size
  if prep then
    is_new = prep.is_new == true
  else
    -- The old file is read into the left side: a regular file of a sane size, or nothing (a
    -- new file). A FIFO, socket or device is refused here, at once, without opening it.
    local st, why = files.regular_file(old_path)
    if why then
      respond(nil, "openDiff: " .. why)
      return nil
    end
    is_new, old_size = st == nil, st and st.size or 0
  end
  local buf = util.find_buf(old_path)
  ---@type claude_context.DiffView
  return {
    name = params.tab_name,
    old_path = old_path,
    new_path = util.abspath(params.new_file_path),
    contents = params.new_file_contents,
    prep = prep,
    is_new = is_new,
    old_size = old_size,
    dirty = buf ~= nil and vim.bo[buf].modified,
    own_buf = buf,
    respond = respond,
    tick = 0,
    eol = true,
    crlf = false,
    bytes = 0, -- (set once the sides are known)
  }
end

---Fails the view: closed, its openDiff answered with `err`.
local function fail(v, err)
  view.close(v)
  if v.respond then
    local r = v.respond
    v.respond = nil
    r(nil, "openDiff: cannot show the diff: " .. tostring(err))
  end
end

---The two sides' lines and sizes: the bridge's prepared summary, or (a direct call) the old
---file read and the proposal split here. Returns false after failing the view.
local function sides(v)
  if v.prep then
    v.eol, v.crlf, v.bytes = v.prep.new_eol, v.prep.new_crlf, v.prep.bytes
    return true
  end
  local old_text = {}
  if not v.is_new then
    local lines, err = files.read_lines(v.old_path)
    if not lines then
      fail(v, ("cannot read %s: %s"):format(v.old_path, err))
      return false
    end
    old_text = lines
  end
  v.mem_old = old_text
  v.mem_new, v.eol, v.crlf = files.split(v.contents)
  v.bytes = #v.contents + v.old_size
  return true
end

---Once the buffers are filled: the buffers' roles (filetype, syntax) in one event-loop turn, the
---tab and its windows in the next: neither holds the editor for long on a busy editor.
local function when_filled(v, berr)
  v.mem_old, v.mem_new = nil, nil
  if v.closed or v.cancelled then
    return
  end
  if berr then
    return fail(v, berr)
  end
  local function step(f, after)
    vim.schedule(function()
      if v.closed or v.cancelled then
        return
      end
      local sok, serr = pcall(f, v)
      if not sok or serr then
        return fail(v, serr)
      end
      if after then
        after()
      end
    end)
  end
  step(view.set_up_buffers, function()
    step(function()
      view.show(v, decide)
    end)
  end)
end

---Puts the view in place of an earlier one of its name and fills its buffers (from the event
---queue: a safe point to make tabs and windows, not inside the bridge's wake-up).
local function start(v)
  view.opening[v] = nil
  if v.cancelled or v.closed then
    return
  end
  local previous = view.views[v.name]
  if previous then
    decide.reject(previous)
    view.close(previous)
  end
  view.views[v.name] = v
  require("claude_context.ide.snapshot").note_diffs()
  if not sides(v) then
    return
  end
  v.large = v.bytes > cfg.options().diffmode_max_bytes
  local ok, err = pcall(require("claude_context.ide.diff.fill").build, v, function(berr)
    when_filled(v, berr)
  end)
  if not ok then
    fail(v, err)
  end
end

---openDiff: opens the view and answers when the person decides. Returns the cancel function
---(the client went away: the view closes, nothing is written).
---
---From the bridge, `params.prepared` describes a proposal prepared off the main thread (see
---crates/core/src/proposal.rs); called directly, `params.new_file_contents` holds the text.
---@param params {old_file_path: string, new_file_path: string, new_file_contents: string?, tab_name: string, prepared: claude_context.PreparedProposal?}
---@param respond fun(result: claude_context.ToolResult?, err: string?)
---@return fun()? cancel
function M.open(params, respond)
  local v = new_view(params, respond)
  if not v then
    return nil
  end
  view.opening[v] = true
  vim.schedule(function()
    start(v)
  end)
  return function()
    v.cancelled = true
    view.opening[v] = nil
    v.decision = v.decision or "cancelled"
    v.respond = nil
    vim.schedule(function()
      if not v.closed and v.tab then
        notify(("Claude stopped waiting: closed the diff %s (nothing was written)"):format(v.name))
      end
      view.close(v)
    end)
  end
end

---Closes the view called `name` (a pending one is rejected), and any orphaned tab of ours with
---that name. Returns whether anything was closed.
---@param name string
---@return boolean
function M.close_named(name)
  local closed = false
  local v = view.views[name]
  if v then
    decide.reject(v)
    view.close(v)
    closed = true
  end
  for _, tab in ipairs(vim.api.nvim_list_tabpages()) do
    if vim.t[tab].claude_context_diff == name and #vim.api.nvim_list_tabpages() > 1 then
      pcall(vim.cmd, "tabclose! " .. vim.api.nvim_tabpage_get_number(tab))
      closed = true
    end
  end
  return closed
end

---Closes every view of ours (pending ones are rejected, also those not on screen yet) and
---orphaned tabs marked as ours.
---@return integer count
function M.close_all()
  local n = 0
  for v in pairs(view.opening) do
    view.opening[v] = nil
    if not v.cancelled and v.respond then
      decide.reject(v)
      view.close(v)
      n = n + 1
    end
  end
  for _, v in ipairs(vim.tbl_values(view.views)) do
    decide.reject(v)
    view.close(v)
    n = n + 1
  end
  for _, tab in ipairs(vim.api.nvim_list_tabpages()) do
    if vim.api.nvim_tabpage_is_valid(tab) and vim.t[tab].claude_context_diff and #vim.api.nvim_list_tabpages() > 1 then
      pcall(vim.cmd, "tabclose! " .. vim.api.nvim_tabpage_get_number(tab))
      n = n + 1
    end
  end
  return n
end

return M
