-- Claude at a glance: status() fields, the statusline text and lualine component, the events
-- User ClaudeContextConnected/Disconnected, DiffOpened/DiffClosed (with the decision) and
-- SendComplete.
local h = require("helpers")
local ws = h.load("wsclient")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local cc = h.cc
local S = function()
  return require("claude_context.status")
end

h.record_notify()

local events = {}
for _, p in ipairs({
  "ClaudeContextConnected",
  "ClaudeContextDisconnected",
  "ClaudeContextDiffOpened",
  "ClaudeContextDiffClosed",
  "ClaudeContextSendComplete",
}) do
  vim.api.nvim_create_autocmd("User", {
    pattern = p,
    callback = function(ev)
      table.insert(events, { name = p, data = ev.data })
    end,
  })
end

local function last(name)
  for i = #events, 1, -1 do
    if events[i].name == name then
      return events[i].data
    end
  end
end

local dir, file, A

local function request_diff(name)
  local box = {}
  cc().call_tool(
    "openDiff",
    { old_file_path = file, new_file_path = file, new_file_contents = "x\n", tab_name = name },
    function(r)
      box.result = r
    end
  )
  wait_for(function()
    local v = require("claude_context.ide.diff").views[name]
    return v and v.prop_win
  end, 5000, "the diff " .. name)
  return box
end

return {
  {
    "no client: disconnected; the text and the lualine component say so",
    function()
      cc().setup({})
      dir = h.tmpdir()
      vim.cmd.cd(dir)
      file = dir .. "/a.txt"
      h.write(file, "a\n")
      vim.cmd.edit(file)
      local st = cc().status()
      eq("disconnected", st.activity)
      eq(0, st.ide_clients)
      eq(0, st.mcp_clients)
      eq(0, st.diffs_waiting)
      eq(0, st.runs)
      eq("Claude: not connected", S().text())
      local comp = S().lualine()
      eq("Claude: not connected", comp[1]())
      eq(true, comp.cond())
    end,
  },
  {
    "a Claude Code connecting fires User ClaudeContextConnected; idle",
    function()
      A = ws.connect()
      A:handshake(true)
      local c = wait_for(function()
        return last("ClaudeContextConnected")
      end, 5000, "the Connected event")
      ok(type(c.id) == "number", vim.inspect(c))
      eq("ide", c.surface)
      eq(1, cc().status().ide_clients)
      eq("idle", cc().status().activity)
      eq("Claude: idle", S().text())
    end,
  },
  {
    "a diff waiting: activity waiting; DiffOpened and DiffClosed carry file, tab and decision",
    function()
      local box = request_diff("s1")
      local o = last("ClaudeContextDiffOpened")
      eq("s1", o.name)
      eq(file, o.file)
      eq(require("claude_context.ide.diff").views.s1.tab, o.tab)
      eq("waiting", cc().status().activity)
      eq(1, cc().status().diffs_waiting)
      eq("Claude: diff waiting", S().text())
      vim.cmd("ClaudeContext reject")
      wait_for(function()
        return last("ClaudeContextDiffClosed")
      end, 5000, "DiffClosed")
      local c = last("ClaudeContextDiffClosed")
      eq("rejected", c.decision)
      eq(file, c.file)
      eq(o.tab, c.tab)
      h.decided(box)
      eq("idle", cc().status().activity)
      request_diff("s2")
      vim.cmd("ClaudeContext accept")
      wait_for(function()
        local e = last("ClaudeContextDiffClosed")
        return e.name == "s2" and e
      end, 5000, "DiffClosed s2")
      eq("accepted", last("ClaudeContextDiffClosed").decision)
    end,
  },
  {
    "terminal output makes Claude busy",
    function()
      cc().setup({
        claude = { cmd = "sh" },
        terminal = {
          args = { "-c", "while :; do echo working; sleep 0.2; done" },
          mcp_config = false,
          permission_mode = false,
          auto_insert = false,
        },
      })
      vim.cmd("ClaudeContext open")
      wait_for(function()
        return cc().status().activity == "busy"
      end, 5000, "busy")
      eq("Claude: busy", S().text())
      require("claude_context.terminal").close()
    end,
  },
  {
    ":ClaudeContext add and send fire User ClaudeContextSendComplete",
    function()
      vim.cmd("ClaudeContext add " .. vim.fn.fnameescape(file) .. " 1")
      local d = last("ClaudeContextSendComplete")
      eq({ kind = "mention", path = file, line1 = 1, line2 = 1 }, d)
    end,
  },
  {
    "the client leaving fires User ClaudeContextDisconnected",
    function()
      local id = last("ClaudeContextConnected").id
      A:close()
      local d = wait_for(function()
        return last("ClaudeContextDisconnected")
      end, 5000, "the Disconnected event")
      eq(id, d.id)
      eq("disconnected", cc().status().activity)
    end,
  },
}
