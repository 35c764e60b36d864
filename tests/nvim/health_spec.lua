-- :checkhealth claude_context covers every feature that needs something outside: the CLI
-- features by version and options (hooks, worktrees, background sessions through `claude agents
-- --json`, with a short wait), the hooks, git for worktrees, the language servers and tree-sitter
-- parsers of the code tools; and the sub-agent's permissions come from the library (the check
-- and the defaults it owns), not from a Lua copy.
local h = require("helpers")
local eq, ok, contains = h.eq, h.ok, h.contains

local health = require("claude_context.health")

---The lines `fn` reports through vim.health, as "KIND message".
local capture = h.health_lines

---A fake `claude`: --version prints `version`, --help prints `help`, `agents --json` runs
---`agents` (shell).
local function fake_claude(version, help, agents)
  local bin = h.tmpdir()
  local f = bin .. "/claude"
  vim.fn.writefile({
    "#!/bin/sh",
    'case "$1" in',
    ("  --version) echo '%s (Claude Code)';;"):format(version),
    ("  --help) printf '%%s\\n' '%s';;"):format(help),
    ("  agents) %s;;"):format(agents),
    "esac",
  }, f)
  vim.fn.setfperm(f, "rwxr-xr-x")
  require("claude_context.config").resolve({ claude = { cmd = f } })
  return f
end

return {
  {
    "the sub-agent's permissions are the library's: its defaults, and every way the person takes them over",
    function()
      local config = require("claude_context.config")
      local function section(opts)
        config.resolve(opts)
        return capture(health.check_sub_agent)
      end
      local d = section({})
      contains(d, "OK tools: Read, Grep, Glob; permission mode: dontAsk; settings loaded: user")
      ok(not d:find("WARN", 1, true), d)
      contains(
        section({
          claude = { allowed_tools = { "Read" }, permission_mode = "plan", setting_sources = { "user", "project" } },
        }),
        "OK tools: Read; permission mode: plan; settings loaded: user, project"
      )
      for _, args in ipairs({
        { "--settings", "{}" },
        { "--settings={}" },
        { "--allow-dangerously-skip-permissions" },
        { "--dangerously-skip-permissions" },
        { "--permission-mode", "bypassPermissions" },
        { "--permission-mode=bypassPermissions" },
      }) do
        contains(
          section({ claude = { args = args } }),
          "WARN the sub-agent skips every permission check",
          vim.inspect(args)
        )
      end
      contains(section({ claude = { permission_mode = "bypassPermissions" } }), "WARN the sub-agent skips")
      -- The same answer as the library's own check.
      config.resolve({ claude = { args = { "--allow-dangerously-skip-permissions" } } })
      eq(true, health.sub_agent_permissions().person_owns)
      config.resolve({})
    end,
  },
  {
    "the CLI's features: hooks by version, worktrees and background sessions by its options and `claude agents --json`",
    function()
      fake_claude("2.1.300", "--bg --worktree --settings", 'echo \'[{"id":"a"}]\'')
      local t = capture(health.check_cli)
      contains(t, "OK Claude's terminal and /ide")
      contains(t, "OK session hooks")
      contains(t, "OK worktrees (claude --worktree): supported")
      contains(t, "OK background sessions (claude --bg; `claude agents --json` lists 1)")
      ok(not t:find("WARN", 1, true), t)
      -- (Its --help names no attach/stop commands.)
      contains(t, "INFO this Claude Code has no `claude attach` / `claude stop`")
      contains(t, "2.1.330 or newer")

      fake_claude("2.1.100", "--settings", "exit 1")
      t = capture(health.check_cli)
      contains(t, "WARN Claude Code 2.1.139 or newer is needed for the session hooks")
      contains(t, "INFO this Claude Code has no --worktree")
      contains(
        t,
        "INFO this Claude Code has no --bg: background sessions (:ClaudeContext new, agents) need a newer CLI"
      )
      contains(t, "2.1.197 or newer")

      -- --bg but no `agents` command: the version needed, not a broken service.
      fake_claude("2.1.300", "--bg", "echo \"error: unknown command 'agents'\" >&2; exit 1")
      t = capture(health.check_cli)
      contains(
        t,
        "INFO this Claude Code has no `claude agents --json`: background sessions need Claude Code 2.1.197 or newer"
      )
      ok(not t:find("WARN the background service", 1, true), t)

      fake_claude("2.1.300", "--bg", "echo 'not signed in' >&2; exit 3")
      t = capture(health.check_cli)
      contains(t, "WARN the background service does not answer: `claude agents --json` failed (exit 3): not signed in")

      -- A background service that hangs: health waits only a moment.
      local wait = health.CLI_WAIT_MS
      health.CLI_WAIT_MS = 300
      fake_claude("2.1.300", "--bg", "sleep 30")
      t = capture(health.check_cli)
      health.CLI_WAIT_MS = wait
      contains(t, "WARN the background service does not answer: `claude agents --json` gave no answer within")

      -- Its --help and its agents both hang: the checks share one wait, not one each.
      local f = fake_claude("2.1.300", "--bg", "sleep 30")
      vim.fn.writefile(
        { "#!/bin/sh", 'case "$1" in', "  --version) echo '2.1.300 (Claude Code)';;", "  *) sleep 30;;", "esac" },
        f
      )
      local system, given = vim.system, {}
      vim.system = function(...)
        local proc = system(...)
        local wait = proc.wait
        proc.wait = function(self, ms)
          table.insert(given, ms)
          return wait(self, ms)
        end
        return proc
      end
      health.CLI_WAIT_MS = 300
      local okc, cerr = pcall(capture, health.check_cli)
      vim.system, health.CLI_WAIT_MS = system, wait
      assert(okc, cerr)
      eq(3, #given, vim.inspect(given))
      -- (--help used the budget up: little or nothing is left for the agents' check.)
      ok(given[3] <= 50, "one budget for the three: " .. vim.inspect(given))
      require("claude_context.config").resolve({})
    end,
  },
  {
    "hooks: on with the built relay; off by option; not added beside the person's own --settings",
    function()
      local config = require("claude_context.config")
      config.resolve({})
      local t = capture(health.check_hooks)
      contains(t, "OK on: ")
      config.resolve({ sessions = { hooks = false } })
      contains(capture(health.check_hooks), "INFO off (setup{sessions = {hooks = false}})")
      config.resolve({ terminal = { args = { "--settings", "{}" } } })
      contains(capture(health.check_hooks), "WARN not added: the command line has its own --settings")
      config.resolve({})
    end,
  },
  {
    "git: its version against what worktrees need, and the repository's worktrees",
    function()
      local dir = vim.fn.resolve(h.tmpdir())
      vim.system({ "git", "init", "-q", dir }):wait()
      vim.fn.mkdir(dir .. "/.claude/worktrees/agent-x", "p")
      vim.cmd.cd(vim.fn.fnameescape(dir))
      local t = capture(health.check_git)
      vim.cmd.cd("-")
      contains(t, "OK git ")
      contains(t, "worktrees need 2.40.0 or newer")
      contains(t, "INFO worktrees: agent-x")
    end,
  },
  {
    "code tools: per filetype, the language servers configured and whether a tree-sitter parser loads",
    function()
      vim.lsp.config("fake-py", { cmd = { "/nonexistent/pyls" }, filetypes = { "python" } })
      vim.lsp.enable("fake-py")
      local dir = h.tmpdir()
      vim.cmd.edit(vim.fn.fnameescape(dir .. "/a.lua"))
      local b1 = vim.api.nvim_get_current_buf()
      vim.cmd.edit(vim.fn.fnameescape(dir .. "/b.nosuchlang"))
      vim.bo.filetype = "nosuchlang"
      local t = capture(health.check_code_tools)
      contains(t, "WARN language server fake-py: /nonexistent/pyls is not executable")
      contains(t, "python: language server fake-py; tree-sitter parser")
      -- Neovim ships the Lua parser.
      contains(t, "INFO lua: language server none; tree-sitter parser lua loads")
      contains(t, "WARN nosuchlang: language server none; tree-sitter parser for nosuchlang missing")
      vim.lsp.enable("fake-py", false)
      vim.cmd("bwipeout! " .. b1)
      vim.cmd("bwipeout!")
    end,
  },
}
