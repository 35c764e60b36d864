---@mod claude_context.terminal Claude Code in a terminal split
---
--- `:ClaudeContext open` toggles a terminal running `claude` wired to the bridge:
--- `CLAUDE_CODE_SSE_PORT` (the IDE connection: diffs, selections, diagnostics),
--- `ENABLE_IDE_INTEGRATION=true`, loopback added to `no_proxy`, and `--mcp-config <file>`
--- registering the bridge as the MCP server "claude-context" so the model can call the plugin's
--- own tools. The file holds the token; it is written by the native side with mode 0600 in a
--- 0700 directory and removed when the bridge stops. The token is never on a command line.
---
--- Buffers Claude changes on disk are reloaded: `:checktime` on FocusGained, BufEnter,
--- TermLeave and (throttled) whenever the terminal prints.

local M = {}

local config = require("claude_context.config")
config.extra_keys.terminal = true

---@class claude_context.TerminalConfig
---@field cmd string|string[]|nil Deprecated alias of `claude.cmd` (a program, or a list: program and leading arguments)
---@field args string[] Extra arguments after the plugin's own
---@field side "right"|"left"|"top"|"bottom"|"float" Where the window opens (default "right")
---@field size number Columns/lines, or a fraction of the editor when < 1 (default 0.4)
---@field float {width:number, height:number, border:string|string[]} For side = "float"
---@field env table<string,string> Extra environment variables for the job
---@field mcp_config boolean Pass --mcp-config registering the bridge (default true)
---@field permission_mode string|false `--permission-mode` for the CLI (default "default": edits ask, and the diff opens in Neovim); false passes none
---@field auto_insert boolean Enter Terminal-mode when the window is shown (default true)
---@field reload boolean :checktime on focus, buffer enter and terminal output (default true)
---@field context_lines integer Lines `:ClaudeContext add-terminal` sends (default 200)
---@field per_tab boolean Each tab page its own Claude session (default false)
---@field provider "native"|"auto"|"snacks"|"external"|"none"|claude_context.TerminalProvider
---@field external_cmd string[]? For provider = "external": the launcher's argv; "{cmd}" is
---replaced by the shell command line that starts claude with the IDE environment
M.defaults = {
  -- cmd: unset; the CLI is `claude.cmd` (or found: see claude_context.cli).
  args = {},
  side = "right",
  size = 0.4,
  float = { width = 0.8, height = 0.8, border = "rounded" },
  env = {},
  mcp_config = true,
  -- Claude Code 2.1.330 starts in "auto" mode, where edits are applied without asking, so the
  -- Neovim diff never opens. "default" asks for every edit (through the diff in Neovim).
  permission_mode = "default",
  auto_insert = true,
  reload = true,
  context_lines = 200,
  provider = "native",
  external_cmd = nil,
  per_tab = false,
}

---@class claude_context.TerminalProvider
---@field open fun(cmd: string[], env: table<string,string>, cwd: string): integer buf, integer job
---Starts `cmd` in a terminal buffer it shows; returns the buffer and its job id
---@field show (fun(buf: integer))? Shows the hidden terminal (default: the built-in window)
---@field hide (fun(buf: integer))? Hides it (default: closes its windows)

local PROVIDERS = { native = true, auto = true, snacks = true, external = true, none = true }

local SIDES = { right = true, left = true, top = true, bottom = true, float = true }

---The modes `--permission-mode` takes (Claude Code 2.1.197 and 2.1.330; "manual" is 2.1.330's
---name for "default", which both accept).
M.PERMISSION_MODES = {
  default = true,
  manual = true,
  acceptEdits = true,
  auto = true,
  plan = true,
  dontAsk = true,
  bypassPermissions = true,
}

---@type {buf:integer?, job:integer?, cmd:string[]?, mcp_config:string?, port:integer?}
M._state = {}

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = "claude-context" })
end

---Validates `setup{terminal = …}` and merges it over the defaults.
---@param user table?
---@return claude_context.TerminalConfig
function M.resolve(user)
  user = user or {}
  if type(user) ~= "table" then
    error(("claude-context: option terminal must be a table, got %s"):format(type(user)), 0)
  end
  for k in pairs(user) do
    if M.defaults[k] == nil and k ~= "cmd" and k ~= "external_cmd" then
      error(("claude-context: unknown option terminal.%s (see :help claude-context-terminal)"):format(tostring(k)), 0)
    end
  end
  local t = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), user)
  -- Lists replace, never merge element-wise.
  if user.args then
    t.args = user.args
  end
  if user.cmd then
    t.cmd = user.cmd
  end
  if type(user.provider) == "table" then
    t.provider = user.provider -- kept as given (functions)
  end
  local function check(name, ok, want)
    if not ok then
      error(("claude-context: option terminal.%s must be %s"):format(name, want), 0)
    end
  end
  local function strings(v)
    if type(v) ~= "table" then
      return false
    end
    for _, x in ipairs(v) do
      if type(x) ~= "string" then
        return false
      end
    end
    return #v == vim.tbl_count(v)
  end
  check(
    "cmd",
    t.cmd == nil or (type(t.cmd) == "string" and t.cmd ~= "") or (strings(t.cmd) and #t.cmd > 0),
    "a program name or a non-empty list of strings (deprecated: use claude.cmd)"
  )
  check("args", strings(t.args), "a list of strings")
  check("side", SIDES[t.side] == true, "one of right, left, top, bottom, float")
  check("size", type(t.size) == "number" and t.size > 0, "a number > 0 (a fraction when < 1)")
  check("float", type(t.float) == "table", "a table {width, height, border}")
  check("float.width", type(t.float.width) == "number" and t.float.width > 0, "a number > 0")
  check("float.height", type(t.float.height) == "number" and t.float.height > 0, "a number > 0")
  check("env", type(t.env) == "table", "a table of strings")
  for k, v in pairs(t.env) do
    check("env", type(k) == "string" and (type(v) == "string" or type(v) == "number"), "a table of strings")
  end
  check(
    "permission_mode",
    t.permission_mode == false or (type(t.permission_mode) == "string" and M.PERMISSION_MODES[t.permission_mode] == true),
    "false or one of default, acceptEdits, plan, auto, dontAsk, bypassPermissions"
  )
  check("context_lines", type(t.context_lines) == "number" and t.context_lines >= 1, "a number >= 1")
  check(
    "provider",
    PROVIDERS[t.provider] == true or (type(t.provider) == "table" and type(t.provider.open) == "function"),
    "native, auto, snacks, external, none, or a table with an open function"
  )
  if t.provider == "external" then
    check("external_cmd", strings(t.external_cmd) and #t.external_cmd > 0 and vim.tbl_contains(t.external_cmd, "{cmd}"), 'a list of strings with a "{cmd}" element')
  end
  for _, k in ipairs({ "mcp_config", "auto_insert", "reload", "per_tab" }) do
    check(k, type(t[k]) == "boolean", "a boolean")
  end
  return t
end

---The effective terminal options.
---@return claude_context.TerminalConfig
function M.options()
  return M.resolve(config.options.terminal)
end

---`value` (a comma-separated host list) with 127.0.0.1, localhost and ::1 added when missing.
---@param value string?
---@return string
function M.extend_no_proxy(value)
  local items, seen = {}, {}
  for _, x in ipairs(vim.split(value or "", ",", { trimempty = true })) do
    x = vim.trim(x)
    if x ~= "" and not seen[x] then
      seen[x] = true
      table.insert(items, x)
    end
  end
  for _, x in ipairs({ "127.0.0.1", "localhost", "::1" }) do
    if not seen[x] then
      seen[x] = true
      table.insert(items, x)
    end
  end
  return table.concat(items, ",")
end

---The environment added to the job's (which otherwise inherits Neovim's).
---@param port integer
---@param opts claude_context.TerminalConfig
---@return table<string,string>
function M.job_env(port, opts)
  local env = {}
  for k, v in pairs(opts.env or {}) do
    env[k] = tostring(v)
  end
  -- Hooks: the terminal's name for the session-state events (claude_context.hooks).
  require("claude_context.hooks").add_env(env, M.session)
  env.CLAUDE_CODE_SSE_PORT = tostring(port)
  env.ENABLE_IDE_INTEGRATION = "true"
  env.no_proxy = M.extend_no_proxy(vim.env.no_proxy)
  env.NO_PROXY = M.extend_no_proxy(vim.env.NO_PROXY or vim.env.no_proxy)
  return env
end

---The directory the --mcp-config file goes into (0700, made by the native side).
---@return string
function M.mcp_config_dir()
  local ok, run = pcall(vim.fn.stdpath, "run")
  if not ok or type(run) ~= "string" or run == "" then
    run = vim.fn.stdpath("state")
  end
  return run .. "/claude-context"
end

---Whether `argv` already chooses how permissions are asked (then the plugin adds nothing).
---@param argv string[]
---@return boolean
local function chooses_permissions(argv)
  for _, a in ipairs(argv) do
    if a == "--permission-mode" or vim.startswith(a, "--permission-mode=") or a == "--dangerously-skip-permissions" then
      return true
    end
  end
  return false
end

---The argv of the job: the CLI (`prog`, else the deprecated `terminal.cmd`, else "claude"),
---`--mcp-config <file>`, `--permission-mode=<mode>` (unless the command or args choose one),
---then the extra args.
---@param opts claude_context.TerminalConfig
---@param mcp_file string?
---@param prog string? the CLI's path (claude_context.cli.find)
---@return string[]
function M.build_cmd(opts, mcp_file, prog)
  local cmd = type(opts.cmd) == "table" and vim.deepcopy(opts.cmd) or { opts.cmd or "claude" }
  if prog then
    cmd[1] = prog
  end
  local user_chose = chooses_permissions(cmd) or chooses_permissions(opts.args)
  if mcp_file then
    -- `--opt=value`: the CLI's --mcp-config takes several values, and this form keeps it from
    -- swallowing a prompt given in `args`.
    table.insert(cmd, "--mcp-config=" .. mcp_file)
  end
  if opts.permission_mode and not user_chose then
    table.insert(cmd, "--permission-mode=" .. opts.permission_mode)
  end
  vim.list_extend(cmd, opts.args)
  return cmd
end

local function job_running()
  local s = M._state
  if not (s.job and s.buf and vim.api.nvim_buf_is_valid(s.buf)) then
    return false
  end
  return vim.fn.jobwait({ s.job }, 0)[1] == -1
end

---@return integer[] windows of the current tab page showing the terminal
local function term_windows()
  local out = {}
  local buf = M._state.buf
  if not (buf and vim.api.nvim_buf_is_valid(buf)) then
    return out
  end
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(w) == buf then
      table.insert(out, w)
    end
  end
  return out
end

local function dim(size, total)
  local n = size < 1 and math.floor(total * size + 0.5) or math.floor(size)
  return math.max(1, math.min(n, total))
end

---Opens a window for `buf` as `opts.side` says; returns its id.
local function open_window(buf, opts)
  local win
  if opts.side == "float" then
    local cols, lines = vim.o.columns, vim.o.lines - vim.o.cmdheight - 1
    local w, h = dim(opts.float.width, cols), dim(opts.float.height, lines)
    win = vim.api.nvim_open_win(buf, true, {
      relative = "editor",
      width = math.max(1, w - 2),
      height = math.max(1, h - 2),
      col = math.floor((cols - w) / 2),
      row = math.floor((lines - h) / 2),
      border = opts.float.border,
      style = "minimal",
    })
  else
    local vertical = opts.side == "left" or opts.side == "right"
    local cfg = { split = opts.side == "top" and "above" or opts.side == "bottom" and "below" or opts.side, win = -1 }
    if vertical then
      cfg.width = dim(opts.size, vim.o.columns)
    else
      cfg.height = dim(opts.size, vim.o.lines)
    end
    win = vim.api.nvim_open_win(buf, true, cfg)
    vim.wo[win].winfixwidth = vertical
    vim.wo[win].winfixheight = not vertical
  end
  vim.wo[win].number = false
  vim.wo[win].relativenumber = false
  vim.wo[win].signcolumn = "no"
  vim.wo[win].spell = false
  return win
end

local reload = require("claude_context.reload")
local pending_checktime

---`:checktime` now, unless a command line is being edited.
M.checktime = reload.checktime

---`:checktime` at most every 300 ms while the terminal prints.
local function checktime_soon()
  if pending_checktime then
    return
  end
  pending_checktime = true
  vim.defer_fn(function()
    pending_checktime = false
    M.checktime()
  end, 300)
end

---Installs the reload autocmds (FocusGained, BufEnter, TermLeave).
M.install_reload = reload.install
M.uninstall_reload = reload.uninstall

---Shows the terminal (starting it when needed).
---@param extra string[]? arguments for a new claude (refused while one runs)
---@return boolean ok, string? err
function M.show(extra)
  if job_running() then
    if extra and #extra > 0 then
      return false, "claude is already running here: :ClaudeContext close first, then open with the arguments"
    end
    local st = require("claude_context").status()
    if M._state.port and (not st or st.port ~= M._state.port) then
      notify(
        "this claude was started for a bridge that has since stopped or restarted: :ClaudeContext close, then open again",
        vim.log.levels.WARN
      )
    end
    local wins = term_windows()
    if #wins == 0 and M._state.provider and M._state.provider.show then
      M._state.provider.show(M._state.buf)
      wins = term_windows()
      if #wins > 0 then
        vim.api.nvim_set_current_win(wins[1])
      end
    elseif #wins == 0 then
      open_window(M._state.buf, M.options())
    else
      vim.api.nvim_set_current_win(wins[1])
    end
    if M.options().auto_insert then
      vim.cmd.startinsert()
    end
    return true
  end
  return M.start(extra)
end

---Hides the terminal's windows in this tab page; the job keeps running.
function M.hide()
  if M._state.provider and M._state.provider.hide and #term_windows() > 0 then
    M._state.provider.hide(M._state.buf)
    return
  end
  for _, w in ipairs(term_windows()) do
    if #vim.api.nvim_tabpage_list_wins(0) == 1 then
      -- The last window: show another buffer in it instead of closing it.
      local alt = vim.fn.bufnr("#")
      if alt > 0 and alt ~= M._state.buf and vim.api.nvim_buf_is_valid(alt) then
        vim.api.nvim_win_set_buf(w, alt)
      else
        vim.api.nvim_win_set_buf(w, vim.api.nvim_create_buf(true, false))
      end
    else
      vim.api.nvim_win_close(w, false)
    end
  end
end

---With `per_tab`, makes the current tab page's session (named after the tab page, kept in
---`t:claude_context_session`) the current one.
function M.sync_tab()
  local ok, o = pcall(M.options)
  if not (ok and o.per_tab) then
    return
  end
  local name = vim.t.claude_context_session
  if not name then
    name = "tab " .. vim.api.nvim_get_current_tabpage()
    vim.t.claude_context_session = name
  end
  if name ~= M.session then
    M.session = name
    M._state = M.sessions[name] or {}
  end
end

---`:ClaudeContext open`: hides the terminal when it is shown in this tab page, else shows it.
---@param extra string[]? arguments for a new claude (`--resume`, `--model opus`, …)
---@return boolean ok, string? err
function M.toggle(extra)
  M.sync_tab()
  if job_running() and #term_windows() > 0 and not (extra and #extra > 0) then
    M.hide()
    return true
  end
  return M.show(extra)
end

---`:ClaudeContext focus`: the cursor in the terminal when it is shown elsewhere; hidden when
---the cursor is in it already; shown (started when needed) when hidden.
---@return boolean ok, string? err
function M.focus()
  M.sync_tab()
  local wins = term_windows()
  if job_running() and #wins > 0 then
    if vim.api.nvim_get_current_buf() == M._state.buf then
      M.hide()
      return true
    end
    vim.api.nvim_set_current_win(wins[1])
    if M.options().auto_insert then
      vim.cmd.startinsert()
    end
    return true
  end
  return M.show()
end

---The models `:ClaudeContext model` offers (Claude Code's aliases).
M.models = { "default", "sonnet", "opus", "haiku", "opusplan", "sonnet[1m]" }

---`:ClaudeContext model [name]`: picks a model (vim.ui.select without a name); in a running
---claude types `/model <name>` and Enter, else starts claude with `--model <name>`.
---@param name string?
function M.pick_model(name)
  M.sync_tab()
  local function apply(choice)
    if not choice then
      return
    end
    if job_running() then
      pcall(vim.fn.chansend, M._state.job, "/model " .. choice .. "\r")
      notify("model: /model " .. choice .. " sent to Claude")
    else
      local ok, err = M.start(choice ~= "default" and { "--model", choice } or nil)
      if not ok then
        notify(err, vim.log.levels.ERROR)
      end
    end
  end
  if name and name ~= "" then
    return apply(name)
  end
  vim.ui.select(M.models, { prompt = "Claude model", kind = "claude_context.model" }, apply)
end

---Arguments `:ClaudeContext open` completes (the claude CLI's own), and values after some.
M.open_args = {
  "--continue",
  "--resume",
  "--model",
  "--permission-mode",
  "--add-dir",
  "--allowedTools",
  "--disallowedTools",
  "--append-system-prompt",
  "--verbose",
  "--debug",
}
M.open_values = {
  ["--model"] = { "sonnet", "opus", "haiku", "opusplan" },
  ["--permission-mode"] = { "default", "acceptEdits", "plan", "bypassPermissions" },
}

---Completion of `:ClaudeContext open {args}`.
---@param arglead string
---@param args string[] the words so far (args[1] is "open")
---@return string[]
function M.complete_open(arglead, args)
  local prev = args[#args]
  if arglead ~= "" then
    prev = args[#args - 1]
  end
  local list = M.open_values[prev or ""] or M.open_args
  return vim.tbl_filter(function(x)
    return vim.startswith(x, arglead)
  end, list)
end

---Claude sessions of this Neovim by name ("main" first); `M._state` is the current one's.
---@type table<string, table>
M.sessions = {}
---The current session's name.
M.session = "main"

---The session's buffer is gone: forget it.
---@param state table
local function forget(state)
  if state.name and M.sessions[state.name] == state then
    M.sessions[state.name] = nil
  end
  if M._state == state then
    M._state = {}
  end
end

---Ends the job and wipes the terminal buffer (of the current session). The session is gone at
---once and its windows close; a buffer whose job still runs is wiped when the job has ended
---(`TermClose`). Wiping a terminal while Neovim still owes it a write callback (text just typed
---into claude) makes Neovim (0.11 and 0.12) re-queue the terminal's free event forever in any `vim.wait`
---or `:sleep` that follows in the same tick: the editor spins at 100% CPU. After `TermClose`
---the job's streams are closed and nothing is owed.
function M.close()
  local s = M._state
  forget(s)
  M._state = {}
  local buf = s.buf
  if not (buf and vim.api.nvim_buf_is_valid(buf)) then
    if s.job then
      pcall(vim.fn.jobstop, s.job)
    end
    return
  end
  local running = s.job ~= nil and vim.fn.jobwait({ s.job }, 0)[1] == -1
  if not running then
    pcall(vim.api.nvim_buf_delete, buf, { force = true })
    return
  end
  for _, w in ipairs(vim.fn.win_findbuf(buf)) do
    pcall(vim.api.nvim_win_close, w, true) -- fails for the last window: it goes with the buffer
  end
  vim.api.nvim_create_autocmd("TermClose", {
    buffer = buf,
    once = true,
    callback = function()
      vim.schedule(function()
        if vim.api.nvim_buf_is_valid(buf) then
          pcall(vim.api.nvim_buf_delete, buf, { force = true })
        end
      end)
    end,
  })
  pcall(vim.fn.jobstop, s.job)
end

---`:ClaudeContext sessions {name}`: makes `name` the current session (hiding the current one's
---window in this tab page) and shows it, starting a new claude when it has none.
---@param name string
---@return boolean ok, string? err
function M.switch(name)
  if name == M.session then
    return M.show()
  end
  if #term_windows() > 0 then
    M.hide()
  end
  M.session = name
  M._state = M.sessions[name] or {}
  return M.show()
end

---The sessions: `{ name, running, current, buf }`, "main" first, then by name.
---@return table[]
function M.list()
  local names = vim.tbl_keys(M.sessions)
  if not M.sessions[M.session] and not vim.tbl_contains(names, M.session) then
    table.insert(names, M.session)
  end
  table.sort(names, function(a, b)
    if a == "main" or b == "main" then
      return a == "main" and b ~= "main"
    end
    return a < b
  end)
  return vim.tbl_map(function(n)
    local st = M.sessions[n] or {}
    local running = st.job ~= nil and vim.fn.jobwait({ st.job }, 0)[1] == -1
    return { name = n, running = running, current = n == M.session, buf = st.buf }
  end, names)
end

---A buffer name for the terminal nobody uses yet: `claude://<project>` (the working directory's
---name), `claude://<project> (2)` and so on.
---@return string
function M.buffer_name()
  local base = "claude://" .. vim.fn.fnamemodify(vim.fn.getcwd(), ":t")
  if M.session ~= "main" then
    base = ("%s [%s]"):format(base, M.session)
  end
  local name, n = base, 1
  while vim.fn.bufexists(name) == 1 do
    n = n + 1
    name = ("%s (%d)"):format(base, n)
  end
  return name
end

---What Shift+Enter and Alt+Enter send: ESC CR, the sequence Claude Code reads as a newline in
---its prompt (what its /terminal-setup binds Shift+Enter to).
M.NEWLINE = "\27\r"

---Gives the terminal buffer its identity: a readable name, unlisted, filetype
---`claude_context_terminal`, the newline keys; then fires `User ClaudeContextTerminalOpen`.
---@param buf integer
---@param job integer
---@param win integer?
function M.decorate(buf, job, win)
  local old = vim.api.nvim_buf_get_name(buf)
  pcall(vim.api.nvim_buf_set_name, buf, M.buffer_name())
  -- Renaming leaves the old term:// name behind as an unlisted alternate buffer: wipe it.
  for _, b in ipairs(old ~= "" and vim.api.nvim_list_bufs() or {}) do
    if b ~= buf and vim.api.nvim_buf_get_name(b) == old and vim.bo[b].buftype ~= "terminal" and not vim.api.nvim_buf_is_loaded(b) then
      pcall(vim.api.nvim_buf_delete, b, { force = true })
    end
  end
  vim.bo[buf].buflisted = false
  vim.bo[buf].filetype = "claude_context_terminal"
  for _, lhs in ipairs({ "<S-CR>", "<M-CR>" }) do
    vim.keymap.set("t", lhs, function()
      pcall(vim.fn.chansend, job, M.NEWLINE)
    end, { buffer = buf, desc = "claude-context: a newline in Claude's prompt" })
  end
  vim.api.nvim_exec_autocmds("User", {
    pattern = "ClaudeContextTerminalOpen",
    data = { buf = buf, job = job, win = win },
    modeline = false,
  })
end

---Starts the bridge if needed, then `claude` in a new terminal window.
---@param extra string[]? arguments after the configured ones (`:ClaudeContext open --resume`)
---@return boolean ok, string? err
function M.start(extra)
  local ok, opts = pcall(M.options)
  if not ok then
    return false, opts
  end
  local cc = require("claude_context")
  if not cc.is_running() then
    local started, err = cc.start({ silent = true })
    if not started then
      -- Without the library: the loader's own one-line message, as every command gives it.
      if not require("claude_context.native").get() then
        return false, require("claude_context.native").missing_message()
      end
      return false, "cannot start the bridge: " .. tostring(err)
    end
  end
  local st = cc.status()
  if not st then
    return false, "the bridge is not running"
  end
  -- The CLI of `claude.cmd` (the one the sub-agent and :checkhealth use too), else found.
  local cli = require("claude_context.cli")
  cli.warn_deprecated()
  local prog, why = cli.find(nil, true)
  if not prog then
    return false, why
  end
  local mcp_file
  if opts.mcp_config then
    local native = require("claude_context.native").load()
    local wrote, res = pcall(native.write_mcp_config, M.mcp_config_dir())
    if not wrote then
      return false, require("claude_context.native").message(res)
    end
    mcp_file = res
  end
  local cmd = M.build_cmd(opts, mcp_file, prog)
  -- Hooks: --settings with the session-state hooks (claude_context.hooks).
  require("claude_context.hooks").add_args(cmd, extra)
  vim.list_extend(cmd, extra or {})

  local provider = opts.provider
  if provider == "auto" then
    provider = M.snacks() and "snacks" or "native"
  end
  if provider == "none" then
    notify(
      ("terminal.provider = none: the bridge runs on port %d; start `claude` yourself in %s and run /ide (or set CLAUDE_CODE_SSE_PORT=%d)"):format(
        st.port,
        vim.fn.getcwd(),
        st.port
      )
    )
    return true
  elseif provider == "external" then
    return M.start_external(cmd, M.job_env(st.port, opts), opts)
  elseif provider == "snacks" or type(provider) == "table" then
    return M.start_provider(provider == "snacks" and M.snacks_provider(opts) or provider, cmd, st, opts, mcp_file)
  end

  if M._state.buf and vim.api.nvim_buf_is_valid(M._state.buf) then
    -- A finished terminal (kept to show its exit status) is replaced.
    pcall(vim.api.nvim_buf_delete, M._state.buf, { force = true })
  end
  local buf = vim.api.nvim_create_buf(false, false)
  local win = open_window(buf, opts)
  local state = { buf = buf, cmd = cmd, mcp_config = mcp_file, port = st.port }
  local started, job = pcall(vim.api.nvim_win_call, win, function()
    return vim.fn.jobstart(cmd, {
      term = true,
      env = M.job_env(st.port, opts),
      cwd = vim.fn.getcwd(),
      on_stdout = function()
        state.last_output = (vim.uv or vim.loop).now() -- "busy" in status()
        if opts.reload then
          checktime_soon()
        end
      end,
      on_exit = function(id, code)
        vim.schedule(function()
          if state.job ~= id then
            return
          end
          state.job = nil
          if opts.reload then
            M.checktime()
          end
          -- A clean exit closes the terminal; otherwise keep it to show what happened.
          if code == 0 and vim.api.nvim_buf_is_valid(buf) then
            for _, w in ipairs(vim.fn.win_findbuf(buf)) do
              pcall(vim.api.nvim_win_close, w, true) -- fails for the last window: fine
            end
            pcall(vim.api.nvim_buf_delete, buf, { force = true })
          end
        end)
      end,
    })
  end)
  if not started or type(job) ~= "number" or job <= 0 then
    pcall(vim.api.nvim_win_close, win, true)
    pcall(vim.api.nvim_buf_delete, buf, { force = true })
    return false, ("cannot start %s: %s"):format(prog, started and ("jobstart returned " .. tostring(job)) or tostring(job))
  end
  state.job = job
  state.name = M.session
  M._state = state
  M.sessions[M.session] = state
  vim.bo[buf].bufhidden = "hide"
  vim.b[buf].claude_context_terminal = true
  M.decorate(buf, job, win)
  M.install_paste()
  -- Wiping the buffer (:bwipeout!, :bdelete!) ends the job.
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    once = true,
    callback = function()
      pcall(vim.fn.jobstop, job)
      forget(state)
    end,
  })
  if opts.reload then
    M.install_reload()
  end
  if opts.auto_insert then
    vim.cmd.startinsert()
  end
  return true
end

---The snacks.nvim terminal module, when snacks.nvim is set up.
---@return table?
function M.snacks()
  local snacks = rawget(_G, "Snacks")
  return snacks and type(snacks.terminal) == "table" and snacks.terminal.open and snacks.terminal or nil
end

---A provider over snacks.nvim's documented terminal API: `Snacks.terminal.open(cmd, opts)` (a
---terminal object with `buf`, `win`, `:show()`, `:hide()`), the job id in `b:terminal_job_id`.
---@param opts claude_context.TerminalConfig
---@return claude_context.TerminalProvider
function M.snacks_provider(opts)
  local objects = {}
  return {
    open = function(cmd, env, cwd)
      local st = M.snacks()
      if not st then
        error("snacks.nvim is not set up (no Snacks.terminal)", 0)
      end
      local position = opts.side == "float" and "float" or opts.side
      local t = st.open(cmd, {
        cwd = cwd,
        env = env,
        interactive = opts.auto_insert,
        win = { position = position, width = opts.size, height = opts.size },
      })
      local buf = t.buf
      objects[buf] = t
      return buf, vim.b[buf].terminal_job_id
    end,
    show = function(buf)
      if objects[buf] then
        objects[buf]:show()
      end
    end,
    hide = function(buf)
      if objects[buf] then
        objects[buf]:hide()
      end
    end,
  }
end

---Starts claude through a provider (snacks.nvim or a custom table); the buffer it returns gets
---the same identity, keys, paste handling and lifetime as the built-in terminal's.
---@param provider claude_context.TerminalProvider
---@return boolean ok, string? err
function M.start_provider(provider, cmd, st, opts, mcp_file)
  if M._state.buf and vim.api.nvim_buf_is_valid(M._state.buf) then
    pcall(vim.api.nvim_buf_delete, M._state.buf, { force = true })
  end
  local ok, buf, job = pcall(provider.open, cmd, M.job_env(st.port, opts), vim.fn.getcwd())
  if not ok then
    return false, "the terminal provider failed: " .. tostring(buf)
  end
  if type(buf) ~= "number" or not vim.api.nvim_buf_is_valid(buf) or type(job) ~= "number" or job <= 0 then
    return false, "the terminal provider returned no terminal buffer and job"
  end
  local state = { buf = buf, job = job, cmd = cmd, mcp_config = mcp_file, port = st.port, provider = provider, name = M.session }
  M._state = state
  M.sessions[M.session] = state
  vim.b[buf].claude_context_terminal = true
  local wins = vim.fn.win_findbuf(buf)
  M.decorate(buf, job, wins[1])
  M.install_paste()
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    once = true,
    callback = function()
      pcall(vim.fn.jobstop, job)
      forget(state)
    end,
  })
  if opts.reload then
    M.install_reload()
  end
  return true
end

---The shell command line that runs `cmd` with `env` set (for launchers that start a new shell).
---@param cmd string[]
---@param env table<string,string>
---@return string
function M.shell_line(cmd, env)
  local parts = { "env" }
  local keys = vim.tbl_keys(env)
  table.sort(keys)
  for _, k in ipairs(keys) do
    table.insert(parts, vim.fn.shellescape(k .. "=" .. env[k]))
  end
  for _, a in ipairs(cmd) do
    table.insert(parts, vim.fn.shellescape(a))
  end
  return table.concat(parts, " ")
end

---provider = "external": runs `external_cmd` with "{cmd}" replaced by the command line of
---claude with the IDE environment (tmux, zellij, another terminal emulator), detached.
---@return boolean ok, string? err
function M.start_external(cmd, env, opts)
  local line = M.shell_line(cmd, env)
  local argv = vim.tbl_map(function(a)
    return a == "{cmd}" and line or a
  end, opts.external_cmd)
  local ok, job = pcall(vim.fn.jobstart, argv, { env = env, cwd = vim.fn.getcwd(), detach = true })
  if not ok or job <= 0 then
    return false, ("cannot run %s: %s"):format(argv[1], ok and ("jobstart returned " .. job) or tostring(job))
  end
  notify(("started claude with %s"):format(argv[1]))
  return true
end

---Bytes per chansend of a paste: big pastes go in slices (one write of megabytes is what
---truncated streamed pastes before Neovim 0.12.2).
M.PASTE_CHUNK = 4096

---Types `text` into Claude's prompt as one bracketed paste (its newlines stay in the prompt),
---in slices of `PASTE_CHUNK` bytes; with `submit`, then Enter.
---@param text string
---@param submit boolean?
---@return boolean ok, string? err
function M.send_text(text, submit)
  M.sync_tab()
  if not job_running() then
    return false, "no claude terminal is running (:ClaudeContext open)"
  end
  if text == "" then
    return false, "nothing to send"
  end
  local job = M._state.job
  local sent = pcall(function()
    vim.fn.chansend(job, "\27[200~")
    for i = 1, #text, M.PASTE_CHUNK do
      vim.fn.chansend(job, text:sub(i, i + M.PASTE_CHUNK - 1))
    end
    vim.fn.chansend(job, "\27[201~")
  end)
  if not sent then
    return false, "claude's terminal did not take the text"
  end
  require("claude_context.ide.commands").send_complete({ kind = "text", bytes = #text, submitted = submit == true })
  if submit then
    -- Apart from the paste, so that the CLI sees a key press, not pasted text.
    vim.defer_fn(function()
      pcall(vim.fn.chansend, job, "\r")
    end, 50)
  end
  return true
end

local paste_acc
---Wraps |vim.paste()| once: a paste into Claude's terminal (Terminal-Job mode) is gathered over
---its phases and sent as one bracketed paste in slices (see send_text); other pastes are
---untouched.
function M.install_paste()
  if M._paste_installed then
    return
  end
  M._paste_installed = true
  local orig = vim.paste
  vim.paste = function(lines, phase)
    local buf = vim.api.nvim_get_current_buf()
    if not (buf == M._state.buf and vim.api.nvim_get_mode().mode == "t" and job_running()) then
      if paste_acc and phase == 3 then
        paste_acc = nil
      end
      return orig(lines, phase)
    end
    if phase == -1 or phase == 1 or not paste_acc then
      paste_acc = {}
    end
    table.insert(paste_acc, table.concat(lines, "\n"))
    if phase == -1 or phase == 3 then
      local text = table.concat(paste_acc)
      paste_acc = nil
      M.send_text(text)
    end
    return true
  end
end

---`:[range]ClaudeContext send-text {text}`: the range's lines and/or {text}, typed into Claude's
---prompt (not sent: you add to it and press Enter).
---@param o table user command opts
---@param args string[]
function M.send_text_command(o, args)
  local parts = {}
  if o.range and o.range > 0 then
    table.insert(parts, table.concat(vim.api.nvim_buf_get_lines(0, o.line1 - 1, o.line2, false), "\n"))
  end
  if #args > 0 then
    table.insert(parts, table.concat(args, " "))
  end
  if #parts == 0 then
    return notify("send-text: usage: :[range]ClaudeContext send-text {text}", vim.log.levels.ERROR)
  end
  local ok, err = M.send_text(table.concat(parts, "\n"))
  if not ok then
    notify("send-text: " .. err, vim.log.levels.ERROR)
  end
end

---`:ClaudeContext compose`: a buffer to write a long prompt in; `:w` sends it to Claude (and
---empties the buffer), `:q` keeps the draft for next time.
---@return integer buf
function M.compose()
  local name = "claude-compose://" .. vim.fn.fnamemodify(vim.fn.getcwd(), ":t")
  local buf
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b) == name and vim.b[b].claude_context_compose then
      buf = b
    end
  end
  if not buf then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, name)
    vim.bo[buf].buftype = "acwrite"
    vim.bo[buf].bufhidden = "hide"
    vim.bo[buf].swapfile = false
    vim.bo[buf].filetype = "markdown"
    vim.b[buf].claude_context_compose = true
    vim.api.nvim_create_autocmd("BufWriteCmd", {
      buffer = buf,
      callback = function()
        local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
        local ok, err = M.send_text(text, true)
        if not ok then
          notify("compose: " .. err .. " (the draft is kept)", vim.log.levels.ERROR)
          return
        end
        vim.api.nvim_buf_set_lines(buf, 0, -1, false, {})
        vim.bo[buf].modified = false
        notify("compose: sent to Claude")
      end,
      desc = "claude-context: send the prompt to Claude",
    })
  end
  local wins = vim.fn.win_findbuf(buf)
  if #wins > 0 then
    vim.api.nvim_set_current_win(wins[1])
  else
    local target = require("claude_context.windows").edit_target()
    vim.api.nvim_set_current_win(target)
    vim.cmd("belowright 10split")
    vim.api.nvim_win_set_buf(0, buf)
  end
  return buf
end

---Runs at the end of setup(): validates the options, installs the reload autocmds.
---@param options table the resolved plugin options
function M.on_setup(options)
  local t = M.resolve(options.terminal)
  if t.reload then
    M.install_reload()
  else
    M.uninstall_reload()
  end
end

---The paths where `claude-context-mcp` may have been built, in order of preference.
---@return string[]
function M.mcp_binary_candidates()
  local root = require("claude_context.native").plugin_root()
  local exe = vim.fn.has("win32") == 1 and ".exe" or ""
  return {
    root .. "/lib/claude-context-mcp" .. exe,
    root .. "/target/release/claude-context-mcp" .. exe,
    root .. "/target/debug/claude-context-mcp" .. exe,
  }
end

---The `claude mcp add` line registering the relay, or nil and why not.
---@return string? line, string? err
function M.mcp_command()
  local candidates = M.mcp_binary_candidates()
  for _, p in ipairs(candidates) do
    if vim.fn.executable(p) == 1 then
      local arg = p:match("^[%w%./_%-+=:@]+$") and p or vim.fn.shellescape(p)
      return ("claude mcp add claude-context -- %s"):format(arg)
    end
  end
  return nil,
    ("claude-context-mcp is not built (looked for %s): run `make` in %s"):format(
      table.concat(candidates, ", "),
      require("claude_context.native").plugin_root()
    )
end

---Adds `open`, `close` and `mcp-command` to :ClaudeContext.
---@param commands table the claude_context.commands module
function M.register_commands(commands)
  commands.register("open", {
    desc = "toggle a terminal running claude, connected to the bridge ([args] for a new one)",
    run = function(_, args)
      local ok, err = M.toggle(args)
      if not ok then
        notify(err, vim.log.levels.ERROR)
      end
    end,
    complete = M.complete_open,
  })
  commands.register("sessions", {
    desc = "switch to (or start) the Claude terminal session {name}; without a name, pick one",
    run = function(_, args)
      local function go(name)
        if not name or name == "" then
          return
        end
        local ok, err = M.switch(name)
        if not ok then
          notify(err, vim.log.levels.ERROR)
        end
      end
      if args[1] then
        return go(args[1])
      end
      vim.ui.select(M.list(), {
        prompt = "Claude session",
        kind = "claude_context.session",
        format_item = function(it)
          -- What its Claude does (state, project, elapsed, prompt), from the hooks.
          local doing = require("claude_context.sessions_state").describe(it.name)
          return ("%s%s (%s)%s"):format(it.current and "* " or "  ", it.name, it.running and "running" or "not running", doing and (": " .. doing) or "")
        end,
      }, function(choice)
        go(choice and choice.name)
      end)
    end,
    complete = function(arglead)
      return vim.tbl_filter(function(n)
        return vim.startswith(n, arglead)
      end, vim.tbl_map(function(it)
        return it.name
      end, M.list()))
    end,
  })
  commands.register("model", {
    desc = "pick a model: /model in the running claude, else start claude with --model",
    run = function(_, args)
      M.pick_model(args[1])
    end,
    complete = function(arglead)
      return vim.tbl_filter(function(x)
        return vim.startswith(x, arglead)
      end, M.models)
    end,
  })
  commands.register("send-text", {
    desc = "type {text} (or the range's lines) into Claude's prompt",
    run = M.send_text_command,
  })
  commands.register("compose", {
    desc = "a buffer for a long prompt; :w sends it to Claude",
    run = function()
      M.compose()
    end,
  })
  commands.register("focus", {
    desc = "the cursor into Claude's terminal; hide it when the cursor is there",
    run = function()
      local ok, err = M.focus()
      if not ok then
        notify(err, vim.log.levels.ERROR)
      end
    end,
  })
  commands.register("close", {
    desc = "end the claude terminal started by :ClaudeContext open",
    run = function()
      if not M._state.buf then
        notify("no claude terminal is open")
        return
      end
      M.close()
    end,
  })
  commands.register("mcp-command", {
    desc = "print the `claude mcp add` line for claude-context-mcp",
    run = function()
      local line, err = M.mcp_command()
      if not line then
        notify(err, vim.log.levels.ERROR)
        return
      end
      local copied = false
      if vim.fn.has("clipboard") == 1 then
        copied = pcall(vim.fn.setreg, "+", line)
      end
      -- A window (the line is long, and meant to be copied): no hit-enter prompt.
      require("claude_context.output").show(
        { line, copied and "(copied to the + register)" or nil },
        { title = "claude mcp add", float = true }
      )
    end,
  })
end

return M
