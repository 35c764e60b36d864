-- :ClaudeContext open (a terminal running a fake `claude` that records its argv, environment
-- and --mcp-config file), reloading buffers Claude changed, and :ClaudeContext mcp-command.
local h = require("helpers")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local cc = h.cc
local term = h.term

local tmp = h.tmpdir()
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h")
local out = tmp .. "/fake-out" -- the fake claude writes <out>.args, <out>.env, <out>.mcp, <out>.mode
local target = tmp .. "/edited-by-claude.txt"

-- A stand-in for the Claude Code CLI: records how it was started, then obeys lines typed into
-- the terminal ("write": change the target file; "exit N": leave with status N).
local fake = tmp .. "/fake claude" -- a space in the path, on purpose
do
  local f = assert(io.open(fake, "w"))
  f:write([[#!/bin/sh
for a in "$@"; do printf '%s\n' "$a"; done > "$FAKE_OUT.args.tmp"
env > "$FAKE_OUT.env"
for a in "$@"; do
  case "$a" in
    --mcp-config=*) f="${a#--mcp-config=}"; cp "$f" "$FAKE_OUT.mcp"; stat -c %a "$f" > "$FAKE_OUT.mode";;
  esac
done
mv "$FAKE_OUT.args.tmp" "$FAKE_OUT.args"
echo "fake claude ready"
while read -r line; do
  case "$line" in
    write) printf 'changed by claude\n' > "$FAKE_TARGET"; echo "wrote the file";;
    exit*) exit "${line#exit }";;
  esac
done
]])
  f:close()
  vim.fn.setfperm(fake, "rwx------")
end

local function read_lines(path)
  local f = io.open(path, "r")
  if not f then
    return nil
  end
  local lines = {}
  for l in f:lines() do
    table.insert(lines, l)
  end
  f:close()
  return lines
end

local function env_of(path)
  local env = {}
  for _, l in ipairs(read_lines(path) or {}) do
    local k, v = l:match("^([^=]+)=(.*)$")
    if k then
      env[k] = v
    end
  end
  return env
end

local function clear_out()
  for _, s in ipairs({ ".args", ".env", ".mcp", ".mode" }) do
    os.remove(out .. s)
  end
end

local function wait_started()
  return wait_for(function()
    return read_lines(out .. ".args")
  end, 10000, "the fake claude to start")
end

local function term_wins()
  local buf = term()._state.buf
  return buf and vim.fn.win_findbuf(buf) or {}
end

local function job_alive(job)
  return vim.fn.jobwait({ job }, 0)[1] == -1
end

-- The fake CLI (claude.cmd) goes with every terminal setup below.
local cli = { cmd = fake }
local base = {
  args = { "--model", "stub model" },
  env = { FAKE_OUT = out, FAKE_TARGET = target },
}

return {
  {
    "bad terminal options are refused with the option's name",
    function()
      local cases = {
        { { side = "middle" }, "terminal.side" },
        { { size = -1 }, "terminal.size" },
        { { args = "--verbose" }, "terminal.args" },
        { { cmd = {} }, "terminal.cmd" },
        { { colour = "red" }, "terminal.colour" },
        { { float = { width = "wide" } }, "terminal.float.width" },
        { { permission_mode = "yolo" }, "terminal.permission_mode" },
        { { permission_mode = true }, "terminal.permission_mode" },
      }
      for _, c in ipairs(cases) do
        local okc, err = pcall(cc().setup, { auto_start = false, terminal = c[1] })
        ok(not okc, vim.inspect(c[1]) .. " accepted")
        contains(err, c[2])
      end
    end,
  },
  {
    "a missing claude executable is a clear error and leaves no window behind",
    function()
      cc().setup({ claude = { cmd = tmp .. "/no-such-claude" } })
      local wins = #vim.api.nvim_list_wins()
      local okc, err = term().toggle()
      eq(false, okc)
      contains(err, "no-such-claude")
      contains(err, "not executable")
      eq(wins, #vim.api.nvim_list_wins())
    end,
  },
  {
    ":ClaudeContext open runs claude with the IDE env, no_proxy and a private --mcp-config",
    function()
      vim.env.no_proxy = "example.com, 127.0.0.1"
      vim.env.NO_PROXY = nil
      cc().setup({ claude = cli, terminal = base })
      clear_out()
      local before = #vim.api.nvim_list_wins()
      vim.cmd("ClaudeContext open")
      local args = wait_started()
      local st = cc().status()
      local token = require("claude_context.native").load().token()

      -- argv (claude_context.cli.argv): --mcp-config=<file> first, --settings with the
      -- session-state hooks, the permission mode that shows diffs, then the args (a space
      -- survives).
      eq(5, #args, vim.inspect(args))
      local mcp_file = args[1]:match("^%-%-mcp%-config=(.+)$")
      ok(mcp_file, "first argument is --mcp-config=<file>: " .. args[1])
      eq("--permission-mode=default", args[3])
      eq({ "--model", "stub model" }, { args[4], args[5] })
      local settings = vim.json.decode((assert(args[2]:match("^%-%-settings=(.+)$"), args[2])))
      eq({ "hook", "Stop" }, settings.hooks.Stop[1].hooks[1].args, vim.inspect(settings.hooks.Stop))
      -- The session has the bridge's MCP server: a tool call's one hook calls its hook tool.
      eq("mcp_tool", settings.hooks.PreToolUse[1].hooks[1].type)
      eq(
        { "Bash" },
        vim.tbl_map(function(e)
          return e.matcher
        end, settings.hooks.PostToolUse),
        "after Bash alone (Bash edits)"
      )
      for _, a in ipairs(args) do
        ok(not a:find(token, 1, true), "the token is not on the command line")
      end

      -- The file: 0600 in a 0700 directory, the bridge registered as a ws MCP server.
      eq("600", vim.trim(read_lines(out .. ".mode")[1]))
      eq(tonumber("600", 8), h.mode(mcp_file))
      eq(tonumber("700", 8), h.mode(vim.fn.fnamemodify(mcp_file, ":h")))
      eq(vim.fn.stdpath("run") .. "/claude-context", vim.fn.fnamemodify(mcp_file, ":h"))
      eq({
        mcpServers = {
          ["claude-context"] = {
            type = "ws",
            url = "ws://127.0.0.1:" .. st.port .. "/mcp",
            headers = { ["x-claude-code-ide-authorization"] = token },
            -- Claude Code's per-call limit: longer than the longest execute_claude.
            timeout = (2 * 86400 + 60) * 1000,
          },
        },
      }, h.read_json(out .. ".mcp"))

      -- The environment.
      local env = env_of(out .. ".env")
      eq(tostring(st.port), env.CLAUDE_CODE_SSE_PORT)
      eq("main", env.CLAUDE_CONTEXT_SESSION, "the hooks name the terminal")
      eq("true", env.ENABLE_IDE_INTEGRATION)
      eq("example.com,127.0.0.1,localhost,::1", env.no_proxy)
      eq("example.com,127.0.0.1,localhost,::1", env.NO_PROXY)
      eq(out, env.FAKE_OUT, "terminal.env reaches the job")

      -- The window: a vertical split on the right, 40% of the columns, a terminal buffer.
      eq(before + 1, #vim.api.nvim_list_wins())
      local wins = term_wins()
      eq(1, #wins)
      local buf = term()._state.buf
      eq("terminal", vim.bo[buf].buftype)
      eq(math.floor(vim.o.columns * 0.4 + 0.5), vim.api.nvim_win_get_width(wins[1]))
      eq(vim.o.columns, vim.api.nvim_win_get_position(wins[1])[2] + vim.api.nvim_win_get_width(wins[1]))
      ok(job_alive(term()._state.job), "job running")
    end,
  },
  {
    "toggling hides and shows the same terminal; the job keeps running",
    function()
      local s = term()._state
      local buf, job = s.buf, s.job
      vim.cmd("ClaudeContext open")
      eq(0, #term_wins(), "hidden")
      ok(vim.api.nvim_buf_is_valid(buf), "buffer kept")
      ok(job_alive(job), "job still running")
      vim.cmd("ClaudeContext open")
      eq(1, #term_wins(), "shown again")
      eq(buf, term()._state.buf)
      eq(job, term()._state.job)
      eq(buf, vim.api.nvim_get_current_buf(), "the terminal window is current")
    end,
  },
  {
    "a file Claude changes on disk is reloaded when the terminal prints",
    function()
      vim.fn.writefile({ "original" }, target)
      vim.cmd("stopinsert")
      vim.cmd("wincmd p")
      vim.cmd.edit(vim.fn.fnameescape(target))
      local fbuf = vim.api.nvim_get_current_buf()
      eq({ "original" }, vim.api.nvim_buf_get_lines(fbuf, 0, -1, false))
      -- Make sure the new mtime differs even on coarse file systems.
      vim.uv.fs_utime(target, os.time() - 10, os.time() - 10)
      -- The terminal's checks go through claude_context.util.reload, as the autocommands' do.
      local t = require("claude_context.util.reload")
      local orig, calls = t.checktime, 0
      t.checktime = function()
        calls = calls + 1
        orig()
      end
      vim.wait(500) -- earlier output settles
      calls = 0
      vim.fn.chansend(term()._state.job, "write\n")
      wait_for(function()
        return vim.api.nvim_buf_get_lines(fbuf, 0, -1, false)[1] == "changed by claude"
      end, 5000, "the buffer to reload after terminal output")
      t.checktime = orig
      ok(calls >= 1, "terminal output ran the plugin's checktime")
    end,
  },
  {
    "FocusGained and BufEnter reload too (installed by setup)",
    function()
      local fbuf = vim.fn.bufnr(target)
      local function first_line()
        return vim.api.nvim_buf_get_lines(fbuf, 0, -1, false)[1]
      end
      -- The reload autocommands live in claude_context.util.reload (setup() installs them without
      -- loading the terminal module).
      local t = require("claude_context.util.reload")
      local orig, calls = t.checktime, 0
      t.checktime = function()
        calls = calls + 1
        orig()
      end
      -- Let checks already under way (earlier terminal output) finish first.
      vim.wait(500)
      local function reloads_on(event, text, age)
        vim.fn.writefile({ text }, target)
        vim.uv.fs_utime(target, os.time() + age, os.time() + age)
        calls = 0
        vim.cmd("doautocmd " .. event)
        wait_for(function()
          return first_line() == text
        end, 3000, event .. " to reload")
        ok(calls >= 1, event .. " ran the plugin's checktime")
      end
      reloads_on("FocusGained", "edited elsewhere", 5)
      reloads_on("BufEnter", "edited again", 10)
      reloads_on("TermLeave", "edited a third time", 15)
      t.checktime = orig
    end,
  },
  {
    "a clean exit closes the terminal",
    function()
      local s = term()._state
      local buf = s.buf
      vim.fn.chansend(s.job, "exit 0\n")
      wait_for(function()
        return not vim.api.nvim_buf_is_valid(buf)
      end, 5000, "the terminal buffer to go")
      eq(nil, term()._state.job)
    end,
  },
  {
    "a failing exit keeps the terminal to show what happened; open starts a new one",
    function()
      clear_out()
      vim.cmd("ClaudeContext open")
      wait_started()
      local s = term()._state
      local buf, job = s.buf, s.job
      vim.fn.chansend(job, "exit 3\n")
      wait_for(function()
        return not job_alive(job) and term()._state.job == nil
      end, 5000, "the job to end")
      ok(vim.api.nvim_buf_is_valid(buf), "buffer kept after a failure")
      clear_out()
      vim.cmd("ClaudeContext open")
      wait_started()
      ok(term()._state.job ~= job, "a new job")
      ok(not vim.api.nvim_buf_is_valid(buf), "the dead terminal was replaced")
      eq(1, #term_wins())
    end,
  },
  {
    ":ClaudeContext close and :bwipeout! end the job",
    function()
      local job = term()._state.job
      vim.cmd("ClaudeContext close")
      wait_for(function()
        return not job_alive(job)
      end, 5000, "close to end the job")
      eq(0, #term_wins())
      clear_out()
      vim.cmd("ClaudeContext open")
      wait_started()
      local s = term()._state
      vim.cmd("bwipeout! " .. s.buf)
      wait_for(function()
        return not job_alive(s.job)
      end, 5000, "bwipeout to end the job")
      eq(nil, term()._state.buf)
    end,
  },
  {
    "close right after typing into claude: a vim.wait that follows does not spin forever",
    function()
      -- Neovim 0.11 re-queues a wiped terminal's free event while a write to its job is still
      -- owed a callback; a vim.wait in the same tick then never returns (seen as a spec file
      -- killed at its time limit). Run in a child Neovim with a time limit of its own.
      local script = tmp .. "/close-after-typing.lua"
      h.write(
        script,
        ([[
        local cc, t = require("claude_context"), require("claude_context.terminal")
        cc.setup({ claude = { cmd = %q }, terminal = { env = { FAKE_OUT = %q }, mcp_config = false, auto_insert = false, permission_mode = false } })
        vim.cmd("ClaudeContext open")
        assert(vim.wait(10000, function() return vim.uv.fs_stat(%q) ~= nil end), "fake claude did not start")
        local buf, job = t._state.buf, t._state.job
        t.pick_model("opus") -- types "/model opus" into claude: a write the event loop owes a callback
        t.close()
        vim.wait(300, function() return false end)
        assert(vim.wait(5000, function() return not vim.api.nvim_buf_is_valid(buf) end), "buffer not wiped")
        assert(vim.fn.jobwait({ job }, 0)[1] ~= -1, "job still runs")
        io.stdout:write("survived\n")
        vim.cmd("qa!")
      ]]):format(fake, tmp .. "/typed", tmp .. "/typed.args")
      )
      local proc = vim.system(
        { vim.v.progpath, "--headless", "--clean", "-u", root .. "/tests/minimal_init.lua", "-l", script },
        { text = true, cwd = tmp }
      )
      local res = proc:wait(30000)
      if res.code == 124 then
        -- A spinning Neovim never reads the SIGTERM that wait() sent: SIGKILL it.
        pcall(vim.uv.kill, proc.pid, "sigkill")
      end
      ok(res.code ~= 124, "the child Neovim hung after close (killed at the time limit)")
      contains(res.stdout .. res.stderr, "survived")
      eq(0, res.code, res.stdout .. res.stderr)
    end,
  },
  {
    "side and size: bottom with 8 lines, left with 30 columns, float",
    function()
      local function open_with(t)
        cc().setup({ claude = cli, terminal = vim.tbl_extend("force", base, t) })
        clear_out()
        vim.cmd("ClaudeContext open")
        wait_started()
        local w = term_wins()[1]
        local r = {
          win = w,
          pos = vim.api.nvim_win_get_position(w),
          w = vim.api.nvim_win_get_width(w),
          h = vim.api.nvim_win_get_height(w),
          cfg = vim.api.nvim_win_get_config(w),
        }
        term().close()
        return r
      end
      local b = open_with({ side = "bottom", size = 8 })
      eq(8, b.h)
      eq(vim.o.columns, b.w)
      ok(b.pos[1] > 0, "below the other windows")
      local l = open_with({ side = "left", size = 30 })
      eq(30, l.w)
      eq(0, l.pos[2])
      local f = open_with({ side = "float", float = { width = 0.5, height = 0.5, border = "single" } })
      eq("editor", f.cfg.relative)
      eq(math.floor(vim.o.columns * 0.5 + 0.5) - 2, f.w)
    end,
  },
  {
    "mcp_config = false leaves the bridge out of the argv",
    function()
      -- (sessions.hooks = false: no --settings with the session-state hooks either.)
      cc().setup({
        claude = cli,
        terminal = vim.tbl_extend("force", base, { mcp_config = false, args = {} }),
        sessions = { hooks = false },
      })
      clear_out()
      vim.cmd("ClaudeContext open")
      eq({ "--permission-mode=default" }, wait_started())
      term().close()
      cc().setup({ claude = cli, terminal = base })
    end,
  },
  {
    "permission_mode: another mode, false for none, and args that choose one win",
    function()
      local function argv(t)
        cc().setup({
          claude = cli,
          terminal = vim.tbl_extend("force", base, { mcp_config = false }, t),
          sessions = { hooks = false },
        })
        clear_out()
        vim.cmd("ClaudeContext open")
        local a = wait_started()
        term().close()
        return a
      end
      eq({ "--permission-mode=acceptEdits" }, argv({ permission_mode = "acceptEdits", args = {} }))
      eq({}, argv({ permission_mode = false, args = {} }))
      eq({ "--permission-mode", "plan" }, argv({ args = { "--permission-mode", "plan" } }))
      eq({ "--dangerously-skip-permissions" }, argv({ args = { "--dangerously-skip-permissions" } }))
      cc().setup({ claude = cli, terminal = base })
    end,
  },
  {
    "showing a claude started for an earlier bridge warns",
    function()
      clear_out()
      vim.cmd("ClaudeContext open")
      wait_started()
      vim.cmd("ClaudeContext open") -- hide
      local warned
      local orig = vim.notify
      vim.notify = function(msg, level)
        if level == vim.log.levels.WARN then
          warned = msg
        end
      end
      vim.cmd("ClaudeContext open") -- show, same bridge: no warning
      eq(nil, warned)
      vim.cmd("ClaudeContext open") -- hide
      cc().restart()
      vim.cmd("ClaudeContext open")
      vim.notify = orig
      contains(warned, "restarted")
      term().close()
    end,
  },
  {
    "stopping the bridge removes the --mcp-config file",
    function()
      clear_out()
      vim.cmd("ClaudeContext open")
      local args = wait_started()
      local mcp_file = args[1]:match("^%-%-mcp%-config=(.+)$")
      ok(vim.uv.fs_stat(mcp_file), "file exists while the bridge runs")
      term().close()
      cc().stop({ silent = true })
      eq(nil, vim.uv.fs_stat(mcp_file))
    end,
  },
  {
    "open starts a stopped bridge",
    function()
      eq(nil, cc().status())
      clear_out()
      vim.cmd("ClaudeContext open")
      wait_started()
      local st = cc().status()
      ok(st and st.running, "bridge started by open")
      eq(tostring(st.port), env_of(out .. ".env").CLAUDE_CODE_SSE_PORT)
      term().close()
    end,
  },
  {
    ":ClaudeContext mcp-command prints the claude mcp add line and copies it to +",
    function()
      local copied = {}
      vim.g.clipboard = {
        name = "test",
        copy = {
          ["+"] = function(lines)
            copied = lines
          end,
          ["*"] = function() end,
        },
        paste = {
          ["+"] = function()
            return copied
          end,
          ["*"] = function()
            return {}
          end,
        },
      }
      local root = require("claude_context.native").plugin_root()
      local bin = root .. "/lib/claude-context-mcp"
      eq(1, vim.fn.executable(bin), "make puts the relay in lib/")
      local msg = h.shown("ClaudeContext mcp-command")
      local want = "claude mcp add claude-context -- " .. bin
      contains(msg, want)
      eq({ want }, copied)
      eq(want, (require("claude_context.terminal.commands").mcp_command()))
    end,
  },
  {
    "mcp-command says how to build the relay when it is missing, and quotes odd paths",
    function()
      local t = require("claude_context.terminal.commands")
      local orig = t.mcp_binary_candidates
      t.mcp_binary_candidates = function()
        return { tmp .. "/none/claude-context-mcp" }
      end
      local line, err = t.mcp_command()
      eq(nil, line)
      contains(err, tmp .. "/none/claude-context-mcp")
      contains(err, "make")
      -- A path with a space is shell-quoted.
      local odd = tmp .. "/with space/claude-context-mcp"
      vim.fn.mkdir(vim.fn.fnamemodify(odd, ":h"), "p")
      vim.fn.writefile({ "#!/bin/sh" }, odd)
      vim.fn.setfperm(odd, "rwx------")
      t.mcp_binary_candidates = function()
        return { odd }
      end
      eq("claude mcp add claude-context -- '" .. odd .. "'", (t.mcp_command()))
      t.mcp_binary_candidates = orig
    end,
  },
  {
    "completion lists open, close and mcp-command",
    function()
      local names = require("claude_context.commands").complete("", "ClaudeContext ")
      for _, n in ipairs({ "open", "close", "mcp-command" }) do
        ok(vim.tbl_contains(names, n), n .. " in " .. vim.inspect(names))
      end
    end,
  },
  {
    "close right after open waits until the job runs its own program (Neovim's signal handlers are in the child until then)",
    function()
      local stop = require("claude_context.terminal.stop")
      if stop.started(vim.fn.getpid()) == nil then
        return -- no /proc: the stop waits a fixed while instead
      end
      -- A CLI that becomes Neovim: to /proc it looks like a child before its exec() all along.
      local nvim_cli = tmp .. "/nvim-cli"
      -- Its own mark on the command line tells the exec'd Neovim from the child before any exec
      -- (right after the fork, /proc shows Neovim's image and command line too).
      h.write(
        nvim_cli,
        ("#!/bin/sh\nexec %s --clean --headless -n --cmd 'let g:cc_cli_mark = 1'\n"):format(
          vim.fn.shellescape(vim.v.progpath)
        )
      )
      vim.fn.setfperm(nvim_cli, "rwx------")
      local limit = stop.limit_ms
      stop.limit_ms = 300
      local calls, jobstop = {}, vim.fn.jobstop
      vim.fn.jobstop = function(j)
        table.insert(calls, { job = j, ran = stop.started(vim.fn.jobpid(j)), at = vim.uv.now() })
        return jobstop(j)
      end
      local okc, err = pcall(function()
        cc().setup({ claude = { cmd = nvim_cli } })
        vim.cmd("ClaudeContext open")
        local job = term()._state.job
        local pid = vim.fn.jobpid(job)
        wait_for(function()
          local f = io.open(("/proc/%d/cmdline"):format(pid), "rb")
          local cmdline = f and f:read("*a") or ""
          if f then
            f:close()
          end
          return cmdline:find("cc_cli_mark", 1, true) ~= nil and stop.started(pid) == false
        end, 10000, "the job to run Neovim's program (after the script's exec)")
        local closed = vim.uv.now()
        term().close()
        eq({}, calls, "not stopped while the child runs Neovim's image")
        wait_for(function()
          return #calls == 1
        end, 5000, "the stop after its limit")
        ok(calls[1].at - closed >= stop.limit_ms, "stopped only at the limit")
        wait_for(function()
          return vim.fn.jobwait({ job }, 0)[1] ~= -1
        end, 10000, "the job to end")
        -- A job that runs its own program is stopped at once.
        calls = {}
        cc().setup({ claude = { cmd = fake } })
        vim.cmd("ClaudeContext open")
        job = term()._state.job
        wait_for(function()
          return stop.started(vim.fn.jobpid(job)) == true
        end, 10000, "the fake CLI to run")
        term().close()
        eq(1, #calls, "stopped at once")
        eq(true, calls[1].ran)
      end)
      vim.fn.jobstop, stop.limit_ms = jobstop, limit
      assert(okc, err)
    end,
  },
}
