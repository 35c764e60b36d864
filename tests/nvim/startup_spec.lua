-- The start stays light: setup() called from init.lua loads no library and binds no port during
-- Neovim's startup; the bridge listens (lock file written) on the first turn of the event loop,
-- and a :ClaudeContext command given on the command line starts it first. Lazy-loading as
-- lazy.nvim does it (event = "VeryLazy", cmd = "ClaudeContext"): the commands work and Claude
-- Code finds the editor. With a lazy.nvim checkout in .reference/lazy.nvim (or
-- $CLAUDE_CONTEXT_TEST_LAZY), the same through lazy.nvim itself; without one, through the steps
-- lazy.nvim takes (runtimepath, plugin/ files, setup(opts), the command run again).
local h = require("helpers")
local eq, ok, contains = h.eq, h.ok, h.contains

local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h")

local children = {}

---A child Neovim started with init file `lines` (and extra arguments): its RPC channel.
local function child(lines, extra)
  local init = vim.fn.tempname() .. ".lua"
  vim.fn.writefile(vim.list_extend({ "vim.opt.swapfile = false", "vim.opt.shadafile = 'NONE'" }, lines), init)
  local argv = { vim.v.progpath, "--embed", "--headless", "--clean", "-u", init }
  vim.list_extend(argv, extra or {})
  local ch = vim.fn.jobstart(argv, { rpc = true })
  assert(ch > 0, "cannot start a child Neovim")
  table.insert(children, ch)
  return ch
end

local function lua(ch, code)
  return vim.rpcrequest(ch, "nvim_exec_lua", code, {})
end

---Waits until the child's bridge listens; returns its lock file's path.
local function wait_listening(ch)
  local lock
  local done = vim.wait(10000, function()
    lock = lua(
      ch,
      [[
      local cc = package.loaded["claude_context"]
      local st = cc and cc.status()
      return st and st.lock_file and vim.uv.fs_stat(st.lock_file) and st.lock_file or nil
    ]]
    )
    return lock ~= nil and lock ~= vim.NIL
  end, 20)
  ok(done, "the bridge listens and its lock file exists")
  return lock
end

local function stop_all()
  for _, ch in ipairs(children) do
    pcall(vim.rpcrequest, ch, "nvim_command", "qa!")
    pcall(vim.fn.jobstop, ch)
  end
  children = {}
end

---The status lines `:ClaudeContext status` shows, in the child.
local function status_text(ch)
  return lua(ch, [[return table.concat(require("claude_context.commands").status_lines(), "\n")]])
end

local function lazy_dir()
  local d = vim.env.CLAUDE_CONTEXT_TEST_LAZY or (root .. "/.reference/lazy.nvim")
  return vim.uv.fs_stat(d .. "/lua/lazy/init.lua") and d or nil
end

---The init lines of lazy.nvim loading this checkout with `spec_fields` (a Lua table's inside).
local function lazy_init(spec_fields)
  return {
    ("vim.opt.runtimepath:prepend(%q)"):format(lazy_dir()),
    "require('lazy').setup({",
    ("  spec = { { dir = %q, name = 'claude-context.nvim', %s, opts = {} } },"):format(root, spec_fields),
    "  root = vim.fn.stdpath('data') .. '/lazy', lockfile = vim.fn.tempname(),",
    "  install = { missing = false }, rocks = { enabled = false },",
    "  change_detection = { enabled = false }, checker = { enabled = false },",
    "  performance = { rtp = { reset = false }, reset_packpath = false },",
    "})",
  }
end

return {
  {
    "setup() in init.lua loads no library during startup; the bridge listens right after",
    function()
      local ch = child({
        ("vim.opt.runtimepath:prepend(%q)"):format(root),
        "require('claude_context').setup({})",
        "vim.g.native_in_init = package.loaded['claude_context._native'] ~= nil",
        "vim.g.commands_in_init = package.loaded['claude_context.commands'] ~= nil",
      })
      local lock = wait_listening(ch)
      eq(false, lua(ch, "return vim.g.native_in_init"))
      eq(false, lua(ch, "return vim.g.commands_in_init"))
      contains(status_text(ch), lock)
      -- Quitting removes the lock file, as before.
      pcall(vim.rpcrequest, ch, "nvim_command", "qa!")
      ok(
        vim.wait(5000, function()
          return not vim.uv.fs_stat(lock)
        end, 20),
        "the lock file is removed on exit"
      )
      stop_all()
    end,
  },
  {
    "a :ClaudeContext command on the command line runs after the bridge started",
    function()
      local ch = child({
        ("vim.opt.runtimepath:prepend(%q)"):format(root),
        "require('claude_context').setup({})",
      }, {
        "+lua vim.g.before = package.loaded['claude_context._native'] ~= nil",
        "+ClaudeContext status",
        "+lua vim.g.running = require('claude_context').is_running()",
      })
      wait_listening(ch)
      eq(false, lua(ch, "return vim.g.before"))
      eq(true, lua(ch, "return vim.g.running"))
      stop_all()
    end,
  },
  {
    "stop() before the deferred start: the bridge stays stopped",
    function()
      local ch = child({
        ("vim.opt.runtimepath:prepend(%q)"):format(root),
        "require('claude_context').setup({})",
        "require('claude_context').stop({ silent = true })",
      })
      lua(ch, "vim.wait(100)")
      eq(false, lua(ch, "return require('claude_context').is_running()"))
      -- The rest of setup() ran: the key tracker and the Connected/Disconnected watch are there.
      eq(
        true,
        lua(
          ch,
          "return package.loaded['claude_context.util.typing'] ~= nil and package.loaded['claude_context.status'] ~= nil"
        )
      )
      stop_all()
    end,
  },
  {
    "lazy-loaded on event = VeryLazy: the bridge listens and the commands work",
    function()
      local lines
      if lazy_dir() then
        lines = lazy_init("event = 'VeryLazy'")
      else
        -- lazy.nvim's steps: after the UI entered, the plugin joins the runtimepath, its plugin/
        -- files are sourced, and setup(opts) runs.
        lines = {
          "vim.api.nvim_create_autocmd('UIEnter', { once = true, callback = function() vim.schedule(function()",
          ("  vim.opt.runtimepath:prepend(%q)"):format(root),
          "  vim.cmd.runtime('plugin/claude_context.lua')",
          "  require('claude_context').setup({})",
          "end) end })",
        }
      end
      local ch = child(lines)
      eq(false, lua(ch, "return package.loaded['claude_context'] ~= nil"))
      -- A UI attaching (headless Neovim has none).
      lua(ch, "vim.api.nvim_exec_autocmds('UIEnter', {})")
      local lock = wait_listening(ch)
      contains(status_text(ch), lock)
      eq(2, lua(ch, "return vim.fn.exists(':ClaudeContext')"))
      stop_all()
    end,
  },
  {
    "lazy-loaded on cmd = ClaudeContext: the first command loads it, starts the bridge and runs",
    function()
      local lines
      if lazy_dir() then
        lines = lazy_init("cmd = 'ClaudeContext'")
      else
        -- lazy.nvim's steps: a stand-in command loads the plugin, calls setup(opts) and runs the
        -- command again.
        lines = {
          "vim.api.nvim_create_user_command('ClaudeContext', function(o)",
          "  vim.api.nvim_del_user_command('ClaudeContext')",
          ("  vim.opt.runtimepath:prepend(%q)"):format(root),
          "  vim.cmd.runtime('plugin/claude_context.lua')",
          "  require('claude_context').setup({})",
          "  vim.cmd('ClaudeContext ' .. o.args)",
          "end, { nargs = '*' })",
        }
      end
      local ch = child(lines)
      eq(false, lua(ch, "return package.loaded['claude_context'] ~= nil"))
      lua(ch, "vim.cmd('ClaudeContext status')")
      eq(true, lua(ch, "return require('claude_context').is_running()"))
      wait_listening(ch)
      stop_all()
    end,
  },
}
