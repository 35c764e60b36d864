-- The selection and @-mentions go to the Claude session the person works with: real WebSocket
-- clients stand in for three Claude Codes — A and B paired with two Claude terminals of this
-- Neovim by their `ide_connected` pid (A's is the job's pid, B's a child of its job: a wrapper),
-- C started outside Neovim. The terminal entered last gets them; the message names it; C gets
-- them only when the terminal in use has no Claude connected; `sessions.route = false` sends to
-- every one as before.
local h = require("helpers")
local ws = h.load("wsclient")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local cc = h.cc

h.record_notify()

local sessions = require("claude_context.terminal.sessions")
local route = require("claude_context.sessions.route")

local file
local A, B, C
local ta, tb, tc -- terminal states

---A terminal buffer running `cmd`, registered as the Claude session `name`.
local function terminal(name, cmd)
  vim.cmd.tabnew()
  local buf = vim.api.nvim_get_current_buf()
  local job = vim.fn.jobstart(cmd, { term = true })
  ok(job > 0, "the job started")
  vim.b[buf].claude_context_terminal = true
  local st = { buf = buf, job = job, name = name }
  sessions.by_name[name] = st
  -- As :ClaudeContext open does once its terminal is up.
  vim.api.nvim_exec_autocmds("User", { pattern = "ClaudeContextTerminalOpen", data = { buf = buf, job = job } })
  return st
end

local function connect(pid)
  local c = ws.connect()
  c:handshake(false)
  c:send({ jsonrpc = "2.0", method = "ide_connected", params = { pid = pid } })
  return c
end

---Mentions the file; returns the message and which clients got it.
local n = 0
local function mention()
  n = n + 1
  local before =
    { #A:notifications("at_mentioned"), #B:notifications("at_mentioned"), #C:notifications("at_mentioned") }
  local sent, msg = require("claude_context.ide.mentions").mention(file, n, n)
  ok(sent, msg)
  for i, c in ipairs({ A, B, C }) do
    c:sync("m" .. n .. i)
  end
  local got = {}
  for i, c in ipairs({ A, B, C }) do
    if #c:notifications("at_mentioned") > before[i] then
      table.insert(got, ({ "A", "B", "C" })[i])
    end
  end
  return msg, table.concat(got, ",")
end

local function enter(st)
  vim.api.nvim_set_current_tabpage(vim.api.nvim_win_get_tabpage(vim.fn.win_findbuf(st.buf)[1]))
  vim.api.nvim_set_current_win(vim.fn.win_findbuf(st.buf)[1])
end

return {
  {
    "setup: two Claude terminals and three Claude Codes",
    function()
      cc().setup({})
      if not cc().is_running() then
        assert(cc().start({ silent = true }))
      end
      local dir = h.tmpdir()
      vim.cmd.cd(dir)
      file = dir .. "/notes.txt"
      h.write(file, "a\nb\nc\nd\ne\nf\n")
      ta = terminal("main", { "sleep", "300" })
      -- A wrapper: the CLI is the shell's child.
      tb = terminal("tab 2", { "sh", "-c", "sleep 300; exit 0" })
      local child = wait_for(function()
        return vim.api.nvim_get_proc_children(vim.fn.jobpid(tb.job))[1]
      end, 5000, "the wrapper's child")
      A = connect(vim.fn.jobpid(ta.job))
      B = connect(child)
      C = connect(vim.fn.getpid()) -- an ancestor of both terminals, paired with neither
      wait_for(function()
        local pids = 0
        for _, c in ipairs(cc().status().clients) do
          pids = pids + (c.ide_connected_pid and 1 or 0)
        end
        return pids == 3
      end, 5000, "three Claude Codes")
    end,
  },
  {
    "the terminal entered last gets the mention, and the message names it",
    function()
      enter(ta)
      local msg, got = mention()
      eq("A", got)
      contains(msg, "to Claude in main")
      enter(tb)
      msg, got = mention()
      eq("B", got)
      contains(msg, "to Claude in tab 2")
      -- Leaving the terminal for a file keeps it the one in use.
      vim.cmd("split " .. vim.fn.fnameescape(file))
      msg, got = mention()
      eq("B", got)
    end,
  },
  {
    "the selection follows the same route",
    function()
      enter(ta)
      vim.cmd("split " .. vim.fn.fnameescape(file))
      for i, c in ipairs({ A, B, C }) do
        c:sync("s0" .. i)
      end
      local before = {
        #A:notifications("selection_changed"),
        #B:notifications("selection_changed"),
        #C:notifications("selection_changed"),
      }
      vim.api.nvim_win_set_cursor(0, { 3, 0 })
      vim.api.nvim_exec_autocmds("CursorMoved", {})
      A:wait_for(function(m)
        return m.method == "selection_changed" and m.params.selection.start.line == 2
      end, "A's selection_changed")
      for i, c in ipairs({ A, B, C }) do
        c:sync("s1" .. i)
      end
      eq(before[2], #B:notifications("selection_changed"), "not to B")
      eq(before[3], #C:notifications("selection_changed"), "not to C")
    end,
  },
  {
    "a terminal without a connected Claude: sessions started outside Neovim get it",
    function()
      tc = terminal("tab 3", { "sleep", "300" })
      enter(tc)
      local msg, got = mention()
      eq("C", got)
      contains(msg, "outside Neovim")
    end,
  },
  {
    "sessions.route = false: every Claude Code gets it",
    function()
      cc().setup({ sessions = { route = false } })
      route.update()
      local _, got = mention()
      eq("A,B,C", got)
      cc().setup({})
      route.update()
      local _, got2 = mention()
      eq("C", got2)
      for _, c in ipairs({ A, B, C }) do
        c:close()
      end
      for _, st in ipairs({ ta, tb, tc }) do
        pcall(vim.fn.jobstop, st.job)
      end
    end,
  },
  {
    "the native routing functions refuse bad JSON with an error, not silently",
    function()
      local native = require("claude_context.native").get()
      local okr, err = pcall(native.route_to_target, 1, "not json")
      eq(false, okr)
      contains(tostring(err), "invalid pids")
      local oks, err2 = pcall(native.route, 1, "{")
      eq(false, oks)
      contains(tostring(err2), "invalid route")
      eq(false, native.route_to_target(1, "[]"))
    end,
  },
}
