-- A conversation as a buffer (claude_context.transcript), following the agent
-- (claude_context.follow), each session's trail and what it cost (claude_context.usage): the
-- conversation files are Claude Code's JSON lines, written here in CLAUDE_CONFIG_DIR as the CLI
-- writes them; the tool calls come through the real hook binary and the bridge.
local h = require("helpers")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local cc = h.cc
local messages = h.record_notify()

local T = function()
  return require("claude_context.transcript")
end

local project = assert(vim.uv.fs_realpath(vim.fn.getcwd()))
local folder = vim.env.CLAUDE_CONFIG_DIR .. "/projects/" .. project:gsub("[^%w]", "-")
vim.fn.mkdir(folder, "p")
h.write(project .. "/a.txt", table.concat({ "one", "two", "three", "four", "five", "six" }, "\n") .. "\n")

local function rec(t)
  return vim.json.encode(t)
end

local function prompt(text)
  return rec({ type = "user", cwd = project, message = { role = "user", content = text } })
end

local function said(text)
  return rec({ type = "assistant", cwd = project, message = { content = { { type = "text", text = text } } } })
end

local function read_call(file, offset)
  return rec({
    type = "assistant",
    cwd = project,
    message = {
      content = {
        { type = "tool_use", id = "t1", name = "Read", input = { file_path = file, offset = offset } },
      },
    },
  })
end

local function result(text, file, line)
  return rec({
    type = "user",
    message = { content = { { type = "tool_result", tool_use_id = "t1", content = text } } },
    toolUseResult = { type = "text", file = { filePath = file, startLine = line } },
  })
end

local function write_conversation(id, lines, mode)
  local f = assert(io.open(folder .. "/" .. id .. ".jsonl", mode or "w"))
  f:write(lines)
  f:close()
end

---Opens the transcript of `id` in the current window; waits until its lines are in.
local function open(id)
  local ready
  local buf = cc().transcript(id, {
    on_ready = function()
      ready = true
    end,
  })
  ok(type(buf) == "number", "a buffer at once")
  wait_for(function()
    return ready
  end, 10000, "the transcript read")
  vim.api.nvim_win_set_buf(0, buf)
  T().window_options(0)
  return buf
end

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function find(buf, pat)
  for i, l in ipairs(lines(buf)) do
    if l:find(pat, 1, true) then
      return i
    end
  end
end

return {
  {
    "a transcript is a read-only Markdown buffer: prompts as headings, Claude's text, tool calls folded, <CR>/gf open the file at its line",
    function()
      write_conversation("s-one", table.concat({
        prompt("read a.txt please\nand tell me"),
        said("Reading it."),
        read_call(project .. "/a.txt", 3),
        result("3\tthree\n4\tfour", project .. "/a.txt", 3),
        said("The answer is \27[31m42\7."),
        rec({ type = "file-history-snapshot", whatever = true }),
      }, "\n") .. "\n")
      local buf = open("s-one")
      eq("claude-transcript://s-one", vim.api.nvim_buf_get_name(buf))
      eq(false, vim.bo[buf].modifiable)
      eq("nofile", vim.bo[buf].buftype)
      eq("markdown", vim.bo[buf].filetype)
      -- Neovim's Markdown syntax, loaded in a turn of its own after the filetype's.
      wait_for(function()
        return vim.b[buf].current_syntax == "markdown"
      end, 5000, "the Markdown syntax")
      -- Its syntax looks back one line to sync (the Markdown syntax's own 50/200 walked the lines
      -- in closed folds, over 100 ms at 50 MB); another Markdown buffer keeps its own.
      local function sync_of(b)
        return vim.api.nvim_buf_call(b, function()
          return vim.api.nvim_exec2("syntax sync", { output = true }).output
        end)
      end
      contains(sync_of(buf), ("minimal %d, maximal %d lines"):format(T().SYNC_MINLINES, T().SYNC_MAXLINES))
      local md = vim.api.nvim_create_buf(false, true)
      vim.bo[md].syntax = "markdown"
      contains(sync_of(md), "minimal 50, maximal 200 lines")
      vim.api.nvim_buf_delete(md, { force = true })
      local l = lines(buf)
      eq("## read a.txt please", l[1])
      eq("and tell me", l[2])
      ok(find(buf, "Reading it."), vim.inspect(l))
      -- The escape sequence and the bell are shown, not passed to the screen.
      ok(find(buf, "The answer is \\x1b[31m42\\x07."), vim.inspect(l))
      local tool = assert(find(buf, "▸ Read a.txt:3"), vim.inspect(l))
      -- The tool call is one closed fold; its result a fold inside it.
      eq(tool, vim.fn.foldclosed(tool))
      eq(1, vim.fn.foldlevel(tool))
      eq(2, vim.fn.foldlevel(tool + 1))
      eq(tool + 3, vim.fn.foldclosedend(tool))
      eq(-1, vim.fn.foldclosed(1), "text is not folded")
      -- Search, yank and marks as in any buffer.
      vim.api.nvim_win_set_cursor(0, { 1, 0 })
      vim.cmd("normal! /Reading\r")
      eq(find(buf, "Reading it."), vim.api.nvim_win_get_cursor(0)[1])
      vim.cmd("normal! yy")
      eq("Reading it.\n", vim.fn.getreg('"'))
      vim.cmd("normal! ma")
      eq(find(buf, "Reading it."), vim.api.nvim_buf_get_mark(buf, "a")[1])
      -- gf on the tool call opens the file at the line it read.
      vim.api.nvim_win_set_cursor(0, { tool, 0 })
      vim.cmd("normal gf")
      eq(project .. "/a.txt", vim.api.nvim_buf_get_name(0))
      eq(3, vim.api.nvim_win_get_cursor(0)[1])
      vim.cmd("buffer " .. buf)
      vim.api.nvim_win_set_cursor(0, { tool + 1, 0 })
      vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
      eq(project .. "/a.txt", vim.api.nvim_buf_get_name(0))
      -- The same id gives the same buffer.
      eq(buf, cc().transcript("s-one"))
      vim.cmd("buffer " .. buf)
      ok(not pcall(vim.api.nvim_buf_set_lines, buf, 0, 1, false, { "x" }), "read-only")
    end,
  },
  {
    "gf on a tool call: a FIFO at its path (swapped in after any check of the path) never holds the editor; a regular file opens at its line, as a file read",
    function()
      local fifo = project .. "/jump-pipe"
      vim.system({ "mkfifo", fifo }):wait()
      write_conversation(
        "s-jump",
        table.concat({ prompt("look"), read_call(fifo, 2), read_call(project .. "/jump.txt", 5) }, "\n") .. "\n"
      )
      h.write(project .. "/jump.txt", "one\ntwo\nthree\nfour\nfive\nsix\n")
      local buf = open("s-jump")
      -- A writer that comes 2 s later (an editor that opened the FIFO by path would have waited
      -- for it), and a check of the path that says "a regular file", as a swap after it would.
      h.clear(messages)
      local held, jumped, err = h.with_swapped_fifo(fifo, function()
        vim.api.nvim_win_set_cursor(0, { assert(find(buf, "▸ Read jump-pipe")), 0 })
        vim.cmd("normal gf")
      end)
      assert(jumped, err)
      ok(not held, "the FIFO was opened and waited on")
      eq(buf, vim.api.nvim_get_current_buf(), "the transcript stays in its window")
      wait_for(function()
        return #messages > 0
      end, 5000, "the refusal said")
      contains(messages[1].msg, "not a regular file")
      -- A regular file: its buffer, at the line, as if read by :edit (listed, not modified,
      -- its filetype detected, written back as it was).
      eq(-1, vim.fn.bufnr(project .. "/jump.txt"), "no buffer has it yet")
      vim.api.nvim_win_set_cursor(0, { assert(find(buf, "▸ Read jump.txt:5")), 0 })
      vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
      eq(project .. "/jump.txt", vim.api.nvim_buf_get_name(0))
      eq(5, vim.api.nvim_win_get_cursor(0)[1])
      eq({ "one", "two", "three", "four", "five", "six" }, vim.api.nvim_buf_get_lines(0, 0, -1, false))
      eq(false, vim.bo.modified)
      eq("", vim.bo.buftype)
      eq(true, vim.bo.buflisted)
      eq("text", vim.bo.filetype)
      vim.cmd("write")
      eq("one\ntwo\nthree\nfour\nfive\nsix\n", table.concat(vim.fn.readfile(project .. "/jump.txt", "b"), "\n"))
      -- The jump list goes back to the transcript.
      vim.cmd('execute "normal! \\<C-o>"')
      eq(buf, vim.api.nvim_get_current_buf())
      vim.fn.delete(fifo)
    end,
  },
  {
    "a damaged file shows what can be read: a line that is not JSON, bytes that are not UTF-8, a last line cut short; a FIFO is refused at once",
    function()
      write_conversation(
        "s-bad",
        table.concat({
          "this is not json",
          prompt("first"),
          '{"type":"user","message":{"content":"bad \255 byte"}}',
          said("fine"),
          '{"type":"assistant","message":{"content":[{"type":"text","te',
        }, "\n")
      )
      local buf = open("s-bad")
      local l = lines(buf)
      contains(l[1], "not JSON")
      ok(find(buf, "## first"), vim.inspect(l))
      ok(find(buf, "## bad \239\191\189 byte"), vim.inspect(l))
      ok(find(buf, "fine"), vim.inspect(l))
      -- A FIFO in the file's place: the buffer says why, nothing waits on it.
      local fifo = folder .. "/s-fifo.jsonl"
      vim.system({ "mkfifo", fifo }):wait()
      local start = vim.uv.hrtime()
      local fb = cc().transcript("s-fifo")
      wait_for(function()
        return T().bufs[fb].error
      end, 10000, "the FIFO refused")
      ok((vim.uv.hrtime() - start) / 1e6 < 10000)
      contains(lines(fb)[1], "<!--")
      -- An id that is no id never names a path.
      local bad = cc().transcript("../../etc/passwd")
      wait_for(function()
        return T().bufs[bad].error
      end, 10000, "a bad id refused")
      contains(T().bufs[bad].error, "not a session id")
    end,
  },
  {
    "a large transcript opens in short turns: its filetype once every line is in (FileType sees them all), its syntax in a turn after; the window it opens in stays at its start; no undo",
    function()
      local many = { prompt("big") }
      for i = 1, 3000 do
        many[#many + 1] = said("line " .. i)
      end
      write_conversation("s-big", table.concat(many, "\n") .. "\n")
      local seen
      local au = vim.api.nvim_create_autocmd("FileType", {
        pattern = "markdown",
        callback = function(ev)
          if vim.api.nvim_buf_get_name(ev.buf) == T().SCHEME .. "s-big" then
            seen = { lines = vim.api.nvim_buf_line_count(ev.buf), syntax = vim.b[ev.buf].current_syntax }
          end
        end,
      })
      local ready
      local buf = cc().transcript("s-big", {
        on_ready = function()
          ready = true
        end,
      })
      -- Shown at once, as :ClaudeContext transcript does (its cursor on the one, last, line).
      vim.api.nvim_win_set_buf(0, buf)
      T().window_options(0)
      eq("", vim.bo[buf].filetype, "no filetype while the lines come in")
      wait_for(function()
        return ready
      end, 10000, "the transcript read")
      vim.api.nvim_del_autocmd(au)
      ok(seen, "FileType ran")
      ok(find(buf, "line 3000"), "every line in")
      eq(vim.api.nvim_buf_line_count(buf), seen.lines, "FileType saw every line")
      eq(nil, seen.syntax, "the syntax comes in a turn of its own")
      wait_for(function()
        return vim.b[buf].current_syntax == "markdown"
      end, 5000, "the Markdown syntax")
      eq(1, vim.api.nvim_win_get_cursor(0)[1], "the transcript opens at its start")
      eq(-1, vim.bo[buf].undolevels)
    end,
  },
  {
    "a running session's transcript grows; a window at its end follows, another keeps its cursor and scroll",
    function()
      write_conversation("s-grow", prompt("go") .. "\n")
      local buf = open("s-grow")
      vim.bo[buf].modifiable = false
      local many = {}
      for i = 1, 60 do
        many[#many + 1] = said("line " .. i)
      end
      write_conversation("s-grow", table.concat(many, "\n") .. "\n", "a")
      wait_for(function()
        return find(buf, "line 60")
      end, 10000, "the first growth")
      vim.cmd("only")
      local reader = vim.api.nvim_get_current_win()
      vim.api.nvim_win_set_cursor(reader, { 10, 0 })
      vim.fn.winrestview({ topline = 5 })
      vim.cmd("split")
      local tail = vim.api.nvim_get_current_win()
      vim.api.nvim_win_set_buf(tail, buf)
      local n = vim.api.nvim_buf_line_count(buf)
      vim.api.nvim_win_set_cursor(tail, { n, 0 })
      vim.api.nvim_set_current_win(reader)
      local view = vim.fn.winsaveview()
      -- The CLI writes a record in two pieces: nothing shows until its line is whole.
      local f = assert(io.open(folder .. "/s-grow.jsonl", "a"))
      f:write(said("the newest"):sub(1, 20))
      f:flush()
      vim.wait(200)
      ok(not find(buf, "the newest"))
      f:write(said("the newest"):sub(21) .. "\n")
      f:close()
      wait_for(function()
        return find(buf, "the newest")
      end, 10000, "the growth")
      eq({ 10, 0 }, vim.api.nvim_win_get_cursor(reader))
      eq(view.topline, vim.fn.winsaveview().topline)
      eq(vim.api.nvim_buf_line_count(buf), vim.api.nvim_win_get_cursor(tail)[1], "the window at the end follows")
      eq(reader, vim.api.nvim_get_current_win())
      vim.api.nvim_win_close(tail, true)
    end,
  },
  {
    "a record the CLI appends after the first read but before the watcher starts still shows (no event comes for it)",
    function()
      write_conversation("s-gap", prompt("go") .. "\n")
      local watch = T().watch
      T().watch = function(b)
        -- The CLI's last record of the turn, written in the gap; nothing is written after it.
        write_conversation("s-gap", said("written in the gap") .. "\n", "a")
        T().watch = watch
        return watch(b)
      end
      local buf = open("s-gap")
      T().watch = watch
      wait_for(function()
        return find(buf, "written in the gap")
      end, 5000, "the record written in the gap")
    end,
  },
  {
    "follow: each file the session reads shows at its line in one window of the plugin's own; the person's window, cursor, mode and typed keys never change",
    function()
      -- A child Neovim, whose own main loop handles typed keys while the tool calls arrive.
      local child = h.load("child").start(project)
      local okk, err = pcall(function()
        child:lua("require('claude_context').setup({})")
        local port =
          child:wait("local s = require('claude_context').status(); return s and s.port", "the child's bridge", 10000)
        child:lua(
          "vim.cmd('enew'); _G.mine = vim.api.nvim_get_current_win(); _G.typed = vim.api.nvim_get_current_buf()"
        )
        eq(true, child:lua("return require('claude_context').follow(true)"))
        child:input("ihel")
        child:wait("return vim.api.nvim_get_mode().mode == 'i' and vim.api.nvim_get_current_line() == 'hel'", "typing")
        local bin = assert(require("claude_context.sessions.hooks").binary(), "claude-context-mcp is built")
        local input = {
          hook_event_name = "PostToolUse",
          session_id = "s-follow",
          cwd = project,
          tool_name = "Read",
          tool_input = { file_path = project .. "/a.txt" },
          transcript_path = "/tmp/t.jsonl",
        }
        local r = vim
          .system(
            { bin, "hook", "PostToolUse" },
            { stdin = vim.json.encode(input), env = { CLAUDE_CODE_SSE_PORT = tostring(port) } }
          )
          :wait(20000)
        eq(0, r.code, r.stderr)
        local last =
          child:wait("return require('claude_context.follow').last", "the follow window shows the file", 10000)
        eq(project .. "/a.txt", last.file)
        eq("i", child:mode())
        eq(
          true,
          child:lua("return vim.api.nvim_get_current_win() == _G.mine and vim.api.nvim_get_current_buf() == _G.typed")
        )
        child:input("lo")
        child:wait("return vim.api.nvim_get_current_line() == 'hello'", "the typed keys")
        eq({ 1, 5 }, child:lua("return vim.api.nvim_win_get_cursor(_G.mine)"))
        eq("i", child:mode())
        local win = child:lua("return require('claude_context.follow').win")
        ok(win ~= child:lua("return _G.mine"))
        -- A file no buffer has loaded: a read-only view of it (read without waiting on the path).
        eq(project .. "/a.txt", child:lua("return vim.b[vim.api.nvim_win_get_buf(...)].claude_follow_file", win))
        eq(false, child:lua("return vim.bo[vim.api.nvim_win_get_buf(...)].modifiable", win))
        -- A second call (with its line) reuses the window and goes to the line.
        child:lua(
          "require('claude_context.follow.trail').on_tool_call({ session_id = 's-follow', tool = 'Read', file = ..., line = 4, cwd = select(2, ...) })",
          project .. "/a.txt",
          project
        )
        eq(win, child:lua("return require('claude_context.follow').win"))
        eq(4, child:lua("return vim.api.nvim_win_get_cursor(...)[1]", win))
        eq(true, child:lua("return vim.api.nvim_get_current_win() == _G.mine"))
        eq({ 1, 5 }, child:lua("return vim.api.nvim_win_get_cursor(_G.mine)"))
        eq("i", child:mode())
        child:input("<Esc>")
        -- The trail, as the location list.
        eq(2, child:lua("return #require('claude_context.follow').trail('s-follow', { open = false })"))
        local ll = child:lua(
          "return vim.tbl_map(function(i) return { name = vim.api.nvim_buf_get_name(i.bufnr), lnum = i.lnum, text = i.text } end, vim.fn.getloclist(0))"
        )
        eq(2, #ll)
        eq(project .. "/a.txt", ll[1].name)
        eq(4, ll[2].lnum)
        contains(ll[1].text, "Read")
        -- A FIFO named by a tool is never opened.
        local fifo = project .. "/pipe"
        vim.system({ "mkfifo", fifo }):wait()
        child:lua(
          "require('claude_context.follow.trail').on_tool_call({ session_id = 's-follow', tool = 'Read', file = ..., cwd = select(2, ...) })",
          fifo,
          project
        )
        eq(project .. "/a.txt", child:lua("return require('claude_context.follow').last.file"))
        -- A FIFO swapped in after a check of the path said "a regular file" (here: a stat that
        -- lies, as a swap between the check and the open would) is not opened and waited on:
        -- the file is read by a non-blocking open, judged on its descriptor.
        local swapped = project .. "/swapped"
        vim.system({ "mkfifo", swapped }):wait()
        child:lua(
          "local real, p = vim.uv.fs_stat, ...; vim.uv.fs_stat = function(x, ...) if x == p then return { type = 'file', size = 1 } end return real(x, ...) end",
          swapped
        )
        child:lua(
          "require('claude_context.follow.trail').on_tool_call({ session_id = 's-follow', tool = 'Read', file = ..., cwd = select(2, ...) })",
          swapped,
          project
        )
        eq(project .. "/a.txt", child:lua("return require('claude_context.follow').last.file"))
        -- A file outside the session's folder (or one `..` leads out of) is never shown.
        local outside = vim.fn.tempname()
        vim.fn.writefile({ "secret" }, outside)
        for _, f in ipairs({ outside, project .. "/../" .. vim.fs.basename(project) .. "-x/a.txt" }) do
          child:lua(
            "require('claude_context.follow.trail').on_tool_call({ session_id = 's-follow', tool = 'Read', file = ..., cwd = select(2, ...) })",
            f,
            project
          )
          eq(project .. "/a.txt", child:lua("return require('claude_context.follow').last.file"), f)
        end
        eq(true, require("claude_context.follow").inside(project .. "/sub/../a.txt", project))
        eq(false, require("claude_context.follow").inside(project .. "/../x", project))
        eq(false, require("claude_context.follow").inside(project .. "x/a.txt", project))
        eq(false, child:lua("return require('claude_context').follow(false)"))
        eq(false, child:lua("return vim.api.nvim_win_is_valid(...)", win), "the follow window closes")
      end)
      child:lua("require('claude_context').stop()")
      child:stop()
      assert(okk, err)
    end,
  },
  {
    "usage: every session the hooks reported, with Claude Code's own cost; the statusline shows it",
    function()
      cc().setup({})
      wait_for(function()
        return cc().status()
      end, 10000, "the bridge")
      local bin = assert(require("claude_context.sessions.hooks").binary(), "claude-context-mcp is built")
      local done
      vim.system({ bin, "hook", "UserPromptSubmit" }, {
        stdin = vim.json.encode({
          hook_event_name = "UserPromptSubmit",
          session_id = "s-cost",
          cwd = project,
          prompt = "hi",
        }),
        env = { CLAUDE_CODE_SSE_PORT = tostring(cc().status().port) },
      }, function(r)
        done = r
      end)
      wait_for(function()
        return done
      end, 10000, "the hook")
      write_conversation("s-cost", table.concat({
        prompt("hi"),
        rec({
          type = "cost-state",
          sessionId = "s-cost",
          totalCostUSD = 0.5,
          totalAPIDuration = 1500,
          totalLinesAdded = 7,
          totalLinesRemoved = 2,
        }),
      }, "\n") .. "\n")
      -- :ClaudeContext transcript <Tab> offers the sessions' ids.
      contains(table.concat(require("claude_context.complete").session_ids(), " "), "s-cost")
      local U = require("claude_context.usage")
      local refreshed
      U.refresh(function()
        refreshed = true
      end)
      wait_for(function()
        return refreshed
      end, 10000, "the usage read")
      local e
      for _, x in ipairs(cc().usage()) do
        if x.session == "s-cost" then
          e = x
        end
      end
      ok(e, vim.inspect(cc().usage()))
      eq(0.5, e.cost_usd)
      eq(7, e.lines_added)
      eq(2, e.lines_removed)
      eq(1500, e.api_ms)
      contains(U.statusline(), "all $0.50")
      contains(U.lualine()[1](), "all $0.50")
      -- A CLI that writes no cost record (2.1.197) saves its last session's cost in its config
      -- when the session ends.
      h.write(
        vim.env.CLAUDE_CONFIG_DIR .. "/.claude.json",
        vim.json.encode({
          projects = {
            [project] = {
              lastSessionId = "s-old",
              lastCost = 0.25,
              lastAPIDuration = 900,
              lastLinesAdded = 1,
              lastLinesRemoved = 0,
            },
          },
        })
      )
      eq({ cost_usd = 0.25, api_ms = 900, lines_added = 1, lines_removed = 0 }, U.saved({ id = "s-old" }))
      eq(nil, U.saved({ id = "s-other" }))
    end,
  },
  {
    "the subcommands pass their argument on: transcript ID, follow on|off, trail ID",
    function()
      -- (A subcommand's run gets the words after its own name: args[1] is the first argument;
      -- these read args[2] and dropped it.)
      local seen = {}
      local tr, fo = require("claude_context.transcript"), require("claude_context.follow")
      local open, follow, trail = tr.open, fo.follow, fo.trail
      tr.open = function(id)
        seen.transcript = id
      end
      fo.follow = function(want)
        seen[#seen + 1] = want
        return want
      end
      fo.trail = function(id)
        seen.trail = id
      end
      local ok_run, err = pcall(function()
        vim.cmd("ClaudeContext transcript s-one")
        vim.cmd("ClaudeContext follow off")
        vim.cmd("ClaudeContext follow on")
        vim.cmd("ClaudeContext trail s-two")
      end)
      tr.open, fo.follow, fo.trail = open, follow, trail
      assert(ok_run, err)
      eq("s-one", seen.transcript)
      eq({ false, true }, { seen[1], seen[2] })
      eq("s-two", seen.trail)
    end,
  },
}
