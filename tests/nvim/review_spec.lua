-- The review of Claude's changes (claude_context.review): a change set built here from real
-- files on disk and real buffers, opened in the view; keep, reject (disk and buffer), undo,
-- conflicts, created/deleted/renamed/binary/CRLF files, comments and the prompt sent to a
-- terminal, the quickfix list, signs, auto_open, the mark of a file shared with another
-- session's overlapping turn.
local h = require("helpers")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local messages = h.record_notify()

---A file's bytes once the review's writes under way are done.
local function disk(path)
  wait_for(function()
    return require("claude_context.review.fs").idle()
  end, 10000, "the review's writes")
  return h.read(path)
end

require("claude_context").setup({ auto_start = false })

local function R()
  return require("claude_context.review")
end
local function V()
  return require("claude_context.review.view")
end

local function lines(n, fmt)
  local t = {}
  for i = 1, n do
    t[i] = (fmt or "line %d"):format(i)
  end
  return t
end

local function text(t)
  return table.concat(t, "\n") .. "\n"
end

---A change set of `files` ({ path, before, after, status?, old_path? }) under a fresh root; each
---file's `after` is written to disk (a nil `after`: no file).
local function changeset(files, turn)
  local root = h.tmpdir()
  local cs = {
    root = root,
    turns = {
      vim.tbl_extend(
        "force",
        { id = "t1", session = "s1", terminal = "main", prompt = "fix it", started_ms = 1, ended_ms = 2, files = {} },
        turn or {}
      ),
    },
    files = {},
  }
  for _, f in ipairs(files) do
    local abs = root .. "/" .. f.path
    vim.fn.mkdir(vim.fs.dirname(abs), "p")
    if f.after then
      h.write(abs, f.after)
    end
    table.insert(cs.files, {
      path = f.path,
      absolute = abs,
      old_path = f.old_path,
      status = f.status or "modified",
      before = f.before,
      after = f.after,
      shared = f.shared,
    })
    table.insert(cs.turns[1].files, f.path)
  end
  return cs, root
end

---Makes a review of `cs` the active one, once its files are read (on the native file thread).
local function activate(cs)
  R().set_active(require("claude_context.review.model").new(cs))
  R().flush()
end

local function open(cs)
  local v = R().open(cs)
  wait_for(function()
    return v.ready
  end, 5000, "the view")
  return v
end

local function buf_text(v)
  return table.concat(vim.api.nvim_buf_get_lines(v.buf, 0, -1, false), "\n")
end

local function reset()
  require("claude_context.review.view").close()
  R().set_active(nil)
  require("claude_context.review.comments").clear()
  vim.cmd("silent! %bwipeout!")
  h.clear(messages)
end

-- before: 10 lines; after: line 2 changed, a line added after 5, line 9 deleted.
local BEFORE = lines(10)
local AFTER = vim.deepcopy(BEFORE)
AFTER[2] = "CHANGED 2"
table.insert(AFTER, 6, "ADDED")
table.remove(AFTER, 10) -- "line 9"

---The change set most tests use: a.txt (three hunks: BEFORE -> AFTER) and b.txt (one).
local function two_files(turn)
  return changeset({
    { path = "a.txt", before = text(BEFORE), after = text(AFTER) },
    { path = "b.txt", before = "x\n", after = "y\n" },
  }, turn)
end

local function row_of(v, pattern, from)
  for i, l in ipairs(vim.api.nvim_buf_get_lines(v.buf, 0, -1, false)) do
    if i >= (from or 1) and l:find(pattern, 1, true) then
      return i
    end
  end
end

return {
  {
    "same_changes: a turn's change set loaded twice is the same; another turn, its end, a checkpoint or a land is not",
    function()
      local same = require("claude_context.review.model").same_changes
      local function cs(o)
        return vim.tbl_extend("force", {
          root = "/p",
          turns = { { id = "t1", ended_ms = 5 } },
          checkpoints = { before = 1, after = 2 },
        }, o or {})
      end
      ok(same(cs(), cs()))
      ok(same(cs({ turns = false }), cs({ turns = false })), "no turns on either side")
      ok(not same(cs(), nil))
      ok(not same(cs(), cs({ root = "/q" })))
      ok(not same(cs(), cs({ turns = { { id = "t2", ended_ms = 5 } } })))
      ok(not same(cs(), cs({ turns = { { id = "t1" } } })), "loaded while the turn ran")
      ok(not same(cs(), cs({ checkpoints = { before = 1, after = 3 } })))
      ok(not same(cs({ proposal = true }), cs({ proposal = true })), "a land's proposal is never taken for another")
    end,
  },
  {
    "hunks.lines_at: each region's lines, overlapping, past the end, empty, without a last newline, \\r kept",
    function()
      local H = require("claude_context.review.hunks")
      local t = "a\nb\r\nc\n\nd"
      eq(
        { { "a", "b\r" }, { "b\r", "c", "" }, { "d" }, {}, { "d" }, {}, {} },
        H.lines_at(t, { { 1, 2 }, { 2, 3 }, { 5, 1 }, { 3, 0 }, { 5, 9 }, { 7, 2 }, { 0, 2 } })
      )
      eq({ { "x", "" } }, H.lines_at("x\n\n", { { 1, 5 } }))
      eq({ {} }, H.lines_at("", { { 1, 1 } }))
      eq({ {} }, H.lines_at(nil, { { 1, 1 } }))
    end,
  },
  {
    "the view lists each file with its counts and state, and every hunk",
    function()
      reset()
      local cs = two_files()
      local v = open(cs)
      local t = buf_text(v)
      contains(t, 'Claude\'s changes: 1 turn, 2 files — "fix it"')
      contains(t, "  pending       +2 −2  a.txt")
      contains(t, "  pending       +1 −1  b.txt")
      contains(t, "━━ a.txt  +2 −2  [pending]")
      -- Each hunk with up to two lines of Claude's text above and below it (review.context).
      contains(
        t,
        table.concat({
          "@@ -2,1 +2,1 @@ pending",
          " line 1",
          "-line 2",
          "+CHANGED 2",
          " line 3",
          " line 4",
          "@@ -6,0 +6,1 @@ pending",
          " line 4",
          " line 5",
          "+ADDED",
          " line 6",
          " line 7",
          "@@ -9,1 +10,0 @@ pending",
          " line 7",
          " line 8",
          "-line 9",
          " line 10",
          "",
        }, "\n")
      )
      eq(3, #R().active().files[1].hunks)
    end,
  },
  {
    "the view's lines are highlighted as drawn: + Added, - Removed, @@ Special, a section's header Title; the rest not",
    function()
      reset()
      local v = open(two_files())
      local win = vim.fn.bufwinid(v.buf)
      ---The attribute drawn at the first character of the line holding `pattern` (scrolled to the
      ---window's top).
      local function attr(pattern)
        local row = row_of(v, pattern)
        vim.api.nvim_win_call(win, function()
          vim.fn.winrestview({ topline = row, lnum = row, col = 0 })
        end)
        vim.cmd("redraw!")
        local pos = vim.fn.screenpos(win, row, 1)
        ok(pos.row > 0, pattern .. " on screen")
        return vim.fn.screenattr(pos.row, pos.col)
      end
      local added, removed, at, title = attr("+CHANGED 2"), attr("-line 2"), attr("@@ -2,1"), attr("━━ a.txt")
      ok(added ~= 0 and removed ~= 0 and at ~= 0 and title ~= 0, vim.inspect({ added, removed, at, title }))
      eq(4, #vim.fn.uniq(vim.fn.sort({ added, removed, at, title })), "four highlights")
      eq(added, attr("+ADDED"))
      eq(removed, attr("-line 9"))
      eq(0, attr(" line 1"), "context")
      eq(0, attr("Claude's changes"), "the header")
      eq(0, attr("  pending       +2 −2  a.txt"), "the file list")
      -- After an action the redrawn section is highlighted the same.
      vim.api.nvim_win_set_cursor(win, { row_of(v, "+CHANGED 2"), 0 })
      vim.cmd("normal a")
      eq(at, attr("@@ -2,1 +2,1 @@ kept"))
      eq(added, attr("+ADDED"))
    end,
  },
  {
    "]c and [c move between hunks",
    function()
      reset()
      local cs = two_files()
      local v = open(cs)
      vim.api.nvim_win_set_cursor(0, { 1, 0 })
      local got = {}
      for _ = 1, 5 do
        vim.cmd("normal ]c")
        table.insert(got, vim.api.nvim_get_current_line())
      end
      eq({
        "@@ -2,1 +2,1 @@ pending",
        "@@ -6,0 +6,1 @@ pending",
        "@@ -9,1 +10,0 @@ pending",
        "@@ -1,1 +1,1 @@ pending",
        "@@ -1,1 +1,1 @@ pending",
      }, got)
      vim.cmd("normal [c")
      eq("@@ -9,1 +10,0 @@ pending", vim.api.nvim_get_current_line())
      ok(v.ready)
    end,
  },
  {
    "keep marks a hunk kept (folded in the view), writes nothing; undo makes it pending again",
    function()
      reset()
      local cs, root = changeset({ { path = "a.txt", before = text(BEFORE), after = text(AFTER) } })
      local v = open(cs)
      vim.api.nvim_win_set_cursor(0, { row_of(v, "+CHANGED 2"), 0 })
      vim.cmd("normal a")
      local f = R().active().files[1]
      eq("kept", f.hunks[1].state)
      -- The blank line after a section is no hunk.
      vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(v.buf), 0 })
      vim.cmd("normal a")
      eq("pending", f.hunks[2].state)
      eq(text(AFTER), disk(root .. "/a.txt"))
      contains(buf_text(v), "@@ -2,1 +2,1 @@ kept\n@@ -6,0")
      contains(buf_text(v), "  pending       +2 −2  a.txt")
      vim.cmd("ClaudeContext review undo")
      eq("pending", f.hunks[1].state)
      contains(buf_text(v), "@@ -2,1 +2,1 @@ pending\n line 1\n-line 2\n+CHANGED 2")
    end,
  },
  {
    "gA keeps every pending hunk of every file (model.pending); a rejected one stays rejected",
    function()
      reset()
      local cs = two_files()
      local v = open(cs)
      local model = require("claude_context.review.model")
      local a = model.file(R().active(), 1)
      R().act("reject", { targets = { { f = a, hi = 2 } } })
      eq(
        { { 1, 1 }, { 1, 3 }, { 2, 1 } },
        vim.tbl_map(function(t)
          return { t.f == a and 1 or 2, t.hi }
        end, model.pending(R().active()))
      )
      eq(v.buf, vim.api.nvim_get_current_buf())
      vim.cmd("normal gA")
      local b = model.file(R().active(), 2)
      eq(
        { "kept", "rejected", "kept" },
        vim.tbl_map(function(h)
          return h.state
        end, a.hunks)
      )
      eq("kept", b.hunks[1].state)
      eq({}, model.pending(R().active()))
    end,
  },
  {
    "reject in a file's buffer reverts that hunk on disk and in the buffer; unsaved edits elsewhere stay; undo puts Claude's lines back",
    function()
      reset()
      local cs, root = changeset({ { path = "a.txt", before = text(BEFORE), after = text(AFTER) } })
      activate(cs)
      vim.cmd.edit(root .. "/a.txt")
      local buf = vim.api.nvim_get_current_buf()
      -- An unsaved edit far from the hunk.
      vim.api.nvim_buf_set_lines(buf, 10, 11, false, { "MY EDIT" })
      eq(true, vim.bo[buf].modified)
      vim.api.nvim_win_set_cursor(0, { 2, 0 })
      vim.cmd("ClaudeContext review reject too clever")
      local want_disk = vim.deepcopy(AFTER)
      want_disk[2] = "line 2"
      eq(text(want_disk), disk(root .. "/a.txt"))
      local want_buf = vim.deepcopy(want_disk)
      want_buf[11] = "MY EDIT"
      eq(want_buf, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
      eq(true, vim.bo[buf].modified)
      local hk = R().active().files[1].hunks[1]
      eq("rejected", hk.state)
      eq("too clever", hk.reason)
      -- A range over the added line and the deletion rejects both.
      vim.cmd("6,9ClaudeContext review reject")
      eq(text(BEFORE), disk(root .. "/a.txt"))
      vim.cmd("ClaudeContext review undo")
      eq(text(want_disk), disk(root .. "/a.txt"))
      vim.cmd("ClaudeContext review undo")
      eq(text(AFTER), disk(root .. "/a.txt"))
      local back = vim.deepcopy(AFTER)
      back[11] = "MY EDIT"
      eq(back, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
      eq("pending", hk.state)
      eq(nil, hk.reason)
      vim.cmd("ClaudeContext review undo")
      contains(messages[#messages].msg, "nothing to undo")
    end,
  },
  {
    "rejects of one file in quick succession all reach the disk (each built on the text being written)",
    function()
      reset()
      local cs, root = changeset({ { path = "a.txt", before = text(BEFORE), after = text(AFTER) } })
      activate(cs)
      vim.cmd.edit(root .. "/a.txt")
      local f = require("claude_context.review.model").file(R().active(), 1)
      for hi = 1, 3 do
        eq(1, R().act("reject", { targets = { { f = f, hi = hi } } }).done)
      end
      R().flush()
      eq(text(BEFORE), h.read(root .. "/a.txt"))
      -- Its unmodified buffer holds the same, stays unmodified, and writes without a prompt.
      eq(BEFORE, vim.api.nvim_buf_get_lines(0, 0, -1, false))
      eq(false, vim.bo.modified)
      vim.cmd("silent write")
      R().undo()
      R().undo()
      R().flush()
      local want = vim.deepcopy(AFTER)
      want[2] = "line 2"
      eq(text(want), h.read(root .. "/a.txt"))
    end,
  },
  {
    "a check of the file's time while the review's writes are under way never reloads the buffer with a partial text",
    function()
      reset()
      local cs, root = changeset({ { path = "a.txt", before = text(BEFORE), after = text(AFTER) } })
      activate(cs)
      local path = root .. "/a.txt"
      vim.cmd.edit(path)
      local buf = vim.api.nvim_get_current_buf()
      local f = require("claude_context.review.model").file(R().active(), 1)
      eq(1, R().act("reject", { targets = { { f = f, hi = 1 } } }).done)
      eq(1, R().act("reject", { targets = { { f = f, hi = 2 } } }).done)
      -- The two writes land (their callbacks wait: nothing here lets the editor run them).
      local two = vim.deepcopy(AFTER)
      two[2] = "line 2"
      table.remove(two, 6)
      while h.read(path) ~= text(two) do
        vim.uv.sleep(1)
      end
      eq(1, R().act("reject", { targets = { { f = f, hi = 3 } } }).done)
      -- What the plugin's BufEnter, FocusGained or the person's 'autoread' check does, while the
      -- last write is under way.
      vim.cmd.checktime()
      eq(BEFORE, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
      R().flush()
      eq(text(BEFORE), h.read(path))
      eq(BEFORE, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
      eq(false, vim.bo[buf].modified)
      -- Its 'autoread' is the global one again.
      eq(nil, vim.api.nvim_get_option_value("autoread", { buf = buf }))
      eq(true, vim.o.autoread)
      -- Neovim knows the file's new time: writing does not ask.
      vim.cmd("silent write")
      eq(text(BEFORE), h.read(path))
    end,
  },
  {
    "reject of a file that is not loaded leaves a buffer whose name starts like it alone",
    function()
      reset()
      local cs, root = changeset({ { path = "a.txt", before = text(BEFORE), after = text(AFTER) } })
      h.write(root .. "/a.txt.bak", text(AFTER))
      vim.cmd.edit(root .. "/a.txt.bak")
      local bak = vim.api.nvim_get_current_buf()
      activate(cs)
      local f = require("claude_context.review.model").file(R().active(), 1)
      eq(1, R().act("reject", { targets = { { f = f, hi = 1 } } }).done)
      eq(AFTER, vim.api.nvim_buf_get_lines(bak, 0, -1, false))
      eq(false, vim.bo[bak].modified)
      local want = vim.deepcopy(AFTER)
      want[2] = "line 2"
      eq(text(want), disk(root .. "/a.txt"))
    end,
  },
  {
    "reject of an unmodified buffer leaves it unmodified and equal to the disk",
    function()
      reset()
      local cs, root = changeset({ { path = "a.txt", before = text(BEFORE), after = text(AFTER) } })
      activate(cs)
      vim.cmd.edit(root .. "/a.txt")
      vim.api.nvim_win_set_cursor(0, { 2, 0 })
      R().reject()
      eq(false, vim.bo.modified)
      eq(disk(root .. "/a.txt"), text(vim.api.nvim_buf_get_lines(0, 0, -1, false)))
      -- The buffer was reloaded with the same lines: checking it does nothing, and `:w` writes
      -- without "the file has been changed since reading it" (that prompt would stall here).
      vim.cmd("checktime")
      eq(false, vim.bo.modified)
      vim.api.nvim_buf_set_lines(0, 0, 1, false, { "edited later" })
      vim.cmd("silent write")
      local want = vim.deepcopy(AFTER)
      want[1], want[2] = "edited later", "line 2"
      eq(text(want), disk(root .. "/a.txt"))
    end,
  },
  {
    "a hunk the person changed after Claude is a conflict: reject refuses it and writes nothing",
    function()
      reset()
      local cs, root = changeset({ { path = "a.txt", before = text(BEFORE), after = text(AFTER) } })
      local v = open(cs)
      vim.cmd("split " .. root .. "/a.txt")
      local buf = vim.api.nvim_get_current_buf()
      vim.api.nvim_buf_set_lines(buf, 1, 2, false, { "CHANGED 2 by me" })
      vim.api.nvim_win_set_cursor(0, { 2, 0 })
      h.clear(messages)
      local out = R().reject()
      eq(0, out.done)
      contains(messages[#messages].msg, "a.txt:2: you changed these lines after Claude: not overwritten")
      eq(text(AFTER), disk(root .. "/a.txt"))
      eq("CHANGED 2 by me", vim.api.nvim_buf_get_lines(buf, 1, 2, false)[1])
      eq("pending", R().active().files[1].hunks[1].state)
      contains(buf_text(v), "@@ -2,1 +2,1 @@ conflict: you changed these lines after Claude")
      contains(buf_text(v), "  conflict      +2 −2  a.txt")
      -- The other hunks are still rejected where they are now.
      vim.api.nvim_win_set_cursor(0, { 6, 0 })
      eq(1, R().reject().done)
      local want = vim.deepcopy(AFTER)
      table.remove(want, 6)
      eq(text(want), disk(root .. "/a.txt"))
    end,
  },
  {
    "a new file is removed on reject and comes back on undo; a deleted one is restored and removed again",
    function()
      reset()
      local cs, root = changeset({
        { path = "new.txt", before = nil, after = "fresh\n", status = "added" },
        { path = "old.txt", before = "gone\nfor good\n", after = nil, status = "deleted" },
      })
      local v = open(cs)
      contains(buf_text(v), "  pending       +1 −0  new.txt (new file)")
      contains(buf_text(v), "  pending       +0 −2  old.txt (deleted)")
      vim.api.nvim_win_set_cursor(0, { v.list_row + 1, 0 })
      vim.cmd("normal x")
      eq(nil, disk(root .. "/new.txt"))
      vim.api.nvim_win_set_cursor(0, { v.list_row + 2, 0 })
      vim.cmd("normal x")
      eq("gone\nfor good\n", disk(root .. "/old.txt"))
      contains(buf_text(v), "  rejected      +0 −2  old.txt (deleted)")
      vim.cmd("normal u")
      eq(nil, disk(root .. "/old.txt"))
      vim.cmd("normal u")
      eq("fresh\n", disk(root .. "/new.txt"))
    end,
  },
  {
    "a new file the person added lines to and saved is a conflict: reject keeps it and its buffer",
    function()
      reset()
      local cs, root = changeset({ { path = "new.txt", before = nil, after = "fresh\n", status = "added" } })
      local v = open(cs)
      local path = root .. "/new.txt"
      vim.cmd("split " .. vim.fn.fnameescape(path))
      local buf = vim.api.nvim_get_current_buf()
      vim.api.nvim_buf_set_lines(buf, -1, -1, false, { "mine" })
      vim.cmd("silent write")
      vim.cmd("close")
      vim.api.nvim_set_current_win(vim.fn.bufwinid(v.buf))
      -- Rejected twice: a first refusal ("changed on disk") must not make the retry remove it.
      for _ = 1, 2 do
        vim.api.nvim_win_set_cursor(0, { v.list_row + 1, 0 })
        vim.cmd("normal x")
        eq("fresh\nmine\n", disk(path))
      end
      ok(vim.api.nvim_buf_is_loaded(buf), "the buffer stays")
      eq({ "fresh", "mine" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
      eq("pending", R().active().files[1].hunks[1].state)
      contains(messages[#messages].msg, "not overwritten")
      contains(buf_text(v), "conflict")
    end,
  },
  {
    "undo of a reject that restored a deleted file keeps the lines the person added to it",
    function()
      reset()
      local cs, root = changeset({ { path = "old.txt", before = "gone\nfor good\n", after = nil, status = "deleted" } })
      local v = open(cs)
      local path = root .. "/old.txt"
      vim.api.nvim_win_set_cursor(0, { v.list_row + 1, 0 })
      vim.cmd("normal x")
      eq("gone\nfor good\n", disk(path))
      h.write(path, "gone\nfor good\nmine\n")
      -- The review has read the file since (as it does after any refused write).
      require("claude_context.review.fs").load(root, { path })
      R().flush()
      vim.cmd("normal u")
      eq("gone\nfor good\nmine\n", disk(path))
      contains(messages[#messages].msg, "not undone")
    end,
  },
  {
    "a file name with a newline, ESC or bytes that are not UTF-8 is shown escaped and the review opens",
    function()
      reset()
      local cs, root = changeset({
        { path = "evil\nname.txt", before = "a\n", after = "b\n" },
        { path = "esc\27[201~.txt", before = nil, after = "x\n", status = "added" },
        { path = "plain.txt", before = "1\n", after = "2\n" },
      })
      table.insert(cs.files, { path = "caf\\xe9.txt", absolute = root .. "/caf\\xe9.txt", status = "odd_name" })
      cs.turns[1].not_kept = { "huge.log" }
      local v = open(cs)
      local t = buf_text(v)
      contains(t, "evil\\nname.txt")
      contains(t, "esc\\x1b[201~.txt")
      contains(t, "caf\\xe9.txt (name not UTF-8)")
      contains(t, "Not kept (over the size cap before Claude's edit; cannot be restored): huge.log")
      ok(not t:find("\27", 1, true), "no raw ESC in the view")
      -- Every hunk is there, and acts as usual.
      contains(t, "  pending       +1 −1  plain.txt")
      vim.api.nvim_win_set_cursor(0, { row_of(v, "plain.txt"), 0 })
      vim.cmd("normal x")
      eq("1\n", disk(root .. "/plain.txt"))
      -- The odd name is rejected from the checkpoints (checkpoints_spec); a change set without
      -- them says so.
      h.clear(messages)
      vim.api.nvim_win_set_cursor(0, { row_of(v, "caf\\xe9.txt"), 0 })
      vim.cmd("normal x")
      contains(messages[#messages].msg, "caf\\xe9.txt: the bridge gave no checkpoints")
      local shown = require("claude_context.review.model").shown
      eq("a\\x1b\\n\\t\\xff\\u{9b}é", shown("a\27\n\t\255\194\155é"))
    end,
  },
  {
    "a renamed file shows both names and its hunks revert in the new name; a binary file needs the checkpoints",
    function()
      reset()
      local cs, root = changeset({
        { path = "bin.dat", status = "binary" },
        { path = "new_name.txt", old_path = "old_name.txt", before = "a\nb\n", after = "a\nB\n", status = "renamed" },
      })
      h.write(root .. "/bin.dat", "\0\1\2")
      local v = open(cs)
      local t = buf_text(v)
      contains(t, "old_name.txt → new_name.txt")
      contains(t, "bin.dat (binary)")
      contains(t, "@@ whole file @@ pending")
      vim.api.nvim_win_set_cursor(0, { v.list_row + 2, 0 })
      vim.cmd("normal x")
      eq("a\nb\n", disk(root .. "/new_name.txt"))
      h.clear(messages)
      vim.api.nvim_win_set_cursor(0, { v.list_row + 1, 0 })
      vim.cmd("normal x")
      contains(messages[#messages].msg, "bin.dat: the bridge gave no checkpoints")
      eq("\0\1\2", disk(root .. "/bin.dat"))
      vim.cmd("normal a")
      eq("kept", R().active().files[1].hunks[1].state)
    end,
  },
  {
    "a CRLF file is written back byte for byte; its dos buffer gets the lines without \\r",
    function()
      reset()
      local before = "one\r\ntwo\r\nthree\r\n"
      local after = "one\r\nTWO\r\nthree\r\nfour\r\n"
      local cs, root = changeset({ { path = "w.txt", before = before, after = after } })
      activate(cs)
      vim.cmd.edit(root .. "/w.txt")
      eq("dos", vim.bo.fileformat)
      vim.api.nvim_win_set_cursor(0, { 2, 0 })
      R().reject()
      eq("one\r\ntwo\r\nthree\r\nfour\r\n", disk(root .. "/w.txt"))
      eq({ "one", "two", "three", "four" }, vim.api.nvim_buf_get_lines(0, 0, -1, false))
      vim.api.nvim_win_set_cursor(0, { 4, 0 })
      R().reject()
      eq(before, disk(root .. "/w.txt"))
      R().undo()
      R().undo()
      eq(after, disk(root .. "/w.txt"))
    end,
  },
  {
    "comments and rejection reasons go to the turn's terminal as one prompt",
    function()
      reset()
      local cs, root = two_files({ terminal = "review-test" })
      -- A fake terminal: `cat` echoes what is typed into it.
      local got = {}
      local tbuf = vim.api.nvim_create_buf(false, true)
      local job = vim.fn.jobstart({ "cat" }, {
        on_stdout = function(_, data)
          table.insert(got, table.concat(data, "\n"))
        end,
      })
      require("claude_context.terminal.sessions").by_name["review-test"] =
        { buf = tbuf, job = job, name = "review-test" }
      activate(cs)
      vim.cmd.edit(root .. "/a.txt")
      vim.api.nvim_win_set_cursor(0, { 6, 0 })
      vim.cmd("ClaudeContext review comment why this line?")
      vim.cmd("7,8ClaudeContext review comment name these")
      local marks =
        vim.api.nvim_buf_get_extmarks(0, require("claude_context.review.comments").ns, 0, -1, { details = true })
      eq(2, #marks)
      eq("  💬 why this line?", marks[1][4].virt_text[1][1])
      vim.api.nvim_win_set_cursor(0, { 2, 0 })
      vim.cmd("ClaudeContext review reject keep the old name")
      vim.cmd("edit " .. root .. "/b.txt")
      vim.cmd("ClaudeContext review reject")
      local want = table.concat({
        "Review comments on your changes:",
        "- @a.txt#L6 why this line?",
        "- @a.txt#L7-8 name these",
        "",
        "I rejected these changes of yours (the lines are back to what they were before):",
        "- @a.txt#L2: keep the old name",
        "- @b.txt#L1",
      }, "\n")
      eq(want, R().prompt())
      vim.cmd("ClaudeContext review send")
      local all = wait_for(function()
        local s = table.concat(got)
        return s:find("\r", 1, true) and s
      end, 5000, "the prompt in the terminal")
      eq("\27[200~" .. want .. "\27[201~\r", all)
      eq(nil, R().prompt())
      eq(
        0,
        #vim.api.nvim_buf_get_extmarks(
          vim.fn.bufnr(root .. "/a.txt"),
          require("claude_context.review.comments").ns,
          0,
          -1,
          {}
        )
      )
      vim.fn.jobstop(job)
    end,
  },
  {
    "comments.send: nothing to send says so; a refused send keeps the comments; a sent one clears them",
    function()
      local comments = require("claude_context.review.comments")
      comments.clear()
      eq({ false, "nothing to send: no comments and no rejected hunks" }, { comments.send(nil, nil, false) })
      local buf = vim.api.nvim_create_buf(false, true)
      comments.add({ absolute = "/p/a.txt", root = "/p", line1 = 1, line2 = 1, text = "why?", buf = buf, row = 1 })
      local saved, typed = comments.sender, {}
      comments.sender = function()
        return false, "no claude terminal is running (:ClaudeContext open)"
      end
      eq({ false, "no claude terminal is running (:ClaudeContext open)" }, { comments.send(nil, nil, false) })
      eq(1, #comments.items)
      comments.sender = function(text)
        typed[#typed + 1] = text
        return true
      end
      eq({ true }, { comments.send(nil, nil, false) })
      comments.sender = saved
      eq({ "Review comments on your changes:\n- @a.txt#L1 why?" }, typed)
      eq(0, #comments.items)
      vim.api.nvim_buf_delete(buf, { force = true })
    end,
  },
  {
    "in the view, <CR> on the list goes to the file's diff and on a line opens the file there; a comment there names the file's line",
    function()
      reset()
      local cs, root = two_files()
      local v = open(cs)
      vim.api.nvim_win_set_cursor(0, { v.list_row + 2, 0 })
      vim.cmd('execute "normal \\<CR>"')
      eq("━━ b.txt  +1 −1  [pending]", vim.api.nvim_get_current_line())
      local row = row_of(v, "+ADDED")
      vim.api.nvim_win_set_cursor(0, { row, 0 })
      vim.cmd("ClaudeContext review comment an extra line?")
      eq("- @a.txt#L6 an extra line?", vim.split(R().prompt(), "\n")[2])
      vim.cmd('execute "normal \\<CR>"')
      eq(root .. "/a.txt", vim.api.nvim_buf_get_name(0))
      eq({ 6, 0 }, vim.api.nvim_win_get_cursor(0))
      eq("ADDED", vim.api.nvim_get_current_line())
      -- Context rows stand for their own lines (above: line 5; below: line 7 is "line 6").
      vim.cmd("close")
      vim.api.nvim_win_set_cursor(0, { row - 1, 0 })
      vim.cmd('execute "normal \\<CR>"')
      eq({ 5, "line 5" }, { vim.fn.line("."), vim.api.nvim_get_current_line() })
      vim.cmd("close")
      vim.api.nvim_win_set_cursor(0, { row + 1, 0 })
      vim.cmd('execute "normal \\<CR>"')
      eq({ 7, "line 6" }, { vim.fn.line("."), vim.api.nvim_get_current_line() })
      vim.cmd("close")
      vim.api.nvim_win_set_cursor(0, { row_of(v, "-line 9"), 0 })
      vim.cmd('execute "normal \\<CR>"')
      eq({ 10, "line 10" }, { vim.fn.line("."), vim.api.nvim_get_current_line() })
    end,
  },
  {
    "in the view, <CR> on a line whose file became a FIFO never holds the editor; a regular file opens as read by :edit",
    function()
      reset()
      local cs, root = two_files()
      local v = open(cs)
      local a = root .. "/a.txt"
      local text = h.read(a)
      local row = row_of(v, "+ADDED")
      vim.api.nvim_win_set_cursor(0, { row, 0 })
      local held, pressed, err = h.with_swapped_fifo(a, function()
        vim.cmd('execute "normal \\<CR>"')
      end)
      assert(pressed, err)
      ok(not held, "the FIFO was opened and waited on")
      eq(v.buf, vim.api.nvim_get_current_buf(), "the view stays")
      h.write(a, text)
      vim.cmd('execute "normal \\<CR>"')
      eq(a, vim.api.nvim_buf_get_name(0))
      eq({ 6, "ADDED" }, { vim.fn.line("."), vim.api.nvim_get_current_line() })
      eq({ false, true, "", "text" }, { vim.bo.modified, vim.bo.buflisted, vim.bo.buftype, vim.bo.filetype })
      vim.cmd("write")
      eq(text, h.read(a))
      vim.cmd("close")
    end,
  },
  {
    "send refuses a turn started outside Neovim and leaves the prompt in a register",
    function()
      reset()
      local cs, root = changeset({ { path = "b.txt", before = "x\n", after = "y\n" } }, { terminal = vim.NIL })
      cs.turns[1].terminal = nil
      activate(cs)
      vim.cmd.edit(root .. "/b.txt")
      vim.cmd("ClaudeContext review comment hm")
      eq(false, R().send())
      contains(messages[#messages].msg, "outside Neovim")
      eq("Review comments on your changes:\n- @b.txt#L1 hm", vim.fn.getreg('"'))
    end,
  },
  {
    "quickfix: one entry per hunk with its first line and a summary",
    function()
      reset()
      local cs, root = changeset({
        { path = "a.txt", before = text(BEFORE), after = text(AFTER) },
        { path = "n.txt", before = nil, after = "hello\nworld\n", status = "added" },
      })
      activate(cs)
      vim.cmd("ClaudeContext review quickfix")
      local qf = vim.tbl_map(function(e)
        return { vim.api.nvim_buf_get_name(e.bufnr), e.lnum, e.text }
      end, vim.fn.getqflist())
      eq({
        { root .. "/a.txt", 2, "+1 −1 CHANGED 2" },
        { root .. "/a.txt", 6, "+1 −0 ADDED" },
        { root .. "/a.txt", 10, "+0 −1 line 9" },
        { root .. "/n.txt", 1, "new file: +2 −0 hello" },
      }, qf)
    end,
  },
  {
    "signs mark Claude's pending lines in a file's buffer and go when the hunk is kept",
    function()
      reset()
      local cs, root = changeset({ { path = "a.txt", before = text(BEFORE), after = text(AFTER) } })
      activate(cs)
      vim.cmd.edit(root .. "/a.txt")
      local ns = require("claude_context.review.signs").ns
      local function signs()
        local out = {}
        for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })) do
          table.insert(out, { m[2] + 1, vim.trim(m[4].sign_text), m[4].sign_hl_group })
        end
        return out
      end
      wait_for(function()
        return #signs() == 3
      end, 2000, "the signs")
      eq({ { 2, "┃", "Changed" }, { 6, "┃", "Added" }, { 9, "▁", "Removed" } }, signs())
      vim.api.nvim_win_set_cursor(0, { 6, 0 })
      vim.cmd("ClaudeContext review keep")
      eq({ { 2, "┃", "Changed" }, { 9, "▁", "Removed" } }, signs())
      -- An edit above moves them.
      vim.api.nvim_buf_set_lines(0, 0, 0, false, { "new first line" })
      vim.api.nvim_exec_autocmds("TextChanged", { buffer = 0 })
      wait_for(function()
        return signs()[1] and signs()[1][1] == 3
      end, 2000, "the moved signs")
      require("claude_context.config").options.review = { signs = false }
      require("claude_context.review.signs").update_buf(0)
      eq({}, signs())
      require("claude_context.config").options.review = nil
    end,
  },
  {
    "review.auto_open opens the ended turn's change set once its checkpoint exists, not on the session's done",
    function()
      reset()
      local cs = changeset({ { path = "b.txt", before = "x\n", after = "y\n" } })
      local asked = {}
      package.loaded["claude_context.review.source"] = {
        changeset = function(o, cb)
          table.insert(asked, o)
          vim.schedule(function()
            cb(nil, cs)
          end)
        end,
      }
      require("claude_context.config").options.review = { auto_open = true }
      -- The bridge's messages, as it sends them: the session is done (its Stop) before the turn's
      -- end checkpoint is taken; the review does not act on that.
      -- (claude_context.rpc's table of methods routes them: nothing to start.)
      require("claude_context.sessions.state").start()
      local function send(method, params)
        require("claude_context.rpc").handle(method, vim.json.encode(params), function() end)
      end
      local session = { id = "s1", state = "done", prompt = "p", files = {} }
      send("session_state", { event = "Stop", previous = "working", session = session })
      eq({}, asked, "the review acted on the session's done, before the turn's checkpoint existed")
      eq(nil, V().current)
      -- A turn that ended otherwise (the session's end, the next prompt) is not opened either.
      local turn = { id = "1-1", session = "s1", files = { "b.txt" } }
      local root = vim.fn.getcwd()
      send("turn_checkpointed", { root = root, turn = turn, event = "SessionEnd" })
      eq({}, asked)
      -- Its end checkpoint exists: that turn, exactly, is opened.
      send("turn_checkpointed", { root = root, turn = turn, event = "Stop" })
      local v = wait_for(function()
        return V().current
      end, 2000, "the view")
      eq({ { root = root, turn = "1-1" } }, asked)
      eq(cs, v.review.cs)
      require("claude_context.config").options.review = nil
      package.loaded["claude_context.review.source"] = nil
    end,
  },
  {
    ":ClaudeContext review says when no turn was recorded",
    function()
      reset()
      package.loaded["claude_context.review.source"] = nil
      package.preload["claude_context.review.source"] = function()
        error("module 'claude_context.review.source' not found")
      end
      vim.cmd("ClaudeContext review")
      contains(messages[#messages].msg, "review: no turn was recorded")
      h.clear(messages)
      package.loaded["claude_context.review.source"] = nil
      vim.cmd("ClaudeContext review keep")
      contains(messages[#messages].msg, "review: no turn was recorded")
      -- A source that is there but broken says so.
      package.loaded["claude_context.review.source"] = nil
      package.preload["claude_context.review.source"] = function()
        error("boom")
      end
      vim.cmd("ClaudeContext review")
      contains(messages[#messages].msg, "review: the turns' source failed to load")
      contains(messages[#messages].msg, "boom")
      package.loaded["claude_context.review.source"] = nil
      package.preload["claude_context.review.source"] = nil
    end,
  },
  {
    "keep/reject in a buffer with no active review load the last turn first; so does quickfix",
    function()
      reset()
      local cs, root = changeset({ { path = "a.txt", before = text(BEFORE), after = text(AFTER) } })
      local asked = {}
      package.loaded["claude_context.review.source"] = {
        changeset = function(o, cb)
          table.insert(asked, o)
          vim.schedule(function()
            cb(nil, cs)
          end)
        end,
      }
      vim.cmd.edit(root .. "/a.txt")
      vim.api.nvim_win_set_cursor(0, { 2, 0 })
      vim.cmd("ClaudeContext review reject")
      wait_for(function()
        return R().active()
      end, 2000, "the active review")
      local want = vim.deepcopy(AFTER)
      want[2] = "line 2"
      eq(text(want), disk(root .. "/a.txt"))
      eq({ { n = 1 } }, asked)
      R().set_active(nil)
      vim.cmd("ClaudeContext review quickfix 2")
      wait_for(function()
        return R().active()
      end, 2000, "the active review")
      eq({ n = 2 }, asked[2])
      -- A fresh review of the same turn: the hunk rejected above is no longer Claude's text.
      local qf = vim.fn.getqflist()
      eq(3, #qf)
      eq("+1 −1 CHANGED 2 [conflict]", qf[1].text)
      package.loaded["claude_context.review.source"] = nil
    end,
  },
  {
    "a big hunk shows its first lines and how many more",
    function()
      reset()
      local cs = changeset({ { path = "big.txt", before = nil, after = text(lines(1000)), status = "added" } })
      local v = open(cs)
      local t = buf_text(v)
      contains(t, "+line 300\n+… 700 more lines (<CR> opens the file)")
      ok(not t:find("+line 301", 1, true), "line 301 shown")
      vim.api.nvim_win_set_cursor(0, { row_of(v, "+line 300"), 0 })
      vim.cmd('execute "normal \\<CR>"')
      eq(300, vim.fn.line("."))
    end,
  },
  {
    "a big change set is built in slices, every hunk in the end",
    function()
      reset()
      local files = {}
      for i = 1, 200 do
        local b = lines(100, "file " .. i .. " line %d")
        local a = vim.deepcopy(b)
        for k = 1, 5 do
          a[k * 20 - 10] = "changed " .. k
        end
        files[i] = { path = ("dir/f%03d.txt"):format(i), before = text(b), after = text(a) }
      end
      local cs = changeset(files)
      local v = R().open(cs)
      ok(not v.ready, "built at once")
      wait_for(function()
        return v.ready
      end, 20000, "the view")
      local n = 0
      for _, l in ipairs(vim.api.nvim_buf_get_lines(v.buf, 0, -1, false)) do
        if l:find("^@@ ") then
          n = n + 1
        end
      end
      eq(1000, n)
      -- The last file's hunk is found from its row.
      local row = row_of(v, "━━ dir/f200.txt")
      local i, hi = V().at(v, row + 1)
      eq({ 200, 1 }, { i, hi })
      -- Rejecting everything runs in slices, one undo step for all.
      local t, out = {}, nil
      for fi, f in ipairs(R().active().files) do
        for k = 1, #f.hunks do
          t[#t + 1] = { f = R().active().files[fi], hi = k }
        end
      end
      eq(
        nil,
        R().act("reject", {
          targets = t,
          on_done = function(o)
            out = o
          end,
        })
      )
      ok(out == nil, "done at once")
      wait_for(function()
        return out
      end, 60000, "the rejects")
      eq(1000, out.done)
      eq(files[1].before, disk(cs.files[1].absolute))
      eq(files[200].before, disk(cs.files[200].absolute))
      ok(not buf_text(v):find("pending", 1, true), "nothing pending")
      local undone = false
      R().undo(function()
        undone = true
      end)
      ok(not undone, "undone at once")
      wait_for(function()
        return undone
      end, 60000, "the undo")
      eq(files[1].after, disk(cs.files[1].absolute))
      eq(files[200].after, disk(cs.files[200].absolute))
    end,
  },
  {
    "a file changed while another session was working is marked in the list, its section and the quickfix entry",
    function()
      reset()
      local cs = changeset({
        { path = "a.txt", before = "x\n", after = "y\n" },
        { path = "gen.txt", before = "old\n", after = "new\n", shared = true },
      })
      local v = open(cs)
      local t = buf_text(v)
      contains(t, "  pending       +1 −1  gen.txt (shared)")
      contains(
        t,
        "━━ gen.txt  +1 −1  [pending]\n   (changed while another session was working: it may be that session's too)"
      )
      ok(not t:find("a.txt (shared)", 1, true), "a.txt is this turn's alone")
      -- A hunk of the shared file is still found from its row.
      local i, hi = V().at(v, row_of(v, "@@ ", row_of(v, "━━ gen.txt")))
      eq({ 2, 1 }, { i, hi })
      local items = require("claude_context.review.quickfix").items(R().active())
      eq(2, #items)
      eq("+1 −1 y", items[1].text)
      eq("+1 −1 new [changed while another session was working]", items[2].text)
    end,
  },
  {
    "a Visual selection in the view keeps the hunks it touches; gX rejects the rest; a symlinked file is never written through",
    function()
      reset()
      local cs, root = changeset({
        { path = "a.txt", before = text(BEFORE), after = text(AFTER) },
        { path = "link.txt", before = "x\n", after = "y\n" },
        { path = "huge.log", status = "too_large" },
        { path = "sub/f.txt", before = "p\n", after = "q\n" },
      })
      -- link.txt is a symlink to a file outside the project; sub/ a symlink to a directory
      -- outside it.
      local outdir = h.tmpdir()
      local outside = outdir .. "/target.txt"
      h.write(outside, "y\n")
      os.remove(root .. "/link.txt")
      vim.uv.fs_symlink(outside, root .. "/link.txt")
      h.write(outdir .. "/f.txt", "q\n")
      vim.fn.delete(root .. "/sub", "rf")
      vim.uv.fs_symlink(outdir, root .. "/sub")
      local v = open(cs)
      local r1 = row_of(v, "+CHANGED 2")
      local r2 = row_of(v, "+ADDED")
      vim.api.nvim_win_set_cursor(0, { r1, 0 })
      vim.cmd("normal! V")
      vim.api.nvim_win_set_cursor(0, { r2, 0 })
      vim.cmd("normal a")
      local f = R().active().files[1]
      eq(
        { "kept", "kept", "pending" },
        vim.tbl_map(function(x)
          return x.state
        end, f.hunks)
      )
      h.clear(messages)
      vim.cmd("normal gX")
      eq("rejected", f.hunks[3].state)
      local want = vim.deepcopy(AFTER)
      table.insert(want, 10, "line 9")
      eq(text(want), disk(root .. "/a.txt"))
      local msg = messages[#messages].msg
      contains(msg, "3 hunks not rejected")
      contains(msg, "sub/f.txt: refused: '" .. root .. "/sub' is a symbolic link")
      eq("q\n", disk(outdir .. "/f.txt"))
      contains(msg, "link.txt: refused: '" .. root .. "/link.txt' is a symbolic link")
      contains(msg, "huge.log: the bridge gave no checkpoints")
      eq("y\n", disk(outside))
      eq("link", vim.uv.fs_lstat(root .. "/link.txt").type)
      contains(buf_text(v), "  partly        +2 −2  a.txt")
      contains(buf_text(v), "huge.log (too large)")
      vim.cmd("normal u")
      eq(text(AFTER), disk(root .. "/a.txt"))
      vim.cmd("normal u")
      eq("pending", f.hunks[1].state)
    end,
  },
  {
    "a directory swapped for a link out of the project after the review read the file: the reject is refused, nothing outside changes",
    function()
      reset()
      local cs, root = changeset({ { path = "sub/f.txt", before = "p\n", after = "q\n" } })
      local outdir = h.tmpdir()
      h.write(outdir .. "/f.txt", "q\n")
      local function outside()
        local t = {}
        for name in vim.fs.dir(outdir) do
          t[#t + 1] = name .. "=" .. tostring(h.read(outdir .. "/" .. name))
        end
        table.sort(t)
        return t
      end
      local before_out = outside()
      local function swap()
        assert(vim.uv.fs_rename(root .. "/sub", root .. "/sub.real"))
        assert(vim.uv.fs_symlink(outdir, root .. "/sub"))
      end
      local function unswap()
        assert(vim.uv.fs_unlink(root .. "/sub"))
        assert(vim.uv.fs_rename(root .. "/sub.real", root .. "/sub"))
      end
      local v = open(cs)
      local f = R().active().files[1]
      -- 1. Swapped after the review read the file, before the reject: refused, with the link named.
      swap()
      h.clear(messages)
      vim.api.nvim_win_set_cursor(0, { row_of(v, "+q"), 0 })
      R().reject()
      R().flush()
      wait_for(function()
        return f.hunks[1].state == "pending"
      end, 5000, "the refusal")
      local msg = messages[#messages].msg
      contains(msg, "sub/f.txt")
      contains(msg, "'" .. root .. "/sub' is a symbolic link")
      contains(msg, "not rejected")
      eq(before_out, outside())
      eq("q\n", h.read(root .. "/sub.real/f.txt"))
      unswap()
      -- A review opened again reads the file anew.
      v = open(cs)
      f = R().active().files[1]
      -- 2. Swapped right after the reject was asked (before the write reached the disk): the
      -- write lands in the project's directory or is refused; never outside.
      R().flush()
      vim.api.nvim_win_set_cursor(0, { row_of(v, "+q"), 0 })
      R().reject()
      swap()
      R().flush()
      eq(before_out, outside())
      if f.hunks[1].state == "rejected" then
        eq("p\n", h.read(root .. "/sub.real/f.txt"))
      else
        eq("q\n", h.read(root .. "/sub.real/f.txt"))
      end
      unswap()
    end,
  },
  {
    "a turn that ends while the view is open leaves the view's review active",
    function()
      reset()
      local turn_end = { root = vim.fn.getcwd(), turn = { id = "1-1", session = "s1" }, event = "Stop" }
      local cs = changeset({ { path = "b.txt", before = "x\n", after = "y\n" } })
      local other = changeset({ { path = "c.txt", before = "1\n", after = "2\n" } })
      local v = open(cs)
      package.loaded["claude_context.review.source"] = {
        changeset = function(_, cb)
          cb(nil, other)
        end,
      }
      vim.api.nvim_exec_autocmds("User", { pattern = "ClaudeContextTurnCheckpointed", data = turn_end })
      eq(cs, R().active().cs)
      vim.api.nvim_win_set_cursor(0, { row_of(v, "+y"), 0 })
      eq(1, R().keep().done)
      contains(buf_text(v), "@@ -1,1 +1,1 @@ kept")
      -- Without a view, the turn's change set becomes the active review (signs).
      V().close()
      vim.api.nvim_exec_autocmds("User", { pattern = "ClaudeContextTurnCheckpointed", data = turn_end })
      eq(other, R().active().cs)
      package.loaded["claude_context.review.source"] = nil
    end,
  },
  {
    "setup checks the review options",
    function()
      local cfg = require("claude_context.config.review")
      eq(false, cfg.resolve(nil).auto_open)
      eq("]c", cfg.resolve({ keys = { keep = "K" } }).keys.next_hunk)
      local okk, e = pcall(cfg.resolve, { nope = 1 })
      ok(not okk)
      contains(e, "unknown option review.nope")
      okk, e = pcall(cfg.resolve, { keys = { keep = 1 } })
      contains(e, "review.keys.keep must be a string")
      okk, e = pcall(cfg.resolve, { auto_open = "yes" })
      contains(e, "review.auto_open must be a boolean")
      okk, e = pcall(cfg.resolve, { context = -1 })
      contains(e, "review.context must be a whole number >= 0")
    end,
  },
}
