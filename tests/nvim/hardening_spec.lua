-- Hardening inside a real Neovim: the log (level option, :ClaudeContext log, no secrets), the
-- token kept out of process arguments and of every file but the 0600 lock file, and stale lock
-- files of dead editors removed at start.
local h = require("helpers")
local eq, ok, contains = h.eq, h.ok, h.contains
local cc = h.cc

local read = h.read

local function log_file()
  return require("claude_context.config").log_file()
end

local function token()
  return require("claude_context.native").load().token()
end

---Every regular file under `dir`.
local function files_under(dir)
  local out = {}
  for name, t in vim.fs.dir(dir, { depth = 30 }) do
    if t == "file" then
      table.insert(out, dir .. "/" .. name)
    end
  end
  return out
end

local notifications = h.notified

return {
  {
    "the log goes to stdpath('log')/claude-context.log and log_level filters it",
    function()
      eq(vim.fn.stdpath("log") .. "/claude-context.log", log_file())
      os.remove(log_file())
      cc().setup({ log_level = "warn" })
      ok(cc().status(), "running")
      cc().stop({ silent = true })
      local s = read(log_file()) or ""
      ok(not s:find("bridge started", 1, true), "an INFO line at level warn:\n" .. s)
      cc().setup({ log_level = "info" })
      ok(cc().status(), "running")
      contains(read(log_file()) or "", "bridge started")
      cc().stop({ silent = true })
      contains(read(log_file()), "bridge stopped")
    end,
  },
  {
    "an invalid log_level is refused by setup() with the choices named, and nothing starts",
    function()
      local ok2, err = pcall(cc().setup, { log_level = "loud" })
      eq(false, ok2)
      contains(err, "log_level")
      contains(err, "one of off, error, warn, info, debug, trace")
      eq(nil, cc().status())
      -- A log file that cannot be created is reported by start(), not raised.
      local bad = vim.fn.tempname()
      vim.fn.writefile({}, bad) -- a file where the log's directory should be
      local got = notifications(function()
        cc().setup({ log_file = bad .. "/sub/claude-context.log" })
      end)
      eq(1, #got, vim.inspect(got))
      contains(got[1].msg, "cannot create the log directory")
      eq(nil, cc().status())
      cc().setup({ auto_start = false }) -- back to the default log file
    end,
  },
  {
    ":ClaudeContext log opens the log file",
    function()
      cc().setup({ log_level = "info" })
      local before = vim.api.nvim_get_current_win()
      vim.cmd("ClaudeContext log")
      local buf = vim.api.nvim_get_current_buf()
      eq(vim.uv.fs_realpath(log_file()), vim.uv.fs_realpath(vim.api.nvim_buf_get_name(buf)))
      contains(table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n"), "bridge started")
      ok(vim.api.nvim_get_current_win() ~= before, "in a split")
      vim.cmd("close")
    end,
  },
  {
    "the token stays out of a trace-level log, :ClaudeContext status, :checkhealth and process arguments",
    function()
      cc().stop({ silent = true })
      os.remove(log_file())
      cc().setup({ log_level = "trace" })
      local secret = token():sub(5)
      eq(28, #secret)
      for _, t in ipairs({ "getWorkspaceFolders", "fs-get-project-info", "fs-list-directory" }) do
        h.call(t, t == "fs-list-directory" and { path = "." } or {})
      end
      require("claude_context").call_tool_sync("fs-read-file", { path = "../../etc/passwd" })
      local status = h.shown("ClaudeContext status")
      contains(status, token():sub(1, 4) .. "****")
      ok(not status:find(secret, 1, true), "status shows the token")
      vim.cmd("checkhealth claude_context")
      local health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
      contains(health, "claude_context")
      ok(not health:find(secret, 1, true), "checkhealth shows the token")
      vim.cmd("bwipeout!")
      cc().stop({ silent = true })
      local log = read(log_file()) or ""
      contains(log, "bridge started")
      ok(not log:find(secret, 1, true), "the token is in the log")
      cc().setup({})
      secret = token():sub(5)
      -- Neovim's own arguments, its children's, anyone's.
      for name, t in vim.fs.dir("/proc") do
        if t == "directory" and name:match("^%d+$") then
          local cmd = read("/proc/" .. name .. "/cmdline")
          ok(not (cmd and cmd:find(secret, 1, true)), "process " .. name .. " has the token in its arguments")
        end
      end
    end,
  },
  {
    "only the 0600 lock file holds the token",
    function()
      local st = cc().status()
      local secret = token():sub(5)
      local holders = {}
      for _, f in ipairs(files_under(vim.env.CLAUDE_CONTEXT_TEST_TMP)) do
        local s = read(f)
        if s and s:find(secret, 1, true) then
          table.insert(holders, f)
        end
      end
      ok(#holders >= 1, "the lock file holds it")
      for _, f in ipairs(holders) do
        eq(tonumber("600", 8), h.mode(f), f)
      end
      eq({ vim.uv.fs_realpath(st.lock_file) }, vim.tbl_map(vim.uv.fs_realpath, holders))
      eq(tonumber("700", 8), h.mode(vim.fs.dirname(st.lock_file)))
    end,
  },
  {
    "lock files of dead Neovims are removed at start, others kept",
    function()
      cc().stop({ silent = true })
      local dir = vim.env.CLAUDE_CONFIG_DIR .. "/ide"
      vim.fn.mkdir(dir, "p")
      local function write(name, pid, ide)
        local f = assert(io.open(dir .. "/" .. name, "w"))
        f:write(
          vim.json.encode({ pid = pid, workspaceFolders = { "/w" }, ideName = ide, transport = "ws", authToken = "t" })
        )
        f:close()
      end
      write("1.lock", 2147483632, "Neovim")
      write("2.lock", vim.fn.getpid(), "Neovim")
      write("3.lock", 2147483632, "Visual Studio Code")
      cc().setup({})
      ok(not vim.uv.fs_stat(dir .. "/1.lock"), "a dead Neovim's lock file was kept")
      ok(vim.uv.fs_stat(dir .. "/2.lock"), "a live Neovim's lock file was removed")
      ok(vim.uv.fs_stat(dir .. "/3.lock"), "another IDE's lock file was removed")
      os.remove(dir .. "/2.lock")
      os.remove(dir .. "/3.lock")
    end,
  },
  {
    "max_inflight_per_client reaches the native server, which refuses 0 by name; auto_start",
    function()
      local config = require("claude_context.config")
      eq(3, vim.json.decode(config.to_native(config.resolve({ max_inflight_per_client = 3 }))).max_inflight_per_client)
      -- Not given: not sent (the native side's default applies).
      eq(nil, vim.json.decode(config.to_native(config.resolve({}))).max_inflight_per_client)
      local ok2, err = pcall(cc().setup, { max_inflight_per_client = "many" })
      eq(false, ok2)
      contains(err, "max_inflight_per_client")
      cc().stop()
      local got = notifications(function()
        cc().setup({ max_inflight_per_client = 0 })
      end)
      eq(1, #got, vim.inspect(got))
      contains(got[1].msg, "max_inflight_per_client must be at least 1")
      -- One line, without mlua's "runtime error" prefix or a traceback.
      ok(not got[1].msg:find("\n") and not got[1].msg:find("runtime error", 1, true), got[1].msg)
      eq(nil, cc().status())
      cc().setup({ max_inflight_per_client = 2 })
      ok(cc().status(), "the bridge runs with max_inflight_per_client = 2")
      -- auto_start = false: setup() configures without starting; the default starts.
      cc().stop()
      cc().setup({ auto_start = false })
      eq(nil, cc().status())
      cc().setup({})
      ok(cc().status(), "setup() with the default auto_start starts the bridge")
    end,
  },
}
