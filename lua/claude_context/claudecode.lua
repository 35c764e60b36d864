---@mod claude_context.claudecode claudecode.nvim's commands and events, as this plugin's actions
---
--- With `claudecode.commands = true`, `apply()` (run when setup() has taken effect) defines
--- :ClaudeCode, :ClaudeCodeSend, … with claudecode.nvim's arguments, ranges and bangs, each
--- running the equivalent action here, and fires its `User ClaudeCodeDiffOpened`,
--- `ClaudeCodeDiffClosed` and `ClaudeCodeSendComplete` beside this plugin's own events. Turned off, they are removed.
--- `claudecode.focus_after_send` moves the cursor to Claude's terminal after a send. Once a
--- session, it also warns when another bridge serves the project (claude_context.bridges).

local M = {}

local notify = require("claude_context.util.notify")

local function terminal()
  return require("claude_context.terminal")
end

local function sessions()
  return require("claude_context.terminal.sessions")
end

local or_error = notify.check

---Runs the :ClaudeContext subcommand `name` with the user command's opts.
local function sub(name)
  return function(o)
    require("claude_context").activate()
    require("claude_context.commands").subcommands[name].run(o, o.fargs or {})
  end
end

---Whether Visual mode is on (a `<cmd>` mapping keeps it); then its lines, and Visual mode ended.
---@return integer? line1, integer? line2
local function leave_visual()
  local mode = vim.fn.mode()
  if mode ~= "v" and mode ~= "V" and mode ~= "\22" then
    return nil
  end
  local a, b = vim.fn.line("v"), vim.fn.line(".")
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<Esc>", true, false, true), "nx", false)
  return math.min(a, b), math.max(a, b)
end

---The user command's opts with the range of a Visual selection still on, if any.
local function with_visual(o)
  local l1, l2 = leave_visual()
  if l1 then
    return vim.tbl_extend("force", o, { range = 2, line1 = l1, line2 = l2 })
  end
  return o
end

---:ClaudeCodeSend: the range (or the Visual selection) of the file; in a file explorer its
---node(s); without either, the last Visual selection of the buffer, else the whole file.
local function send(o)
  o = with_visual(o)
  local ide = require("claude_context.ide.commands")
  if require("claude_context.explorers").of(vim.api.nvim_get_current_buf()) then
    return ide.add_from_explorer(o)
  end
  if (o.range or 0) == 0 then
    local l1, l2 = vim.fn.line("'<"), vim.fn.line("'>")
    if l1 > 0 and l2 >= l1 then
      o = vim.tbl_extend("force", o, { range = 2, line1 = l1, line2 = l2 })
    end
  end
  ide.send(o)
end

---:ClaudeCodeTreeAdd: the explorer's node under the cursor, or the Visual selection's.
local function tree_add(o)
  if not require("claude_context.explorers").of(vim.api.nvim_get_current_buf()) then
    leave_visual()
    return notify.error("ClaudeCodeTreeAdd: the current buffer is not a file explorer")
  end
  require("claude_context.ide.commands").add_from_explorer(with_visual(o))
end

---:ClaudeCodeFocus [args]: the cursor to Claude (hidden when there); started with the arguments
---when none runs.
local function focus(o)
  leave_visual()
  if #o.fargs > 0 and not sessions().job_running() then
    return or_error(terminal().show(o.fargs))
  end
  or_error(terminal().focus())
end

---:ClaudeCodeSendText[!] {text}: typed into Claude's prompt and submitted (with ! only typed).
local function send_text(o)
  local ok, err = require("claude_context.terminal.input").send_text(o.args, not o.bang)
  if not ok then
    notify.error("ClaudeCodeSendText: " .. tostring(err))
  end
end

---:ClaudeCodeCloseAllDiffs: closes the diffs waiting for a decision (rejected).
local function close_all_diffs()
  local n = require("claude_context.ide.diff").close_all()
  if n > 0 then
    notify(("closed %d pending Claude diff(s)"):format(n))
  else
    notify("no pending Claude diffs to close", vim.log.levels.WARN)
  end
end

---:ClaudeCodeSelectModel [args]: a model of `claudecode.models`, then Claude's terminal
---(re)started with `--model <value>` and the arguments.
---@param o claude_context.CommandOpts
function M.select_model(o)
  local models = require("claude_context.config").options.claudecode.models
  vim.ui.select(models, {
    prompt = "Claude model",
    kind = "claude_context.model",
    format_item = function(m)
      return m.name
    end,
  }, function(choice)
    if not choice then
      return
    end
    local args = choice.value ~= "default" and { "--model", choice.value } or {}
    vim.list_extend(args, o.fargs or {})
    if sessions().job_running() then
      terminal().close()
    end
    or_error(terminal().show(args))
  end)
end

---claudecode.nvim's commands: name, attributes (theirs: nargs, range, bang, complete), action.
---@type {[1]:string, [2]:vim.api.keyset.user_command, [3]:fun(o:claude_context.CommandOpts)}[]
M.COMMANDS = {
  {
    "ClaudeCode",
    { nargs = "*", desc = "Toggle Claude's terminal ([args] for a new claude)" },
    function(o)
      leave_visual()
      or_error(terminal().toggle(o.fargs))
    end,
  },
  { "ClaudeCodeFocus", { nargs = "*", desc = "The cursor into Claude's terminal; hide it when there" }, focus },
  {
    "ClaudeCodeOpen",
    { nargs = "*", desc = "Open Claude's terminal ([args] for a new claude)" },
    function(o)
      or_error(terminal().show(o.fargs))
    end,
  },
  {
    "ClaudeCodeClose",
    { desc = "End Claude's terminal" },
    function()
      terminal().close()
    end,
  },
  {
    "ClaudeCodeSendText",
    { nargs = "+", bang = true, desc = "Type {text} into Claude's prompt and submit it (! only types it)" },
    send_text,
  },
  {
    "ClaudeCodeSend",
    { range = true, desc = "@-mention the range or Visual selection (in an explorer: its files)" },
    send,
  },
  {
    "ClaudeCodeAdd",
    { nargs = "+", complete = "file", desc = "@-mention {path} [start-line] [end-line]" },
    sub("add"),
  },
  { "ClaudeCodeTreeAdd", { desc = "@-mention the file explorer's file(s) under the cursor or selection" }, tree_add },
  { "ClaudeCodeDiffAccept", { desc = "Accept Claude's diff" }, sub("accept") },
  { "ClaudeCodeDiffDeny", { desc = "Reject Claude's diff" }, sub("reject") },
  { "ClaudeCodeCloseAllDiffs", { desc = "Close (reject) the diffs waiting for a decision" }, close_all_diffs },
  { "ClaudeCodeSelectModel", { nargs = "*", desc = "Pick a model and (re)start Claude with it" }, M.select_model },
  { "ClaudeCodeStatus", { desc = "The bridge's port, lock file and clients" }, sub("status") },
  { "ClaudeCodeStart", { desc = "Start the bridge" }, sub("start") },
  { "ClaudeCodeStop", { desc = "Stop the bridge" }, sub("stop") },
}

---The commands this module defined (removed when the option goes off).
local defined = {}

local function define_commands()
  for _, c in ipairs(M.COMMANDS) do
    local attrs = vim.tbl_extend("force", c[2], { desc = "claude-context: " .. c[2].desc })
    local fn = c[3]
    vim.api.nvim_create_user_command(c[1], function(o)
      require("claude_context").activate()
      fn(o)
    end, attrs)
    defined[c[1]] = true
  end
end

local function remove_commands()
  for name in pairs(defined) do
    pcall(vim.api.nvim_del_user_command, name)
  end
  defined = {}
end

---Fires claudecode.nvim's User event `name`.
local function fire(name, data)
  pcall(vim.api.nvim_exec_autocmds, "User", { pattern = name, modeline = false, data = data })
end

---ClaudeContextDiffOpened's data as claudecode.nvim's ClaudeCodeDiffOpened gives it.
---@param d {name: string, file: string, tab: integer?} ClaudeContextDiffOpened's data
---@return table<string, any> data claudecode.nvim's fields (tab_name, file_path, …)
function M.opened_data(d)
  local v = require("claude_context.ide.diff.view").views[d.name] or {}
  local own_tab = not v.in_place and d.tab and vim.api.nvim_tabpage_is_valid(d.tab)
  return {
    tab_name = d.name,
    file_path = d.file,
    new_file_path = v.new_path,
    is_new_file = v.is_new == true,
    diff_window = v.prop_win,
    target_window = v.orig_win,
    terminal_window = package.loaded["claude_context.terminal.sessions"] and sessions().windows()[1] or nil,
    tab_number = own_tab and vim.api.nvim_tabpage_get_number(d.tab) or nil,
  }
end

---ClaudeContextSendComplete's data (a mention) as claudecode.nvim's ClaudeCodeSendComplete gives
---it: 0-based lines, nil for a whole file.
---@param d claude_context.SendComplete
---@return {file_path: string?, start_line: integer?, end_line: integer?}
function M.sent_data(d)
  return {
    file_path = d.path,
    start_line = d.line1 and d.line1 - 1 or nil,
    end_line = (d.line2 or d.line1) and (d.line2 or d.line1) - 1 or nil,
    context = "ClaudeContextSendComplete",
  }
end

local REASONS = { accepted = "diff accepted", rejected = "diff rejected", cancelled = "diff cancelled" }

---The diff events, and the focus after a send.
---@param cfg claude_context.ClaudecodeConfig
local function install_autocmds(cfg)
  local group = vim.api.nvim_create_augroup("ClaudeContextClaudeCode", { clear = true })
  -- This plugin's event, and what to do with its data (a mention only for a send).
  local on = {}
  if cfg.commands then
    on[#on + 1] = {
      "ClaudeContextDiffOpened",
      function(d)
        fire("ClaudeCodeDiffOpened", M.opened_data(d))
      end,
    }
    on[#on + 1] = {
      "ClaudeContextDiffClosed",
      function(d)
        fire(
          "ClaudeCodeDiffClosed",
          { tab_name = d.name, file_path = d.file, reason = REASONS[d.decision] or "diff closed" }
        )
      end,
    }
    on[#on + 1] = {
      "ClaudeContextSendComplete",
      function(d)
        fire("ClaudeCodeSendComplete", M.sent_data(d))
      end,
      mention = true,
    }
  end
  if cfg.focus_after_send then
    on[#on + 1] = {
      "ClaudeContextSendComplete",
      function()
        vim.schedule(M.focus_terminal)
      end,
      mention = true,
    }
  end
  for _, e in ipairs(on) do
    vim.api.nvim_create_autocmd("User", {
      group = group,
      pattern = e[1],
      callback = function(ev)
        local d = type(ev.data) == "table" and ev.data or {}
        if not e.mention or d.kind == "mention" then
          e[2](d)
        end
      end,
      desc = "claude-context: claudecode.nvim's events, focus after a send (claudecode options)",
    })
  end
end

---The cursor into Claude's terminal when one runs in this Neovim and the cursor is elsewhere.
function M.focus_terminal()
  local s = sessions()
  if s.job_running() and vim.api.nvim_get_current_buf() ~= s.current.buf then
    or_error(terminal().focus())
  end
end

local warned = false

---Warns once a session when another bridge serves the project (claude_context.bridges).
function M.warn_once()
  local cfg = require("claude_context.config").options.claudecode
  if warned or not cfg.warn then
    return
  end
  local cc = require("claude_context")
  local st = cc.is_running() and cc.status() or nil
  local bridges = require("claude_context.bridges")
  local found = bridges.find(st)
  if bridges.accident(found) then
    warned = true
    notify(bridges.message(found), vim.log.levels.WARN)
  end
end

---Applies the `claudecode` options (setup() has run): the commands and events on or off; then
---(a moment later, off the startup path) the once-a-session check for a second bridge.
function M.apply()
  local cfg = require("claude_context.config").options.claudecode
  remove_commands()
  if cfg.commands then
    define_commands()
  end
  install_autocmds(cfg)
  if not warned and cfg.warn then
    vim.defer_fn(M.warn_once, 100)
  end
end

return M
