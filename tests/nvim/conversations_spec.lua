-- Claude Code's conversations of the project (claude_context.conversations): listed off the main
-- thread from a temporary CLAUDE_CONFIG_DIR, damaged files listed with what can be read, a
-- conversation being written while it is listed, a worktree's conversations, a query, the picker
-- through vim.ui.select and a fake snacks.nvim, completion of ids.
local h = require("helpers")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local messages = h.record_notify()
local uv = vim.uv or vim.loop

local CV = require("claude_context.conversations")
local PK = require("claude_context.conversations.picker")

local base = h.tmpdir()
local cfg = base .. "/claude"
local root = base .. "/proj"
vim.fn.mkdir(root .. "/.claude/worktrees/feat", "p")
vim.fn.mkdir(root .. "/.git", "p") -- the project a worktree belongs to is the git work tree
root = uv.fs_realpath(root)
vim.env.CLAUDE_CONFIG_DIR = cfg

local ID1 = "11111111-1111-4111-8111-111111111111"
local ID2 = "22222222-2222-4222-8222-222222222222"
local ID3 = "33333333-3333-4333-8333-333333333333"

local function folder(cwd)
  local f = cfg .. "/projects/" .. cwd:gsub("[^%w]", "-")
  vim.fn.mkdir(f, "p")
  return f
end

local function user(text, ts, cwd)
  return vim.json.encode({
    type = "user",
    message = { role = "user", content = text },
    timestamp = ts,
    cwd = cwd,
    gitBranch = "main",
  }) .. "\n"
end

local function assistant(text, ts)
  return vim.json.encode({
    type = "assistant",
    message = { role = "assistant", content = { { type = "text", text = text } } },
    timestamp = ts,
  }) .. "\n"
end

local function write(path, text, mode)
  local f = assert(io.open(path, mode or "wb"))
  f:write(text)
  f:close()
end

---Lists (opts) and waits for the answer.
local function list(opts)
  local got, err
  CV.list(vim.tbl_extend("force", { root = root }, opts or {}), function(l, e)
    got, err = l, e
  end)
  wait_for(function()
    return got ~= nil
  end, 20000, "the conversations listed")
  return got, err
end

local function ids(l)
  return vim.tbl_map(function(c)
    return c.id
  end, l)
end

-- The project's conversation, and its worktree's (newer).
write(
  folder(root) .. "/" .. ID1 .. ".jsonl",
  user("fix the parser", "2026-01-01T10:00:00.000Z", root)
    .. assistant("The parser is fixed.", "2026-01-01T10:01:00.000Z")
    .. vim.json.encode({ type = "custom-title", customTitle = "Parser fix" })
    .. "\n"
)
local wt = root .. "/.claude/worktrees/feat"
write(folder(wt) .. "/" .. ID2 .. ".jsonl", user("work in the worktree", "2026-01-02T10:00:00.000Z", wt))

return {
  {
    "the project's conversations and its worktree's, newest first, with their facts",
    function()
      local l, err = list()
      eq(nil, err)
      eq({ ID2, ID1 }, ids(l))
      eq("feat", l[1].worktree)
      eq("Parser fix", l[2].title)
      eq("fix the parser", l[2].first_prompt)
      eq(1, l[2].prompts)
      eq("main", l[2].branch)
      eq(root, l[2].cwd)
      ok(l[2].bytes > 0)
      eq(false, l[2].running)
      -- From inside the worktree, the same project.
      local here = vim.fn.getcwd()
      vim.cmd.cd(vim.fn.fnameescape(wt))
      eq(root, CV.root())
      vim.cmd.cd(vim.fn.fnameescape(here))
      -- The public API.
      local got
      require("claude_context").conversations({ root = root }, function(x)
        got = x
      end)
      wait_for(function()
        return got
      end, 20000)
      eq(2, #got)
    end,
  },
  {
    "damaged files: a truncated line, not JSON, not UTF-8, a FIFO and a 2 GB sparse file are listed with what can be read",
    function()
      local f = folder(root)
      write(
        f .. "/" .. ID3 .. ".jsonl",
        "not json\n\255\254\n"
          .. user("still readable", "2026-01-03T10:00:00.000Z", root)
          .. '{"type":"user","message":{"content":"trunc'
      )
      -- A FIFO: never opened (a read would wait for a writer forever).
      eq(
        0,
        vim.fn.system({ "mkfifo", f .. "/44444444-4444-4444-8444-444444444444.jsonl" }) == "" and 0 or vim.v.shell_error
      )
      -- 2 GB, sparse: a prompt at its start, nothing readable after.
      local big = f .. "/55555555-5555-4555-8555-555555555555.jsonl"
      write(big, user("a huge one", "2026-01-04T10:00:00.000Z", root))
      local fh = assert(io.open(big, "r+b"))
      fh:seek("set", 2 * 1024 * 1024 * 1024)
      fh:write("\n")
      fh:close()
      local t0 = uv.hrtime()
      local l, err = list()
      eq(nil, err)
      local by = {}
      for _, c in ipairs(l) do
        by[c.id] = c
      end
      eq("still readable", by[ID3].first_prompt)
      eq(1, by[ID3].prompts)
      local b = by["55555555-5555-4555-8555-555555555555"]
      ok(b and b.partial and b.bytes > 2 * 1024 * 1024 * 1024, vim.inspect(b))
      eq("a huge one", b.first_prompt)
      eq(nil, by["44444444-4444-4444-8444-444444444444"])
      ok((uv.hrtime() - t0) / 1e9 < 20, "no stall")
      os.remove(big)
      os.remove(f .. "/44444444-4444-4444-8444-444444444444.jsonl")
    end,
  },
  {
    "a conversation being written while it is listed: each listing reads what is there, the last all of it",
    function()
      local path = folder(root) .. "/" .. ID3 .. ".jsonl"
      write(path, "")
      local n = 0
      local timer = uv.new_timer()
      timer:start(0, 2, function()
        if n < 200 then
          n = n + 1
          write(path, user("prompt " .. n, ("2026-01-05T10:00:%02d.000Z"):format(n % 60), root), "ab")
        end
      end)
      local last = -1
      for _ = 1, 5 do
        local l, err = list()
        eq(nil, err)
        for _, c in ipairs(l) do
          if c.id == ID3 then
            ok(c.prompts >= last, "never fewer")
            last = c.prompts
          end
        end
      end
      wait_for(function()
        return n >= 200
      end, 20000)
      timer:stop()
      timer:close()
      local l = list()
      for _, c in ipairs(l) do
        if c.id == ID3 then
          eq(200, c.prompts)
          eq("prompt 200", c.last_prompt)
        end
      end
      -- Known to the plugin as live: running.
      local ss = require("claude_context.sessions.state")
      local orig = ss.list
      ss.list = function()
        return { { id = ID3, state = "working" } }
      end
      local l2 = list()
      ss.list = orig
      for _, c in ipairs(l2) do
        eq(c.id == ID3, c.running, c.id)
      end
      os.remove(path)
    end,
  },
  {
    "a query keeps the conversations whose messages contain it, with the matches",
    function()
      local l = list({ query = "parser is FIXED" })
      eq(0, #l)
      l = list({ query = "parser is fixed" })
      eq({ ID1 }, ids(l))
      eq("assistant", l[1].matches[1].role)
      contains(l[1].matches[1].text, "The parser is fixed.")
      eq(0, #list({ query = "nowhere at all" }))
    end,
  },
  {
    "the picker through vim.ui.select: the lines, then the actions menu (copy id)",
    function()
      _G.Snacks = nil
      local calls = {}
      local orig = vim.ui.select
      vim.ui.select = function(items, opts, cb)
        calls[#calls + 1] = { items = items, opts = opts }
        if opts.kind == "claude_context.conversations" then
          cb(items[2])
        else
          cb("copy id")
        end
      end
      require("claude_context.config").options.sessions.picker = "select"
      -- The picker lists the project of the current directory.
      vim.cmd.cd(vim.fn.fnameescape(root))
      PK.pick()
      wait_for(function()
        return #calls >= 2
      end, 20000, "the picker and the menu")
      vim.ui.select = orig
      eq("Claude conversations", calls[1].opts.prompt)
      contains(calls[1].opts.format_item(calls[1].items[2]), "Parser fix")
      eq(PK.ACTIONS, calls[2].items)
      eq(ID1, vim.fn.getreg('"'))
      -- Completion offers the ids the listing found: resume, and transcript (with the sessions').
      local commands = require("claude_context.commands")
      local words = commands.complete("", "ClaudeContext resume ")
      ok(vim.tbl_contains(words, ID1), vim.inspect(words))
      words = commands.complete("", "ClaudeContext transcript ")
      ok(vim.tbl_contains(words, ID1), "transcript completes conversation ids: " .. vim.inspect(words))
      eq({ "off", "on" }, commands.complete("", "ClaudeContext follow "))
      -- :checkhealth claude_context counts the project's conversations.
      local health = h.health_lines(require("claude_context.health.features").check_conversations)
      contains(health, "START Conversations (:ClaudeContext conversations)")
      contains(health, "OK " .. cfg .. "/projects: ")
      contains(health, "conversation(s) of this project")
    end,
  },
  {
    "the library answers a Lua table (no JSON to decode on the main thread); the picker formats a long list over several event-loop turns",
    function()
      local native = require("claude_context.native").get()
      local got
      native.conversations(vim.json.encode({ root = root }), function(err, l)
        got = { err = err, l = l }
      end)
      wait_for(function()
        return got
      end, 20000)
      eq(nil, got.err)
      eq("table", type(got.l))
      eq("Parser fix", got.l[2].title)
      -- 5,000 entries, each line formatted once, not all in the turn that asked.
      local many = {}
      for i = 1, 5000 do
        many[i] = { id = ("%08d"):format(i), title = "t" .. i, updated_ms = i * 1000, prompts = i }
      end
      local orig, slice, formatted, seen = vim.ui.select, PK.SLICE_MS, 0, nil
      local format = PK.format
      PK.format = function(c)
        formatted = formatted + 1
        return format(c)
      end
      PK.SLICE_MS = 1
      vim.ui.select = function(items, opts)
        seen = {}
        for _, it in ipairs(items) do
          seen[#seen + 1] = opts.format_item(it)
        end
      end
      require("claude_context.config").options.sessions.picker = "select"
      PK.show(many, "many")
      local at_once = seen
      wait_for(function()
        return seen
      end, 20000, "the picker")
      vim.ui.select, PK.SLICE_MS, PK.format = orig, slice, format
      eq(nil, at_once, "not drawn in the turn that asked")
      eq(5000, #seen)
      eq(5000, formatted, "each line formatted once")
      contains(seen[5000], "t5000")
    end,
  },
  {
    "the list line: time, ● running, worktree or branch, prompts and cost first (45 columns), then the title; the preview says it short",
    function()
      local ms = os.time({ year = tonumber(os.date("%Y")), month = 3, day = 4, hour = 5, min = 6 }) * 1000
      local long = ("a title far longer than the list shows "):rep(4)
      local line = PK.format({ title = long, updated_ms = ms, prompts = 3, cost_usd = 1.254, worktree = "feat" })
      eq("03-04 05:06   wt:feat       3 prompts  $1.25 a title far", line:sub(1, 56))
      eq(45 + PK.TITLE_MAX, vim.api.nvim_strwidth(line), "the title cut")
      line = PK.format({ title = "t", updated_ms = ms, prompts = 1, branch = "main", running = true })
      eq("03-04 05:06 ● main           1 prompt        t", line)
      line = PK.format({ title = "t", updated_ms = ms, prompts = 12, worktree = "a-long-worktree-name" })
      eq("03-04 05:06   wt:a-long-w… 12 prompts        t", line)
      -- The listing's own: the worktree's conversation says so within the first 45 columns.
      local by = {}
      for _, c in ipairs(list()) do
        by[c.id] = PK.format(c)
      end
      contains(by[ID2]:sub(1, 45), "wt:feat")
      contains(by[ID2]:sub(1, 45), "1 prompt ")
      contains(by[ID1]:sub(1, 45), "main")
      local preview = PK.preview({ id = ID1, title = "t", prompts = 1, bytes = 720426, partial = true })
      eq("- 1 prompt, 704 KiB, partly read", preview[5])
      eq("- 2 prompts, 900 B", PK.preview({ id = ID1, title = "t", prompts = 2, bytes = 900 })[5])
    end,
  },
  {
    "the picker in a fake snacks.nvim: items, a Markdown preview, a key per action",
    function()
      local got
      _G.Snacks = { picker = {
        pick = function(o)
          got = o
          return {}
        end,
      } }
      require("claude_context.config").options.sessions.picker = "auto"
      PK.pick({ query = "parser" })
      wait_for(function()
        return got
      end, 20000, "Snacks.picker.pick called")
      _G.Snacks = nil
      local items = got.finder()
      eq(1, #items)
      eq(ID1, items[1].entry.id)
      -- A short title; the keys in the preview's title, as many as fit its width.
      eq('Claude conversations with "parser"', got.title)
      eq(nil, got.layout, "a preview: the person's own snacks layout")
      local lines, title, wo
      local function preview(win)
        got.preview({
          item = items[1],
          win = win,
          preview = {
            reset = function() end,
            set_lines = function(_, l)
              lines = l
            end,
            highlight = function() end,
            set_title = function(_, t)
              title = t
            end,
            wo = function(_, o)
              wo = o
            end,
          },
        })
      end
      preview(nil)
      eq({ linebreak = true }, wo, "long prompts wrap between words")
      eq("<CR> actions  <M-t> transcript  <M-r> resume  <M-b> background  <M-f> fork  <M-y> copy id", title)
      local win = vim.api.nvim_open_win(
        vim.api.nvim_create_buf(false, true),
        false,
        { relative = "editor", row = 0, col = 0, width = 50, height = 3 }
      )
      preview(win)
      vim.api.nvim_win_close(win, true)
      eq("<CR> actions  <M-t> transcript  <M-r> resume  …", title)
      eq("# Parser fix", lines[1])
      -- Where it ran, under the home folder shown as ~ (as Claude Code shows it).
      contains(table.concat(PK.preview({ id = ID1, title = "t", cwd = vim.env.HOME .. "/demo" }), "\n"), "- in: ~/demo")
      contains(table.concat(lines, "\n"), "## Matches")
      -- The transcript action opens it (claude_context.transcript): nothing said, no error.
      h.clear(messages)
      got.actions.claude_context_transcript({ close = function() end }, items[1])
      eq({}, messages)
      -- copy id by its key.
      vim.fn.setreg('"', "")
      got.actions["claude_context_copy id"]({ close = function() end }, items[1])
      eq(ID1, vim.fn.getreg('"'))
    end,
  },
  {
    "a listing answered from the kept list is never stale: a file grew, one went; a caller's edits reach no later answer",
    function()
      local ID6 = "66666666-6666-4666-8666-666666666666"
      local p6 = folder(root) .. "/" .. ID6 .. ".jsonl"
      write(p6, user("first of six", "2026-02-01T10:00:00.000Z", root))
      local function by_id(l)
        local by = {}
        for _, c in ipairs(l) do
          by[c.id] = c
        end
        return by
      end
      local l = list()
      eq(1, by_id(l)[ID6].prompts)
      -- Nothing changed: the same answer, in tables of its own.
      local again = list()
      eq(ids(l), ids(again))
      ok(again ~= l and again[1] ~= l[1], "a copy")
      -- A caller's edits: the entries, the list.
      local before = vim.deepcopy(again)
      again[1].title, again[1].prompts = "edited", 99
      table.remove(again, 1)
      again[#again + 1] = { id = "bogus", updated_ms = 0 }
      eq(before, list())
      -- The file grew: its entry is read again, newest now.
      local old = by_id(l)[ID6].updated_ms
      write(p6, user("second of six", "2026-03-01T10:00:00.000Z", root), "ab")
      local grown = list()
      local c = by_id(grown)[ID6]
      eq(2, c.prompts)
      eq("second of six", c.last_prompt)
      ok(c.updated_ms > old, "updated_ms moved")
      eq(ID6, grown[1].id)
      eq(#l, #grown)
      -- Gone: not listed.
      os.remove(p6)
      local gone = list()
      eq(nil, by_id(gone)[ID6])
      eq(#l - 1, #gone)
    end,
  },
  {
    "the library answers a caller that keeps a list with what changed since: unchanged, the changed entries, or the whole list",
    function()
      local native = assert(require("claude_context.native").get())
      local function ask(since)
        local got
        native.conversations(vim.json.encode({ root = root, since = since }), function(err, x)
          got = { err = err, x = x }
        end)
        wait_for(function()
          return got
        end, 20000, "the library's answer")
        eq(nil, got.err)
        return got.x
      end
      local whole = ask(0)
      ok(whole.generation and whole.list and #whole.list > 0, vim.inspect(whole):sub(1, 200))
      local same = ask(whole.generation)
      eq({ generation = whole.generation, unchanged = true }, same)
      -- Another generation than the one kept: the whole list again.
      ok(ask(whole.generation + 1000).list ~= nil, "whole list for a generation not kept")
      local g = ask(0).generation
      local ID7 = "77777777-7777-4777-8777-777777777777"
      local p7 = folder(root) .. "/" .. ID7 .. ".jsonl"
      write(p7, user("seventh", "2026-04-01T10:00:00.000Z", root))
      local p = ask(g)
      eq(g, p.base)
      eq({ ID7 }, ids(p.changed))
      eq({}, p.removed)
      os.remove(p7)
      local r = ask(p.generation)
      eq({}, r.changed)
      eq({ ID7 }, r.removed)
    end,
  },
}
