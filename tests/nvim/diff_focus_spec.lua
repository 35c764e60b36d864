-- A diff that arrives while the person types does not take the cursor (the bug: keys typed in
-- Insert mode landed in Claude's proposal, and a reflexive :w accepted them). Insert mode and
-- Terminal-Job mode are checked in a child Neovim typed into over RPC (a -l script cannot wait
-- in Insert mode); Normal mode, the diff.focus option and :ClaudeContext diff here.
local h = require("helpers")
local child = h.load("child")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local cc = h.cc
local diff = h.diff

local messages = h.record_notify()

local dir, target

-- Lua run in the child: starts openDiff; _G.R gets the answer when the person decides.
local REQUEST = [[
  local target, name, contents = ...
  _G.R = nil
  require("claude_context").call_tool("openDiff", {
    old_file_path = target, new_file_path = target, new_file_contents = contents, tab_name = name,
  }, function(r) _G.R = r end)
]]

---Starts openDiff here without waiting; the box gets `.result` when the person decides.
local function request_diff(name, contents)
  local box = h.request_diff(target, name, contents)
  box.view = h.diff_view(name, 5000)
  return box
end

local function lines(b)
  return vim.api.nvim_buf_get_lines(b, 0, -1, false)
end

local cleanup = h.close_diffs

return {
  {
    "setup",
    function()
      dir = h.tmpdir()
      vim.cmd.cd(dir)
      target = dir .. "/target.txt"
      h.write(target, "one\ntwo\n")
    end,
  },
  {
    "a diff arriving in Insert mode opens unfocused: the keys stay in the person's buffer, :w writes their file only",
    function()
      local notes = dir .. "/notes.txt"
      h.write(notes, "")
      local c = child.start(dir)
      local okr, err = pcall(function()
        c:lua("require('claude_context').setup({}) vim.cmd.edit(...)", notes)
        local nwin = c:lua("return vim.api.nvim_get_current_win()")
        c:input("ihello ")
        c:wait(
          "return vim.api.nvim_get_current_line() == 'hello ' and vim.api.nvim_get_mode().mode == 'i'",
          "Insert mode"
        )
        c:lua(REQUEST, target, "insert-case", "one\nTWO\n")
        c:wait(
          "local v = require('claude_context.ide.diff').views['insert-case'] return v ~= nil and v.prop_win ~= nil",
          "the view"
        )
        eq("i", c:mode(), "still in Insert mode after the diff opened")
        eq(nwin, c:lua("return vim.api.nvim_get_current_win()"), "the cursor stayed in the person's window")
        eq(1, c:lua("return vim.fn.tabpagenr()"), "and in their tab")
        eq(2, c:lua("return vim.fn.tabpagenr('$')"), "the diff has its own tab")
        c:input("world<Esc>:w<CR>")
        c:wait("return vim.api.nvim_get_mode().mode == 'n' and not vim.bo.modified", ":w")
        eq("hello world\n", h.read(notes), "every key went to the person's buffer; :w wrote their file")
        eq(
          { "one", "TWO" },
          c:lua(
            "local v = require('claude_context.ide.diff').views['insert-case'] return vim.api.nvim_buf_get_lines(v.prop_buf, 0, -1, false)"
          ),
          "the proposal got none of the keys"
        )
        vim.wait(100)
        eq(vim.NIL, c:lua("return _G.R"), "nothing was decided: Claude still waits")
        eq("one\ntwo\n", h.read(target), "the target file is untouched")
        local said = c:lua("return _G.messages[#_G.messages].msg")
        contains(said, "not focused")
        contains(said, "Insert mode")
        contains(said, ":ClaudeContext diff")
        -- :ClaudeContext diff goes there; then :w there accepts (what the person chose).
        c:input(":ClaudeContext diff<CR>")
        c:wait("return vim.b.claude_context_diff == 'insert-case'", ":ClaudeContext diff")
        c:input(":w<CR>")
        local r = c:wait("return _G.R", "the decision")
        eq("FILE_SAVED", r.content[1].text)
        eq("one\nTWO\n", r.content[2].text)
      end)
      c:stop()
      assert(okr, err)
    end,
  },
  {
    "a diff arriving while typing into a terminal leaves the keys to the terminal's job",
    function()
      local got = dir .. "/typed.txt"
      local c = child.start(dir)
      local okr, err = pcall(function()
        c:lua("require('claude_context').setup({})")
        c:lua(
          "vim.cmd('enew') _G.J = vim.fn.jobstart({ 'sh', '-c', 'stty -echo; cat > ' .. vim.fn.shellescape(...) }, { term = true })",
          got
        )
        local twin = c:lua("return vim.api.nvim_get_current_win()")
        c:input("i")
        c:wait("return vim.api.nvim_get_mode().mode == 't'", "Terminal-Job mode")
        c:input("abc<CR>")
        wait_for(function()
          return h.read(got) == "abc\n"
        end, 3000, "the first line to reach the job")
        c:lua(REQUEST, target, "term-case", "one\nTHREE\n")
        c:wait(
          "local v = require('claude_context.ide.diff').views['term-case'] return v ~= nil and v.prop_win ~= nil",
          "the view"
        )
        eq("t", c:mode(), "still in Terminal-Job mode")
        eq(twin, c:lua("return vim.api.nvim_get_current_win()"))
        c:input("def<CR>")
        wait_for(function()
          return h.read(got) == "abc\ndef\n"
        end, 3000, "the second line to reach the job: " .. tostring(h.read(got)))
        eq(
          { "one", "THREE" },
          c:lua(
            "local v = require('claude_context.ide.diff').views['term-case'] return vim.api.nvim_buf_get_lines(v.prop_buf, 0, -1, false)"
          )
        )
        eq(vim.NIL, c:lua("return _G.R"))
        contains(c:lua("return _G.messages[#_G.messages].msg"), "terminal")
      end)
      c:stop()
      assert(okr, err)
    end,
  },
  {
    "in Normal mode, not typing, the diff takes the cursor (as before)",
    function()
      cc().setup({})
      require("claude_context.util.typing").last = 0
      vim.cmd("enew")
      local box = request_diff("normal-case", "one\nFOUR\n")
      eq(box.view.prop_win, vim.api.nvim_get_current_win())
      eq(nil, box.view.unfocused)
      vim.cmd("ClaudeContext reject")
      h.decided(box)
      cleanup()
    end,
  },
  {
    "a key pressed a moment ago counts as typing; diff.focus = never and always; bad options",
    function()
      vim.cmd("enew")
      local win = vim.api.nvim_get_current_win()
      vim.api.nvim_feedkeys("0", "xt", false) -- a Normal-mode key, just now
      local box = request_diff("recent-key", "one\nFIVE\n")
      eq(win, vim.api.nvim_get_current_win(), "a key just pressed: not focused")
      eq(true, box.view.unfocused)
      contains(messages[#messages].msg, "you are typing")
      -- :ClaudeContext diff from elsewhere finds the only diff waiting.
      vim.cmd("ClaudeContext diff")
      eq(box.view.prop_win, vim.api.nvim_get_current_win())
      cleanup()

      cc().setup({ diff = { focus = "never" } })
      require("claude_context.util.typing").last = 0
      win = vim.api.nvim_get_current_win()
      box = request_diff("never", "one\nSIX\n")
      eq(win, vim.api.nvim_get_current_win(), "focus = never keeps the cursor where it is")
      cleanup()

      cc().setup({ diff = { focus = "always", typing_ms = 60000 } })
      vim.api.nvim_feedkeys("0", "xt", false)
      box = request_diff("always", "one\nSEVEN\n")
      eq(box.view.prop_win, vim.api.nvim_get_current_win(), "focus = always takes the cursor even while typing")
      cleanup()

      local okc, err = pcall(cc().setup, { diff = { focus = "sometimes" } })
      eq(false, okc)
      contains(err, "diff.focus")
      okc, err = pcall(cc().setup, { diff = { colour = 1 } })
      eq(false, okc)
      contains(err, "diff.colour")
      for _, bad in ipairs({ -1, "2MB" }) do
        okc, err = pcall(cc().setup, { diff = { diffmode_max_bytes = bad } })
        eq(false, okc, vim.inspect(bad))
        contains(err, "diff.diffmode_max_bytes must be a number >= 0")
      end
      cc().setup({})
      h.clear(messages)
      vim.cmd("ClaudeContext diff")
      contains(messages[#messages].msg, "no diff from Claude is waiting")
    end,
  },
  {
    ":[range]ClaudeContext accept takes only the changes the range touches (proposal or file side)",
    function()
      cc().setup({})
      require("claude_context.util.typing").last = 0
      local base = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"
      h.write(target, base)
      -- Three changes: line 2 changed, a line inserted after 5, line 9 deleted.
      local prop = "1\nTWO\n3\n4\n5\nfive and a half\n6\n7\n8\n10\n"
      local box = request_diff("partial", prop)
      eq(box.view.prop_win, vim.api.nvim_get_current_win())
      h.clear(messages)
      vim.cmd("8ClaudeContext accept") -- line 8 of the proposal: "7", unchanged
      contains(messages[#messages].msg, "touch none of the 3 changes")
      eq(nil, box.result, "nothing decided")
      vim.cmd("2,6ClaudeContext accept") -- the change on 2 and the insertion (proposal line 6)
      h.decided(box, 5000, "the decision")
      eq("FILE_SAVED", box.result.content[1].text)
      eq("1\nTWO\n3\n4\n5\nfive and a half\n6\n7\n8\n9\n10\n", box.result.content[2].text, "line 9 kept")
      contains(messages[#messages].msg, "accepted 2 of 3 changes")
      cleanup()

      -- From the file side: the deletion of line 9 only.
      box = request_diff("partial2", prop)
      vim.api.nvim_set_current_win(box.view.orig_win)
      vim.cmd("9ClaudeContext accept")
      h.decided(box, 5000, "the decision")
      eq("1\n2\n3\n4\n5\n6\n7\n8\n10\n", box.result.content[2].text)
      cleanup()

      -- Outside the diff windows a range is refused.
      box = request_diff("partial3", prop)
      vim.cmd("tabnew")
      h.clear(messages)
      vim.cmd("1ClaudeContext accept")
      contains(messages[#messages].msg, "run it in the diff's windows")
      eq(nil, box.result)
      cleanup()
    end,
  },
  {
    "diff.layout = horizontal: one above the other, in diff mode",
    function()
      cc().setup({ diff = { layout = "horizontal" } })
      require("claude_context.util.typing").last = 0
      h.write(target, "one\ntwo\n")
      local box = request_diff("horiz", "one\nTWO\n")
      local v = box.view
      local po, pp = vim.api.nvim_win_get_position(v.orig_win), vim.api.nvim_win_get_position(v.prop_win)
      eq(po[2], pp[2], "same column")
      ok(pp[1] > po[1], "the proposal below the file")
      eq(true, vim.wo[v.orig_win].diff)
      eq(true, vim.wo[v.prop_win].diff)
      vim.cmd("ClaudeContext reject")
      h.decided(box)
      cleanup()
    end,
  },
  {
    "diff.layout = inline: one buffer, removed lines as virtual lines, added ones highlighted; :w accepts",
    function()
      cc().setup({ diff = { layout = "inline" } })
      require("claude_context.util.typing").last = 0
      h.write(target, "one\ntwo\nthree\n")
      local box = request_diff("inl", "one\nTWO\nthree\nfour\n")
      local v = box.view
      eq(nil, v.orig_win, "one window")
      eq(1, #vim.api.nvim_tabpage_list_wins(v.tab))
      eq(v.prop_buf, vim.api.nvim_win_get_buf(v.prop_win))
      local ns = vim.api.nvim_get_namespaces().claude_context_diff_inline
      local marks = vim.api.nvim_buf_get_extmarks(v.prop_buf, ns, 0, -1, { details = true })
      local virt, hl = {}, {}
      for _, m in ipairs(marks) do
        if m[4].virt_lines then
          virt[m[2] + 1] = m[4].virt_lines[1][1][1]
        end
        if m[4].line_hl_group then
          hl[m[2] + 1] = m[4].line_hl_group
        end
      end
      eq({ [2] = "- two" }, virt, "the removed line above its replacement")
      eq({ [2] = "DiffChange", [4] = "DiffAdd" }, hl)
      contains(vim.wo[v.prop_win].winbar, ":w accept")
      vim.cmd("write")
      h.decided(box)
      eq("one\nTWO\nthree\nfour\n", box.result.content[2].text)
      cleanup()

      -- Deletions: in the middle (shown above the next line) and at the end (below the last).
      h.write(target, "a\nb\nc\nd\n")
      box = request_diff("inl2", "a\nc\n")
      local marks2 = vim.api.nvim_buf_get_extmarks(box.view.prop_buf, ns, 0, -1, { details = true })
      local placed = {}
      for _, m in ipairs(marks2) do
        if m[4].virt_lines then
          table.insert(placed, { row = m[2], above = m[4].virt_lines_above == true, text = m[4].virt_lines[1][1][1] })
        end
      end
      table.sort(placed, function(x, y)
        return x.row < y.row
      end)
      eq({ { row = 1, above = true, text = "- b" }, { row = 1, above = false, text = "- d" } }, placed)
      vim.cmd("ClaudeContext reject")
      cleanup()
    end,
  },
  {
    "diff.tab = current: splits of the file window in this tab page; closing returns there",
    function()
      cc().setup({ diff = { tab = "current" } })
      require("claude_context.util.typing").last = 0
      h.write(target, "one\ntwo\n")
      vim.cmd("silent! only")
      vim.cmd.edit(vim.fn.fnameescape(dir .. "/other.txt"))
      local mine = vim.api.nvim_get_current_win()
      local box = request_diff("here", "one\nTWO\n")
      local v = box.view
      eq(1, #vim.api.nvim_list_tabpages(), "no new tab page")
      eq(3, #vim.api.nvim_tabpage_list_wins(0))
      eq(v.prop_win, vim.api.nvim_get_current_win())
      eq(nil, vim.t.claude_context_diff, "the person's tab page is not marked as a diff tab")
      -- closeAllDiffTabs-style cleanup leaves the person's tab page.
      vim.cmd("ClaudeContext reject")
      h.decided(box)
      vim.wait(50)
      eq(1, #vim.api.nvim_list_tabpages())
      eq({ mine }, vim.api.nvim_tabpage_list_wins(0))
      eq(mine, vim.api.nvim_get_current_win())
      local okc, err = pcall(cc().setup, { diff = { layout = "diagonal" } })
      eq(false, okc)
      contains(err, "diff.layout")
      cc().setup({})
    end,
  },
}
