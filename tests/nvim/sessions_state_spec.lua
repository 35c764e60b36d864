-- Session states from Claude Code's hooks: the real `claude-context-mcp hook <Event>` binary
-- sends events to this Neovim's bridge; status().sessions, turns(), User
-- ClaudeContextSessionState, the notifications (and their options), "seen" when the person enters
-- the terminal, the statusline counts, and the --settings the terminal adds.
local h = require("helpers")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local cc = h.cc
local S = function()
  return require("claude_context.sessions.state")
end

h.record_notify()

local events = {}
vim.api.nvim_create_autocmd("User", {
  pattern = "ClaudeContextSessionState",
  callback = function(ev)
    table.insert(events, ev.data)
  end,
})

local function events_of(id)
  return vim.tbl_filter(function(e)
    return e.id == id
  end, events)
end

local function session(id)
  for _, s in ipairs(cc().status().sessions) do
    if s.id == id then
      return s
    end
  end
end

---Runs the hook binary as Claude Code would, for `terminal` ("" for none).
local function hook(event, input, terminal)
  local bin = assert(require("claude_context.sessions.hooks").binary(), "claude-context-mcp is built")
  input.hook_event_name = event
  input.transcript_path = "/tmp/t.jsonl"
  input.cwd = vim.fn.getcwd()
  -- Not SystemObj:wait(), which holds the editor's jobs back: a PermissionRequest's hook waits
  -- for the editor's answer (the permission queue), as Claude Code runs it beside its dialog.
  local r
  vim.system({ bin, "hook", event }, {
    stdin = vim.json.encode(input),
    env = { CLAUDE_CODE_SSE_PORT = tostring(cc().status().port), CLAUDE_CONTEXT_SESSION = terminal or "main" },
  }, function(res)
    r = res
  end)
  wait_for(function()
    return r
  end, 20000, "the hook's end")
  eq(0, r.code, r.stderr)
  eq("", r.stdout, "a hook prints nothing on stdout")
end

---Waits for the event that puts session `id` in `state`.
local function wait_state(id, state)
  return wait_for(function()
    for _, e in ipairs(events_of(id)) do
      if e.state == state then
        return e
      end
    end
  end, 10000, ("session %s %s"):format(id, state))
end

local term_buf

---A git project with worktrees `names` under .claude/worktrees/, and a fake `claude` whose
---`agents --json` lists one busy background session (id `id`) in worktree `listed`.
---@return string dir, string fake
local function project_with_worktrees(names, listed, id)
  local dir = assert(vim.uv.fs_realpath(h.tmpdir()))
  vim.system({ "git", "init", "-q", dir }):wait()
  for _, n in ipairs(names) do
    vim.fn.mkdir(dir .. "/.claude/worktrees/" .. n, "p")
  end
  local fake = dir .. "/claude"
  local list = {
    {
      id = id,
      cwd = dir .. "/.claude/worktrees/" .. listed,
      kind = "background",
      startedAt = 1,
      sessionId = "s-" .. listed,
      status = "busy",
    },
  }
  h.write(
    fake,
    ("#!/bin/sh\ncase \"$1\" in\n  agents) printf '%%s' %s ;;\n  *) echo ok ;;\nesac\n"):format(
      vim.fn.shellescape(vim.json.encode(list))
    )
  )
  vim.fn.setfperm(fake, "rwxr-xr-x")
  return dir, fake
end

---As in a restarted Neovim that has not used the background sessions yet, in a project whose
---worktree `name` holds a background session the service lists (id `id`) and no hook reported:
---`start(fake claude)` starts the bridge; its list is then read and the session counted.
---@param name string
---@param id string
---@param start fun(fake: string)
local function restarted_in_project(name, id, start)
  cc().stop({ silent = true })
  for m in pairs(package.loaded) do
    if m:find("^claude_context%.agents") then
      package.loaded[m] = nil
    end
  end
  local dir, fake = project_with_worktrees({ name }, name, id)
  local before = vim.fn.getcwd()
  vim.cmd.cd(dir)
  local okc, err = pcall(function()
    start(fake)
    wait_for(function()
      return package.loaded["claude_context.agents"]
    end, 10000, "the background sessions' list read once the bridge runs")
    wait_for(
      function()
        return S().statusline() == "1 working"
      end,
      10000,
      "the background session counted: "
        .. S().statusline()
        .. " "
        .. vim.inspect(require("claude_context.agents.list").list())
    )
  end)
  vim.cmd.cd(before)
  assert(okc, err)
end

return {
  {
    "setup{sessions} is checked",
    function()
      for _, bad in ipairs({
        { sessions = { notify = "yes" } },
        { sessions = { notify = { other = true } } },
        { sessions = { bell = 1 } },
        { sessions = { desktop = "osc8" } },
        { sessions = { nope = true } },
        { sessions = 3 },
      }) do
        local okk, err = pcall(cc().setup, bad)
        ok(not okk, vim.inspect(bad))
        contains(tostring(err), "sessions", vim.inspect(bad))
      end
      cc().setup({ sessions = { notify = { waiting = true }, desktop = "osc777" } })
      local o = S().options()
      eq({ waiting = true, done = true }, o.notify)
      eq("osc777", o.desktop)
      eq(true, o.hooks)
      -- The desktop notification's text is one OSC's body: no control of its own reaches the
      -- terminal (BEL, ESC, and the C1 ST/CSI U+009C/U+009B, which end or start sequences).
      local sent = {}
      local orig = S().send_to_terminal
      S().send_to_terminal = function(seq)
        table.insert(sent, seq)
      end
      S().notify({ id = "z", name = "main", state = "waiting", waiting_for = "a\7b\27]0;x\194\156c\194\155d" })
      S().send_to_terminal = orig
      eq({ "\27]777;notify;Claude Code;Claude [main] needs you: a b ]0;x c d\7" }, sent)
      cc().setup({ sessions = { notify = { waiting = true }, desktop = "osc777" } })
    end,
  },
  {
    "the terminal's --settings: hooks for every event, the binary's path, no token",
    function()
      local arg = assert(require("claude_context.sessions.hooks").settings_arg({ "claude" }))
      local token = require("claude_context.native").load().token()
      ok(not arg:find(token, 1, true), "no token on the command line")
      local hooks = vim.json.decode(arg:match("^%-%-settings=(.+)$")).hooks
      for _, ev in ipairs({
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PermissionRequest",
        "Notification",
        "Stop",
        "SessionEnd",
      }) do
        local c = hooks[ev][1].hooks[1]
        eq("command", c.type)
        -- Run directly (exec form: no shell), the event as an argument.
        ok(vim.endswith(c.command, "/claude-context-mcp"), c.command)
        eq({ "hook", ev }, c.args)
        -- Only PostToolUse (a report on every tool) is not waited for.
        eq(ev == "PostToolUse" or nil, c.async, ev)
      end
      eq("Edit|Write|MultiEdit|NotebookEdit", hooks.PreToolUse[1].matcher)
      -- One entry per event the library lists (hook::Event, the one list), and no other.
      local names = vim.tbl_map(function(e)
        return e.name
      end, require("claude_context.sessions.hooks").events())
      local keys = vim.tbl_keys(hooks)
      table.sort(names)
      table.sort(keys)
      eq(names, keys)
      -- With the bridge's MCP server (:ClaudeContext open's --mcp-config), a tool call has one
      -- hook, before every tool: a call of its hook tool (no process; only the tool input's path
      -- is sent). None after the tool: each hook costs Claude Code time on every tool call.
      local hk_mod = require("claude_context.sessions.hooks")
      local mcp_arg = "--mcp-config=" .. require("claude_context.native").mcp_config_dir() .. "/x.json"
      local over_mcp =
        vim.json.decode(assert(hk_mod.settings_arg({ "claude", mcp_arg })):match("^%-%-settings=(.+)$")).hooks
      local c = over_mcp.PreToolUse[1].hooks[1]
      eq({ "mcp_tool", "claude-context", "claudeContextHook" }, { c.type, c.server, c.tool })
      eq("PreToolUse", c.input.hook_event_name)
      eq("${tool_input.file_path}", c.input.file_path)
      ok(not vim.json.encode(c.input):find("${tool_input}", 1, true), "never the whole tool input")
      eq(nil, over_mcp.PreToolUse[1].matcher, "before every tool")
      eq(1, #over_mcp.PostToolUse, "no hook after the tool but Bash's (claude_context.sessions.hooks: Bash edits)")
      eq("Bash", over_mcp.PostToolUse[1].matcher)
      -- Beside it, the plan and question reviews' own hook (the binary, its long timeout).
      local review = over_mcp.PreToolUse[2]
      eq("ExitPlanMode|AskUserQuestion", review.matcher)
      eq({ "command", { "hook", "PreToolUse" } }, { review.hooks[1].type, review.hooks[1].args })
      eq({ "hook", "Stop" }, over_mcp.Stop[1].hooks[1].args, "the other events still run the binary")
      -- Another --mcp-config (the person's own) is not the bridge's server.
      eq(false, hk_mod.has_bridge_server({ "claude", "--mcp-config=/tmp/mine.json" }))
      -- The exec form needs a CLI from MIN_CLI on (:checkhealth warns before).
      local hk = require("claude_context.sessions.hooks")
      eq({ false, true, true, true }, {
        hk.cli_supported("2.1.138 (Claude Code)"),
        hk.cli_supported("2.1.139 (Claude Code)"),
        hk.cli_supported("2.1.197 (Claude Code)"),
        hk.cli_supported("3.0.0"),
      })
      eq(nil, hk.cli_supported("claude: not found"))
      eq(
        require("claude_context.sessions.hooks").NOT_BASH,
        hooks.PostToolUse[1].matcher,
        "after every tool but Bash (its own hook follows)"
      )
      eq(
        nil,
        (require("claude_context.sessions.hooks").settings_arg({ "claude", "--settings", "x.json" })),
        "the person's --settings wins"
      )
      cc().setup({ sessions = { hooks = false } })
      eq(nil, (require("claude_context.sessions.hooks").settings_arg({ "claude" })))
      cc().setup({})
    end,
  },
  {
    "a turn: working, its files, done (notified: nobody looks), in status().sessions and turns()",
    function()
      -- Real files in the session's project: the turn's files are the edit tools' until its
      -- end checkpoint is taken, then what the checkpoints show changed (the same two here).
      local dir = assert(vim.uv.fs_realpath(h.tmpdir()))
      vim.cmd.cd(dir)
      local a, b = dir .. "/a.lua", dir .. "/b.lua"
      vim.fn.writefile({ "local a = 1" }, a)
      hook("SessionStart", { session_id = "s-1", model = "claude-stub", source = "startup" })
      wait_state("s-1", "idle")
      hook("UserPromptSubmit", { session_id = "s-1", prompt = "rename the parser\nin every file" })
      local e = wait_state("s-1", "working")
      eq("idle", e.previous)
      eq("main", e.name)
      local s = session("s-1")
      eq("main", s.name)
      eq("working", s.state)
      eq("rename the parser", s.prompt)
      eq("claude-stub", s.model)
      ok(type(s.elapsed_ms) == "number", vim.inspect(s))

      hook("PreToolUse", { session_id = "s-1", tool_name = "Edit", tool_input = { file_path = a } })
      vim.fn.writefile({ "local a = 2" }, a)
      hook(
        "PostToolUse",
        { session_id = "s-1", tool_name = "Edit", tool_input = { file_path = a, old_string = "1", new_string = "2" } }
      )
      hook("PreToolUse", { session_id = "s-1", tool_name = "Write", tool_input = { file_path = b } })
      vim.fn.writefile({ "x" }, b)
      hook("PostToolUse", { session_id = "s-1", tool_name = "Write", tool_input = { file_path = b, content = "x" } })
      eq(2, session("s-1").files_changed)

      hook("Stop", { session_id = "s-1", stop_hook_active = false })
      local done = wait_state("s-1", "done")
      eq("working", done.previous)
      eq("done", session("s-1").state)
      local n = wait_for(function()
        return S().notified[#S().notified]
      end, 5000, "a notification")
      eq("s-1", n.session)
      contains(n.message, "Claude [main] finished: rename the parser")
      contains(n.message, "2 files changed")

      local turns = cc().turns()
      eq(1, #turns)
      eq("s-1", turns[1].session)
      eq("rename the parser\nin every file", turns[1].prompt)
      eq({ a, b }, turns[1].files)
      ok(turns[1].end_ms >= turns[1].start_ms, vim.inspect(turns[1]))
      eq("1 done", S().statusline())
    end,
  },
  {
    "a second session (another tab) keeps its own state and turns; waiting is notified",
    function()
      hook("UserPromptSubmit", { session_id = "s-2", prompt = "tests" }, "tab 2")
      wait_state("s-2", "working")
      hook("PermissionRequest", { session_id = "s-2", tool_name = "Bash", tool_input = { command = "make" } }, "tab 2")
      local w = wait_state("s-2", "waiting")
      eq("tab 2", w.name)
      eq("permission for Bash", session("s-2").waiting_for)
      local n = wait_for(function()
        local last = S().notified[#S().notified]
        return last and last.session == "s-2" and last
      end, 5000, "the waiting notification")
      contains(n.message, "Claude [tab 2] needs you: permission for Bash")
      eq("done", session("s-1").state)
      eq(1, #cc().turns("s-2"))
      eq(1, #cc().turns("s-1"))
      eq("1 waiting · 1 done", S().statusline())
      eq({ working = 0, waiting = 1, done = 1, idle = 0, ended = 0 }, S().counts())
      -- The person answered: working again.
      hook("PostToolUse", { session_id = "s-2", tool_name = "Bash", tool_input = { command = "make" } }, "tab 2")
      wait_for(function()
        return session("s-2").state == "working"
      end, 5000, "working again")
    end,
  },
  {
    "entering the session's terminal makes done idle (seen); a session finishing in view is not notified",
    function()
      local term = require("claude_context.terminal.sessions")
      term_buf = vim.api.nvim_create_buf(false, true)
      vim.b[term_buf].claude_context_terminal = true
      term.by_name["main"] = { buf = term_buf, name = "main" }
      vim.api.nvim_set_current_buf(term_buf)
      local seen = wait_for(function()
        for _, e in ipairs(events_of("s-1")) do
          if e.event == "seen" then
            return e
          end
        end
      end, 5000, "the seen event")
      eq("idle", seen.state)
      eq("done", seen.previous)
      eq("idle", session("s-1").state)

      -- The next turn ends while the person looks at it: no notification, idle at once.
      local before = #S().notified
      hook("UserPromptSubmit", { session_id = "s-1", prompt = "again" })
      wait_for(function()
        return session("s-1").state == "working"
      end, 5000, "working")
      hook("Stop", { session_id = "s-1" })
      wait_for(function()
        return session("s-1").state == "idle"
      end, 5000, "idle at once")
      eq(before, #S().notified, "no notification for a session in view")
      eq(2, #cc().turns("s-1"))
      -- The :ClaudeContext sessions picker says what each terminal's Claude does.
      local shown
      local orig = vim.ui.select
      vim.ui.select = function(items, o, _)
        vim.ui.select = orig
        shown = vim.tbl_map(o.format_item, items)
      end
      vim.cmd("ClaudeContext sessions")
      ok(shown and vim.iter(shown):any(function(l)
        return l:find("main", 1, true) and l:find(": idle · ", 1, true) and l:find("again", 1, true)
      end), vim.inspect(shown))
      term.by_name["main"] = nil
      vim.cmd.enew()
    end,
  },
  {
    "notify = false: no notification; SessionEnd ends the session",
    function()
      cc().setup({ sessions = { notify = false } })
      local before = #S().notified
      hook("Stop", { session_id = "s-2" }, "tab 2")
      wait_state("s-2", "done")
      eq(before, #S().notified)
      hook("SessionEnd", { session_id = "s-2", reason = "exit" }, "tab 2")
      wait_state("s-2", "ended")
      eq("ended", session("s-2").state)
      eq("", S().statusline())
      cc().setup({})
    end,
  },
  {
    "a background session's hook (its worktree) loads the background sessions' list: the statusline counts the service's sessions",
    function()
      eq(nil, package.loaded["claude_context.agents"], "not used yet")
      -- A fake claude listing one more background session of this project, which no hook
      -- reported (it works, from before this Neovim started).
      local dir, fake = project_with_worktrees({ "bg1" }, "bg2", "0000aaaa")
      local wt = dir .. "/.claude/worktrees/bg1"
      cc().setup({ claude = { cmd = fake } })
      vim.cmd.cd(dir)
      local bin = assert(require("claude_context.sessions.hooks").binary())
      local r
      vim.system({ bin, "hook", "UserPromptSubmit" }, {
        stdin = vim.json.encode({
          hook_event_name = "UserPromptSubmit",
          session_id = "s-bg1",
          prompt = "in the background",
          cwd = wt,
          transcript_path = "/tmp/t.jsonl",
        }),
        env = { CLAUDE_CODE_SSE_PORT = tostring(cc().status().port) },
      }, function(res)
        r = res
      end)
      wait_for(function()
        return r
      end, 10000, "the hook")
      wait_for(function()
        return package.loaded["claude_context.agents"]
      end, 10000, "the background sessions' list loaded")
      wait_for(function()
        return S().statusline() == "2 working"
      end, 10000, "both counted: " .. S().statusline())
      eq("bg1", session("s-bg1").name)
    end,
  },
  {
    "a restarted Neovim in a project with worktrees reads the background sessions' list at start: the statusline counts one no hook reported",
    function()
      restarted_in_project("bg3", "0000bbbb", function(fake)
        cc().setup({ claude = { cmd = fake } })
      end)
    end,
  },
  {
    "the bridge started by the terminal's open (claude_context.bridge, not start()) looks for the background sessions too",
    function()
      restarted_in_project("bg4", "0000cccc", function(fake)
        require("claude_context.config").options.claude.cmd = fake
        -- What terminal.launch does when the bridge is not running.
        assert(require("claude_context.bridge").start({ silent = true }))
      end)
    end,
  },
}
