-- Notifications and connection life, with real WebSocket clients standing in for Claude Code
-- (tests/nvim/ws_client.py): selection_changed (debounced, file buffers only, flushed when
-- Visual mode ends), at_mentioned from :ClaudeContext send / add (queued while no Claude Code
-- is connected, dropped with a message when none comes), and a client vanishing or cancelling
-- while a diff waits (the view closes, nothing is written).
local h = require("helpers")
local ws = h.load("wsclient")
local eq, ok, wait_for = h.eq, h.ok, h.wait_for
local cc = h.cc
local diff = h.diff

local messages = h.record_notify()

local function said(text)
  return vim.iter(messages):find(function(m)
    return m.msg:find(text, 1, true) ~= nil
  end)
end

local read, write = h.read, h.write

local function moved()
  vim.api.nvim_exec_autocmds("CursorMoved", {})
end

local dir, file
local A, B -- A: an interactive Claude Code (sent ide_connected); B: a plain MCP client

return {
  {
    "setup and two clients",
    function()
      cc().setup({})
      dir = h.tmpdir()
      vim.cmd.cd(dir)
      file = dir .. "/notes.txt"
      write(file, "alpha\nbëta\ngamma\ndelta\n")
      vim.cmd.edit(file)
      A = ws.connect()
      A:handshake(true)
      B = ws.connect()
      B:handshake(false)
      wait_for(function()
        local st = cc().status()
        return #st.clients == 2
          and vim.iter(st.clients):any(function(c)
            return c.ide_connected_pid ~= nil
          end)
      end, 5000, "both clients")
      -- :ClaudeContext status names each client's door (these came in by the lock file's URL),
      -- and shows a client without an IDE pid (B) without failing on its JSON null.
      local lines = table.concat(require("claude_context.commands").status_lines(), "\n")
      local _, doors = lines:gsub("%[ide%]", "")
      eq(2, doors, lines)
      local _, pids = lines:gsub("ide pid %d+", "")
      eq(1, pids, lines)
    end,
  },
  {
    "selection_changed: debounced cursor moves, one notification with the last position, to every client",
    function()
      vim.wait(200) -- let the selection sent on connecting go out first
      A:sync("s0")
      B:sync("s0")
      local before_a, before_b = #A:notifications("selection_changed"), #B:notifications("selection_changed")
      for _, pos in ipairs({ { 1, 1 }, { 3, 2 }, { 4, 0 }, { 2, 3 } }) do
        vim.api.nvim_win_set_cursor(0, pos)
        moved()
      end
      local n = A:wait_for(function(m)
        return m.method == "selection_changed" and m.params.selection.start.line == 1
      end, "selection_changed")
      eq({
        text = "",
        filePath = file,
        fileUrl = vim.uri_from_fname(file),
        -- "bëta": byte 3 is "t", the third UTF-16 unit.
        selection = { start = { line = 1, character = 2 }, ["end"] = { line = 1, character = 2 }, isEmpty = true },
      }, n.params)
      -- The moves happened in one go, so one timer fired once: exactly one notification.
      vim.wait(400)
      A:sync("s1")
      eq(before_a + 1, #A:notifications("selection_changed"))
      B:wait_for(function(m)
        return m.method == "selection_changed" and m.params.selection.start.line == 1
      end, "selection_changed on the plain client")
      eq(before_b + 1, #B:notifications("selection_changed"))
      -- Moving to where it already is sends nothing new.
      moved()
      vim.wait(300)
      A:sync("s2")
      eq(before_a + 1, #A:notifications("selection_changed"))
    end,
  },
  {
    "selection_changed: leaving Visual mode sends the selection at once; getLatestSelection keeps it",
    function()
      local before = #A:notifications("selection_changed")
      vim.api.nvim_win_set_cursor(0, { 2, 0 })
      vim.cmd("normal! v")
      vim.api.nvim_win_set_cursor(0, { 2, 3 })
      moved()
      vim.cmd("normal! \27") -- leaving Visual mode flushes (the debounce timer is dropped)
      local n = A:wait_for(function(m)
        return m.method == "selection_changed" and m.params.text == "bët"
      end, "the visual selection")
      eq(
        { start = { line = 1, character = 0 }, ["end"] = { line = 1, character = 3 }, isEmpty = false },
        n.params.selection
      )
      vim.wait(300)
      A:sync("v1")
      eq(before + 1, #A:notifications("selection_changed"), "only the visual selection was sent")

      -- Moving into a terminal sends nothing, and the latest selection stays the visual one.
      vim.cmd("botright split")
      vim.cmd.terminal()
      moved()
      vim.api.nvim_exec_autocmds("CursorMovedI", {})
      vim.wait(300)
      A:sync("v2")
      eq(before + 1, #A:notifications("selection_changed"), "nothing from a terminal buffer")
      local r = h.call("getLatestSelection")
      local latest = vim.json.decode(r.content[1].text)
      eq(true, latest.success)
      eq("bët", latest.text)
      eq(file, latest.filePath)
      vim.cmd("bwipeout!")
    end,
  },
  {
    "at_mentioned from :ClaudeContext add and :ClaudeContext send reaches the interactive client only",
    function()
      B:sync("m0")
      local b_before = #B:notifications("at_mentioned")
      vim.cmd("ClaudeContext add " .. vim.fn.fnameescape(file) .. " 2 4")
      local m = A:wait_for(function(x)
        return x.method == "at_mentioned"
      end, "at_mentioned")
      eq({ filePath = file, lineStart = 1, lineEnd = 3 }, m.params)

      vim.cmd("edit " .. vim.fn.fnameescape(file))
      vim.cmd("2,3ClaudeContext send")
      A:wait_for(function(x)
        return x.method == "at_mentioned" and x.params.lineStart == 1 and x.params.lineEnd == 2
      end, "the range")
      vim.cmd("ClaudeContext send")
      A:wait_for(function(x)
        return x.method == "at_mentioned" and x.params.lineStart == nil and x.params.filePath == file
      end, "the whole file")
      vim.cmd("ClaudeContext add " .. vim.fn.fnameescape(dir))
      A:wait_for(function(x)
        return x.method == "at_mentioned" and x.params.filePath == dir
      end, "a directory")
      B:sync("m1")
      eq(b_before, #B:notifications("at_mentioned"), "not for a client that never sent ide_connected")
    end,
  },
  {
    ":ClaudeContext add refuses bad input with a message",
    function()
      local sent = #A:notifications("at_mentioned")
      h.clear(messages)
      vim.cmd("ClaudeContext add " .. dir .. "/missing.txt")
      ok(said("does not exist"), "missing file")
      vim.cmd("ClaudeContext add " .. vim.fn.fnameescape(file) .. " 0")
      ok(said("must be a line number"), "line 0")
      vim.cmd("ClaudeContext add " .. vim.fn.fnameescape(file) .. " x")
      ok(said('got "x"'), "not a number")
      vim.cmd("ClaudeContext add " .. vim.fn.fnameescape(file) .. " 5 2")
      ok(said("is before the start line"), "reversed range")
      vim.cmd("ClaudeContext add " .. vim.fn.fnameescape(dir) .. " 1")
      ok(said("not directories"), "lines of a directory")
      vim.cmd("ClaudeContext add")
      ok(said("usage"), "no path")
      A:sync("bad")
      eq(sent, #A:notifications("at_mentioned"))
    end,
  },
  {
    "at_mentioned made while no Claude Code is connected waits and is sent when one connects",
    function()
      A:close()
      wait_for(function()
        return #cc().status().clients == 1
      end, 5000, "A gone")
      h.clear(messages)
      vim.cmd("ClaudeContext add " .. vim.fn.fnameescape(file) .. " 3")
      ok(said("will be sent when one connects"), "the person is told it waits")
      eq(1, #require("claude_context.ide.mentions").queue)
      local C = ws.connect()
      C:handshake(true)
      local m = C:wait_for(function(x)
        return x.method == "at_mentioned"
      end, "the queued mention")
      eq({ filePath = file, lineStart = 2, lineEnd = 2 }, m.params)
      eq(0, #require("claude_context.ide.mentions").queue)
      -- A newly connected session also learns the current selection.
      C:wait_for(function(x)
        return x.method == "selection_changed"
      end, "the current selection")
      C:close()
    end,
  },
  {
    "a queued at_mentioned nobody picks up is dropped with a message",
    function()
      wait_for(function()
        return #cc().status().clients == 1
      end, 5000, "C gone")
      require("claude_context.config").options.ide.mention_queue_ms = 200
      h.clear(messages)
      vim.cmd("ClaudeContext add " .. vim.fn.fnameescape(file))
      wait_for(function()
        return said("dropped the mention of")
      end, 5000, "the expiry message")
      eq(vim.log.levels.WARN, said("dropped the mention of").level)
      eq(0, #require("claude_context.ide.mentions").queue)
      require("claude_context.config").options.ide.mention_queue_ms = 30000
    end,
  },
  {
    "a client vanishing while its diff waits: the view closes, nothing is written",
    function()
      local f = dir .. "/vanish.txt"
      write(f, "before\n")
      local D = ws.connect()
      D:handshake(true)
      D:call(
        1,
        "openDiff",
        { old_file_path = f, new_file_path = f, new_file_contents = "after\n", tab_name = "vanish" }
      )
      local v = wait_for(function()
        local x = diff().views.vanish
        return x and x.tab and x
      end, 5000, "the diff view")
      ok(vim.api.nvim_tabpage_is_valid(v.tab), "shown")
      h.clear(messages)
      D:close()
      wait_for(function()
        return diff().views.vanish == nil and not vim.api.nvim_tabpage_is_valid(v.tab)
      end, 10000, "the view to close")
      ok(not vim.api.nvim_buf_is_valid(v.prop_buf), "proposal wiped")
      eq("before\n", read(f))
      ok(said("Claude stopped waiting"), "the person is told why it closed")
      eq({}, vim.tbl_keys(require("claude_context.rpc").pending))
    end,
  },
  {
    "notifications/cancelled closes the diff; the request gets no answer; the connection goes on",
    function()
      local f = dir .. "/cancel.txt"
      write(f, "before\n")
      local E = ws.connect()
      E:handshake(true)
      E:call(
        41,
        "openDiff",
        { old_file_path = f, new_file_path = f, new_file_contents = "after\n", tab_name = "cancel" }
      )
      local v = wait_for(function()
        local x = diff().views.cancel
        return x and x.tab and x
      end, 5000, "the diff view")
      E:send({
        jsonrpc = "2.0",
        method = "notifications/cancelled",
        params = { requestId = 41, reason = "interrupted" },
      })
      wait_for(function()
        return diff().views.cancel == nil and not vim.api.nvim_tabpage_is_valid(v.tab)
      end, 10000, "the view to close")
      E:sync("after-cancel")
      eq(
        {},
        E:find(function(m)
          return m.id == 41
        end),
        "no answer to the cancelled request"
      )
      eq("before\n", read(f))
      -- A decided diff on the same connection still answers.
      E:call(
        42,
        "openDiff",
        { old_file_path = f, new_file_path = f, new_file_contents = "after\n", tab_name = "cancel2" }
      )
      wait_for(function()
        local x = diff().views.cancel2
        return x and x.tab
      end, 5000, "the second view")
      vim.cmd("ClaudeContext reject")
      local r = E:wait_for(function(m)
        return m.id == 42
      end, "the answer")
      eq({ { type = "text", text = "DIFF_REJECTED" }, { type = "text", text = "cancel2" } }, r.result.content)
      E:close()
      B:close()
    end,
  },
  {
    "ide.track_selection = false sends no selection_changed, not even on connecting",
    function()
      cc().stop()
      cc().setup({ ide = { track_selection = false } })
      vim.cmd.edit(file)
      local C = ws.connect()
      C:handshake(true)
      for _, pos in ipairs({ { 1, 1 }, { 3, 2 }, { 2, 0 } }) do
        vim.api.nvim_win_set_cursor(0, pos)
        moved()
      end
      vim.cmd("normal! v")
      vim.cmd("normal! \27")
      vim.wait(400)
      C:sync("t1")
      eq(0, #C:notifications("selection_changed"))
      C:close()
    end,
  },
  {
    "ide.selection_debounce_ms sets how long the cursor must rest before selection_changed",
    function()
      cc().stop()
      cc().setup({ ide = { selection_debounce_ms = 1500 } })
      vim.cmd.edit(file)
      local D = ws.connect()
      D:handshake(true)
      vim.api.nvim_win_set_cursor(0, { 1, 0 })
      vim.wait(300)
      D:sync("d0")
      local before = #D:notifications("selection_changed") -- what connecting sent
      vim.api.nvim_win_set_cursor(0, { 4, 1 })
      moved()
      vim.wait(300)
      D:sync("d1")
      eq(before, #D:notifications("selection_changed"), "sent before the cursor rested 1500 ms")
      local n = D:wait_for(function(m)
        return m.method == "selection_changed" and m.params.selection.start.line == 3
      end, "selection_changed after the debounce", 10000)
      eq(1, n.params.selection.start.character)
      D:close()
      cc().stop()
      cc().setup({})
    end,
  },
}
