---@mod claude_context.terminal.launch Starting claude wired to the bridge
---
--- One path for every provider: the bridge started if needed, the CLI found, the --mcp-config
--- file written (by the native side: mode 0600 in a 0700 directory, removed when the bridge
--- stops; the token is never on a command line), the argv and the environment built
--- (`CLAUDE_CODE_SSE_PORT`, `ENABLE_IDE_INTEGRATION=true`, loopback added to `no_proxy`; the
--- session-state hooks' `--settings` and `CLAUDE_CONTEXT_SESSION`, see claude_context.sessions.hooks), then
--- the provider's `open`. A terminal in this Neovim gets its identity (name, filetype, keys),
--- paste handling and lifetime here, whichever provider made it.

local M = {}

local sessions = require("claude_context.terminal.sessions")
local reload = require("claude_context.util.reload")

---`value` (a comma-separated host list) with 127.0.0.1, localhost and ::1 added when missing.
---@param value string?
---@return string
local function extend_no_proxy(value)
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
local function job_env(port, opts)
  local env = {}
  for k, v in pairs(opts.env or {}) do
    env[k] = tostring(v)
  end
  -- Hooks: the terminal's name for the session-state events (claude_context.sessions.hooks).
  require("claude_context.sessions.hooks").add_env(env, sessions.name)
  env.CLAUDE_CODE_SSE_PORT = tostring(port)
  env.ENABLE_IDE_INTEGRATION = "true"
  env.no_proxy = extend_no_proxy(vim.env.no_proxy)
  env.NO_PROXY = extend_no_proxy(vim.env.NO_PROXY or vim.env.no_proxy)
  return env
end

---The argv of the job (claude_context.cli.argv): the CLI, `--mcp-config=<file>`, `--settings`
---with the session-state hooks (claude_context.sessions.hooks; not when the args have their own),
---`--permission-mode=<mode>` (unless the args choose one), the args, then `extra`.
---@param opts claude_context.TerminalConfig
---@param mcp_file string?
---@param prog string the CLI's path (claude_context.cli.find)
---@param extra string[]?
---@return string[]
function M.argv(opts, mcp_file, prog, extra)
  local mcp_arg = mcp_file and "--mcp-config=" .. mcp_file or nil
  local so_far = vim.list_extend({ prog, mcp_arg }, opts.args or {})
  return require("claude_context.cli").argv({
    head = { prog },
    mcp_config = mcp_file,
    permission_mode = opts.permission_mode or nil,
    args = opts.args,
    settings = require("claude_context.sessions.hooks").settings_json(vim.list_extend(so_far, extra or {})),
    tail = extra,
  })
end

---What Shift+Enter and Alt+Enter send: ESC CR, the sequence Claude Code reads as a newline in
---its prompt (what its /terminal-setup binds Shift+Enter to).
local NEWLINE = "\27\r"

---Gives the terminal buffer its identity: a readable name, unlisted, filetype
---`claude_context_terminal`, the newline keys; then fires `User ClaudeContextTerminalOpen`.
---@param buf integer
---@param job integer
local function decorate(buf, job)
  local old = vim.api.nvim_buf_get_name(buf)
  pcall(vim.api.nvim_buf_set_name, buf, sessions.buffer_name())
  -- Renaming leaves the old term:// name behind as an unlisted alternate buffer: wipe it.
  for _, b in ipairs(old ~= "" and vim.api.nvim_list_bufs() or {}) do
    if
      b ~= buf
      and vim.api.nvim_buf_get_name(b) == old
      and vim.bo[b].buftype ~= "terminal"
      and not vim.api.nvim_buf_is_loaded(b)
    then
      pcall(vim.api.nvim_buf_delete, b, { force = true })
    end
  end
  vim.b[buf].claude_context_terminal = true
  vim.bo[buf].buflisted = false
  vim.bo[buf].filetype = "claude_context_terminal"
  for _, lhs in ipairs({ "<S-CR>", "<M-CR>" }) do
    vim.keymap.set("t", lhs, function()
      pcall(vim.fn.chansend, job, NEWLINE)
    end, { buffer = buf, desc = "claude-context: a newline in Claude's prompt" })
  end
  vim.api.nvim_exec_autocmds("User", {
    pattern = "ClaudeContextTerminalOpen",
    data = { buf = buf, job = job, win = vim.fn.win_findbuf(buf)[1] },
    modeline = false,
  })
end

local pending_checktime

---`:checktime` at most every 300 ms while the terminal prints.
local function checktime_soon()
  if pending_checktime then
    return
  end
  pending_checktime = true
  vim.defer_fn(function()
    pending_checktime = false
    reload.checktime()
  end, 300)
end

---What the job reports: output marks the session busy (status()) and reloads changed buffers;
---a clean exit closes the terminal, any other keeps it to show what happened.
---@param state claude_context.TerminalState the session's state
---@param opts claude_context.TerminalConfig
---@return claude_context.TerminalEvents
local function events(state, opts)
  return {
    on_output = function()
      state.last_output = vim.uv.now()
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
          reload.checktime()
        end
        local buf = state.buf
        if code == 0 and buf and vim.api.nvim_buf_is_valid(buf) then
          for _, w in ipairs(vim.fn.win_findbuf(buf)) do
            pcall(vim.api.nvim_win_close, w, true) -- fails for the last window: fine
          end
          pcall(vim.api.nvim_buf_delete, buf, { force = true })
        end
      end)
    end,
  }
end

---The bridge's status, started when needed; nil and why not.
---@return claude_context.Status? status, string? err
local function bridge()
  local cc = require("claude_context.bridge")
  if not cc.is_running() then
    local started, err = cc.start({ silent = true })
    if not started then
      -- Without the library: the loader's own one-line message, as every command gives it.
      if not require("claude_context.native").get() then
        return nil, require("claude_context.native").missing_message()
      end
      return nil, "cannot start the bridge: " .. tostring(err)
    end
  end
  local st = cc.status()
  if not st then
    return nil, "the bridge is not running"
  end
  return st
end

---Starts the bridge if needed, then `claude` through the configured provider; a terminal in
---this Neovim becomes the current session's.
---@param extra string[]? arguments after the configured ones (`:ClaudeContext open --resume`)
---@return boolean ok, string? err
function M.start(extra)
  local ok, opts = pcall(require("claude_context.config.terminal").options)
  if not ok then
    return false, opts
  end
  local st, err = bridge()
  if not st then
    return false, err
  end
  -- The CLI of `claude.cmd` (the one the sub-agent and :checkhealth use too), else found.
  local prog, why = require("claude_context.cli").find(nil, true)
  if not prog then
    return false, why
  end
  local mcp_file
  if opts.mcp_config then
    local native = require("claude_context.native")
    local wrote, res = pcall(native.load().write_mcp_config, native.mcp_config_dir())
    if not wrote then
      return false, native.message(res)
    end
    mcp_file = res
  end
  local built, cmd = pcall(M.argv, opts, mcp_file, prog, extra)
  if not built then
    return false, require("claude_context.native").message(cmd)
  end
  local env = job_env(st.port, opts)

  local provider = require("claude_context.terminal.providers").resolve(opts)
  if provider.detached then
    local opened, e = pcall(provider.open, cmd, env, vim.fn.getcwd())
    return opened, not opened and tostring(e) or nil
  end
  local old = sessions.current.buf
  if old and vim.api.nvim_buf_is_valid(old) then
    -- A finished terminal (kept to show its exit status) is replaced.
    pcall(vim.api.nvim_buf_delete, old, { force = true })
  end
  local state = { cmd = cmd, mcp_config = mcp_file, port = st.port, provider = provider }
  local opened, buf, job = pcall(provider.open, cmd, env, vim.fn.getcwd(), events(state, opts))
  if not opened then
    return false, tostring(buf)
  end
  state.buf, state.job, state.started_ms = buf, job, vim.uv.now()
  sessions.adopt(state)
  decorate(buf, job)
  require("claude_context.terminal.input").install_paste()
  -- Wiping the buffer (:bwipeout!, :bdelete!) ends the job.
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    once = true,
    callback = function()
      pcall(vim.fn.jobstop, job)
      sessions.forget(state)
    end,
  })
  if opts.reload then
    reload.install()
  end
  return true
end

return M
