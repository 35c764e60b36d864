-- The editor snapshot: the read-only IDE tools answer from the bridge's mirror of the
-- editor state, and the mirror follows every change it mirrors — a buffer added, modified,
-- written, renamed, deleted and wiped; diagnostics set and cleared; a diff opened and closed;
-- the latest selection. The Lua handlers of those tools are replaced by ones that fail, so any
-- answer that needed the main thread would show up as an error.
local h = require("helpers")
local eq, ok, wait_for = h.eq, h.ok, h.wait_for
local cc = h.cc

h.record_notify()

local ws = h.load("wsclient")

local READ_ONLY = { "getOpenEditors", "getDiagnostics", "checkDocumentDirty", "getLatestSelection", "closeAllDiffTabs" }
local real = {}

---The Lua handlers of the read-only tools fail: an answer must come from the snapshot.
local function forbid_main_thread()
  local rpc = require("claude_context.rpc")
  for _, t in ipairs(READ_ONLY) do
    real[t] = real[t] or rpc.handlers[t]
    rpc.handlers[t] = function(_, respond)
      respond(nil, "MAIN THREAD USED for " .. t)
    end
  end
end

local function json_of(name, args)
  local r = h.call(name, args)
  eq(false, r.isError, name .. " failed: " .. vim.inspect(r))
  return vim.json.decode(r.content[1].text, { luanil = { object = true, array = true } })
end

local function tabs()
  local by = {}
  for _, t in ipairs(json_of("getOpenEditors").tabs) do
    by[t.fileName] = t
  end
  return by
end

local function dirty(path)
  return json_of("checkDocumentDirty", { filePath = path })
end

local dir

return {
  {
    "setup: the snapshot is live and the Lua handlers are out of the way",
    function()
      cc().setup({})
      ok(cc().status(), "bridge running")
      dir = h.tmpdir()
      forbid_main_thread()
      eq({}, json_of("getDiagnostics"))
      eq({ "CLOSED_0_DIFF_TABS" }, { h.call("closeAllDiffTabs").content[1].text })
    end,
  },
  {
    "a buffer added, modified, written: open editors and dirty flags follow",
    function()
      local a = dir .. "/a.lua"
      h.write(a, "local x = 1\n")
      vim.cmd.edit(a)
      local t = tabs()[a]
      ok(t, "a.lua is listed")
      eq(true, t.isActive)
      eq("lua", t.languageId)
      eq(1, t.lineCount)
      eq(false, dirty(a).isDirty)
      -- Changed through the API (no TextChanged / BufModifiedSet until the main loop runs).
      vim.api.nvim_buf_set_lines(0, 0, 0, false, { "-- one", "-- two" })
      eq(true, dirty(a).isDirty)
      eq(3, tabs()[a].lineCount)
      eq(true, tabs()[a].isDirty)
      vim.cmd("silent write")
      eq(false, dirty(a).isDirty)
      -- A second file becomes the active one.
      local b = dir .. "/b.txt"
      h.write(b, "b\n")
      vim.cmd.edit(b)
      eq(false, tabs()[a].isActive)
      eq(true, tabs()[b].isActive)
    end,
  },
  {
    "a buffer renamed, deleted, wiped out",
    function()
      local b, c = dir .. "/b.txt", dir .. "/c.txt"
      vim.cmd.edit(b)
      vim.cmd("silent saveas " .. vim.fn.fnameescape(c))
      -- :saveas keeps the old name as an alternate buffer; :file renames in place.
      local d = dir .. "/d.txt"
      vim.cmd("silent file " .. vim.fn.fnameescape(d))
      local t = tabs()
      ok(t[d], "the new name is listed")
      ok(not t[c], "the old name is gone")
      eq(false, dirty(c).success)
      eq(true, dirty(d).success)
      vim.cmd("bdelete! " .. vim.fn.bufnr(d))
      ok(not tabs()[d], "a deleted buffer is no longer listed")
      eq("Document not open: " .. d, dirty(d).message)
      local a = dir .. "/a.lua"
      local nr = vim.fn.bufnr(a)
      vim.cmd.edit(a)
      vim.cmd.enew()
      vim.cmd("bwipeout! " .. nr)
      ok(not tabs()[a], "a wiped buffer is gone")
      eq(false, dirty(a).success)
    end,
  },
  {
    "diagnostics set and cleared; columns in UTF-16 on non-ASCII lines",
    function()
      local e = dir .. "/e.txt"
      h.write(e, "héllo wörld\nplain\n")
      vim.cmd.edit(e)
      local ns = vim.api.nvim_create_namespace("snapshot_spec")
      vim.diagnostic.set(ns, 0, {
        { lnum = 0, col = 7, end_col = 13, message = "wörld", severity = vim.diagnostic.severity.ERROR },
        { lnum = 1, col = 0, end_col = 5, message = "plain", severity = vim.diagnostic.severity.HINT, code = 7 },
      })
      local all = json_of("getDiagnostics")
      eq(1, #all)
      eq("file://" .. e, all[1].uri)
      local d = all[1].diagnostics
      eq({ start = { line = 0, character = 6 }, ["end"] = { line = 0, character = 11 } }, d[1].range)
      eq("Error", d[1].severity)
      eq({ start = { line = 1, character = 0 }, ["end"] = { line = 1, character = 5 } }, d[2].range)
      eq(7, d[2].code)
      eq(2, #json_of("getDiagnostics", { uri = "file://" .. e })[1].diagnostics)
      eq(2, #json_of("getDiagnostics", { uri = vim.uri_from_fname(e) })[1].diagnostics)
      eq({}, json_of("getDiagnostics", { uri = "file://" .. dir .. "/nope" }))
      vim.diagnostic.reset(ns, 0)
      eq({}, json_of("getDiagnostics"))
      eq({ { uri = "file://" .. e, diagnostics = {} } }, json_of("getDiagnostics", { uri = "file://" .. e }))
    end,
  },
  {
    "a diff opened and closed: closeAllDiffTabs asks the editor only while one is open",
    function()
      local f = dir .. "/f.txt"
      h.write(f, "old\n")
      local box = h.request_diff(f, "snap", "new\n")
      local diff = require("claude_context.ide.diff")
      h.diff_view("snap", 5000)
      -- One is open: the snapshot does not answer; the editor's handler does (here: fails).
      local r = h.call("closeAllDiffTabs")
      eq(true, r.isError)
      ok(r.content[1].text:find("MAIN THREAD USED", 1, true), vim.inspect(r))
      require("claude_context.rpc").handlers.closeAllDiffTabs = real.closeAllDiffTabs
      eq("CLOSED_1_DIFF_TABS", h.call("closeAllDiffTabs").content[1].text)
      h.decided(box, 5000, "the rejection")
      wait_for(function()
        return next(diff.views) == nil
      end, 5000, "the view to close")
      forbid_main_thread()
      eq("CLOSED_0_DIFF_TABS", h.call("closeAllDiffTabs").content[1].text)
    end,
  },
  {
    "a diff the person closes: the snapshot follows, closeAllDiffTabs answers without the editor",
    function()
      local f = dir .. "/f2.txt"
      h.write(f, "old\n")
      require("claude_context.rpc").handlers.closeAllDiffTabs = real.closeAllDiffTabs
      local box = h.request_diff(f, "snap2", "new\n")
      local diff = require("claude_context.ide.diff")
      h.diff_view("snap2", 5000)
      -- Rejected by the person (not through a tool): the view goes, the snapshot says so.
      vim.cmd("ClaudeContext reject")
      h.decided(box, 5000, "the rejection")
      ok(vim.inspect(box.result):find("DIFF_REJECTED", 1, true), vim.inspect(box.result))
      wait_for(function()
        return next(diff.views) == nil
      end, 5000, "the view to close")
      forbid_main_thread()
      wait_for(function()
        return h.call("closeAllDiffTabs").content[1].text == "CLOSED_0_DIFF_TABS"
      end, 5000, "closeAllDiffTabs answered from the snapshot")
    end,
  },
  {
    "the latest selection, sent once it settles",
    function()
      local g = dir .. "/g.txt"
      h.write(g, "abc\ndef\n")
      vim.cmd.edit(g)
      vim.api.nvim_win_set_cursor(0, { 2, 2 })
      require("claude_context.ide.selection").flush()
      local s = json_of("getLatestSelection")
      eq(true, s.success)
      eq(g, s.filePath)
      eq({ line = 1, character = 2 }, s.selection.start)
    end,
  },
  {
    "a settled selection is read once: flushing it again reads nothing",
    function()
      local big = dir .. "/big.txt"
      local lines = {}
      for i = 1, 2000 do
        lines[i] = "line " .. i
      end
      h.write(big, table.concat(lines, "\n") .. "\n")
      vim.cmd.edit(big)
      local util = require("claude_context.ide.util")
      local sel = require("claude_context.ide.selection")
      local reads, orig = 0, util.region
      util.region = function(...)
        reads = reads + 1
        return orig(...)
      end
      local okk, e = pcall(function()
        vim.cmd("normal! ggVG")
        sel.flush()
        eq(1, reads)
        sel.flush()
        sel.flush()
        eq(1, reads, "the same selection is not read again")
        local s = json_of("getLatestSelection")
        eq({ line = 1999, character = 9 }, s.selection["end"])
        eq(2000, #vim.split(s.text, "\n"))
        vim.cmd("normal! k")
        sel.flush()
        eq(2, reads, "a changed selection is read")
        eq(1998, json_of("getLatestSelection").selection["end"].line)
      end)
      util.region = orig
      vim.cmd("normal! \27")
      if not okk then
        error(e, 0)
      end
    end,
  },
  {
    "a big whole-line selection is read a slice per turn of the event loop",
    function()
      local big = dir .. "/big3.txt"
      local lines = {}
      for i = 1, 23000 do
        lines[i] = "ligne numéro " .. i
      end
      h.write(big, table.concat(lines, "\n") .. "\n")
      vim.cmd.edit(big)
      local sel = require("claude_context.ide.selection")
      local most, orig = 0, vim.api.nvim_buf_get_lines
      vim.api.nvim_buf_get_lines = function(b, s, e, strict)
        local n = (e < 0 and vim.api.nvim_buf_line_count(b) + e + 1 or e) - s
        most = math.max(most, n)
        return orig(b, s, e, strict)
      end
      local okk, err = pcall(function()
        vim.cmd("normal! ggVG")
        local before = sel.latest()
        sel.flush()
        ok(sel.latest() == before, "flush returned before reading it all")
        wait_for(function()
          return sel.last_big ~= nil and sel.last_big.e == 23000
        end, 10000, "the whole selection")
      end)
      vim.api.nvim_buf_get_lines = orig
      vim.cmd("normal! \27")
      if not okk then
        error(err, 0)
      end
      ok(most <= sel.slice_lines, "at most a slice per read: " .. most)
      local s = json_of("getLatestSelection")
      eq(23000, #vim.split(s.text, "\n"))
      eq("ligne numéro 23000", vim.split(s.text, "\n")[23000])
      eq({ line = 22999, character = 18 }, s.selection["end"])
    end,
  },
  {
    "a big selection is never encoded in one piece, and leaving Visual mode reads it in slices",
    function()
      local big = dir .. "/big4.txt"
      local lines = {}
      for i = 1, 12000 do
        lines[i] = "line " .. i .. ' with "quotes" and \\ and é'
      end
      h.write(big, table.concat(lines, "\n") .. "\n")
      vim.cmd.edit(big)
      local util = require("claude_context.ide.util")
      local sel = require("claude_context.ide.selection")
      sel.reset()
      local most, regions, enc, region = 0, 0, vim.json.encode, util.region
      local joined, concat, tracking = 0, table.concat, true
      table.concat = function(...)
        local r = concat(...)
        if tracking then
          joined = math.max(joined, #r)
        end
        return r
      end
      vim.json.encode = function(v, ...)
        if type(v) == "string" then
          most = math.max(most, #v)
        elseif type(v) == "table" and type(v.text) == "string" then
          most = math.max(most, #v.text)
        end
        return enc(v, ...)
      end
      util.region = function(...)
        regions = regions + 1
        return region(...)
      end
      local reads = sel.sliced_reads or 0
      local okk, err = pcall(function()
        -- Selected and left at once (before the debounce): the selection it had is read.
        vim.cmd("normal! ggVG")
        vim.cmd("normal! \27")
        wait_for(function()
          tracking = false -- (latest() joins the text for Lua callers)
          local l = sel.latest()
          tracking = true
          return l and l.filePath == big and not l.selection.isEmpty and l.selection["end"].line == 11999
        end, 10000, "the selection read")
        eq(0, regions, "never read in one piece")
        eq(reads + 1, sel.sliced_reads or 0, "read in slices once")
        -- The same selection again, settled then left: not read again.
        vim.cmd("normal! gv")
        sel.flush()
        vim.cmd("normal! \27")
        eq(reads + 1, sel.sliced_reads or 0, "the same lines are not read again")
      end)
      vim.json.encode, util.region, table.concat = enc, region, concat
      if not okk then
        error(err, 0)
      end
      ok(most < 12000 * 20, "no JSON encoding of the whole text: largest " .. most)
      -- Nor a join of it: the bridge joins the slices its snapshot holds.
      ok(joined < 12000 * 20, "no join of the whole text in one piece: largest " .. joined)
      local s = json_of("getLatestSelection")
      local got = vim.split(s.text, "\n")
      eq(12000, #got)
      eq(lines[1], got[1])
      eq(lines[12000], got[12000])
      eq({ line = 11999, character = #lines[12000] - 1 }, s.selection["end"])
      eq(big, s.filePath)
    end,
  },
  {
    "a big selection with a NUL byte in a line keeps it (read exactly, not by join())",
    function()
      local lines = {}
      for i = 1, 3000 do
        lines[i] = "l" .. i
      end
      vim.cmd.enew()
      vim.api.nvim_buf_set_lines(0, 0, -1, false, lines)
      vim.api.nvim_buf_set_lines(0, 9, 10, false, { "a\0b" })
      local nul = dir .. "/nul.bin"
      vim.cmd("silent write " .. vim.fn.fnameescape(nul))
      local sel = require("claude_context.ide.selection")
      ok(3000 > sel.slice_lines, "bigger than a slice")
      vim.cmd("normal! ggVG")
      vim.cmd("normal! \27")
      wait_for(function()
        local l = sel.latest()
        return l and l.filePath == nul and not l.selection.isEmpty and l.selection["end"].line == 2999
      end, 10000, "the selection read")
      local got = vim.split(json_of("getLatestSelection").text, "\n")
      eq(3000, #got)
      eq("a\0b", got[10])
      eq("l3000", got[3000])
    end,
  },
  {
    "a big selection read in slices leaves no copy of its text in the editor's Lua heap",
    function()
      local lines = {}
      for i = 1, 100000 do
        lines[i] = ("line %06d of a selection that is only the bridge's to keep"):format(i)
      end
      vim.cmd.enew()
      vim.api.nvim_buf_set_lines(0, 0, -1, false, lines)
      local f = dir .. "/held.txt"
      vim.cmd("silent write " .. vim.fn.fnameescape(f))
      lines = nil
      local size = #table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
      local sel = require("claude_context.ide.selection")
      collectgarbage("collect")
      local before = collectgarbage("count") * 1024
      -- Read while Visual mode is on (as the slice test does): once out of it, the debounced
      -- cursor update could win over a long read (the newest state is the cursor's).
      vim.cmd("normal! ggVG")
      sel.flush()
      wait_for(function()
        return sel.last_big ~= nil and sel.last_big.e == 100000
      end, 20000, "the selection read")
      collectgarbage("collect")
      local held = collectgarbage("count") * 1024 - before
      vim.cmd("normal! \27")
      ok(held < size / 10, ("the editor holds %d bytes after reading a %d-byte selection"):format(held, size))
      -- The Lua-side answer (used while the snapshot is not live) still has the text.
      local got = sel.latest()
      eq(size, #got.text)
      ok(vim.endswith(got.text, "\nline 100000 of a selection that is only the bridge's to keep"), "the last line")
    end,
  },
  {
    "a big selection_changed is sent from the bridge's threads, in order with the next ones",
    function()
      local C = ws.connect()
      C:handshake(true)
      local big = dir .. "/big2.txt"
      local lines = {}
      for i = 1, 20000 do
        lines[i] = "a fairly long line of text number " .. i
      end
      h.write(big, table.concat(lines, "\n") .. "\n")
      vim.cmd.edit(big)
      local sel = require("claude_context.ide.selection")
      local before = #C:notifications("selection_changed")
      -- The editor never hands the whole text over: the bridge encodes it from its snapshot.
      local native = require("claude_context.native").load()
      local real_broadcast, biggest = native.broadcast, 0
      native.broadcast = function(method, params, ...)
        biggest = math.max(biggest, #params)
        return real_broadcast(method, params, ...)
      end
      vim.cmd("normal! ggVG")
      sel.flush()
      vim.cmd("normal! \27")
      -- Read a slice per turn: published once read (a newer selection before that would win).
      wait_for(function()
        local l = sel.latest()
        return l and l.filePath == big and not l.selection.isEmpty and l.selection["end"].line == 19999
      end, 10000, "the big selection read")
      vim.api.nvim_win_set_cursor(0, { 3, 4 })
      sel.flush()
      -- The big one arrives, and the small (newer) one after it: the last word is the newest.
      -- Matched by what they are, not counted: ide_connected's re-send of "the latest selection"
      -- is encoded when its turn in the queue comes, so it may be either (or the small one early).
      local got, big_at, small_after
      local done = vim.wait(10000, function()
        got, big_at, small_after = C:notifications("selection_changed"), nil, nil
        for i, m in ipairs(got) do
          local st = m.params.selection and m.params.selection.start
          if i > before and m.params.filePath == big then
            if #m.params.text > 64 * 1024 then
              big_at, small_after = i, nil
            elseif big_at and st and st.line == 2 and st.character == 4 then
              small_after = i
            end
          end
        end
        return small_after ~= nil and small_after == #got
      end, 10)
      local seq = {}
      for i, m in ipairs(got) do
        local st = m.params.selection and m.params.selection.start or {}
        seq[#seq + 1] = ("%d: %s, %d bytes, from %s:%s"):format(
          i,
          vim.fn.fnamemodify(m.params.filePath or "", ":t"),
          #m.params.text,
          st.line,
          st.character
        )
      end
      ok(done, "the big selection, then the small one last; got: " .. table.concat(seq, " | "))
      native.broadcast = real_broadcast
      ok(biggest < 64 * 1024, "no big notification went through native.broadcast: " .. biggest)
      eq(20000, #vim.split(got[big_at].params.text, "\n"))
      eq("a fairly long line of text number 20000", vim.split(got[big_at].params.text, "\n")[20000])
      eq({ line = 19999, character = 39 }, got[big_at].params.selection["end"])
      C:close()
    end,
  },
  {
    "a restarted bridge starts from a full scan",
    function()
      cc().stop({ silent = true })
      cc().start({ silent = true })
      forbid_main_thread()
      local g = dir .. "/g.txt"
      ok(tabs()[g], "the open buffer is in the new bridge's snapshot")
      eq(false, dirty(g).isDirty)
    end,
  },
}
