-- The Claude Code IDE tools in a real Neovim, called through the bridge (the same dispatch a
-- WebSocket client reaches): selections, open editors, diagnostics, dirty/save, openFile,
-- openDiff accept/reject flows (:w, :q, :ClaudeContext accept/reject), new files, unsaved
-- buffers, close_tab, closeAllDiffTabs leaving a foreign diff alone.
local h = require("helpers")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local cc = h.cc
local diff = h.diff

-- Messages are recorded, not shown (an error message would abort a headless script).
local messages = h.record_notify()

local function texts(r)
  return vim.tbl_map(function(c)
    return c.text
  end, r.content or {})
end

---Calls a tool; returns the decoded JSON of its (single) text content.
local function json_of(name, args)
  local r = h.call(name, args)
  eq(false, r.isError, name .. " failed: " .. vim.inspect(r))
  eq(1, #r.content, name .. " answers one text block")
  return vim.json.decode(r.content[1].text, { luanil = { object = true, array = true } })
end

local read, write = h.read, h.write

---Starts openDiff without waiting for the decision; returns a box that gets `.result`.
local function open_diff(path, contents, name)
  local box = h.request_diff(path, name, contents)
  local ok_, v = pcall(h.diff_view, name, 5000)
  if not ok_ then
    error(("%s (the call answered %s)"):format(v, vim.inspect(box.result)), 2)
  end
  box.view = v
  return box
end

local decided = h.decided

local function buf_lines(b)
  return vim.api.nvim_buf_get_lines(b, 0, -1, false)
end

local dir

return {
  {
    "setup",
    function()
      cc().setup({})
      ok(cc().status(), "bridge running")
      dir = h.tmpdir()
      vim.cmd.cd(dir)
      -- Each IDE tool is served, and its handler is its module under claude_context.ide.
      local n = 0
      for t, where in pairs(require("claude_context.rpc").methods) do
        if vim.startswith(where[1], "claude_context.ide.") then
          n = n + 1
          ok(vim.tbl_contains(cc().status().tools, t), t .. " is served")
          eq("function", type(require(where[1])), t .. "'s handler")
        end
      end
      eq(10, n)
    end,
  },
  {
    "without any file window: getCurrentSelection says No active editor found, getLatestSelection No selection available",
    function()
      eq({ success = false, message = "No active editor found" }, json_of("getCurrentSelection"))
      eq({ success = false, message = "No selection available" }, json_of("getLatestSelection"))
    end,
  },
  {
    "getCurrentSelection: the cursor, then a Visual selection in UTF-16 characters",
    function()
      local f = dir .. "/sel.txt"
      write(f, "héllo wörld\nsecond line\n")
      vim.cmd.edit(f)
      vim.api.nvim_win_set_cursor(0, { 1, 7 }) -- byte 7 = "w" (é is two bytes)
      local s = json_of("getCurrentSelection")
      eq({
        success = true,
        text = "",
        filePath = f,
        fileUrl = vim.uri_from_fname(f),
        selection = { start = { line = 0, character = 6 }, ["end"] = { line = 0, character = 6 }, isEmpty = true },
      }, s)
      vim.api.nvim_win_set_cursor(0, { 1, 1 })
      vim.cmd("normal! v")
      vim.api.nvim_win_set_cursor(0, { 2, 2 })
      s = json_of("getCurrentSelection")
      vim.cmd("normal! \27")
      eq("éllo wörld\nsec", s.text)
      eq({ start = { line = 0, character = 1 }, ["end"] = { line = 1, character = 3 }, isEmpty = false }, s.selection)
      -- Linewise: whole lines.
      vim.cmd("normal! ggVj")
      s = json_of("getCurrentSelection")
      vim.cmd("normal! \27")
      eq("héllo wörld\nsecond line", s.text)
      eq({ line = 0, character = 0 }, s.selection.start)
      eq({ line = 1, character = 11 }, s.selection["end"])
    end,
  },
  {
    "getCurrentSelection from a terminal window reports the file window used last",
    function()
      local f = vim.api.nvim_buf_get_name(0)
      vim.api.nvim_win_set_cursor(0, { 2, 0 })
      vim.cmd("botright split")
      vim.cmd.terminal()
      eq("terminal", vim.bo.buftype)
      local s = json_of("getCurrentSelection")
      eq(f, s.filePath)
      eq({ line = 1, character = 0 }, s.selection.start)
      vim.cmd("bwipeout!")
    end,
  },
  {
    "getOpenEditors: listed file buffers, active and dirty flags; no terminals or scratch",
    function()
      local a, b = dir .. "/a.lua", dir .. "/b b.txt"
      write(a, "local x = 1\n")
      write(b, "one\ntwo\n")
      vim.cmd.edit(vim.fn.fnameescape(b))
      vim.cmd.edit(a)
      vim.api.nvim_buf_set_lines(0, 0, 0, false, { "-- new" })
      vim.api.nvim_create_buf(false, true) -- scratch: not listed
      local tabs = json_of("getOpenEditors").tabs
      local by = {}
      for _, t in ipairs(tabs) do
        by[t.fileName] = t
      end
      eq({
        uri = vim.uri_from_fname(a),
        isActive = true,
        label = "a.lua",
        languageId = "lua",
        isDirty = true,
        isUntitled = false,
        fileName = a,
        lineCount = 2,
      }, by[a])
      eq(false, by[b].isActive)
      eq(false, by[b].isDirty)
      eq("file://" .. dir .. "/b%20b.txt", by[b].uri)
      eq("b b.txt", by[b].label)
      for _, t in ipairs(tabs) do
        ok(t.fileName:sub(1, 1) == "/", "only files: " .. t.fileName)
      end
      vim.cmd("silent write")
    end,
  },
  {
    "getDiagnostics: every buffer's, or one file's by raw or encoded URI; severities and UTF-16 ranges",
    function()
      local a, b = dir .. "/a.lua", dir .. "/b b.txt"
      local ba, bb = vim.fn.bufnr(a), vim.fn.bufadd(b)
      vim.fn.bufload(bb)
      vim.api.nvim_buf_set_lines(bb, 0, -1, false, { "ünïcode here", "two" })
      local ns = vim.api.nvim_create_namespace("ide-spec")
      vim.diagnostic.set(ns, bb, {
        { lnum = 1, col = 0, end_lnum = 1, end_col = 3, message = "second", severity = vim.diagnostic.severity.HINT },
        {
          lnum = 0,
          col = 2,
          end_lnum = 0,
          end_col = 5,
          message = "first",
          severity = vim.diagnostic.severity.ERROR,
          source = "lint",
          code = "E1",
        },
      })
      vim.diagnostic.set(ns, ba, {
        { lnum = 0, col = 0, message = "warn", severity = vim.diagnostic.severity.WARN, code = 7 },
        { lnum = 1, col = 6, end_col = 7, message = "info", severity = vim.diagnostic.severity.INFO },
      })
      local all = json_of("getDiagnostics")
      eq(2, #all)
      eq({ "file://" .. a, "file://" .. b }, { all[1].uri, all[2].uri })
      eq({
        {
          message = "warn",
          severity = "Warning",
          code = 7,
          range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 0 } },
        },
        {
          message = "info",
          severity = "Info",
          range = { start = { line = 1, character = 6 }, ["end"] = { line = 1, character = 7 } },
        },
      }, all[1].diagnostics)
      -- "ünïcode": ü and ï are two bytes each, one UTF-16 unit.
      eq({
        {
          message = "first",
          severity = "Error",
          source = "lint",
          code = "E1",
          range = { start = { line = 0, character = 1 }, ["end"] = { line = 0, character = 3 } },
        },
        {
          message = "second",
          severity = "Hint",
          range = { start = { line = 1, character = 0 }, ["end"] = { line = 1, character = 3 } },
        },
      }, all[2].diagnostics)
      -- Claude Code asks with "file://" .. path as is, and compares the answer literally.
      local raw = json_of("getDiagnostics", { uri = "file://" .. b })
      eq(1, #raw)
      eq("file://" .. b, raw[1].uri)
      eq(all[2].diagnostics, raw[1].diagnostics)
      local enc = json_of("getDiagnostics", { uri = vim.uri_from_fname(b) })
      eq(vim.uri_from_fname(b), enc[1].uri)
      eq(all[2].diagnostics, enc[1].diagnostics)
      -- A loaded file without diagnostics; a file not open at all.
      local c = dir .. "/clean.txt"
      write(c, "ok\n")
      vim.fn.bufload(vim.fn.bufadd(c))
      eq({ { uri = "file://" .. c, diagnostics = {} } }, json_of("getDiagnostics", { uri = "file://" .. c }))
      eq({}, json_of("getDiagnostics", { uri = "file://" .. dir .. "/nope.txt" }))
      local bad = cc().call_tool_sync("getDiagnostics", { uri = 5 })
      eq(nil, bad, "a non-string uri is refused")
      vim.diagnostic.reset(ns)
      vim.api.nvim_buf_delete(bb, { force = true })
    end,
  },
  {
    "checkDocumentDirty and saveDocument",
    function()
      local a = dir .. "/a.lua"
      vim.cmd.edit(a)
      eq(
        { success = true, filePath = a, isDirty = false, isUntitled = false },
        json_of("checkDocumentDirty", { filePath = a })
      )
      vim.api.nvim_buf_set_lines(0, 0, 0, false, { "-- more" })
      eq(true, json_of("checkDocumentDirty", { filePath = "a.lua" }).isDirty, "relative to the cwd")
      eq(
        { success = true, filePath = a, saved = true, message = "Document saved" },
        json_of("saveDocument", { filePath = a })
      )
      eq(false, vim.bo.modified)
      eq("-- more\n-- new\nlocal x = 1\n", read(a))
      eq(
        { success = true, filePath = a, saved = false, message = "Document had no unsaved changes" },
        json_of("saveDocument", { filePath = a })
      )
      local n = dir .. "/never-opened.txt"
      eq({ success = false, message = "Document not open: " .. n }, json_of("checkDocumentDirty", { filePath = n }))
      eq(
        { success = false, filePath = n, saved = false, message = "Document not open: " .. n },
        json_of("saveDocument", { filePath = n })
      )
    end,
  },
  {
    "openFile: shows the file and selects lines or text; makeFrontmost=false only loads it",
    function()
      local f = dir .. "/open.txt"
      write(f, "first line\nsecond line\nthird line\nfourth\n")
      vim.cmd.enew()
      local r = h.call("openFile", { filePath = f, startLine = 2, endLine = 3 })
      eq({ "Opened file: " .. f }, texts(r))
      eq(f, vim.api.nvim_buf_get_name(0))
      eq("v", vim.api.nvim_get_mode().mode)
      local s = json_of("getCurrentSelection")
      eq("second line\nthird line", s.text)
      vim.cmd("normal! \27")

      r = h.call("openFile", { filePath = f, startText = "cond", endText = "thi", selectToEndOfLine = false })
      s = json_of("getCurrentSelection")
      vim.cmd("normal! \27")
      eq("cond line\nthi", s.text)
      r = h.call("openFile", { filePath = f, startText = "ird", selectToEndOfLine = true })
      s = json_of("getCurrentSelection")
      vim.cmd("normal! \27")
      eq("ird line", s.text)

      -- In the background: nothing on screen changes.
      local g = dir .. "/background.rs"
      write(g, "fn main() {}\n\n")
      local win, buf = vim.api.nvim_get_current_win(), vim.api.nvim_get_current_buf()
      local j = json_of("openFile", {
        filePath = g,
        preview = false,
        startText = "",
        endText = "",
        selectToEndOfLine = false,
        makeFrontmost = false,
      })
      eq({ success = true, filePath = g, languageId = "rust", lineCount = 2 }, j)
      eq(win, vim.api.nvim_get_current_win())
      eq(buf, vim.api.nvim_get_current_buf())
      local gb = vim.fn.bufnr(g)
      ok(gb > 0 and vim.api.nvim_buf_is_loaded(gb) and vim.bo[gb].buflisted, "loaded and listed")

      r = cc().call_tool_sync("openFile", { filePath = dir .. "/missing.txt" })
      eq(true, r.isError)
      contains(r.content[1].text, "File not found: " .. dir .. "/missing.txt")
    end,
  },
  {
    "openFile: a FIFO at the path (swapped in after a stat said a regular file) never holds the editor; a regular file opens as read by :edit",
    function()
      local fifo = dir .. "/open-pipe"
      vim.cmd.enew()
      local home = vim.api.nvim_get_current_buf()
      local held, called, r = h.with_swapped_fifo(fifo, function()
        return cc().call_tool_sync("openFile", { filePath = fifo, startLine = 1 })
      end)
      assert(called, r)
      ok(not held, "the FIFO was opened and waited on")
      eq(true, r.isError)
      contains(r.content[1].text, "openFile: " .. fifo .. " is a FIFO (named pipe), not a regular file: refused")
      eq(home, vim.api.nvim_get_current_buf(), "nothing else shown")
      -- A regular file: listed, at its selection, not modified, its filetype detected by its
      -- name, written back as it was.
      local f = dir .. "/opened.lua"
      write(f, "local a = 1\r\nlocal b = 2\r\nreturn a + b\r\n")
      eq(-1, vim.fn.bufnr(f), "no buffer has it yet")
      eq({ "Opened file: " .. f }, texts(h.call("openFile", { filePath = f, startLine = 2, endLine = 3 })))
      eq("local b = 2\nreturn a + b", json_of("getCurrentSelection").text)
      vim.cmd("normal! \27")
      eq(f, vim.api.nvim_buf_get_name(0))
      eq(false, vim.bo.modified)
      eq(true, vim.bo.buflisted)
      eq("", vim.bo.buftype)
      eq("lua", vim.bo.filetype)
      eq("dos", vim.bo.fileformat)
      vim.cmd("write")
      eq("local a = 1\r\nlocal b = 2\r\nreturn a + b\r\n", read(f))
    end,
  },
  {
    "openFile: the buffer it loads is Neovim's own read: :checktime reloads it after Claude writes the file (its time was recorded: a write over a newer file asks too), BufRead ran in it",
    function()
      local f = dir .. "/reloaded.txt"
      write(f, "before\n")
      vim.cmd.enew()
      local other = vim.api.nvim_get_current_buf()
      local seen
      local au = vim.api.nvim_create_autocmd("BufReadPost", {
        pattern = "*/reloaded.txt",
        callback = function(ev)
          seen = { ev.buf, vim.api.nvim_get_current_buf() }
        end,
      })
      eq({ "Opened file: " .. f }, texts(h.call("openFile", { filePath = f, startLine = 1 })))
      vim.api.nvim_del_autocmd(au)
      local buf = vim.fn.bufnr(f)
      ok(buf ~= other, "a buffer of its own")
      eq({ buf, buf }, seen, "BufReadPost ran with the file's buffer current")
      -- Claude edits the file on disk (a second later: a new mtime even on a coarse clock).
      vim.uv.sleep(1100)
      write(f, "after\n")
      local autoread = vim.o.autoread
      vim.o.autoread = true
      vim.cmd("checktime")
      eq({ "after" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), "reloaded")
      vim.o.autoread = autoread
      vim.api.nvim_buf_delete(buf, { force = true })
    end,
  },
  {
    "openDiff: :w in the proposal accepts with the person's edits; nothing is written",
    function()
      local f = dir .. "/accept.txt"
      write(f, "one\ntwo\nthree\n")
      vim.cmd.edit(f)
      local home_tab = vim.api.nvim_get_current_tabpage()
      local box = open_diff(f, "one\nTWO\nthree\n", "✻ [Claude Code] accept.txt (a1) ⧉")
      local v = box.view
      -- A new tab: the file on disk on the left, the proposal on the right, both in diff mode.
      eq(v.tab, vim.api.nvim_get_current_tabpage())
      ok(v.tab ~= home_tab, "a new tab")
      eq({ v.orig_win, v.prop_win }, vim.api.nvim_tabpage_list_wins(v.tab))
      eq({ "one", "two", "three" }, buf_lines(v.orig_buf))
      eq({ "one", "TWO", "three" }, buf_lines(v.prop_buf))
      ok(vim.wo[v.orig_win].diff and vim.wo[v.prop_win].diff, "diff mode")
      eq("✻ [Claude Code] accept.txt (a1) ⧉", vim.t[v.tab].claude_context_diff)
      eq("acwrite", vim.bo[v.prop_buf].buftype)
      eq("text", vim.bo[v.prop_buf].filetype)
      eq(v.prop_win, vim.api.nvim_get_current_win())
      eq(nil, box.result, "still waiting for the person")

      -- Other calls are answered while the diff waits.
      eq(true, json_of("getLatestSelection").success)

      vim.api.nvim_buf_set_lines(v.prop_buf, 2, 3, false, { "three, edited" })
      vim.cmd("write")
      local r = decided(box)
      eq({ "FILE_SAVED", "one\nTWO\nthree, edited\n" }, texts(r))
      eq(false, r.isError)
      eq("one\ntwo\nthree\n", read(f), "Claude Code writes the file, not the editor")
      wait_for(function()
        return not vim.api.nvim_tabpage_is_valid(v.tab)
      end, 5000, "the diff tab to close")
      eq(home_tab, vim.api.nvim_get_current_tabpage())
      ok(
        not vim.api.nvim_buf_is_valid(v.prop_buf) and not vim.api.nvim_buf_is_valid(v.orig_buf),
        "scratch buffers wiped"
      )
      eq(nil, diff().views["✻ [Claude Code] accept.txt (a1) ⧉"])
    end,
  },
  {
    "openDiff accepted: the file's buffer reloads when Claude Code writes it",
    function()
      local f = dir .. "/reload.txt"
      write(f, "old\n")
      vim.cmd.edit(f)
      local fb = vim.api.nvim_get_current_buf()
      local box = open_diff(f, "newer\n", "reload")
      vim.cmd("ClaudeContext accept")
      eq({ "FILE_SAVED", "newer\n" }, texts(decided(box)))
      eq({ "old" }, buf_lines(fb))
      write(f, "newer\n") -- what Claude Code does after FILE_SAVED
      wait_for(function()
        return buf_lines(fb)[1] == "newer"
      end, 10000, "the buffer to reload")
      eq(false, vim.bo[fb].modified)
    end,
  },
  {
    "openDiff: :ClaudeContext accept sends the proposal exactly (CRLF, no final newline)",
    function()
      local f = dir .. "/crlf.txt"
      write(f, "a\r\nb\r\n")
      local contents = "a\r\nB\r\nc"
      local box = open_diff(f, contents, "crlf")
      eq({ "a", "B", "c" }, buf_lines(box.view.prop_buf), "CR LF shown as a dos buffer")
      eq("dos", vim.bo[box.view.prop_buf].fileformat)
      vim.cmd("tabnext 1") -- accept works from another tab when only one diff waits
      vim.cmd("ClaudeContext accept")
      eq({ "FILE_SAVED", contents }, texts(decided(box)))

      -- Edited: lines joined back with CR LF, final newline as the buffer says.
      write(f, "x\r\n")
      box = open_diff(f, "x\r\ny\r\n", "crlf2")
      vim.api.nvim_buf_set_lines(box.view.prop_buf, 1, 2, false, { "z" })
      vim.cmd("ClaudeContext accept")
      eq({ "FILE_SAVED", "x\r\nz\r\n" }, texts(decided(box)))
    end,
  },
  {
    "openDiff: :q rejects with the tab name; :ClaudeContext reject too",
    function()
      local f = dir .. "/reject.txt"
      write(f, "keep\n")
      local box = open_diff(f, "change\n", "rej1")
      eq(box.view.prop_win, vim.api.nvim_get_current_win())
      vim.cmd("quit")
      local r = decided(box)
      eq({ "DIFF_REJECTED", "rej1" }, texts(r))
      wait_for(function()
        return not vim.api.nvim_tabpage_is_valid(box.view.tab)
      end, 5000, "the tab to close")
      eq("keep\n", read(f))

      box = open_diff(f, "change\n", "rej2")
      vim.cmd("ClaudeContext reject")
      eq({ "DIFF_REJECTED", "rej2" }, texts(decided(box)))

      -- An edited proposal: plain :q still rejects (no E37), the file is untouched.
      box = open_diff(f, "change\n", "rej2e")
      vim.api.nvim_buf_set_lines(box.view.prop_buf, 0, -1, false, { "edited" })
      eq(true, vim.bo[box.view.prop_buf].modified)
      vim.cmd("quit")
      eq({ "DIFF_REJECTED", "rej2e" }, texts(decided(box)))
      eq("keep\n", read(f))

      -- Closing the left side rejects as well.
      box = open_diff(f, "change\n", "rej3")
      vim.api.nvim_win_close(box.view.orig_win, true)
      eq({ "DIFF_REJECTED", "rej3" }, texts(decided(box)))
      wait_for(function()
        return not vim.api.nvim_tabpage_is_valid(box.view.tab)
      end, 5000, "the tab to close")
      eq("keep\n", read(f))
    end,
  },
  {
    "openDiff on a new file: an empty left side; accepting creates nothing itself",
    function()
      local f = dir .. "/sub/new_file.lua"
      local box = open_diff(f, "print('hi')\n", "newfile")
      eq({ "" }, buf_lines(box.view.orig_buf))
      contains(vim.wo[box.view.orig_win].winbar, "(new file)")
      eq("lua", vim.bo[box.view.prop_buf].filetype)
      vim.cmd("write")
      eq({ "FILE_SAVED", "print('hi')\n" }, texts(decided(box)))
      eq(nil, vim.uv.fs_stat(f), "not created by the editor")
    end,
  },
  {
    "openDiff on a buffer with unsaved changes: diff against the disk, the buffer untouched",
    function()
      local f = dir .. "/dirty.txt"
      write(f, "disk\n")
      vim.cmd.edit(f)
      local fb = vim.api.nvim_get_current_buf()
      vim.api.nvim_buf_set_lines(fb, 0, -1, false, { "unsaved" })
      h.clear(messages)
      local box = open_diff(f, "proposal\n", "dirty")
      eq({ "disk" }, buf_lines(box.view.orig_buf))
      contains(vim.wo[box.view.orig_win].winbar, "unsaved changes")
      ok(
        vim.iter(messages):any(function(m)
          return m.msg:find("unsaved changes", 1, true) and m.level == vim.log.levels.WARN
        end),
        "the person is warned"
      )
      vim.cmd("write")
      eq({ "FILE_SAVED", "proposal\n" }, texts(decided(box)))
      eq({ "unsaved" }, buf_lines(fb))
      eq(true, vim.bo[fb].modified)
      eq("disk\n", read(f))
      vim.api.nvim_buf_delete(fb, { force = true })
    end,
  },
  {
    "openDiff with the same tab name replaces (and rejects) the older view",
    function()
      local f = dir .. "/twice.txt"
      write(f, "a\n")
      local first = open_diff(f, "b\n", "same")
      local first_view = first.view
      local second = open_diff(f, "c\n", "same")
      wait_for(function()
        return diff().views.same ~= first_view and diff().views.same and diff().views.same.prop_win
      end, 5000, "the new view")
      eq({ "DIFF_REJECTED", "same" }, texts(decided(first)))
      eq({ "c" }, buf_lines(diff().views.same.prop_buf))
      vim.cmd("ClaudeContext reject")
      eq({ "DIFF_REJECTED", "same" }, texts(decided(second)))
    end,
  },
  {
    "close_tab closes that view (a pending one is rejected) and answers TAB_CLOSED",
    function()
      local f = dir .. "/closetab.txt"
      write(f, "a\n")
      local box = open_diff(f, "b\n", "ct")
      eq({ "TAB_CLOSED" }, texts(h.call("close_tab", { tab_name = "ct" })))
      eq({ "DIFF_REJECTED", "ct" }, texts(decided(box)))
      ok(not vim.api.nvim_tabpage_is_valid(box.view.tab), "closed")
      eq({ "TAB_CLOSED" }, texts(h.call("close_tab", { tab_name = "never-opened" })))
      local r = cc().call_tool_sync("close_tab", {})
      eq(nil, r, "tab_name is required")
    end,
  },
  {
    "closeAllDiffTabs closes only this plugin's diff views; a foreign diff survives",
    function()
      local x, y = dir .. "/x.txt", dir .. "/y.txt"
      write(x, "1\n2\n")
      write(y, "1\n3\n")
      vim.cmd("silent! tabonly")
      vim.cmd.edit(x)
      vim.cmd("vert diffsplit " .. y)
      local foreign = vim.api.nvim_tabpage_list_wins(0)
      eq(2, #foreign)
      local b1 = open_diff(x, "one\n", "all1")
      local b2 = open_diff(y, "two\n", "all2")
      eq(3, #vim.api.nvim_list_tabpages())
      eq({ "CLOSED_2_DIFF_TABS" }, texts(h.call("closeAllDiffTabs")))
      eq({ "DIFF_REJECTED", "all1" }, texts(decided(b1)))
      eq({ "DIFF_REJECTED", "all2" }, texts(decided(b2)))
      eq(1, #vim.api.nvim_list_tabpages())
      for _, w in ipairs(foreign) do
        ok(vim.api.nvim_win_is_valid(w), "foreign diff window kept")
        eq(true, vim.wo[w].diff, "still in diff mode")
      end
      eq({ "CLOSED_0_DIFF_TABS" }, texts(h.call("closeAllDiffTabs")))
      vim.cmd("diffoff!")
      vim.cmd("only")
    end,
  },
  {
    "closeAllDiffTabs rejects and counts a diff whose tab is not on screen yet",
    function()
      local x = dir .. "/early.txt"
      write(x, "1\n")
      vim.cmd("silent! tabonly")
      local tabs = #vim.api.nvim_list_tabpages()
      local got
      -- openDiff's handler ran; its tab is made on the next event-loop turn.
      diff().open({ old_file_path = x, new_file_path = x, new_file_contents = "2\n", tab_name = "early" }, function(r)
        got = r
      end)
      eq(1, diff().close_all())
      eq({ result = "DIFF_REJECTED", tab_name = "early" }, got)
      -- The scheduled set-up finds it decided: no tab appears, nothing is left behind.
      vim.wait(50, function()
        return false
      end)
      eq(tabs, #vim.api.nvim_list_tabpages())
      eq(nil, diff().views.early)
      eq(0, diff().close_all())
      eq({ "CLOSED_0_DIFF_TABS" }, texts(h.call("closeAllDiffTabs")))
    end,
  },
  {
    "openDiff refuses a directory and bad arguments",
    function()
      local r = cc().call_tool_sync(
        "openDiff",
        { old_file_path = dir, new_file_path = dir, new_file_contents = "", tab_name = "d" }
      )
      eq(true, r.isError)
      contains(r.content[1].text, "is a directory")
      local _, err = cc().call_tool_sync("openDiff", { old_file_path = dir .. "/x.txt" })
      contains(err, "new_file_path")
      eq(1, #vim.api.nvim_list_tabpages())
    end,
  },
  {
    ":ClaudeContext accept/reject without a pending diff say so",
    function()
      h.clear(messages)
      vim.cmd("ClaudeContext accept")
      vim.cmd("ClaudeContext reject")
      eq(2, #vim.tbl_filter(function(m)
        return m.msg:find("no diff from Claude is waiting", 1, true) ~= nil
      end, messages))
    end,
  },
}
