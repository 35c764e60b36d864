-- Claude's terminal as a person uses it (a child Neovim typed into over RPC, running a fake
-- claude that records its argv, the bytes it receives and every size its pty is given): a
-- readable unlisted buffer with its own filetype and event, Shift/Alt+Enter, arguments passed
-- through, and the garbling bug: a diff opening and closing must neither resize Claude's pty
-- nor send it focus-out/in (each makes the CLI redraw its screen).
local h = require("helpers")
local child = h.load("child")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for

local dir = h.tmpdir() .. "/myproject"
vim.fn.mkdir(dir, "p")
local out = dir .. "/../fake"
local target = dir .. "/target.txt"
local fake = dir .. "/../fake-claude"
h.write(
  fake,
  [[#!/usr/bin/env python3
import os, signal, sys, tty
out = os.environ["FAKE_OUT"]
def size(*_):
    s = os.get_terminal_size(0)
    with open(out + ".size", "a") as f:
        f.write("%dx%d\n" % (s.columns, s.lines))
with open(out + ".args", "w") as f:
    f.write("\n".join(sys.argv[1:]))
signal.signal(signal.SIGWINCH, size)
size()
tty.setraw(0)
sys.stdout.write("fake claude ready\r\n\x1b[?1004h")  # asks for focus events, as Claude Code does
sys.stdout.flush()
while True:
    b = os.read(0, 4096)
    if not b:
        break
    with open(out + ".in", "ab") as f:
        f.write(b)
]]
)
vim.fn.setfperm(fake, "rwx------")

local function read(s)
  return h.read(out .. s) or ""
end

local c

return {
  {
    ":ClaudeContext open --model opus: a claude://<project> buffer, unlisted, its filetype, the User event",
    function()
      h.write(target, "one\ntwo\n")
      c = child.start(dir)
      c:lua(
        [[
        local fake, out, target = ...
        _G.opened = {}
        vim.api.nvim_create_autocmd("User", { pattern = "ClaudeContextTerminalOpen", callback = function(ev) table.insert(_G.opened, ev.data) end })
        require("claude_context").setup({ claude = { cmd = fake }, terminal = { env = { FAKE_OUT = out }, mcp_config = false }, sessions = { hooks = false } })
        vim.cmd.edit(target)
        vim.cmd("ClaudeContext open --model opus")
      ]],
        fake,
        out,
        target
      )
      wait_for(function()
        return read(".args") ~= ""
      end, 10000, "the fake claude to start")
      -- terminal.permission_mode (default "default") comes first, then the arguments given.
      eq("--permission-mode=default\n--model\nopus", read(".args"), "the arguments reach claude")
      local info = c:lua([[
        local t = require("claude_context.terminal")._state
        local names = {}
        for _, b in ipairs(vim.api.nvim_list_bufs()) do table.insert(names, vim.api.nvim_buf_get_name(b)) end
        return { name = vim.api.nvim_buf_get_name(t.buf), listed = vim.bo[t.buf].buflisted, ft = vim.bo[t.buf].filetype,
          buf = t.buf, job = t.job, opened = _G.opened, names = names, ls = vim.fn.execute("ls") }
      ]])
      eq("claude://myproject", info.name)
      eq(false, info.listed)
      eq("claude_context_terminal", info.ft)
      eq(1, #info.opened, "User ClaudeContextTerminalOpen fired once")
      eq(info.buf, info.opened[1].buf)
      eq(info.job, info.opened[1].job)
      for _, n in ipairs(info.names) do
        ok(not n:match("^term://"), "no term:// buffer left behind: " .. n)
      end
      ok(not info.ls:find("claude://", 1, true), ":ls does not list it")
      -- The tabline/statusline shows the readable name.
      local shown = c:lua(
        [[return vim.api.nvim_eval_statusline("%f", { winid = vim.fn.bufwinid(require("claude_context.terminal")._state.buf) }).str]]
      )
      eq("claude://myproject", shown)
    end,
  },
  {
    "Shift+Enter and Alt+Enter send ESC CR (a newline in Claude's prompt)",
    function()
      c:wait("return vim.api.nvim_get_mode().mode == 't'", "Terminal-Job mode (auto_insert)")
      -- The fake reads raw bytes once it printed its banner.
      c:wait(
        "local b = require('claude_context.terminal')._state.buf return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\\n'):find('fake claude ready', 1, true) ~= nil",
        "the fake's banner"
      )
      c:input("hi<S-CR>there<M-CR>")
      wait_for(function()
        return read(".in"):find("hi\27\rthere\27\r", 1, true)
      end, 3000, "the keys: " .. vim.inspect(read(".in")))
    end,
  },
  {
    "a diff opening and closing while the person types to Claude: no focus-out, no resize",
    function()
      local before_in = #read(".in")
      eq(1, #vim.split(vim.trim(read(".size")), "\n"), "one size so far")
      c:lua(
        [[
        local target = ...
        require("claude_context").call_tool("openDiff", { old_file_path = target, new_file_path = target,
          new_file_contents = "one\nTWO\n", tab_name = "g1" }, function(r) _G.R = r end)
      ]],
        target
      )
      c:wait("local v = require('claude_context.ide.diff').views.g1 return v ~= nil and v.prop_win ~= nil", "the view")
      c:lua("vim.cmd('redraw!')")
      eq("t", c:mode(), "still typing to Claude")
      c:input("x")
      c:lua("require('claude_context.ide.diff').close_all()")
      c:wait("return _G.R ~= nil", "the rejection")
      c:lua("vim.cmd('redraw!')")
      c:input("y")
      wait_for(function()
        return read(".in"):sub(before_in + 1):find("y", 1, true)
      end, 3000, "the keys after the diff")
      local got = read(".in"):sub(before_in + 1)
      eq("xy", got, "Claude got the keys and nothing else (no focus-out/in)")
      eq(1, #vim.split(vim.trim(read(".size")), "\n"), "the pty was never resized: " .. read(".size"))
      eq(1, c:lua("return vim.o.showtabline"), "'showtabline' is back")
    end,
  },
  {
    "a diff taken in Normal mode (focused) and closed leaves Claude's pty size alone",
    function()
      c:input("<C-\\><C-n>")
      c:wait("return vim.api.nvim_get_mode().mode == 'nt'", "Normal mode")
      c:lua("vim.api.nvim_set_current_win(vim.fn.win_getid(1)) require('claude_context.util.typing').last = 0")
      c:lua(
        [[
        local target = ...
        _G.R = nil
        require("claude_context").call_tool("openDiff", { old_file_path = target, new_file_path = target,
          new_file_contents = "one\nTHREE\n", tab_name = "g2" }, function(r) _G.R = r end)
      ]],
        target
      )
      c:wait(
        "local v = require('claude_context.ide.diff').views.g2 return v ~= nil and v.prop_win == vim.api.nvim_get_current_win()",
        "the focused view"
      )
      c:lua("vim.cmd('redraw!')")
      c:input(":w<CR>")
      c:wait("return _G.R ~= nil", "the decision")
      c:wait("return vim.fn.tabpagenr('$') == 1", "the diff tab to close")
      c:lua("vim.cmd('redraw!')")
      eq(1, #vim.split(vim.trim(read(".size")), "\n"), "the pty was never resized: " .. read(".size"))
      local sw = c:lua("local t = require('claude_context.terminal')._state return #vim.fn.win_findbuf(t.buf)")
      eq(1, sw, "the terminal is still shown, once")
    end,
  },
  {
    ":ClaudeContext open {args} while claude runs says to close first; completion of the arguments",
    function()
      c:lua("_G.messages = {} vim.cmd('ClaudeContext open --continue')")
      contains(c:lua("return _G.messages[1].msg"), ":ClaudeContext close first")
      eq({ "--model" }, c:lua("return vim.fn.getcompletion('ClaudeContext open --mo', 'cmdline')"))
      eq({ "opus", "opusplan" }, c:lua("return vim.fn.getcompletion('ClaudeContext open --model op', 'cmdline')"))
      ok(vim.tbl_contains(c:lua("return vim.fn.getcompletion('ClaudeContext open ', 'cmdline')"), "--resume"))
    end,
  },
  {
    ":[range]ClaudeContext send-text types into the prompt as one bracketed paste, no Enter",
    function()
      c:input("<C-\\><C-n>")
      c:lua("vim.api.nvim_set_current_win(vim.fn.win_getid(1))")
      local before = #read(".in")
      c:lua("vim.cmd('ClaudeContext send-text explain this')")
      wait_for(function()
        return read(".in"):sub(before + 1) == "\27[200~explain this\27[201~"
      end, 3000, "the text: " .. vim.inspect(read(".in"):sub(before + 1)))
      before = #read(".in")
      c:lua("vim.cmd('1,2ClaudeContext send-text and these lines')")
      wait_for(function()
        return read(".in"):sub(before + 1) == "\27[200~one\ntwo\nand these lines\27[201~"
      end, 3000, "the range: " .. vim.inspect(read(".in"):sub(before + 1)))
    end,
  },
  {
    "nothing pasted ends the paste early: ESC, CR and the other controls arrive as text, also across the 4 KiB slices",
    function()
      local before = #read(".in")
      -- A file name holding the paste end (ESC [201~) and a command after it, the ESC placed so
      -- that the sequence spans the first slice boundary (byte 4096); a C1 CSI (U+009B), NUL,
      -- DEL, a stray byte, CR LF, tab; a two-byte character on the second boundary (byte 8192
      -- of what is sent after the paste start): its slice ends before it.
      local head = string.rep("a", 4093)
      local evil = "\27[201~rm -rf ~\r"
      local mid = string.rep("b", 4056) .. "\194\155\0\127\255x\r\ny\tz"
      local text = head .. evil .. mid .. "\195\169" .. string.rep("c", 5000)
      c:lua("require('claude_context.terminal.input').send_text(...)", text)
      local want = "\27[200~"
        .. head
        .. "\\x1b[201~rm -rf ~\n"
        .. string.rep("b", 4056)
        .. "\\u009b\\x00\\x7f\\xffx\ny\tz"
        .. "\195\169"
        .. string.rep("c", 5000)
        .. "\27[201~"
      local function got()
        return (read(".in"):sub(before + 1):gsub("\27%[[IO]", ""))
      end
      wait_for(function()
        return #got() >= #want
      end, 10000, "the whole paste (" .. #want .. " bytes)")
      eq(want, got(), "byte for byte")
      local _, ends = got():gsub("\27%[201~", "")
      eq(1, ends, "one paste end, the last")
      local _, escs = got():gsub("\27", "")
      eq(2, escs, "no ESC but the paste's own two")
    end,
  },
  {
    ":ClaudeContext compose: :w sends the buffer (paste, then Enter) and empties it",
    function()
      local before = #read(".in")
      c:lua([[
        vim.cmd("ClaudeContext compose")
        vim.api.nvim_buf_set_lines(0, 0, -1, false, { "Refactor this:", "", "- keep the API" })
        _G.messages = {}
      ]])
      eq("claude-compose://myproject", c:lua("return vim.api.nvim_buf_get_name(0)"))
      eq("markdown", c:lua("return vim.bo.filetype"))
      c:lua("vim.cmd('write')")
      wait_for(function()
        return read(".in"):sub(before + 1) == "\27[200~Refactor this:\n\n- keep the API\27[201~\r"
      end, 3000, "the prompt and Enter: " .. vim.inspect(read(".in"):sub(before + 1)))
      eq({ "" }, c:lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))
      eq(false, c:lua("return vim.bo.modified"))
      contains(c:lua("return _G.messages[#_G.messages].msg"), "sent")
      c:lua("vim.cmd('close')")
      -- Without a running claude the draft stays, and an error says so.
      c:lua([[
        local t = require("claude_context.terminal")
        _G.saved_state = t._state
        t._state = {}
        vim.cmd("ClaudeContext compose")
        vim.api.nvim_buf_set_lines(0, 0, -1, false, { "draft" })
        vim.cmd("silent! write")
      ]])
      eq({ "draft" }, c:lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))
      eq(true, c:lua("return vim.bo.modified"))
      contains(c:lua("return _G.messages[#_G.messages].msg"), "the draft is kept")
      c:lua([[
        require("claude_context.terminal")._state = _G.saved_state
        vim.api.nvim_buf_set_lines(0, 0, -1, false, {})
        vim.bo.modified = false
        vim.cmd("close")
      ]])
    end,
  },
  {
    "a large paste into Claude's terminal arrives whole, as one bracketed paste",
    function()
      c:lua("vim.cmd('ClaudeContext focus')")
      c:wait("return vim.api.nvim_get_mode().mode == 't'", "Terminal-Job mode")
      local before = #read(".in")
      -- 300 KB in three phases, a line split across chunks, as a UI streams a paste.
      local line = string.rep("x", 99)
      local chunk = {}
      for i = 1, 1000 do
        chunk[i] = line
      end
      c:lua(
        [[
        local chunk = ...
        local last = vim.deepcopy(chunk)
        last[#last] = "tail"
        vim.paste(chunk, 1)
        vim.paste(chunk, 2)
        vim.paste(last, 3)
      ]],
        chunk
      )
      local body = table.concat(chunk, "\n")
      local want = "\27[200~" .. body .. body .. table.concat(vim.list_slice(chunk, 1, 999), "\n") .. "\ntail\27[201~"
      -- Focus-in (ESC [ I) from entering Terminal-Job mode may land in the log late: not ours.
      local function got()
        return (read(".in"):sub(before + 1):gsub("\27%[[IO]", ""))
      end
      wait_for(function()
        return #got() >= #want
      end, 10000, "the whole paste (" .. #want .. " bytes)")
      eq(want, got(), "byte for byte")
    end,
  },
  {
    ":ClaudeContext focus: to the terminal, then hides it; shows it when hidden",
    function()
      local t = "require('claude_context.terminal')._state.buf"
      c:lua("vim.cmd('stopinsert') vim.api.nvim_set_current_win(vim.fn.win_getid(1))")
      c:wait(("return vim.api.nvim_get_current_buf() ~= %s"):format(t), "a file window")
      c:lua("vim.cmd('ClaudeContext focus')")
      c:wait(("return vim.api.nvim_get_current_buf() == %s"):format(t), "focus")
      c:lua("vim.cmd('ClaudeContext focus')")
      eq(0, c:lua(("return #vim.fn.win_findbuf(%s)"):format(t)), "hidden when focused")
      c:lua("vim.cmd('ClaudeContext focus')")
      eq(1, c:lua(("return #vim.fn.win_findbuf(%s)"):format(t)), "shown again")
      c:stop()
    end,
  },
}
