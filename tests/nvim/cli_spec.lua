-- One place for the Claude Code CLI: `claude.cmd` names it for :ClaudeContext open, the
-- sub-agent (the native config) and :checkhealth (`terminal.cmd` is refused); without it,
-- discovery finds the official installer's ~/.local/bin/claude and ~/.claude/local/claude;
-- messages name the official installer first.
local h = require("helpers")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local cc = h.cc
local cli = function()
  return require("claude_context.cli")
end

local tmp = h.tmpdir()
local home = tmp .. "/home"
local empty_bin = tmp .. "/empty-bin"
vim.fn.mkdir(home, "p")
vim.fn.mkdir(empty_bin, "p")

---Writes an executable shell script that records its arguments in `<path>.ran`.
local function fake_cli(path)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
  h.write(path, ('#!/bin/sh\nprintf "%%s\\n" "$@" > "%s.ran"\nsleep 30\n'):format(path))
  vim.fn.setfperm(path, "rwx------")
  return path
end

---A world with no `claude` anywhere: HOME is empty, PATH holds no claude, no CLAUDE_PATH.
local function no_cli_world()
  vim.env.HOME = home
  vim.env.PATH = empty_bin .. ":/usr/bin:/bin"
  vim.env.CLAUDE_PATH = nil
  vim.fn.delete(home .. "/.local", "rf")
  vim.fn.delete(home .. "/.claude", "rf")
end

local function native_cmd()
  local t = vim.json.decode(require("claude_context.config").to_native(require("claude_context.config").options))
  return t.claude and t.claude.cmd or nil
end

---Runs :ClaudeContext open and returns the program it started; with `ran` (a fake CLI's path),
---waits until that program has run before closing the terminal (closing stops the job, which
---could otherwise end before the script wrote its record on a busy machine).
---@param ran string?
local function open_and_argv0(ran)
  local term = require("claude_context.terminal")
  vim.cmd("ClaudeContext open")
  local cmd = term._state.cmd
  if ran then
    wait_for(function()
      return vim.fn.filereadable(ran .. ".ran") == 1
    end, 10000, "the terminal to run " .. ran)
  end
  term.close()
  return cmd and cmd[1]
end

local system_cli = vim.fn.filereadable("/usr/local/bin/claude") == 1 or vim.fn.filereadable("/usr/bin/claude") == 1

return {
  {
    "the Claude Code versions the features need are the Rust side's (one place)",
    function()
      eq({ hooks = "2.1.139", bg = "2.1.197", manage = "2.1.330" }, require("claude_context.cli").versions())
      eq("2.1.139", require("claude_context.sessions.hooks").min_cli())
      eq(require("claude_context.cli").versions().bg, require("claude_context.agents").requirements().bg)
    end,
  },
  {
    "claude.cmd names the CLI for the terminal, the sub-agent and :checkhealth alike",
    function()
      no_cli_world()
      local fake = fake_cli(tmp .. "/tools/my-claude")
      cc().setup({ claude = { cmd = fake } })
      eq(fake, native_cmd(), "the sub-agent's CLI (native config)")
      local path, source = require("claude_context.health").claude_path()
      eq({ fake, "config" }, { path, source }, ":checkhealth's CLI")
      eq(fake, open_and_argv0(fake), ":ClaudeContext open's CLI")
    end,
  },
  {
    "terminal.cmd is refused with an error naming claude.cmd; claude.cmd + terminal.args say the same",
    function()
      no_cli_world()
      local fake = fake_cli(tmp .. "/old/claude-old")
      for _, cmd in ipairs({ fake, { fake, "--verbose" } }) do
        local okc, err = pcall(cc().setup, { terminal = { cmd = cmd } })
        eq(false, okc, "terminal.cmd = " .. vim.inspect(cmd) .. " accepted")
        contains(err, "terminal.cmd")
        contains(err, "claude.cmd")
        contains(err, "terminal.args")
      end
      -- What a list `{ program, args… }` meant: the program in claude.cmd, the rest in terminal.args.
      cc().setup({
        claude = { cmd = fake },
        terminal = { args = { "--verbose" }, mcp_config = false, permission_mode = false },
      })
      eq(fake, native_cmd())
      local term = require("claude_context.terminal")
      vim.cmd("ClaudeContext open")
      local cmd = term._state.cmd
      term.close()
      cmd = vim.tbl_filter(function(a)
        return not vim.startswith(a, "--settings=")
      end, cmd)
      eq({ fake, "--verbose" }, { cmd[1], cmd[2] }, "the program, then terminal.args (the hooks' --settings aside)")
    end,
  },
  {
    "discovery finds ~/.local/bin/claude (official installer) before ~/.claude/local/claude",
    function()
      if system_cli then
        return -- a system-wide claude would be found first
      end
      no_cli_world()
      cc().setup({})
      local local_install = fake_cli(home .. "/.claude/local/claude")
      local path, source = cli().find()
      eq({ local_install, "common location" }, { path, source })
      local official = fake_cli(home .. "/.local/bin/claude")
      path, source = cli().find()
      eq({ official, "common location" }, { path, source })
      -- The terminal runs what discovery found.
      eq(official, open_and_argv0())
      -- PATH beats both.
      local on_path = fake_cli(empty_bin .. "/claude")
      eq(on_path, (cli().find()))
      os.remove(on_path)
    end,
  },
  {
    "nothing found: the messages name the official installer first, npm second",
    function()
      if system_cli then
        return
      end
      no_cli_world()
      cc().setup({})
      local path, why = cli().find()
      eq(nil, path)
      contains(why, home .. "/.local/bin/claude")
      contains(why, home .. "/.claude/local/claude")
      local official = why:find("curl -fsSL https://claude.ai/install.sh | bash", 1, true)
      local npm = why:find("npm install -g @anthropic-ai/claude-code", 1, true)
      ok(official and npm and official < npm, why)
      -- :ClaudeContext open says the same, and so does a configured command that is missing.
      local okc, err = require("claude_context.terminal").toggle()
      eq(false, okc)
      ok(err:find("curl -fsSL", 1, true) < err:find("npm install", 1, true), err)
      cc().setup({ claude = { cmd = tmp .. "/nope/claude" } })
      okc, err = require("claude_context.terminal").toggle()
      eq(false, okc)
      contains(err, "claude.cmd")
      contains(err, "not executable")
      contains(err, "curl -fsSL https://claude.ai/install.sh | bash")
    end,
  },
  {
    "the permission modes are the native library's, for the terminal and the sub-agent alike",
    function()
      local modes = require("claude_context.config.terminal").permission_modes()
      eq(require("claude_context.native").load().permission_modes(), modes)
      for _, m in ipairs({ "default", "manual", "acceptEdits", "auto", "plan", "dontAsk", "bypassPermissions" }) do
        ok(vim.tbl_contains(modes, m), m .. " is a mode")
      end
      -- Both sides take "manual" (the newer CLIs' name for "default"), and refuse a mode neither knows.
      cc().stop({ silent = true })
      cc().setup({ terminal = { permission_mode = "manual" }, claude = { permission_mode = "manual" } })
      ok(cc().status(), "the bridge takes claude.permission_mode = manual")
      local okk, e = pcall(cc().setup, { terminal = { permission_mode = "yolo" } })
      eq(false, okk)
      contains(e, "manual")
      cc().stop({ silent = true })
      cc().setup({})
    end,
  },
}
