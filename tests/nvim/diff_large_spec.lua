-- openDiff never holds the editor: the bridge reads the file, splits both sides and
-- computes the hunks off the main thread; the view's buffers fill a slice per event-loop turn;
-- a diff bigger than diff.diffmode_max_bytes is shown inline (no diff mode, whose whole-file
-- diff runs on the main thread at every redraw after a change), its marks placed in slices; an
-- unedited proposal is answered from the bridge's copy and an edited one's lines go back in
-- slices. The sizes here are small and the limits lowered so that the same paths run quickly.
local h = require("helpers")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local cc = h.cc
local diff = h.diff
-- The pace of the views' work (lowered here so that the same paths run on small files).
local knobs = function()
  return require("claude_context.ide.diff.config")
end

h.record_notify()

local dir, target
local saved = {}

---@param n integer
---@param changed table<integer, string>? line number -> replacement
local function text(n, changed)
  local t = {}
  for i = 1, n do
    t[i] = (changed and changed[i]) or ("line %d of the file, with some words to make it longer"):format(i)
  end
  return table.concat(t, "\n") .. "\n"
end

local function request_diff(name, contents)
  return h.request_diff(target, name, contents)
end
local view_of, cleanup = h.diff_view, h.close_diffs

local function lines(b)
  return vim.api.nvim_buf_get_lines(b, 0, -1, false)
end

return {
  {
    "setup",
    function()
      dir = h.tmpdir()
      vim.cmd.cd(dir)
      target = dir .. "/big.md"
      cc().setup({ diff = { diffmode_max_bytes = 20000 } })
      for _, k in ipairs({ "slice_ms", "chunk_bytes", "chunk_lines", "max_virt_lines" }) do
        saved[k] = knobs()[k]
      end
    end,
  },
  {
    "a large diff fills its buffers over several event-loop turns and is shown inline, without diff mode",
    function()
      local old = text(3000)
      h.write(target, old)
      local changed = { [10] = "CHANGED ten" }
      local new = text(3000, changed):gsub("line 2000 of the file[^\n]*\n", "", 1) .. "an added last line\n"
      -- One chunk of 4 KiB per turn: the fill cannot finish in the turn that starts it.
      knobs().slice_ms = 0
      knobs().chunk_bytes = 4096
      local box = request_diff("big1", new)
      local seen_partial
      local function probe()
        local v = diff().views.big1
        if v and v.prop_buf and vim.api.nvim_buf_is_valid(v.prop_buf) and not v.prop_win then
          local n = vim.api.nvim_buf_line_count(v.prop_buf)
          if n > 1 and n < 3000 then
            seen_partial = n
          end
        end
        return v and v.prop_win
      end
      wait_for(probe, 10000, "the view")
      ok(seen_partial, "another event ran while the proposal was half filled")
      local v = diff().views.big1
      eq(vim.split(new, "\n", { plain = true, trimempty = true }), lines(v.prop_buf))
      eq(vim.split(old, "\n", { plain = true, trimempty = true }), lines(v.orig_buf))
      eq(true, v.large)
      eq("inline", v.layout)
      eq(nil, v.orig_win, "one window")
      eq(false, vim.wo[v.prop_win].diff, "no diff mode")
      contains(vim.wo[v.prop_win].winbar, "shown inline")
      eq("", vim.bo[v.prop_buf].filetype, "no FileType autocommands on a large view")
      eq("markdown", vim.bo[v.prop_buf].syntax)
      -- The bridge's hunks (vim.diff() indices): line 10 changed, line 2000 removed, one added.
      eq({ { 10, 1, 10, 1 }, { 2000, 1, 1999, 0 }, { 3000, 0, 3000, 1 } }, v.hunks)
      local ns = vim.api.nvim_get_namespaces().claude_context_diff_inline
      wait_for(function()
        return #vim.api.nvim_buf_get_extmarks(v.prop_buf, ns, 0, -1, {}) >= 4
      end, 5000, "the marks")
      local virt, hl = {}, {}
      for _, m in ipairs(vim.api.nvim_buf_get_extmarks(v.prop_buf, ns, 0, -1, { details = true })) do
        if m[4].virt_lines then
          virt[m[2] + 1] = m[4].virt_lines[1][1][1]
        end
        if m[4].line_hl_group then
          hl[m[2] + 1] = m[4].line_hl_group
        end
      end
      eq({
        [10] = "- line 10 of the file, with some words to make it longer",
        [2000] = "- line 2000 of the file, with some words to make it longer",
      }, virt)
      eq({ [10] = "DiffChange", [3000] = "DiffAdd" }, hl)

      -- Accepted unedited: exactly what Claude sent, from the bridge's copy.
      vim.api.nvim_set_current_win(v.prop_win)
      vim.cmd("write")
      h.decided(box, 5000, "the answer")
      eq("FILE_SAVED", box.result.content[1].text)
      eq(new, box.result.content[2].text)
      local id = v.prep.id
      wait_for(function()
        return require("claude_context.native").get().proposal_exists(id) == false
      end, 5000, "the bridge to forget the proposal")
      cleanup()
    end,
  },
  {
    "an edited large proposal goes back in slices and is joined by the bridge (CRLF, no final newline)",
    function()
      h.write(target, "a\r\nb\r\n")
      knobs().slice_ms = 0
      knobs().chunk_lines = 100
      local t = {}
      for i = 1, 5000 do
        t[i] = "row " .. i
      end
      local new = table.concat(t, "\r\n") -- no final newline
      local box = request_diff("big2", new)
      local v = view_of("big2")
      eq(true, v.large)
      eq({ true, false }, { vim.bo[v.prop_buf].fileformat == "dos", vim.bo[v.prop_buf].eol })
      vim.api.nvim_buf_set_lines(v.prop_buf, 0, 1, false, { "row one, edited" })
      vim.api.nvim_set_current_win(v.prop_win)
      vim.cmd("write")
      eq(nil, box.result, "the lines are still on their way")
      eq(false, vim.bo[v.prop_buf].modifiable, "not editable while they go")
      h.decided(box, 10000, "the answer")
      t[1] = "row one, edited"
      eq(table.concat(t, "\r\n"), box.result.content[2].text)
      cleanup()
    end,
  },
  {
    "a range accept while an edited proposal's lines are on their way does not override the accept",
    function()
      h.write(target, "a\nb\n")
      knobs().slice_ms = 0
      knobs().chunk_lines = 100
      local t = {}
      for i = 1, 5000 do
        t[i] = "row " .. i
      end
      local box = request_diff("race", table.concat(t, "\n") .. "\n")
      local v = view_of("race")
      vim.api.nvim_buf_set_lines(v.prop_buf, 0, 1, false, { "row one, edited" })
      diff().accept(v)
      eq(nil, box.result, "the lines are still on their way")
      eq(nil, (diff().accept_range(v, 1, 1, "b")), "answered already: the range accept is refused")
      h.decided(box, 10000, "the answer")
      t[1] = "row one, edited"
      eq(table.concat(t, "\n") .. "\n", box.result.content[2].text, "the whole accepted proposal")
      cleanup()
    end,
  },
  {
    "a big removal shows its first lines and counts the rest; a small diff keeps Vim's diff mode",
    function()
      knobs().slice_ms = saved.slice_ms
      knobs().chunk_bytes = saved.chunk_bytes
      knobs().chunk_lines = saved.chunk_lines
      knobs().max_virt_lines = 3
      h.write(target, text(1000))
      local box = request_diff("big3", "just one line\n")
      -- Old side 1000 lines ≈ 55 KB: large.
      local v = view_of("big3")
      eq(true, v.large)
      local ns = vim.api.nvim_get_namespaces().claude_context_diff_inline
      local virt
      wait_for(function()
        for _, m in ipairs(vim.api.nvim_buf_get_extmarks(v.prop_buf, ns, 0, -1, { details = true })) do
          if m[4].virt_lines then
            virt = m[4].virt_lines
          end
        end
        return virt
      end, 5000, "the removed lines")
      eq(4, #virt)
      eq("- … 997 more removed lines", virt[4][1][1])
      vim.cmd("ClaudeContext reject")
      h.decided(box)
      eq("DIFF_REJECTED", box.result.content[1].text)
      cleanup()

      h.write(target, "one\ntwo\n")
      box = request_diff("small", "one\nTWO\n")
      v = view_of("small")
      eq(false, v.large)
      ok(vim.wo[v.orig_win].diff and vim.wo[v.prop_win].diff, "diff mode")
      eq("markdown", vim.bo[v.prop_buf].filetype)
      vim.cmd("ClaudeContext reject")
      h.decided(box)
      cleanup()
      knobs().max_virt_lines = saved.max_virt_lines
    end,
  },
  {
    "a diff cancelled while its buffers fill leaves nothing behind",
    function()
      knobs().slice_ms = 0
      knobs().chunk_bytes = 1024
      h.write(target, text(2000))
      local before = #vim.api.nvim_list_bufs()
      local box = request_diff("big4", text(2000, { [5] = "x" }))
      wait_for(function()
        local v = diff().views.big4
        return v and v.prop_buf and vim.api.nvim_buf_line_count(v.prop_buf) > 1
      end, 5000, "the fill to start")
      eq(1, diff().close_all())
      h.decided(box, 5000, "the answer")
      eq("DIFF_REJECTED", box.result.content[1].text)
      vim.wait(100)
      eq(before, #vim.api.nvim_list_bufs(), "no buffer left")
      eq(nil, diff().views.big4)
      knobs().slice_ms = saved.slice_ms
      knobs().chunk_bytes = saved.chunk_bytes
      cleanup()
    end,
  },
  {
    "slices.each: every item in order, at least one a turn, then done (at once for an empty list)",
    function()
      local slices = require("claude_context.ide.slices")
      local seen, finished = {}, false
      slices.each({ "a", "b", "c" }, 0, function(item, i)
        seen[#seen + 1] = item .. i
      end, function()
        finished = true
      end)
      -- A slice of 0 ms holds one item: the others come on later event-loop turns.
      eq({ "a1" }, seen)
      eq(false, finished)
      wait_for(function()
        return finished
      end, 5000, "the last item")
      eq({ "a1", "b2", "c3" }, seen)
      -- An unlimited slice runs them all in the call.
      seen, finished = {}, false
      slices.each({ "x", "y" }, math.huge, function(item)
        seen[#seen + 1] = item
      end, function()
        finished = true
      end)
      eq({ "x", "y" }, seen)
      eq(true, finished)
      local empty_done = false
      slices.each({}, 0, function() end, function()
        empty_done = true
      end)
      eq(true, empty_done)
    end,
  },
  {
    "openFile's text search reads a big buffer a block per slice and yields between slices",
    function()
      local slices = require("claude_context.ide.slices")
      local b = vim.api.nvim_create_buf(false, true)
      local t = {}
      for i = 1, 5000 do
        t[i] = "filler line " .. i
      end
      t[4000] = "here is the needle, and more"
      t[4001] = "second line of it"
      vim.api.nvim_buf_set_lines(b, 0, -1, false, t)
      local saved_block, saved_ms = slices.find_block, slices.find_slice_ms
      slices.find_block, slices.find_slice_ms = 100, 0
      local got, sync = nil, true
      slices.find_text(b, "needle, and more\nsecond", 1, 0, function(s, e)
        got = { s = s, e = e }
      end)
      sync = got ~= nil
      wait_for(function()
        return got
      end, 5000, "the search")
      slices.find_block, slices.find_slice_ms = saved_block, saved_ms
      eq(false, sync, "the search went on over later event-loop turns")
      eq({ 4000, 12 }, got.s)
      eq({ 4001, 6 }, got.e)
      -- From a position, and not found.
      local r
      slices.find_text(b, "filler line 1", 4990, 0, function(s)
        r = { s = s or false }
      end)
      wait_for(function()
        return r
      end)
      eq(false, r.s)
      vim.api.nvim_buf_delete(b, { force = true })

      -- Through openFile, on a file of 200,000 lines: the selection is where the text is.
      local big = dir .. "/long.md"
      local lines = {}
      for i = 1, 200000 do
        lines[i] = "row " .. i
      end
      lines[199990] = "the very end is here"
      h.write(big, table.concat(lines, "\n") .. "\n")
      local res =
        h.call("openFile", { filePath = big, startText = "very end", endText = "here", selectToEndOfLine = false })
      eq(false, res.isError, vim.inspect(res))
      -- Visual mode from "very end" to the end of "here" (the cursor at the end).
      eq("v", vim.api.nvim_get_mode().mode)
      eq({ 199990, 19 }, vim.api.nvim_win_get_cursor(0))
      eq({ 199990, 5 }, { vim.fn.line("v"), vim.fn.col("v") })
      vim.cmd("normal! \27")
      vim.cmd("silent! %bwipeout!")
    end,
  },
  {
    "a partial accept of an unedited proposal is composed by the bridge; edited, here",
    function()
      local old = text(3000)
      h.write(target, old)
      local new = text(3000, { [10] = "TEN", [2000] = "TWO THOUSAND" })
      local box = request_diff("part1", new)
      local v = view_of("part1")
      eq(true, v.large)
      vim.api.nvim_set_current_win(v.prop_win)
      vim.cmd("2000ClaudeContext accept")
      h.decided(box, 5000, "the answer")
      eq(text(3000, { [2000] = "TWO THOUSAND" }), box.result.content[2].text)
      eq({ taken = 1, total = 2 }, v.partial)
      cleanup()

      box = request_diff("part2", new)
      v = view_of("part2")
      vim.api.nvim_buf_set_lines(v.prop_buf, 0, 1, false, { "first line edited" })
      vim.api.nvim_set_current_win(v.prop_win)
      vim.cmd("10ClaudeContext accept")
      h.decided(box, 5000, "the answer")
      eq(text(3000, { [10] = "TEN" }), box.result.content[2].text, "the edit outside the range is not taken")
      cleanup()
    end,
  },
  {
    "finding a file's buffer among thousands resolves a few paths, not one per buffer; symlinks still match",
    function()
      local util = require("claude_context.ide.util")
      local real_dir = dir .. "/real"
      vim.fn.mkdir(real_dir, "p")
      h.write(real_dir .. "/same.txt", "x\n")
      vim.uv.fs_symlink(real_dir, dir .. "/link")
      local made = {}
      for i = 1, 3000 do
        local b = vim.fn.bufadd(dir .. "/many/f" .. i .. ".txt")
        made[#made + 1] = b
      end
      local target_buf = vim.fn.bufadd(real_dir .. "/same.txt")
      local uv = vim.uv
      local real_realpath, calls = uv.fs_realpath, 0
      uv.fs_realpath = function(...)
        calls = calls + 1
        return real_realpath(...)
      end
      local found = util.find_buf(dir .. "/link/same.txt")
      local exact = util.find_buf(real_dir .. "/same.txt")
      -- A file no buffer holds: Neovim's own lookup says so, and no buffer is asked from Lua.
      local get_name, names = vim.api.nvim_buf_get_name, 0
      vim.api.nvim_buf_get_name = function(...)
        names = names + 1
        return get_name(...)
      end
      local none = util.find_buf(dir .. "/link/other.txt")
      local none_missing = util.find_buf(dir .. "/many/not-there.txt")
      vim.api.nvim_buf_get_name = get_name
      uv.fs_realpath = real_realpath
      eq(0, names, "buffer names read from Lua for a file no buffer holds")
      eq(nil, none_missing)
      eq(target_buf, found, "the same file through a symlinked directory")
      eq(nil, none)
      eq(target_buf, exact)
      ok(calls <= 4, "resolved " .. calls .. " paths among 3,000 buffers")
      for _, b in ipairs(made) do
        vim.api.nvim_buf_delete(b, { force = true })
      end
      vim.api.nvim_buf_delete(target_buf, { force = true })
    end,
  },
  {
    "with the default pace, a large diff's fill yields to the event loop, and the view's set-up takes turns of its own",
    function()
      for k, val in pairs(saved) do
        knobs()[k] = val
      end
      local n = 40000
      h.write(target, text(n))
      local new = text(n, { [20000] = "CHANGED in the middle" })
      -- Sampled at every event-loop turn (a timer, as the fill's own pace): the proposal's line
      -- count while it fills.
      local partial, sampling = nil, true
      local function sample()
        local v = diff().views.big4
        if v and v.prop_buf and vim.api.nvim_buf_is_valid(v.prop_buf) and not v.prop_win then
          local c = vim.api.nvim_buf_line_count(v.prop_buf)
          if c > 1 and c < n then
            partial = c
          end
        end
        if sampling then
          vim.defer_fn(sample, 0)
        end
      end
      vim.defer_fn(sample, 0)
      -- The buffers' roles are set up in a turn of their own: a callback queued then runs
      -- before the tab and its windows are made.
      local view = require("claude_context.ide.diff.view")
      local set_up, between = view.set_up_buffers, nil
      view.set_up_buffers = function(v)
        set_up(v)
        vim.schedule(function()
          between = { tab = v.tab, win = v.prop_win }
        end)
      end
      local box = request_diff("big4", new)
      local ok_view = pcall(wait_for, function()
        local v = diff().views.big4
        return v and v.prop_win
      end, 20000, "the view")
      sampling = false
      view.set_up_buffers = set_up
      ok(ok_view, "the view came")
      ok(partial, "a callback queued while the proposal filled ran before the fill ended")
      eq({}, between, "nothing of the tab yet when the buffers were set up")
      local v = diff().views.big4
      eq(n, vim.api.nvim_buf_line_count(v.prop_buf))
      eq("CHANGED in the middle", vim.api.nvim_buf_get_lines(v.prop_buf, 19999, 20000, false)[1])
      cleanup()
      h.decided(box, 5000, "the answer")
    end,
  },
  {
    "a small inline view recomputes its diff after a change in Normal mode or on leaving Insert mode, not at each key typed",
    function()
      cc().setup({ diff = { layout = "inline", diffmode_max_bytes = 20000 } })
      h.write(target, "one\ntwo\n")
      local box = request_diff("inl-small", "one\nTWO\n")
      local v = view_of("inl-small")
      eq(false, v.large)
      local d = require("claude_context.ide.diff.inline")
      local real_hunks, calls = d.hunks, 0
      d.hunks = function(...)
        calls = calls + 1
        return real_hunks(...)
      end
      vim.api.nvim_exec_autocmds("TextChangedI", { buffer = v.prop_buf })
      eq(0, calls, "not at a key typed in Insert mode")
      vim.api.nvim_exec_autocmds("InsertLeave", { buffer = v.prop_buf })
      eq(1, calls, "on leaving Insert mode")
      vim.api.nvim_exec_autocmds("TextChanged", { buffer = v.prop_buf })
      eq(2, calls, "after a Normal-mode change")
      d.hunks = real_hunks
      vim.cmd("ClaudeContext reject")
      h.decided(box)
      cleanup()
      cc().setup({ diff = { diffmode_max_bytes = 20000 } })
    end,
  },
  {
    "accepted, a big open file's buffer is reloaded in slices when Claude Code writes it (not by Neovim in one go)",
    function()
      local reload = require("claude_context.ide.diff.reload")
      local min_lines = reload.min_lines
      reload.min_lines = 1000
      knobs().slice_ms = 0
      knobs().chunk_bytes = 4096
      local old = text(3000)
      h.write(target, old)
      vim.cmd.edit(target)
      local buf = vim.api.nvim_get_current_buf()
      local reads, partial = 0, nil
      vim.api.nvim_create_autocmd({ "BufReadPre", "BufReadPost" }, {
        buffer = buf,
        callback = function()
          reads = reads + 1
        end,
      })
      local new = text(2500, { [7] = "CHANGED seven" }) .. "an added last line"
      local box = request_diff("reload", new)
      local v = view_of("reload")
      diff().accept(v)
      h.decided(box, 10000, "the answer")
      -- Claude Code writes the file after FILE_SAVED (a moment later, as it does).
      vim.wait(100)
      h.write(target, new)
      -- The terminal's :checktime may notice it first (it runs whenever Claude's terminal prints).
      vim.cmd("checktime")
      local want = vim.split(new, "\n", { plain = true })
      wait_for(function()
        local n = vim.api.nvim_buf_line_count(buf)
        if n ~= 3000 and n ~= #want then
          partial = partial or n
        elseif vim.bo[buf].modified and not vim.bo[buf].modifiable then
          partial = partial or n
        end
        return not reload.running[buf] and vim.deep_equal(lines(buf), want)
      end, 10000, "the buffer reloaded")
      ok(partial, "the editor ran while the buffer was half reloaded")
      eq(0, reads, "not read again by Neovim")
      eq({ false, true, false }, { vim.bo[buf].modified, vim.bo[buf].modifiable, vim.bo[buf].endofline })
      -- Neovim knows the file's new time: no reload nor warning later.
      vim.cmd("checktime")
      eq(0, reads)
      eq(want, lines(buf))
      reload.min_lines = min_lines
      knobs().slice_ms = saved.slice_ms
      knobs().chunk_bytes = saved.chunk_bytes
      cleanup()
      vim.cmd("silent! %bwipeout!")
    end,
  },
  {
    "a big reload makes no Lua string per line: no piece allocates Lua memory near the chunk it puts",
    function()
      local reload = require("claude_context.ide.diff.reload")
      local slices = require("claude_context.ide.slices")
      local min_lines = reload.min_lines
      reload.min_lines = 1000
      knobs().chunk_bytes = 64 * 1024
      local old = text(30000)
      h.write(target, old)
      vim.cmd.edit(target)
      local buf = vim.api.nvim_get_current_buf()
      local new = text(25000, { [7] = "CHANGED seven" })
      local box = request_diff("reload-alloc", new)
      local v = view_of("reload-alloc")
      -- Each piece of the reload, with Lua's collector stopped: the Lua memory it allocated.
      local real, worst, pieces = slices.sliced, 0, 0
      slices.sliced = function(ms, piece, alive)
        return real(ms, function()
          local running = collectgarbage("isrunning")
          collectgarbage("stop")
          local before = collectgarbage("count")
          local more = piece()
          worst = math.max(worst, collectgarbage("count") - before)
          pieces = pieces + 1
          if running then
            collectgarbage("restart")
          end
          return more
        end, alive)
      end
      diff().accept(v)
      h.decided(box, 10000, "the answer")
      vim.wait(50)
      h.write(target, new)
      vim.cmd("checktime")
      wait_for(function()
        return not reload.running[buf] and vim.api.nvim_buf_line_count(buf) == 25000
      end, 20000, "the buffer reloaded")
      slices.sliced = real
      eq(vim.split(new, "\n", { plain = true, trimempty = true }), lines(buf))
      ok(pieces > 10, "in pieces")
      -- A 64 KiB chunk split in Lua allocates its text and a string per line: over 100 KiB.
      ok(worst < 16, ("a piece allocated %.1f KiB of Lua memory"):format(worst))
      reload.min_lines = min_lines
      knobs().chunk_bytes = saved.chunk_bytes
      cleanup()
      vim.cmd("silent! %bwipeout!")
    end,
  },
  {
    "a big reload of a file with CRLF line ends and a BOM: the lines without CR, the BOM not in the first line",
    function()
      local reload = require("claude_context.ide.diff.reload")
      local min_lines = reload.min_lines
      reload.min_lines = 1000
      knobs().chunk_bytes = 4096
      local function crlf(t)
        return (t:gsub("\n", "\r\n"))
      end
      h.write(target, "\239\187\191" .. crlf(text(3000)))
      vim.cmd.edit(target)
      local buf = vim.api.nvim_get_current_buf()
      eq({ "dos", true }, { vim.bo[buf].fileformat, vim.bo[buf].bomb })
      local new = text(2000, { [1] = "FIRST", [7] = "CHANGED seven" })
      local box = request_diff("reload-dos", new)
      local v = view_of("reload-dos")
      local pieces = reload.stats.native_pieces
      diff().accept(v)
      h.decided(box, 10000, "the answer")
      vim.wait(50)
      h.write(target, "\239\187\191" .. crlf(new))
      vim.cmd("checktime")
      wait_for(function()
        return not reload.running[buf] and vim.api.nvim_buf_line_count(buf) == 2000 and not vim.bo[buf].modified
      end, 20000, "the buffer reloaded")
      ok(reload.stats.native_pieces > pieces, "split by the native side")
      eq(vim.split(new, "\n", { plain = true, trimempty = true }), lines(buf))
      reload.min_lines = min_lines
      knobs().chunk_bytes = saved.chunk_bytes
      cleanup()
      vim.cmd("silent! %bwipeout!")
    end,
  },
  {
    "a big file open in a window: its proposal goes into the view a chunk per call, with input read between calls and between the view's steps",
    function()
      -- Issue 38: no call puts the whole file (or a side) at once, and the buffers' set-up and the
      -- tab's showing are separate event-loop turns (chained with vim.schedule they ran as one).
      knobs().slice_ms = 0
      knobs().chunk_bytes = 4096
      local n = 3000
      local changed = {}
      for i = 500, n, 1000 do
        changed[i] = ("line %d CHANGED by the proposal"):format(i)
      end
      h.write(target, text(n))
      vim.cmd.edit(target)
      local uv = vim.uv
      local polls = 0 -- event-loop turns that read input (libuv's check phase follows each poll)
      local check = uv.new_check()
      check:start(function()
        polls = polls + 1
      end)
      local native = require("claude_context.native").get()
      local view = require("claude_context.ide.diff.view")
      local fill, set_up, show = native.proposal_fill, view.set_up_buffers, view.show
      local calls, steps = {}, {}
      native.proposal_fill = function(id, side, buf, from, max_bytes)
        local put = fill(id, side, buf, from, max_bytes)
        calls[#calls + 1] = { side = side, max_bytes = max_bytes, put = put, polls = polls }
        return put
      end
      view.set_up_buffers = function(v)
        steps.set_up = polls
        return set_up(v)
      end
      view.show = function(v)
        steps.show = polls
        return show(v)
      end
      local restore = function()
        native.proposal_fill, view.set_up_buffers, view.show = fill, set_up, show
        check:stop()
        check:close()
      end
      local okc, err = pcall(function()
        local box = request_diff("chunks", text(n, changed))
        local v = view_of("chunks")
        eq(true, v.large)
        eq(n, vim.api.nvim_buf_line_count(v.prop_buf))
        local per_side = { old = 0, new = 0 }
        for i, c in ipairs(calls) do
          ok(c.max_bytes <= 4096, "a chunk at most chunk_bytes asked")
          ok((c.put or 0) <= 4096 / 50, ("call %d put %s lines: more than a chunk"):format(i, tostring(c.put)))
          ok(i == 1 or c.polls > calls[i - 1].polls, ("input read between calls %d and %d"):format(i - 1, i))
          per_side[c.side] = per_side[c.side] + 1
        end
        -- ~57 bytes a line: a side is ~170 KB, over 40 chunks of 4 KiB.
        ok(per_side.old >= 40 and per_side.new >= 40, vim.inspect(per_side))
        ok(
          steps.set_up and steps.show and steps.show > steps.set_up,
          "input read between the buffers' set-up and the view's showing"
        )
        vim.cmd("ClaudeContext reject")
        h.decided(box)
      end)
      restore()
      knobs().slice_ms = saved.slice_ms
      knobs().chunk_bytes = saved.chunk_bytes
      cleanup()
      vim.cmd("silent! %bwipeout!")
      assert(okc, err)
    end,
  },
  {
    "a direct openDiff (no bridge) puts its lines chunk_lines at a time",
    function()
      knobs().slice_ms = 0
      knobs().chunk_lines = 100
      h.write(target, text(1000))
      local set_lines = vim.api.nvim_buf_set_lines
      local sizes = {}
      vim.api.nvim_buf_set_lines = function(buf, s, e, strict, repl)
        if vim.b[buf].claude_context_diff or vim.api.nvim_buf_get_name(buf):find("^claude%-context://") then
          sizes[#sizes + 1] = #repl
        end
        return set_lines(buf, s, e, strict, repl)
      end
      local okc, err = pcall(function()
        local box = {}
        diff().open({
          old_file_path = target,
          new_file_path = target,
          new_file_contents = text(1000, { [7] = "x" }),
          tab_name = "direct",
        }, function(r, e)
          box.result, box.err = r or {}, e
        end)
        local v = view_of("direct")
        eq(1000, vim.api.nvim_buf_line_count(v.prop_buf))
        ok(#sizes >= 20, ("%d calls"):format(#sizes))
        for _, k in ipairs(sizes) do
          ok(k <= 100, ("a call put %d lines"):format(k))
        end
        vim.cmd("ClaudeContext reject")
        h.decided(box)
      end)
      vim.api.nvim_buf_set_lines = set_lines
      knobs().slice_ms = saved.slice_ms
      knobs().chunk_lines = saved.chunk_lines
      cleanup()
      assert(okc, err)
    end,
  },
}
