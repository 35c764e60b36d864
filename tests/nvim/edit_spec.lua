-- Edit in place (:ClaudeContext edit) against a fake CLI speaking stream-json
-- (tests/nvim/fake_edit_cli.py): the range at the end of the file, unsaved edits elsewhere, the
-- person's edit while the answer streams (elsewhere: rebased; inside: refused), cancel halfway,
-- a dead process (restarted on the next edit, with a message), no change, an answer far larger
-- than the range, hunks kept and rejected, `u` undoing the whole edit, the warm process, the
-- prompt and the command line, the range without a selection, repeat, the bench's big edit
-- (one `u` restores it), output arriving while the answer is written.
local h = require("helpers")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local messages = h.record_notify()

local dir = h.tmpdir()
local fake = dir .. "/claude"
h.write(fake, h.read(h.here .. "/fake_edit_cli.py"))
vim.uv.fs_chmod(fake, tonumber("755", 8))
h.write(dir .. "/CLAUDE.md", "Use tabs, never spaces.\n")
vim.fn.chdir(dir)

require("claude_context").setup({ auto_start = false, claude = { cmd = fake, env = { FAKE_EDIT_DIR = dir } } })

local function edit()
  return require("claude_context.edit")
end

local function hunks()
  return require("claude_context.edit.hunks")
end

---The fake's answers, from now on (its message count starts again).
local function answers(list)
  h.write(dir .. "/answers.json", vim.json.encode(list))
  os.remove(dir .. "/count")
  os.remove(dir .. "/go")
end

local function block(lines)
  return "Here it is:\n```lua\n" .. table.concat(lines, "\n") .. "\n```\n"
end

local function starts()
  return tonumber(h.read(dir .. "/starts") or "0") or 0
end

local function buffer(lines, name)
  local buf = vim.api.nvim_create_buf(true, false)
  vim.api.nvim_set_current_buf(buf)
  if name then
    vim.api.nvim_buf_set_name(buf, name)
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].filetype = "lua"
  return buf
end

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function numbered(n, fmt)
  local t = {}
  for i = 1, n do
    t[i] = (fmt or "line %d"):format(i)
  end
  return t
end

local function idle()
  wait_for(function()
    return not edit().busy()
  end, 20000, "the edit to end")
end

local function said(text)
  for _, m in ipairs(messages) do
    if tostring(m.msg):find(text, 1, true) then
      return true
    end
  end
  return false
end

---Runs `fn` with the edit's next step held back: the first callback edit in place schedules
---(claude_context.edit, not the process's decoding) once `when()` holds is kept, not run; returns
---it, for the spec to run after doing something in between.
local function hold(when, fn)
  local schedule, held = vim.schedule, nil
  vim.schedule = function(cb)
    local src = debug.getinfo(cb, "S").source
    if not held and src:find("claude_context/edit/init.lua", 1, true) and when() then
      held = cb
      return
    end
    return schedule(cb)
  end
  local okk, err = pcall(fn, function()
    return held
  end)
  vim.schedule = schedule
  assert(okk, err)
  return held
end

return {
  {
    "a range at the end of the file: streamed in place, hunks kept; lines outside untouched",
    function()
      answers({ { text = block({ "LINE 9", "line 10", "LINE 11" }), pieces = 5 } })
      local buf = buffer(numbered(10))
      require("claude_context").edit({ buf = buf, range = { 9, 10 }, instruction = "upper case" })
      idle()
      eq(vim.list_extend(numbered(8), { "LINE 9", "line 10", "LINE 11" }), lines(buf))
      ok(hunks().active[buf], "hunks pending")
      -- The removed line shows as a virtual line of the hunk.
      local marks = vim.api.nvim_buf_get_extmarks(buf, hunks().ns, 0, -1, { details = true })
      ok(#marks >= 1, "hunk marks")
      local virt = vim.inspect(vim.tbl_map(function(m)
        return m[4].virt_lines
      end, marks))
      contains(virt, "line 9")
      ok(hunks().act(buf, "keep_all"), "kept")
      eq(nil, hunks().active[buf])
      eq(vim.list_extend(numbered(8), { "LINE 9", "line 10", "LINE 11" }), lines(buf))
      eq({}, vim.api.nvim_buf_get_extmarks(buf, hunks().ns, 0, -1, {}))
    end,
  },
  {
    "the process is warm: the second edit starts no CLI; its command line is the read-only, stream-json one",
    function()
      local before = starts()
      answers({ { text = block({ "x" }) } })
      local buf = buffer({ "a", "b" })
      require("claude_context").edit({ buf = buf, range = { 1, 1 }, instruction = "x it" })
      idle()
      eq(before, starts(), "no new process")
      hunks().act(buf, "keep_all")
      local args = " " .. h.read(dir .. "/args.log")
      for _, a in ipairs({
        "-p",
        "--tools=Read,Grep,Glob",
        "--input-format=stream-json",
        "--output-format=stream-json",
        "--verbose",
        "--include-partial-messages",
        "--no-session-persistence",
        "--permission-mode=dontAsk",
      }) do
        contains(args, " " .. a, a)
      end
      ok(not args:find("--output-format json", 1, true), args)
      eq("ready", edit().state().state)
    end,
  },
  {
    "the prompt: the range, path, language, lines around, diagnostics in range, CLAUDE.md",
    function()
      os.remove(dir .. "/prompts.log")
      answers({ { text = "nothing to do" } })
      local buf = buffer(numbered(40), dir .. "/src.lua")
      local ns = vim.api.nvim_create_namespace("edit_spec")
      vim.diagnostic.set(ns, buf, {
        { lnum = 20, col = 0, message = "undefined global x", severity = vim.diagnostic.severity.WARN },
        { lnum = 2, col = 0, message = "outside the range", severity = vim.diagnostic.severity.ERROR },
      })
      require("claude_context").edit({ buf = buf, range = { 20, 22 }, instruction = "fix the warning" })
      idle()
      local p = h.read(dir .. "/prompts.log")
      contains(p, "File: src.lua (language: lua)")
      contains(p, "Instruction: fix the warning")
      contains(p, "Lines 20 to 22")
      contains(p, "line 20\nline 21\nline 22")
      contains(p, "19: line 19")
      contains(p, "23: line 23")
      contains(p, "line 21: WARN: undefined global x")
      ok(not p:find("outside the range", 1, true), "only the range's diagnostics")
      contains(p, "Use tabs, never spaces.")
      vim.diagnostic.reset(ns, buf)
    end,
  },
  {
    "an answer with no change: a message, nothing written (not even an undo step)",
    function()
      for _, text in ipairs({ "It is fine as it is.", block({ "a", "b" }) }) do
        answers({ { text = text } })
        h.clear(messages)
        local buf = buffer({ "a", "b", "c" })
        local tick, seq = vim.api.nvim_buf_get_changedtick(buf), vim.fn.changenr()
        require("claude_context").edit({ buf = buf, range = { 1, 2 }, instruction = "nothing" })
        idle()
        eq({ "a", "b", "c" }, lines(buf))
        ok(said("no change"), vim.inspect(messages))
        eq(nil, hunks().active[buf])
        eq(seq, vim.fn.changenr(), "no undo step left")
        ok(vim.api.nvim_buf_get_changedtick(buf) >= tick)
        eq({}, vim.api.nvim_buf_get_extmarks(buf, require("claude_context.edit.live").ns, 0, -1, {}))
      end
      -- A buffer without undo: the answer's lines go all the same.
      answers({ { text = block({ "a", "b" }) } })
      local buf = buffer({ "a", "b", "c" })
      vim.bo[buf].undolevels = -1
      require("claude_context").edit({ buf = buf, range = { 1, 2 }, instruction = "nothing" })
      idle()
      eq({ "a", "b", "c" }, lines(buf))
    end,
  },
  {
    "a buffer with unsaved edits elsewhere: they stay, the file on disk is not written",
    function()
      local path = dir .. "/unsaved.lua"
      h.write(path, table.concat(numbered(6), "\n") .. "\n")
      vim.cmd.edit(path)
      local buf = vim.api.nvim_get_current_buf()
      vim.api.nvim_buf_set_lines(buf, 0, 1, false, { "my unsaved line" })
      answers({ { text = block({ "NEW 4" }) } })
      require("claude_context").edit({ buf = buf, range = { 4, 4 }, instruction = "new" })
      idle()
      hunks().act(buf, "keep_all")
      eq({ "my unsaved line", "line 2", "line 3", "NEW 4", "line 5", "line 6" }, lines(buf))
      ok(vim.bo[buf].modified)
      eq(table.concat(numbered(6), "\n") .. "\n", h.read(path))
    end,
  },
  {
    "reject one hunk, keep the other; u undoes the whole edit in one step",
    function()
      answers({ { text = block({ "A", "b", "c", "D" }), pieces = 3 } })
      local buf = buffer({ "a", "b", "c", "d", "tail" })
      local seq = vim.fn.changenr()
      require("claude_context").edit({ buf = buf, range = { 1, 4 }, instruction = "ends upper" })
      idle()
      eq({ "A", "b", "c", "D", "tail" }, lines(buf))
      eq(2, #hunks().active[buf].hunks)
      ok(hunks().act(buf, "reject", 0), "rejected the first")
      eq({ "a", "b", "c", "D", "tail" }, lines(buf))
      ok(hunks().act(buf, "keep", 3), "kept the second")
      eq(nil, hunks().active[buf])
      vim.cmd("silent undo")
      eq({ "a", "b", "c", "d", "tail" }, lines(buf))
      eq(seq, vim.fn.changenr())
      -- `u` while hunks are pending: the whole edit goes, and its hunks with it.
      answers({ { text = block({ "A", "b", "c", "D" }) } })
      require("claude_context").edit({ buf = buf, range = { 1, 4 }, instruction = "ends upper" })
      idle()
      ok(hunks().active[buf], "pending")
      vim.cmd("silent undo")
      vim.api.nvim_exec_autocmds("TextChanged", { buffer = buf })
      eq({ "a", "b", "c", "d", "tail" }, lines(buf))
      eq(nil, hunks().active[buf])
      eq({}, vim.api.nvim_buf_get_extmarks(buf, hunks().ns, 0, -1, {}))
    end,
  },
  {
    "the review's keys act on a hunk and do what they always do elsewhere",
    function()
      answers({ { text = block({ "ONE", "two" }) } })
      local buf = buffer({ "one", "two", "three" })
      require("claude_context").edit({ buf = buf, range = { 1, 2 }, instruction = "upper" })
      idle()
      vim.api.nvim_win_set_cursor(0, { 3, 0 })
      -- `x` outside a hunk deletes a character as always.
      vim.cmd("normal x")
      eq("hree", lines(buf)[3])
      ok(hunks().active[buf], "still pending (a change below the hunks)")
      vim.api.nvim_win_set_cursor(0, { 1, 0 })
      vim.cmd("normal x")
      eq({ "one", "two", "hree" }, lines(buf))
      eq(nil, hunks().active[buf])
      eq("", vim.fn.maparg("x", "n"))
    end,
  },
  {
    "an edit typed while the answer streams: elsewhere it is rebased onto, inside it wins and the answer is refused",
    function()
      -- Elsewhere: a line added above the range.
      answers({ { text = block({ "X1", "X2", "X3" }), by_line = true, wait = "go", wait_after = 3 } })
      local buf = buffer({ "top", "a", "b", "bottom" })
      require("claude_context").edit({ buf = buf, range = { 2, 3 }, instruction = "x" })
      wait_for(function()
        return lines(buf)[2] == "X1"
      end, 20000, "the first line")
      vim.api.nvim_buf_set_lines(buf, 0, 0, false, { "mine" })
      h.write(dir .. "/go", "")
      idle()
      eq({ "mine", "top", "X1", "X2", "X3", "bottom" }, lines(buf))
      hunks().act(buf, "keep_all")
      -- Inside: the person changes an old line of the range.
      answers({ { text = block({ "Y1", "Y2", "Y3" }), by_line = true, wait = "go", wait_after = 3 } })
      h.clear(messages)
      buf = buffer({ "top", "a", "b", "bottom" })
      require("claude_context").edit({ buf = buf, range = { 2, 3 }, instruction = "y" })
      wait_for(function()
        return lines(buf)[2] == "Y1"
      end, 20000, "the first line")
      vim.api.nvim_buf_set_lines(buf, 3, 4, false, { "b changed by me" })
      h.write(dir .. "/go", "")
      idle()
      eq({ "top", "a", "b changed by me", "bottom" }, lines(buf))
      ok(said("edit refused"), vim.inspect(messages))
      eq(nil, hunks().active[buf])
    end,
  },
  {
    "cancel halfway (:ClaudeContext cancel, <C-c>): the buffer as it was; the next edit finds a warm process",
    function()
      for _, how in ipairs({ "command", "key" }) do
        answers({
          { text = block({ "P1", "P2", "P3", "P4" }), by_line = true, wait = "go", wait_after = 3 },
          { text = block({ "after" }) },
        })
        h.clear(messages)
        local buf = buffer({ "a", "b", "c" })
        vim.bo[buf].modified = false
        local seq = vim.fn.changenr()
        require("claude_context").edit({ buf = buf, range = { 1, 2 }, instruction = "p" })
        wait_for(function()
          return lines(buf)[1] == "P1"
        end, 20000, "the first line")
        local n = starts()
        if how == "command" then
          vim.cmd("ClaudeContext cancel")
        else
          vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<C-c>", true, false, true), "x", false)
        end
        eq(false, edit().busy())
        eq({ "a", "b", "c" }, lines(buf))
        eq(seq, vim.fn.changenr())
        eq(false, vim.bo[buf].modified)
        ok(said("cancelled"), vim.inspect(messages))
        h.write(dir .. "/go", "")
        -- A fresh process was started for the next edit.
        wait_for(function()
          return starts() == n + 1
        end, 20000, "a new warm process")
        answers({ { text = block({ "after" }) } })
        require("claude_context").edit({ buf = buf, range = { 1, 1 }, instruction = "after" })
        idle()
        eq({ "after", "b", "c" }, lines(buf))
        hunks().act(buf, "keep_all")
      end
    end,
  },
  {
    "a dead CLI process: a clear message, restarted on the next edit",
    function()
      answers({ { die = true } })
      h.clear(messages)
      local buf = buffer({ "a", "b" })
      local n = starts()
      require("claude_context").edit({ buf = buf, range = { 1, 1 }, instruction = "die" })
      idle()
      eq({ "a", "b" }, lines(buf))
      ok(said("ended (exit code 3"), vim.inspect(messages))
      ok(said("the next edit starts a new one"), vim.inspect(messages))
      eq("stopped", edit().state().state)
      answers({ { text = block({ "alive" }) } })
      h.clear(messages)
      require("claude_context").edit({ buf = buf, range = { 1, 1 }, instruction = "live" })
      idle()
      eq({ "alive", "b" }, lines(buf))
      ok(said("a new one was started for this edit"), vim.inspect(messages))
      eq(n + 1, starts())
      hunks().act(buf, "keep_all")
      -- An error result: a message, nothing written.
      answers({ { error = "model overloaded" } })
      h.clear(messages)
      require("claude_context").edit({ buf = buf, range = { 1, 1 }, instruction = "err" })
      idle()
      eq({ "alive", "b" }, lines(buf))
      ok(said("model overloaded"), vim.inspect(messages))
    end,
  },
  {
    "an answer far larger than the range",
    function()
      local big = numbered(600, "new %d")
      answers({ { text = block(big), pieces = 40 } })
      local buf = buffer({ "head", "one line", "tail" })
      require("claude_context").edit({ buf = buf, range = { 2, 2 }, instruction = "grow" })
      idle()
      local want = { "head" }
      vim.list_extend(want, big)
      want[#want + 1] = "tail"
      eq(want, lines(buf))
      hunks().act(buf, "keep_all")
      eq(want, lines(buf))
    end,
  },
  {
    "without a range: the function at the cursor (tree-sitter), else the paragraph",
    function()
      local rng = require("claude_context.edit.range")
      local buf = buffer({ "local x = 1", "", "local function f()", "  return 1", "end", "", "a", "b", "", "c" })
      local s, e, what = rng.around(buf, 3)
      eq({ 2, 5, "function" }, { s, e, what })
      s, e, what = rng.around(buf, 7)
      eq({ 6, 8, "paragraph" }, { s, e, what })
      eq({ 9, 10 }, { rng.paragraph_at(buf, 9) })
      -- A paragraph without end is capped each way.
      local long = buffer(numbered(5000))
      eq({ 2000 - rng.MAX_PARAGRAPH, 2000 + rng.MAX_PARAGRAPH }, { rng.paragraph_at(long, 2000) })
    end,
  },
  {
    "repeat: :ClaudeContext edit! and the operator's . reuse the last instruction",
    function()
      os.remove(dir .. "/prompts.log")
      answers({
        { text = block({ "R1" }) },
        { text = block({ "R2" }) },
        { text = block({ "R3" }) },
        { text = block({ "R4" }) },
      })
      local buf = buffer({ "a", "b", "c" })
      vim.cmd("1ClaudeContext edit make it R")
      idle()
      hunks().act(buf, "keep_all")
      vim.cmd("2ClaudeContext edit!")
      idle()
      hunks().act(buf, "keep_all")
      eq({ "R1", "R2", "c" }, lines(buf))
      -- The operator, repeated with `.` on another line.
      vim.keymap.set("n", "<Space>e", "<Plug>(claude-context-edit)")
      vim.api.nvim_win_set_cursor(0, { 3, 0 })
      edit().operator()
      vim.cmd("normal! g@_")
      -- A fresh operator asks for the instruction: the prompt is open.
      local input = require("claude_context.edit.input")
      ok(input.win, "the prompt opened")
      vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<Up><CR>", true, false, true), "x", false)
      idle()
      wait_for(function()
        return lines(buf)[3] == "R3"
      end, 20000, "the third edit")
      -- The prompt's <CR> may start the edit after the first idle(): its first line shows while
      -- the answer still streams (the old line below it), so wait for it to end.
      idle()
      local prompts = h.read(dir .. "/prompts.log")
      local _, count = prompts:gsub("Instruction: make it R", "")
      eq(3, count, prompts)
      hunks().act(buf, "keep_all")
      eq({ "R1", "R2", "R3" }, lines(buf))
      -- `.` on another line: the same instruction, no prompt.
      vim.api.nvim_win_set_cursor(0, { 1, 0 })
      vim.cmd("normal .")
      eq(nil, input.win)
      idle()
      eq({ "R4", "R2", "R3" }, lines(buf))
      _, count = h.read(dir .. "/prompts.log"):gsub("Instruction: make it R", "")
      eq(4, count)
      hunks().act(buf, "keep_all")
    end,
  },
  {
    "the buffer wiped while the answer streams: the edit ends quietly",
    function()
      answers({ { text = block({ "W1", "W2" }), by_line = true, wait = "go", wait_after = 3 } })
      local buf = buffer({ "a", "b" })
      require("claude_context").edit({ buf = buf, range = { 1, 2 }, instruction = "w" })
      wait_for(function()
        return lines(buf)[1] == "W1"
      end, 20000, "the first line")
      vim.cmd("bwipeout! " .. buf)
      h.write(dir .. "/go", "")
      idle()
      eq(nil, hunks().active[buf])
    end,
  },
  {
    "completion and :checkhealth name the edit",
    function()
      local cmds = require("claude_context.commands")
      contains(table.concat(cmds.complete("ed", "ClaudeContext ed"), " "), "edit")
      contains(table.concat(cmds.complete("", "ClaudeContext edit "), "\n"), "make it R")
      local out = {}
      local orig = vim.health
      vim.health = {
        start = function(m)
          out[#out + 1] = m
        end,
        ok = function(m)
          out[#out + 1] = m
        end,
        warn = function(m)
          out[#out + 1] = m
        end,
      }
      require("claude_context.health.features").check_edit()
      vim.health = orig
      contains(table.concat(out, "\n"), "warm process: ready")
    end,
  },
  {
    "the hunks' functions take 0 for the current buffer, as Neovim's API does",
    function()
      local buf = buffer({ "A", "b", "c", "D", "tail" })
      local H = hunks().show(0, 0, { "a", "b", "c", "d" }, { "A", "b", "c", "D" }, {
        tick = vim.api.nvim_buf_get_changedtick(buf),
      })
      ok(H and hunks().active[buf] == H, "shown for the current buffer")
      eq(nil, hunks().active[0], "never kept under 0")
      vim.api.nvim_win_set_cursor(0, { 1, 0 })
      ok(hunks().jump(0, 1), "the next hunk")
      eq(4, vim.api.nvim_win_get_cursor(0)[1])
      ok(hunks().act(0, "reject", 0), "rejected the first through 0")
      eq({ "a", "b", "c", "D", "tail" }, lines(buf))
      hunks().stop(0)
      eq(nil, hunks().active[buf], "stopped through 0")
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "a", "X" })
      hunks().show(0, 0, { "a", "d" }, { "a", "X" }, { tick = vim.api.nvim_buf_get_changedtick(buf) })
      ok(hunks().act(0, "keep_all"), "kept all through 0")
      eq(nil, hunks().active[buf])
    end,
  },
  {
    "Neovim leaving stops the warm process (its own process group)",
    function()
      local pid = edit().state().pid
      ok(pid, "a process runs")
      vim.api.nvim_exec_autocmds("VimLeavePre", { group = "claude_context_edit_process" })
      wait_for(function()
        return vim.uv.kill(pid, 0) ~= 0
      end, 10000, "the process to end")
      eq("stopped", edit().state().state)
    end,
  },
  {
    "between the call and the request (a slice apart): a cancel sends nothing; a change in the range refuses it",
    function()
      os.remove(dir .. "/prompts.log")
      answers({ { text = block({ "X" }) } })
      local buf = buffer({ "a", "b", "c" })
      vim.bo[buf].modified = false
      require("claude_context").edit({ buf = buf, range = { 1, 2 }, instruction = "x" })
      ok(edit().busy(), "under way at once")
      ok(edit().cancel(), "cancelled before the request left")
      vim.wait(200)
      eq(nil, h.read(dir .. "/prompts.log"), "nothing sent")
      eq({ "a", "b", "c" }, lines(buf))
      eq(false, vim.bo[buf].modified)
      h.clear(messages)
      require("claude_context").edit({ buf = buf, range = { 1, 2 }, instruction = "x" })
      vim.api.nvim_buf_set_lines(buf, 1, 2, false, { "mine" })
      idle()
      eq(nil, h.read(dir .. "/prompts.log"), "nothing sent")
      eq({ "a", "mine", "c" }, lines(buf))
      ok(said("edit refused"), vim.inspect(messages))
    end,
  },
  {
    "between the old lines' removal and the hunks shown (a slice apart): a cancel leaves the buffer as it was; a change keeps the person's text",
    function()
      for _, how in ipairs({ "cancel", "change" }) do
        answers({ { text = block({ "A", "b" }) } })
        h.clear(messages)
        local buf = buffer({ "a", "b", "c" })
        vim.bo[buf].modified = false
        local held = hold(function()
          return vim.deep_equal(lines(buf), { "A", "b", "c" })
        end, function(got)
          require("claude_context").edit({ buf = buf, range = { 1, 2 }, instruction = "upper" })
          wait_for(got, 20000, "the old lines removed")
        end)
        if how == "cancel" then
          ok(edit().cancel(), "cancelled")
          held()
          eq({ "a", "b", "c" }, lines(buf))
          eq(false, vim.bo[buf].modified)
        else
          vim.api.nvim_buf_set_lines(buf, 1, 2, false, { "mine" })
          held()
          eq({ "A", "mine", "c" }, lines(buf))
          ok(said("your text is kept"), vim.inspect(messages))
        end
        eq(false, edit().busy())
        eq(nil, hunks().active[buf])
        eq({}, vim.api.nvim_buf_get_extmarks(buf, require("claude_context.edit.live").ns, 0, -1, {}))
      end
    end,
  },
  {
    "many hunks are painted in slices of PAINT_CHUNK; a keep in between paints the rest at once",
    function()
      local old = numbered(200)
      local new = vim.deepcopy(old)
      for i = 2, 200, 2 do
        new[i] = "changed " .. i
      end
      for _, act in ipairs({ "wait", "keep" }) do
        local buf = buffer(vim.list_extend({ "above" }, vim.deepcopy(new)))
        local marks = function()
          return #vim.api.nvim_buf_get_extmarks(buf, hunks().ns, 0, -1, {})
        end
        local H = hunks().show(buf, 1, old, new, { tick = vim.api.nvim_buf_get_changedtick(buf) })
        eq(100, #H.hunks)
        eq(hunks().PAINT_CHUNK + 1, marks(), "the first slice: PAINT_CHUNK hunks and the range's mark")
        if act == "wait" then
          wait_for(function()
            return marks() == 101
          end, 5000, "the rest painted")
          hunks().act(buf, "keep_all")
        else
          ok(hunks().act(buf, "keep", 1 + 1), "the first hunk kept")
          eq(100, marks(), "the others painted at once (99 hunks and the range's mark)")
          vim.wait(50)
          eq(100, marks(), "the slices after it did not paint again")
          hunks().act(buf, "keep_all")
        end
        eq(nil, hunks().active[buf])
        eq(0, marks())
      end
    end,
  },
  {
    "a big answer streamed in many pieces into a big buffer (the bench's edit), twice: one u restores the buffer exactly, and each edit has its 200 hunks",
    function()
      -- As bench/edit.py: a 2,000-line range in the middle of 20,000 lines, every 10th line
      -- changed, the answer arriving over many event-loop turns; after each edit the hunks kept
      -- at once (their paint in slices still under way) and one `u`.
      local n, s, len = 20000, 9000, 2000
      local original = numbered(n)
      local answer = {}
      for i = 1, len do
        answer[i] = i % 10 == 0 and ("changed %d"):format(s + i) or original[s + i]
      end
      local buf = buffer(original)
      local writes = 0
      vim.api.nvim_buf_attach(buf, false, {
        on_lines = function()
          writes = writes + 1
        end,
      })
      for round = 1, 3 do
        answers({ { text = block(answer), by_line = true } })
        h.clear(messages)
        writes = 0
        require("claude_context").edit({ buf = buf, range = { s + 1, s + len }, instruction = "every 10th" })
        idle()
        ok(writes > 3, "written in several slices (" .. writes .. ")")
        eq(200, #hunks().active[buf].hunks, "round " .. round)
        vim.api.nvim_buf_call(buf, function()
          hunks().act(0, "keep_all")
          vim.cmd("silent undo")
        end)
        ok(said("edit: 200 hunk(s) kept"), vim.inspect(messages))
        eq(original, lines(buf), "round " .. round .. ": the buffer as it was after one u")
      end
    end,
  },
  {
    "output that arrives while the answer is written (Neovim polls libuv inside a write) is not lost",
    function()
      -- A long write in Neovim polls libuv (os_breakcheck): the CLI's next lines arrive in the
      -- stdout callback while the text decoded before them is written. Here the first write
      -- waits (fast events only, as os_breakcheck runs) until the fake's whole answer came.
      local procs = require("claude_context.util.proc")
      local live = require("claude_context.edit.live")
      local run, append, seen, first = procs.run, live.append, "", true
      procs.run = function(argv, o, cb)
        local out = o.stdout
        o.stdout = function(err, data)
          seen = seen .. (data or "")
          return out(err, data)
        end
        return run(argv, o, cb)
      end
      live.append = function(l, new)
        if first then
          first = false
          h.write(dir .. "/go", "")
          vim.wait(20000, function()
            return seen:find('"type": "result"', 1, true) ~= nil
          end, 5, true)
        end
        return append(l, new)
      end
      local answer = numbered(50, "new %d")
      answers({ { text = block(answer), by_line = true, wait = "go", wait_after = 3 } })
      local okk, err = pcall(function()
        edit().cancel()
        require("claude_context.edit.process").stop()
        local buf = buffer({ "head", "old", "tail" })
        require("claude_context").edit({ buf = buf, range = { 2, 2 }, instruction = "grow" })
        idle()
        ok(not first, "the first write waited for the rest of the output")
        local want = vim.list_extend({ "head" }, answer)
        want[#want + 1] = "tail"
        eq(want, lines(buf))
        hunks().act(buf, "keep_all")
      end)
      procs.run, live.append = run, append
      assert(okk, err)
    end,
  },
}
