-- Checkpoints at Claude Code's hooks, seen from Neovim: the real `claude-context-mcp hook` binary
-- reports a turn (a prompt, an edit, a file changed behind the hooks' back, its end);
-- review.source.changeset gives its files with their texts, turns() lists them,
-- :ClaudeContext rewind restores them (reloading unmodified buffers, leaving modified ones),
-- rewind undo puts them back, :ClaudeContext checkpoints previews a turn, two sessions' overlapping
-- turns kept apart, and the Claude Code plugin's commands and registration check.
local h = require("helpers")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local cc = h.cc
local source = function()
  return require("claude_context.review.source")
end

local messages = h.record_notify()

local project = h.tmpdir()
-- The second sessions' project (the overlapping turns' test).
local other_root = h.tmpdir()
-- The hook door takes events only from folders the editor knows: both projects are roots the
-- person added.
require("claude_context.config").resolve({ workspace = { extra_roots = { project, other_root } } })
-- The hook door takes events only from a folder the editor knows: the editor works in the project.
vim.cmd.cd(vim.fn.fnameescape(project))

-- The spec never falls into Neovim's real (interactive) prompt: outside the stubs of the test that
-- lists the turns, vim.ui.select answers "none chosen" and the prompt asked is recorded (a test
-- checks none was).
local unexpected_selects = {}
local function no_prompt(_, o, on_choice)
  table.insert(unexpected_selects, o and o.prompt or "?")
  on_choice(nil)
end
vim.ui.select = no_prompt

local checkpointed = {}
vim.api.nvim_create_autocmd("User", {
  pattern = "ClaudeContextTurnCheckpointed",
  callback = function(ev)
    table.insert(checkpointed, ev.data)
  end,
})
local rewinds = {}
vim.api.nvim_create_autocmd("User", {
  pattern = "ClaudeContextRewind",
  callback = function(ev)
    table.insert(rewinds, ev.data)
  end,
})

local function hook(event, input)
  local bin = assert(require("claude_context.sessions.hooks").binary(), "claude-context-mcp is built")
  input.hook_event_name = event
  input.session_id = input.session_id or "cp-1"
  input.transcript_path = "/tmp/t.jsonl"
  input.cwd = input.cwd or project
  local r = vim
    .system({ bin, "hook", event }, {
      stdin = vim.json.encode(input),
      env = { CLAUDE_CODE_SSE_PORT = tostring(cc().status().port), CLAUDE_CONTEXT_SESSION = "main" },
    })
    :wait(20000)
  eq(0, r.code, r.stderr)
end

---Runs an async source function and waits for its callback.
local function await(fn, opts)
  local done, err, val
  fn(opts, function(e, v)
    done, err, val = true, e, v
  end)
  wait_for(function()
    return done
  end, 20000, "the bridge's answer")
  return err, val
end

---Records one turn of `session` in `root`: its prompt, `edit()` (and the hooks it reports),
---its end; returns once the end's checkpoint is taken.
local function turn(root, session, prompt, edit)
  local before = #checkpointed
  hook("UserPromptSubmit", { session_id = session, cwd = root, prompt = prompt })
  -- The start's checkpoint is taken before anything of the project's is read back.
  eq(nil, (await(source().turns, { root = root })))
  edit()
  hook("Stop", { session_id = session, cwd = root })
  wait_for(function()
    return #checkpointed == before + 1
  end, 20000, "the turn checkpointed")
end

---Makes the change set of `session`'s last turn in `root` the active review.
---@return table review_module, table cs
local function review_of(root, session)
  local err, cs = await(source().changeset, { root = root, session = session })
  eq(nil, err)
  local R = require("claude_context.review")
  R.set_active(require("claude_context.review.model").new(cs))
  R.flush()
  return R, cs
end

---`rel` in the second project.
local function in_other(rel)
  return other_root .. "/" .. rel
end

local function path(rel)
  return project .. "/" .. rel
end

return {
  {
    "a turn's change set: the edit and the change behind the hooks' back, with their texts",
    function()
      ok(cc().start({ silent = true }))
      h.write(path("a.txt"), "one\n")
      h.write(path("b.txt"), "alpha\r\nbeta\r\n")
      hook("UserPromptSubmit", { prompt = "change things\nsecond line" })
      -- The start's checkpoint is taken before anything of the project's is read back.
      local err = await(source().turns, { root = project })
      eq(nil, err)
      hook("PreToolUse", { tool_name = "Edit", tool_input = { file_path = path("a.txt") } })
      h.write(path("a.txt"), "ONE\n")
      hook("PostToolUse", { tool_name = "Edit", tool_input = { file_path = path("a.txt") } })
      h.write(path("c.txt"), "new\n")
      h.write(path("b.txt"), "alpha\r\nBETA\r\n")
      hook("Stop", {})
      wait_for(function()
        return #checkpointed > 0
      end, 20000, "ClaudeContextTurnCheckpointed")
      eq(project, checkpointed[1].root)
      local e2, cs = await(source().changeset, { root = project })
      eq(nil, e2)
      eq(project, cs.root)
      eq(1, #cs.turns)
      eq("change things", cs.turns[1].prompt)
      eq({ "a.txt", "b.txt", "c.txt" }, cs.turns[1].files)
      eq(
        { "a.txt", "b.txt", "c.txt" },
        vim.tbl_map(function(f)
          return f.path
        end, cs.files)
      )
      eq(
        { "modified", "one\n", "ONE\n", path("a.txt") },
        { cs.files[1].status, cs.files[1].before, cs.files[1].after, cs.files[1].absolute }
      )
      eq({ "alpha\r\nbeta\r\n", "alpha\r\nBETA\r\n" }, { cs.files[2].before, cs.files[2].after })
      eq({ "added", nil, "new\n" }, { cs.files[3].status, cs.files[3].before, cs.files[3].after })
      -- turns(): the files from the checkpoints, Bash's included.
      local turns = cc().turns("cp-1")
      eq({ path("a.txt"), path("b.txt"), path("c.txt") }, turns[#turns].files)
      -- Another session's filter: nothing.
      local _, none = await(source().changeset, { root = project, session = "other" })
      eq(0, #none.files)
    end,
  },
  {
    ":ClaudeContext rewind 1 restores the files, reloads unmodified buffers, leaves modified ones; undo",
    function()
      -- The commands work on the current project.
      vim.cmd.cd(vim.fn.fnameescape(project))
      vim.cmd.edit(vim.fn.fnameescape(path("a.txt")))
      local abuf = vim.api.nvim_get_current_buf()
      vim.cmd.edit(vim.fn.fnameescape(path("b.txt")))
      local bbuf = vim.api.nvim_get_current_buf()
      vim.api.nvim_buf_set_lines(bbuf, 0, 1, false, { "my unsaved edit" })
      vim.cmd("ClaudeContext rewind 1")
      wait_for(function()
        return #rewinds == 1
      end, 20000, "the rewind")
      eq("one\n", h.read(path("a.txt")))
      eq("alpha\r\nbeta\r\n", h.read(path("b.txt")), "CRLF kept byte for byte")
      eq(nil, h.read(path("c.txt")), "the new file removed")
      eq({ "one" }, vim.api.nvim_buf_get_lines(abuf, 0, -1, false), "the unmodified buffer reloaded")
      eq("my unsaved edit", vim.api.nvim_buf_get_lines(bbuf, 0, 1, false)[1], "the modified buffer untouched")
      ok(vim.bo[bbuf].modified)
      local shown = table.concat(
        vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(require("claude_context.util.output").win), 0, -1, false),
        "\n"
      )
      contains(shown, "unsaved edits")
      contains(shown, "b.txt")
      vim.bo[bbuf].modified = false
      -- The person changes a.txt after the rewind: undo keeps it until confirmed.
      h.write(path("a.txt"), "mine\n")
      vim.cmd("ClaudeContext rewind undo")
      wait_for(function()
        return #rewinds == 2
      end, 20000, "the undo")
      eq("mine\n", h.read(path("a.txt")))
      eq(1, #rewinds[2].conflicts)
      eq("new\n", h.read(path("c.txt")), "the rest undone")
      vim.cmd("ClaudeContext! rewind undo")
      wait_for(function()
        return #rewinds == 3
      end, 20000, "the confirmed undo")
      eq("ONE\n", h.read(path("a.txt")))
      eq("alpha\r\nBETA\r\n", h.read(path("b.txt")))
    end,
  },
  {
    ":ClaudeContext checkpoints lists the turns and previews the one chosen (in the review view, else a float)",
    function()
      -- The stub stays until the command's callback chose (no real prompt after a wait's end).
      local items, shown_item
      local chosen = 0
      vim.ui.select = function(list, opts, on_choice)
        items = vim.tbl_map(opts.format_item, list)
        shown_item = list[1]
        chosen = chosen + 1
        on_choice(list[1])
      end
      -- Without the review view (a module that is not a table): the file list in a float.
      local review_mod = package.loaded["claude_context.review"]
      package.loaded["claude_context.review"] = true
      local okk, err = pcall(function()
        require("claude_context.util.output").close()
        vim.cmd("ClaudeContext checkpoints")
        wait_for(function()
          return chosen == 1 and require("claude_context.util.output").win
        end, 20000, "the preview")
      end)
      package.loaded["claude_context.review"] = review_mod
      assert(okk, err)
      eq(1, #items)
      contains(items[1], "change things")
      contains(items[1], "(3 files)")
      eq("cp-1", shown_item.session)
      local lines =
        vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(require("claude_context.util.output").win), 0, -1, false)
      local text = table.concat(lines, "\n")
      contains(text, "modified  a.txt")
      contains(text, "added     c.txt")
      require("claude_context.util.output").close()

      -- With the review view: the turn's change set opens there. (The turn's end already made its
      -- change set the active review — signs — so the wait is for a review other than that one.)
      local before = require("claude_context.review").active()
      okk, err = pcall(function()
        vim.cmd("ClaudeContext checkpoints")
        wait_for(function()
          local r = require("claude_context.review").active()
          return chosen == 2 and r ~= before and r and r.cs and #r.cs.files == 3
        end, 20000, "the review of the chosen turn")
      end)
      vim.ui.select = no_prompt
      assert(okk, err)
      eq({}, unexpected_selects, "no other prompt")
      local files = vim.tbl_map(function(f)
        return f.path
      end, require("claude_context.review").active().cs.files)
      contains(table.concat(files, " "), "a.txt")
      contains(table.concat(files, " "), "c.txt")
      require("claude_context.review").close()
      local e3 = await(source().rewind, { root = project, n = 5 })
      contains(e3, "cannot rewind 5")
    end,
  },
  {
    "two sessions' overlapping turns: each edit tool's file apart, an unclaimed change shared, rewind keeps what the other edited too",
    function()
      local root = h.tmpdir()
      -- The hook door takes events only from a folder the editor knows: the editor works there.
      vim.cmd.cd(vim.fn.fnameescape(root))
      local function p(rel)
        return root .. "/" .. rel
      end
      for _, f in ipairs({ "mine.txt", "theirs.txt", "both.txt", "gen.txt" }) do
        h.write(p(f), "old " .. f .. "\n")
      end
      local function edit(session, rel, text)
        local input = { session_id = session, cwd = root, tool_name = "Edit", tool_input = { file_path = p(rel) } }
        hook("PreToolUse", input)
        h.write(p(rel), text)
        hook("PostToolUse", input)
      end
      local before = #checkpointed
      hook("UserPromptSubmit", { session_id = "ov-1", cwd = root, prompt = "first" })
      hook("UserPromptSubmit", { session_id = "ov-2", cwd = root, prompt = "second" })
      eq(nil, (await(source().turns, { root = root })))
      edit("ov-1", "mine.txt", "by ov-1\n")
      edit("ov-2", "theirs.txt", "by ov-2\n")
      edit("ov-1", "both.txt", "by ov-1\n")
      edit("ov-2", "both.txt", "by both\n")
      h.write(p("gen.txt"), "generated\n")
      hook("Stop", { session_id = "ov-1", cwd = root })
      hook("Stop", { session_id = "ov-2", cwd = root })
      wait_for(function()
        return #checkpointed == before + 2
      end, 20000, "both turns checkpointed")
      local function files(session)
        local err, cs = await(source().changeset, { root = root, session = session })
        eq(nil, err)
        return vim.tbl_map(function(f)
          return f.path .. (f.shared and " (shared)" or "")
        end, cs.files)
      end
      eq({ "both.txt (shared)", "gen.txt (shared)", "mine.txt" }, files("ov-1"))
      eq({ "both.txt (shared)", "gen.txt (shared)", "theirs.txt" }, files("ov-2"))
      local n = #rewinds
      require("claude_context.checkpoints").rewind({ root = root, session = "ov-1" })
      wait_for(function()
        return #rewinds == n + 1
      end, 20000, "the rewind")
      eq("old mine.txt\n", h.read(p("mine.txt")))
      eq("by ov-2\n", h.read(p("theirs.txt")), "the other session's file untouched")
      eq("by both\n", h.read(p("both.txt")), "the file both edited kept")
      eq(
        { p("both.txt") },
        vim.tbl_map(function(k)
          return k.path
        end, rewinds[n + 1].others)
      )
      local shown = table.concat(
        vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(require("claude_context.util.output").win), 0, -1, false),
        "\n"
      )
      contains(shown, "Kept (another session's overlapping turn edited them too):\n  both.txt")
      require("claude_context.util.output").close()
    end,
  },
  {
    "a reject in the review keeps what it replaces in the store: rewind undo gives the person's text back",
    function()
      local root, p = other_root, in_other
      h.write(p("r.txt"), "one\ntwo\nthree\n")
      turn(root, "rv-1", "edit r", function()
        local input = { session_id = "rv-1", cwd = root, tool_name = "Edit", tool_input = { file_path = p("r.txt") } }
        hook("PreToolUse", input)
        h.write(p("r.txt"), "one\nTWO\nthree\n")
      end)
      -- The person adds a line of their own after the turn.
      h.write(p("r.txt"), "one\nTWO\nthree\nmine\n")
      local R = review_of(root, "rv-1")
      local f = require("claude_context.review.model").file(R.active(), 1)
      eq(1, R.act("reject", { targets = { { f = f, hi = 1 } } }).done)
      R.flush()
      eq("one\ntwo\nthree\nmine\n", h.read(p("r.txt")))
      -- Undone from the store: the file as it was right before the review wrote it.
      local e2 = await(require("claude_context.checkpoints").undo, { root = root })
      eq(nil, e2)
      eq("one\nTWO\nthree\nmine\n", h.read(p("r.txt")))
      R.set_active(nil)
      -- A report names every file escaped: a newline, ESC, a name that is not UTF-8 (as the
      -- bridge gives it), a file that could not be restored.
      local cp = require("claude_context.checkpoints")
      cp.report("rewind", {
        root = root,
        written = { p("a\nb.txt") },
        removed = { p("e\27x") },
        conflicts = {},
        failed = { { path = p("caf\\xe9.txt"), why = "over the size cap" } },
      })
      local shown = table.concat(
        vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(require("claude_context.util.output").win), 0, -1, false),
        "\n"
      )
      contains(shown, "restored a\\nb.txt")
      contains(shown, "removed  e\\x1bx")
      contains(shown, "failed   caf\\xe9.txt: over the size cap")
      require("claude_context.util.output").close()
    end,
  },
  {
    "the review rejects a whole file (binary, a name that is not UTF-8) from the checkpoints, never over the person's change; undo",
    function()
      local root, p = other_root, in_other
      h.write(p("bin.dat"), "\0\1\2")
      h.write(p("mine.dat"), "\0\1\2")
      local odd = "caf\xe9.txt"
      turn(root, "rv-2", "binary things", function()
        h.write(p("bin.dat"), "\0\9\9")
        h.write(p("mine.dat"), "\0CLAUDE")
        h.write(p(odd), "new\n")
      end)
      -- The person changes one of Claude's binary files after the turn.
      h.write(p("mine.dat"), "\0MINE")
      local R, cs = review_of(root, "rv-2")
      local M = require("claude_context.review.model")
      local by = {}
      for i, rf in ipairs(cs.files) do
        by[rf.path] = M.file(R.active(), i)
      end
      eq("binary", by["bin.dat"].file.status)
      eq("odd_name", by["caf\\xe9.txt"].file.status)
      h.clear(messages)
      local targets = {}
      for _, name in ipairs({ "bin.dat", "mine.dat", "caf\\xe9.txt" }) do
        targets[#targets + 1] = { f = by[name], hi = 1 }
      end
      R.act("reject", { targets = targets })
      wait_for(function()
        return not (by["bin.dat"].restoring or by["mine.dat"].restoring or by["caf\\xe9.txt"].restoring)
      end, 20000, "the rejects")
      eq("\0\1\2", h.read(p("bin.dat")))
      eq(nil, vim.uv.fs_lstat(p(odd)), "the file Claude created removed")
      eq("pending", by["mine.dat"].hunks[1].state)
      eq("rejected", by["bin.dat"].hunks[1].state)
      eq("rejected", by["caf\\xe9.txt"].hunks[1].state)
      eq("\0MINE", h.read(p("mine.dat")), "the person's change kept")
      local said = table.concat(
        vim.tbl_map(function(n)
          return n.msg
        end, messages),
        "\n"
      )
      contains(said, "mine.dat not rejected: the file changed since Claude's turn")
      -- Undo brings Claude's files back, from the checkpoint taken right before the reject.
      R.undo()
      wait_for(function()
        return h.read(p("bin.dat")) == "\0\9\9" and h.read(p(odd)) == "new\n"
      end, 20000, "the undo")
      eq("pending", by["bin.dat"].hunks[1].state)
      eq("pending", by["caf\\xe9.txt"].hunks[1].state)
      R.set_active(nil)
    end,
  },
  {
    "a turn's end told after its review was made active keeps that review: its reject, and the undo",
    function()
      local root, p = other_root, in_other
      h.write(p("late.txt"), "one\n")
      turn(root, "rv-late", "a late end", function()
        h.write(p("late.txt"), "ONE\n")
      end)
      local ended = checkpointed[#checkpointed]
      eq({ "rv-late", "Stop" }, { ended.turn.session, ended.event })
      local R, cs = review_of(root, "rv-late")
      local review = R.active()
      local f
      for i, rf in ipairs(cs.files) do
        if rf.path == "late.txt" then
          f = require("claude_context.review.model").file(review, i)
        end
      end
      R.act("reject", { targets = { { f = f, hi = 1 } } })
      R.flush()
      eq("one\n", h.read(p("late.txt")))
      -- The turn's end reaches the review now (a loaded machine): its change set is this one.
      local function turn_end_told()
        local load, loaded = R.load, false
        R.load = function(o, cb)
          return load(o, function(...)
            cb(...)
            loaded = true
          end)
        end
        require("claude_context.review.turn_end").on_turn_end(ended)
        R.load = load
        wait_for(function()
          return loaded
        end, 20000, "the turn's change set")
      end
      turn_end_told()
      ok(R.active() == review, "the review the person acts on stays the active one")
      eq("rejected", f.hunks[1].state)
      ok(R.undo(), "its reject can be undone")
      R.flush()
      eq("ONE\n", h.read(p("late.txt")))
      -- With review.auto_open, the view opens on that same review.
      local config = require("claude_context.config")
      config.resolve({ workspace = { extra_roots = { project, other_root } }, review = { auto_open = true } })
      turn_end_told()
      config.resolve({ workspace = { extra_roots = { project, other_root } } })
      local view = require("claude_context.review.view").current
      ok(view and view.review == review, "the view shows the review the person acts on")
      R.close()
      R.set_active(nil)
    end,
  },
  {
    ":ClaudeContext! rewind where one file became a FIFO and one a directory restores the others and lists those two",
    function()
      vim.cmd.cd(vim.fn.fnameescape(project))
      for _, f in ipairs({ "r1.txt", "rfifo.txt", "rdir.txt" }) do
        h.write(path(f), f .. " before\n")
      end
      turn(project, "cp-fifo", "change three", function()
        for _, f in ipairs({ "r1.txt", "rfifo.txt", "rdir.txt" }) do
          hook("PreToolUse", { session_id = "cp-fifo", tool_name = "Write", tool_input = { file_path = path(f) } })
          h.write(path(f), f .. " by Claude\n")
        end
      end)
      vim.fn.delete(path("rfifo.txt"))
      eq(0, vim.system({ "mkfifo", path("rfifo.txt") }):wait().code)
      vim.fn.delete(path("rdir.txt"))
      vim.fn.mkdir(path("rdir.txt"), "p")
      h.write(path("rdir.txt") .. "/inside", "x\n")
      local before = #rewinds
      vim.cmd("ClaudeContext! rewind 1")
      wait_for(function()
        return #rewinds == before + 1
      end, 20000, "the rewind")
      local r = rewinds[#rewinds]
      eq("r1.txt before\n", h.read(path("r1.txt")))
      local listed = {}
      for _, k in ipairs({ "failed", "conflicts" }) do
        for _, x in ipairs(r[k] or {}) do
          listed[#listed + 1] = x.path
        end
      end
      contains(table.concat(listed, " "), "rfifo.txt")
      contains(table.concat(listed, " "), "rdir.txt")
      eq("fifo", vim.uv.fs_lstat(path("rfifo.txt")).type, "the FIFO is left as it is")
      eq("x\n", h.read(path("rdir.txt") .. "/inside"))
      vim.fn.delete(path("rfifo.txt"))
      vim.fn.delete(path("rdir.txt"), "rf")
    end,
  },
  {
    "the Claude Code plugin: its files, the commands shown, the registration read from Claude's config",
    function()
      local cp = require("claude_context.claude_plugin")
      local dir = cp.dir()
      local m = h.read_json(dir .. "/.claude-plugin/marketplace.json")
      eq(cp.MARKETPLACE, m.name)
      local hooks = h.read_json(dir .. "/plugin/hooks/hooks.json").hooks
      for _, ev in ipairs({ "SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd" }) do
        contains(hooks[ev][1].hooks[1].command, '/bin/relay" hook ' .. ev)
        -- Only PostToolUse (a report on every tool) is not waited for.
        eq(ev == "PostToolUse" or nil, hooks[ev][1].hooks[1].async, ev)
      end
      eq(1, vim.fn.executable(dir .. "/plugin/bin/relay"))
      -- The skill is the memory bank's own rules (kept the same).
      local rules = h.read(require("claude_context.native").plugin_root() .. "/crates/core/src/memory_bank/rules/en.md")
      ok(
        rules and h.read(dir .. "/plugin/skills/memory-bank/SKILL.md"):find(rules, 1, true),
        "SKILL.md holds rules/en.md"
      )
      local lines = cp.commands()
      eq("claude plugin marketplace add " .. dir, lines[1])
      eq("claude plugin install claude-context@claude-context-nvim", lines[2])
      -- Registration, as the CLI records it.
      local cfg = h.tmpdir()
      vim.env.CLAUDE_CONFIG_DIR = cfg
      eq(false, cp.registered().marketplace)
      vim.fn.mkdir(cfg .. "/plugins", "p")
      h.write(
        cfg .. "/plugins/known_marketplaces.json",
        vim.json.encode({ [cp.MARKETPLACE] = { source = { source = "directory", path = dir } } })
      )
      h.write(
        cfg .. "/plugins/installed_plugins.json",
        vim.json.encode({ version = 2, plugins = { [cp.PLUGIN] = { { scope = "user" } } } })
      )
      local r = cp.registered()
      eq({ true, true, dir }, { r.marketplace, r.installed, r.path })
      -- A FIFO in its place is never waited on (nor a file over the cap read): not registered.
      os.remove(cfg .. "/plugins/installed_plugins.json")
      eq(0, vim.fn.system({ "mkfifo", cfg .. "/plugins/installed_plugins.json" }) and vim.v.shell_error)
      h.write(cfg .. "/plugins/known_marketplaces.json", string.rep(" ", 4 * 1024 * 1024 + 1) .. "{}")
      r = cp.registered()
      eq({ false, false }, { r.marketplace, r.installed })
      vim.env.CLAUDE_CONFIG_DIR = nil
      -- The relay script runs the hook through the binary, or exits 0 without one.
      local rr = vim
        .system(
          { dir .. "/plugin/bin/relay", "hook", "Stop" },
          { stdin = "{}", env = { CLAUDE_CONTEXT_MCP = "/nonexistent", PATH = "/usr/bin:/bin" } }
        )
        :wait(20000)
      eq(0, rr.code)
    end,
  },
  {
    "a first checkpoint's progress is shown on the message line while it runs, then said once done",
    function()
      local cps = require("claude_context.checkpoints")
      local seen = {}
      local au = vim.api.nvim_create_autocmd("User", {
        pattern = "ClaudeContextCheckpointProgress",
        callback = function(ev)
          table.insert(seen, ev.data)
        end,
      })
      local before = #messages
      -- A root with a control character is shown escaped.
      cps.progress({ root = "/tmp/big\27repo", dirs = 10, files = 1234, done = false })
      eq(before, #messages, "no notification while it runs")
      contains(cps.progress_text({ root = "/x", files = 1234 }), "1234 files so far")
      ok(not cps.progress_text({ root = "/tmp/a\27b", files = 1 }):find("\27", 1, true), "escaped")
      cps.progress({ root = "/tmp/big", dirs = 20, files = 5000, done = true })
      eq(before + 1, #messages)
      contains(messages[#messages].msg, "5000 files")
      eq({ false, true }, { seen[1].done, seen[2].done })
      vim.api.nvim_del_autocmd(au)
    end,
  },
}
