-- Terminal output, diagnostics and the quickfix list sent to Claude as files it reads: written
-- privately and atomically, then @-mentioned to a connected Claude Code (a test client).
local h = require("helpers")
local ws = h.load("wsclient")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local cc = h.cc

local messages = h.record_notify()

local dir, A
local sent = {}
vim.api.nvim_create_autocmd("User", {
  pattern = "ClaudeContextSendComplete",
  callback = function(ev)
    table.insert(sent, ev.data)
  end,
})

---The next mention's file path, waited for.
local function next_mention(from)
  wait_for(function()
    return #A:notifications("at_mentioned") > from
  end, 5000, "a mention")
  return A:notifications("at_mentioned")[from + 1].params.filePath
end

local function lines_of(path)
  return vim.split(assert(h.read(path)), "\n", { plain = true, trimempty = true })
end

return {
  {
    "setup",
    function()
      cc().setup({ terminal = { context_lines = 50 } })
      dir = h.tmpdir()
      vim.cmd.cd(dir)
      A = ws.connect()
      A:handshake(true)
      wait_for(function()
        return cc().status().ide_clients == 1
      end, 5000, "the client")
    end,
  },
  {
    ":ClaudeContext add-terminal: the last terminal.context_lines lines, a private file, mentioned",
    function()
      vim.cmd("enew")
      vim.fn.jobstart(
        { "sh", "-c", "i=1; while [ $i -le 300 ]; do echo line $i; i=$((i+1)); done; sleep 30" },
        { term = true }
      )
      local tbuf = vim.api.nvim_get_current_buf()
      wait_for(function()
        return vim.iter(vim.api.nvim_buf_get_lines(tbuf, 0, -1, false)):any(function(l)
          return l == "line 300"
        end)
      end, 5000, "the output")
      local from = #A:notifications("at_mentioned")
      vim.cmd("ClaudeContext add-terminal")
      local path = next_mention(from)
      local got = lines_of(path)
      eq(51, #got, "a header and 50 lines")
      contains(got[1], "The last 50 lines of terminal")
      eq("line 251", got[2])
      eq("line 300", got[51])
      eq(tonumber("600", 8), h.mode(path))
      eq(tonumber("700", 8), h.mode(vim.fs.dirname(path)))
      eq(vim.fn.stdpath("run") .. "/claude-context/context", vim.fs.dirname(path))
      eq("file", sent[#sent].kind)
      eq(path, sent[#sent].path)
      -- From another window: the terminal used last; by number too.
      vim.cmd("new")
      from = #A:notifications("at_mentioned")
      vim.cmd("ClaudeContext add-terminal")
      eq(path, next_mention(from))
      from = #A:notifications("at_mentioned")
      vim.cmd("ClaudeContext add-terminal " .. tbuf)
      eq(path, next_mention(from))
      h.clear(messages)
      vim.cmd("ClaudeContext add-terminal 99999")
      contains(messages[#messages].msg, "no buffer 99999")
      vim.cmd("ClaudeContext add-terminal " .. vim.api.nvim_get_current_buf())
      contains(messages[#messages].msg, "is not a terminal")
      vim.cmd("close")
    end,
  },
  {
    ":ClaudeContext add-diagnostics: the buffer's diagnostics, sorted, with severity and source",
    function()
      local f = dir .. "/code.lua"
      h.write(f, "local x\nprint(y)\nreturn\n")
      vim.cmd.edit(f)
      h.clear(messages)
      vim.cmd("ClaudeContext add-diagnostics")
      contains(messages[#messages].msg, "has no diagnostics")
      local ns = vim.api.nvim_create_namespace("spec")
      vim.diagnostic.set(ns, 0, {
        {
          lnum = 1,
          col = 6,
          message = "undefined global 'y'",
          severity = vim.diagnostic.severity.WARN,
          source = "lua_ls",
        },
        { lnum = 0, col = 6, message = "unused local\n'x'", severity = vim.diagnostic.severity.ERROR },
      })
      local from = #A:notifications("at_mentioned")
      vim.cmd("ClaudeContext add-diagnostics")
      local got = lines_of(next_mention(from))
      contains(got[1], "Diagnostics of code.lua")
      eq("code.lua:1:7: ERROR unused local 'x'", got[2])
      eq("code.lua:2:7: WARN [lua_ls] undefined global 'y'", got[3])
    end,
  },
  {
    ":ClaudeContext add-quickfix: the list with its title",
    function()
      h.clear(messages)
      vim.fn.setqflist({}, "r")
      vim.cmd("ClaudeContext add-quickfix")
      contains(messages[#messages].msg, "empty")
      vim.fn.setqflist({}, "r", {
        title = "make",
        items = { { filename = dir .. "/code.lua", lnum = 2, col = 1, text = "boom", type = "E" }, { text = "a note" } },
      })
      local from = #A:notifications("at_mentioned")
      vim.cmd("ClaudeContext add-quickfix")
      local got = lines_of(next_mention(from))
      eq({ "# Quickfix list: make", "code.lua:2:1: E: boom", "a note" }, got)
      A:close()
    end,
  },
  {
    "write gives the file's path (0600, name made safe), or nil and why when it cannot write",
    function()
      local cf = require("claude_context.context_files")
      local path, err = cf.write("a/b c.txt", { "one", "two" })
      eq(nil, err)
      eq(cf.dir() .. "/a_b_c.txt", path)
      eq("one\ntwo\n", h.read(path))
      eq(tonumber("600", 8), bit.band(vim.uv.fs_stat(path).mode, tonumber("777", 8)))
      local saved = cf.dir
      cf.dir = function()
        return "/nonexistent-claude-context-dir"
      end
      path, err = cf.write("x.txt", { "x" })
      cf.dir = saved
      eq(nil, path)
      ok(type(err) == "string" and err ~= "", "why: " .. tostring(err))
    end,
  },
}
