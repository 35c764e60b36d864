-- Arriving from claudecode.nvim: its option table (as its README writes it) works in setup() and
-- gives the same terminal side and width and the same diff layout; with claudecode.commands its
-- :ClaudeCode* commands run the equivalent actions (ranges included) and its User events fire;
-- a second bridge on the project (claudecode.nvim on the runtimepath, another live lock file) is
-- reported by :checkhealth and once by setup().
local h = require("helpers")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local cc, term = h.cc, h.term

local messages = h.record_notify()
local translate = require("claude_context.config.claudecode")

local tmp = h.tmpdir()
local out = tmp .. "/fake-out"
-- A stand-in for the Claude Code CLI: records its arguments, then waits for input.
local fake = tmp .. "/fake-claude"
h.write(
  fake,
  '#!/bin/sh\nprintf \'%s\\n\' "$@" > "$FAKE_OUT.args.tmp"\nmv "$FAKE_OUT.args.tmp" "$FAKE_OUT.args"\necho ready\nwhile read -r l; do echo "got $l"; done\n'
)
vim.fn.setfperm(fake, "rwx------")

local project = tmp .. "/project"
vim.fn.mkdir(project, "p")
vim.cmd.cd(project)
local target = project .. "/target.txt"
h.write(target, "one\ntwo\nthree\n")

---claudecode.nvim's README ("Advanced Configuration", its `opts`), as written there; only
---`terminal_cmd` (the local-installation line of the same README) points at the fake CLI and
---`env` gives it where to write.
local function readme_opts()
  return {
    -- Server Configuration
    port_range = { min = 10000, max = 65535 },
    auto_start = true,
    log_level = "info",
    terminal_cmd = fake,
    env = { FAKE_OUT = out },

    -- Send/Focus Behavior
    focus_after_send = false,

    -- Selection Tracking
    track_selection = true,
    visual_demotion_delay_ms = 50,

    -- Terminal Configuration
    terminal = {
      split_side = "right",
      split_width_percentage = 0.30,
      diff_split_width_percentage = nil,
      provider = "auto",
      auto_close = true,
      auto_insert = true,
      snacks_win_opts = {},
      fix_streamed_paste = "auto",
      provider_opts = {
        external_terminal_cmd = nil,
      },
    },

    -- Diff Integration
    diff_opts = {
      layout = "vertical",
      open_in_new_tab = false,
      keep_terminal_focus = false,
      hide_terminal_in_new_tab = false,
      auto_resize_terminal = true,
    },
  }
end

local function read_args()
  local f = io.open(out .. ".args")
  if not f then
    return nil
  end
  local t = vim.split(f:read("*a"), "\n", { trimempty = true })
  f:close()
  return t
end

---Opens Claude's terminal (the fake) and returns its window's geometry.
local function open_terminal(cmd)
  os.remove(out .. ".args")
  vim.cmd(cmd or "ClaudeContext open")
  wait_for(read_args, 10000, "the fake claude to start")
  local w = vim.fn.win_findbuf(term()._state.buf)[1]
  return { win = w, col = vim.api.nvim_win_get_position(w)[2], width = vim.api.nvim_win_get_width(w) }
end

local function close_terminal()
  if term()._state.buf then
    term().close()
  end
  wait_for(function()
    return not require("claude_context.terminal.sessions").job_running()
  end, 5000, "the terminal to end")
  vim.cmd("stopinsert")
  vim.cmd("silent! only")
end

---The diff view's two windows: "vertical" (side by side) or "horizontal" (one above the other),
---and whether it has a tab page of its own.
local function diff_shape(name)
  local box = h.request_diff(target, name, "one\nTWO\nthree\n")
  local v = h.diff_view(name)
  local a, b = vim.api.nvim_win_get_position(v.orig_win), vim.api.nvim_win_get_position(v.prop_win)
  local shape = a[1] == b[1] and "vertical" or a[2] == b[2] and "horizontal" or "?"
  local own_tab = not v.in_place
  return shape, own_tab, box
end

local function names(report)
  local t = {}
  for _, e in ipairs(report or {}) do
    t[e.from] = e
  end
  return t
end

local CC_COMMANDS = {
  "ClaudeCode",
  "ClaudeCodeFocus",
  "ClaudeCodeSend",
  "ClaudeCodeAdd",
  "ClaudeCodeTreeAdd",
  "ClaudeCodeDiffAccept",
  "ClaudeCodeDiffDeny",
  "ClaudeCodeSelectModel",
  "ClaudeCodeStatus",
  "ClaudeCodeStart",
  "ClaudeCodeStop",
  "ClaudeCodeOpen",
  "ClaudeCodeClose",
  "ClaudeCodeCloseAllDiffs",
  "ClaudeCodeSendText",
}

local function setup(opts)
  cc().setup(opts)
  cc().activate()
  vim.wait(150) -- the once-a-session check runs a moment after setup
end

---Records the mentions the commands make: { path, line_start, line_end } (0-based).
local mentions = {}
local function record_mentions()
  local m = require("claude_context.ide.mentions")
  m.mention = function(path, s, e)
    table.insert(mentions, { path, s, e })
    return true, "sent"
  end
end

return {
  {
    "claudecode.nvim's README configuration: the terminal on the same side at the same width, diffs in the same layout, nothing printed",
    function()
      vim.o.columns, vim.o.lines = 100, 40
      h.clear(messages)
      setup(readme_opts())
      eq({}, messages, "nothing printed at startup")
      local o = require("claude_context.config").options
      eq("right", o.terminal.side)
      eq(0.30, o.terminal.size)
      eq(fake, o.claude.cmd)
      local t = open_terminal()
      eq(math.floor(100 * 0.30 + 0.5), t.width, "30% of the columns, as split_width_percentage said")
      ok(t.col > 0, "on the right")
      close_terminal()
      local shape, own_tab, box = diff_shape("readme")
      eq("vertical", shape)
      eq(false, own_tab, "open_in_new_tab = false: the diff opens in the current tab page")
      vim.cmd("ClaudeContext accept")
      h.decided(box)
      h.close_diffs()
    end,
  },
  {
    "the other side, another width, diffs one above the other in a tab page of their own",
    function()
      local opts = readme_opts()
      opts.terminal.split_side, opts.terminal.split_width_percentage = "left", 0.45
      opts.diff_opts = { layout = "horizontal", open_in_new_tab = true }
      setup(opts)
      local t = open_terminal()
      eq(math.floor(100 * 0.45 + 0.5), t.width)
      eq(0, t.col, "on the left")
      close_terminal()
      local shape, own_tab, box = diff_shape("other")
      eq("horizontal", shape)
      eq(true, own_tab)
      vim.cmd("ClaudeContext reject")
      h.decided(box)
      h.close_diffs()
      -- "unified" is this plugin's "inline"; keep_terminal_focus keeps the cursor where it is.
      setup({ diff_opts = { layout = "unified", keep_terminal_focus = true } })
      local d = require("claude_context.config.diff").options()
      eq("inline", d.layout)
      eq("never", d.focus)
    end,
  },
  {
    "every key of claudecode.nvim's config is translated or named with why, and passes this plugin's checks",
    function()
      local all = {
        port_range = { min = 20000, max = 30000 },
        auto_start = false,
        log_level = "debug",
        terminal_cmd = "~/.claude/local/claude --verbose",
        env = { A = "1" },
        track_selection = false,
        focus_after_send = true,
        visual_demotion_delay_ms = 50,
        connection_wait_delay = 600,
        connection_timeout = 10000,
        queue_timeout = 5000,
        models = { { name = "Opus", value = "opus" } },
        cwd = "/tmp",
        git_repo_cwd = true,
        cwd_provider = function() end,
        diff_opts = {
          layout = "vertical",
          open_in_new_tab = true,
          keep_terminal_focus = true,
          hide_terminal_in_new_tab = true,
          on_new_file_reject = "close_window",
          auto_resize_terminal = false,
          vertical_split = false,
          open_in_current_tab = false,
          auto_close_on_accept = true,
          show_diff_stats = true,
        },
        terminal = {
          split_side = "left",
          split_width_percentage = 0.25,
          diff_split_width_percentage = 0.2,
          provider = "external",
          provider_opts = { external_terminal_cmd = "alacritty --working-directory %s -e %s" },
          show_native_term_exit_tip = false,
          auto_close = false,
          auto_insert = false,
          env = { B = "2" },
          snacks_win_opts = { position = "float", width = 0.9, height = 0.8, border = "rounded", keys = {} },
          fix_streamed_paste = true,
          cwd = "/tmp",
          git_repo_cwd = true,
          cwd_provider = function() end,
        },
      }
      local cfg = require("claude_context.config").resolve(all)
      local got = names(translate.report)
      local function key_paths(t, prefix, acc)
        for k, v in pairs(t) do
          local p = prefix .. k
          if
            type(v) == "table"
            and not vim.islist(v)
            and k ~= "port_range"
            and k ~= "env"
            and k ~= "keys"
            and k ~= "models"
          then
            key_paths(v, p .. ".", acc)
          else
            table.insert(acc, p)
          end
        end
        return acc
      end
      local missing = {}
      for _, p in ipairs(key_paths(all, "", {})) do
        if not got[p] then
          table.insert(missing, p)
        end
      end
      table.sort(missing)
      eq({}, missing, "keys neither translated nor named")
      for _, e in ipairs(translate.report) do
        ok(e.to or (type(e.why) == "string" and #e.why > 10), e.from .. " has a new name or a reason")
      end
      eq(vim.fn.expand("~/.claude/local/claude"), cfg.claude.cmd)
      eq({ "--verbose" }, cfg.terminal.args)
      eq({ "alacritty", "--working-directory", ".", "-e", "{cmd}" }, cfg.terminal.external_cmd)
      eq("float", cfg.terminal.side)
      eq({ width = 0.9, height = 0.8, border = "rounded" }, cfg.terminal.float)
      eq("external", cfg.terminal.provider)
      eq(false, cfg.terminal.auto_insert)
      eq({ B = "2" }, cfg.terminal.env, "terminal.env given in their terminal table")
      eq(false, cfg.ide.track_selection)
      eq(5000, cfg.ide.mention_queue_ms)
      eq(true, cfg.claudecode.focus_after_send)
      eq({ { name = "Opus", value = "opus" } }, cfg.claudecode.models)
      eq({ min = 20000, max = 30000 }, cfg.port_range)
      eq("debug", cfg.log_level)
      -- This plugin's own option wins over a translated one; a typo is still refused.
      local mixed = require("claude_context.config").resolve({ terminal = { split_side = "left", side = "bottom" } })
      eq("bottom", mixed.terminal.side)
      local bad =
        pcall(require("claude_context.config").resolve, { terminal_cmd = "claude", terminal = { split_sid = "left" } })
      eq(false, bad, "an unknown key is refused")
      for _, t in ipairs({ { split_width_percentage = 1.5 }, { split_side = "top" } }) do
        local okk, e = pcall(require("claude_context.config").resolve, { terminal = t })
        eq(false, okk)
        contains(e, "terminal." .. next(t) .. " (claudecode.nvim's) must be")
      end
      -- A table without claudecode.nvim's keys is this plugin's own: nothing translated.
      require("claude_context.config").resolve({ terminal = { side = "left" } })
      eq(nil, translate.report)
    end,
  },
  {
    ":checkhealth lists each translated key and its new name, and the keys left behind",
    function()
      setup(readme_opts())
      local text = h.health_lines(function()
        require("claude_context.health.features").check_claudecode(cc().status())
      end)
      contains(text, "OK terminal.split_side → terminal.side = right")
      contains(text, "OK terminal.split_width_percentage → terminal.size = 0.3")
      contains(text, "OK terminal_cmd → claude.cmd = " .. fake)
      contains(text, "OK diff_opts.open_in_new_tab → diff.tab = current")
      contains(text, "OK log_level (the same here) = info")
      contains(text, "INFO terminal.fix_streamed_paste: not carried over: ")
      contains(text, "INFO visual_demotion_delay_ms: not carried over: ")
      contains(text, "OK no other bridge serves " .. project)
    end,
  },
  {
    "claudecode.commands: off by default (none defined); on, each with claudecode.nvim's nargs, range, bang and completion; off again, gone",
    function()
      setup({})
      local cmds = vim.api.nvim_get_commands({})
      for _, n in ipairs(CC_COMMANDS) do
        eq(nil, cmds[n], n .. " is not defined by default")
      end
      setup({ claudecode = { commands = true } })
      cmds = vim.api.nvim_get_commands({})
      for _, n in ipairs(CC_COMMANDS) do
        ok(cmds[n], n .. " is defined")
      end
      local want = {
        ClaudeCode = { nargs = "*" },
        ClaudeCodeFocus = { nargs = "*" },
        ClaudeCodeOpen = { nargs = "*" },
        ClaudeCodeSelectModel = { nargs = "*" },
        ClaudeCodeSend = { nargs = "0", range = "." },
        ClaudeCodeAdd = { nargs = "+", complete = "file" },
        ClaudeCodeSendText = { nargs = "+", bang = true },
        ClaudeCodeTreeAdd = { nargs = "0" },
        ClaudeCodeDiffAccept = { nargs = "0" },
        ClaudeCodeClose = { nargs = "0" },
      }
      for n, w in pairs(want) do
        local c = cmds[n]
        eq(w.nargs, c.nargs, n .. " nargs")
        eq(w.range, c.range, n .. " range")
        eq(w.bang or false, c.bang, n .. " bang")
        eq(w.complete, c.complete, n .. " complete")
      end
      setup({})
      cmds = vim.api.nvim_get_commands({})
      for _, n in ipairs(CC_COMMANDS) do
        eq(nil, cmds[n], n .. " is removed when the option goes off")
      end
    end,
  },
  {
    "with the option on, the terminal commands: toggle with arguments, open, focus, close, select a model (restarts with --model)",
    function()
      setup({
        terminal_cmd = fake,
        env = { FAKE_OUT = out },
        terminal = { auto_insert = false },
        claudecode = { commands = true },
      })
      local s = require("claude_context.terminal.sessions")
      local t = open_terminal("ClaudeCode --resume")
      ok(vim.tbl_contains(read_args(), "--resume"), "the arguments reach claude")
      vim.cmd("ClaudeCode")
      eq(0, #vim.fn.win_findbuf(term()._state.buf), "toggled: hidden")
      ok(s.job_running(), "hidden, still running")
      vim.cmd("ClaudeCodeOpen")
      eq(1, #vim.fn.win_findbuf(term()._state.buf), "opened")
      vim.cmd("wincmd p")
      vim.cmd("ClaudeCodeFocus")
      eq(term()._state.buf, vim.api.nvim_get_current_buf(), "focused")
      vim.cmd("stopinsert")
      vim.cmd("ClaudeCodeClose")
      wait_for(function()
        return not s.job_running()
      end, 5000, "closed")
      ok(t.win ~= nil)
      -- SelectModel: vim.ui.select of claudecode.models, then claude (re)started with --model.
      local orig = vim.ui.select
      local offered
      vim.ui.select = function(items, o, cb)
        offered = vim.tbl_map(o.format_item, items)
        cb(items[3])
      end
      open_terminal("ClaudeCode")
      local first = term()._state.job
      os.remove(out .. ".args")
      vim.cmd("ClaudeCodeSelectModel --continue")
      vim.ui.select = orig
      local args = wait_for(read_args, 10000, "claude restarted")
      contains(table.concat(args, " "), "--model sonnet --continue")
      ok(term()._state.job ~= first, "a new claude")
      eq("Sonnet", offered[3])
      close_terminal()
    end,
  },
  {
    "with the option on, the context commands: Send with a range, from Visual mode and without; Add with lines; TreeAdd in an explorer; SendText[!]",
    function()
      setup({ claudecode = { commands = true } })
      record_mentions()
      vim.cmd.edit(target)
      h.clear(mentions)
      local sent_events = {}
      vim.api.nvim_create_autocmd("User", {
        pattern = "ClaudeCodeSendComplete",
        callback = function(ev)
          table.insert(sent_events, ev.data)
        end,
      })
      vim.cmd("2,3ClaudeCodeSend")
      eq({ { target, 1, 2 } }, mentions, ":2,3ClaudeCodeSend")
      eq(
        { { file_path = target, start_line = 1, end_line = 2, context = "ClaudeContextSendComplete" } },
        sent_events,
        "User ClaudeCodeSendComplete, 0-based lines"
      )
      h.clear(mentions)
      vim.keymap.set("x", "<F2>", "<cmd>ClaudeCodeSend<cr>")
      vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("ggjVj<F2>", true, false, true), "x", false)
      eq({ { target, 1, 2 } }, mentions, "a <cmd> mapping in Visual mode sends the selection")
      eq("n", vim.fn.mode(), "Visual mode ended")
      h.clear(mentions)
      vim.cmd("ClaudeCodeSend")
      eq({ { target, 1, 2 } }, mentions, "without a range: the last Visual selection")
      h.clear(mentions)
      vim.cmd("ClaudeCodeAdd " .. target .. " 2 3")
      vim.cmd("ClaudeCodeAdd %")
      eq({ { target, 1, 2 }, { target } }, mentions, ":ClaudeCodeAdd {path} 2 3, :ClaudeCodeAdd %")
      eq(
        { file_path = target, context = "ClaudeContextSendComplete" },
        sent_events[#sent_events],
        "a whole file: no lines"
      )
      -- netrw is a file explorer here: TreeAdd sends the file under the cursor.
      h.clear(mentions)
      vim.cmd("Explore " .. vim.fn.fnameescape(project))
      vim.fn.search("target.txt")
      vim.cmd("ClaudeCodeTreeAdd")
      eq({ { target } }, mentions, ":ClaudeCodeTreeAdd in netrw")
      vim.cmd.edit(target)
      local sent = {}
      local input = require("claude_context.terminal.input")
      local orig = input.send_text
      input.send_text = function(text, submit)
        table.insert(sent, { text, submit })
        return true
      end
      vim.cmd("ClaudeCodeSendText run the tests")
      vim.cmd("ClaudeCodeSendText! draft only")
      input.send_text = orig
      eq({ { "run the tests", true }, { "draft only", false } }, sent)
    end,
  },
  {
    "with the option on, the diff commands and claudecode.nvim's User ClaudeCodeDiffOpened / Closed; the bridge commands",
    function()
      setup({ claudecode = { commands = true } })
      local events = {}
      vim.api.nvim_create_autocmd("User", {
        pattern = { "ClaudeCodeDiffOpened", "ClaudeCodeDiffClosed" },
        callback = function(ev)
          table.insert(events, { ev.match, ev.data })
        end,
      })
      local box = h.request_diff(target, "cc-accept", "one\nTWO\nthree\n")
      local v = h.diff_view("cc-accept")
      vim.api.nvim_set_current_win(v.prop_win)
      vim.cmd("ClaudeCodeDiffAccept")
      eq("FILE_SAVED", h.decided(box).content[1].text)
      wait_for(function()
        return #events >= 2
      end, 5000, "the two events")
      eq("ClaudeCodeDiffOpened", events[1][1])
      eq("cc-accept", events[1][2].tab_name)
      eq(target, events[1][2].file_path)
      eq(false, events[1][2].is_new_file)
      ok(events[1][2].diff_window, "diff_window")
      eq(
        { "ClaudeCodeDiffClosed", { tab_name = "cc-accept", file_path = target, reason = "diff accepted" } },
        events[2]
      )
      h.close_diffs()
      box = h.request_diff(target, "cc-deny", "one\nTWO\nthree\n")
      vim.api.nvim_set_current_win(h.diff_view("cc-deny").prop_win)
      vim.cmd("ClaudeCodeDiffDeny")
      eq("DIFF_REJECTED", h.decided(box).content[1].text)
      h.close_diffs()
      local boxes = { h.request_diff(target, "cc-a", "A\n"), h.request_diff(target, "cc-b", "B\n") }
      h.diff_view("cc-a")
      h.diff_view("cc-b")
      vim.cmd("ClaudeCodeCloseAllDiffs")
      eq("DIFF_REJECTED", h.decided(boxes[1]).content[1].text)
      eq("DIFF_REJECTED", h.decided(boxes[2]).content[1].text)
      h.close_diffs()
      contains(h.shown("ClaudeCodeStatus"), "listening on")
      vim.cmd("ClaudeCodeStop")
      eq(false, cc().is_running())
      vim.cmd("ClaudeCodeStart")
      eq(true, cc().is_running())
      -- Off: this plugin's own events only.
      setup({})
      h.clear(events)
      box = h.request_diff(target, "cc-off", "x\n")
      h.diff_view("cc-off")
      vim.cmd("ClaudeContext reject")
      h.decided(box)
      vim.wait(100)
      eq({}, events)
      h.close_diffs()
    end,
  },
  {
    "claudecode.focus_after_send: the cursor goes to Claude's terminal after a send",
    function()
      setup({
        terminal_cmd = fake,
        env = { FAKE_OUT = out },
        terminal = { auto_insert = false },
        focus_after_send = true,
      })
      open_terminal()
      vim.cmd("wincmd p")
      vim.cmd.edit({ target, bang = true })
      record_mentions()
      vim.cmd("2ClaudeContext send")
      wait_for(function()
        return vim.api.nvim_get_current_buf() == term()._state.buf
      end, 5000, "the cursor in Claude's terminal")
      close_terminal()
    end,
  },
  {
    "a second bridge: claudecode.nvim on the runtimepath and a live lock file for the project are reported by :checkhealth and once by setup()",
    function()
      local bridges = require("claude_context.bridges")
      setup({ claudecode = { commands = true } })
      eq(nil, bridges.claudecode())
      -- claudecode.nvim on the runtimepath (not loaded).
      local other = tmp .. "/claudecode.nvim"
      vim.fn.mkdir(other .. "/lua/claudecode", "p")
      h.write(other .. "/lua/claudecode/init.lua", "return {}\n")
      vim.opt.runtimepath:append(other)
      eq({ loaded = false, path = other .. "/lua/claudecode/init.lua" }, bridges.claudecode())
      package.loaded.claudecode = {}
      eq(true, bridges.claudecode().loaded, "require('claudecode') ran")
      package.loaded.claudecode = nil
      -- A live lock file (this Neovim's pid, as claudecode.nvim in this editor writes it) for the
      -- project; a dead one, another project's, and a symlink are not counted.
      local dir = vim.env.CLAUDE_CONFIG_DIR .. "/ide"
      vim.fn.mkdir(dir, "p")
      local function lock(port, pid, folders, extra)
        local t = vim.tbl_extend(
          "force",
          { pid = pid, workspaceFolders = folders, ideName = "Neovim", transport = "ws", authToken = "x" },
          extra or {}
        )
        h.write(("%s/%d.lock"):format(dir, port), vim.json.encode(t))
      end
      lock(41001, vim.fn.getpid(), { project })
      lock(41002, 999999, { project })
      lock(41003, vim.fn.getpid(), { tmp .. "/elsewhere" })
      lock(41005, vim.fn.getpid(), { tmp }, { ideKind = "Neovim", ideName = "Neovim\27[31m (tmp, pid 1)" })
      vim.uv.fs_symlink(dir .. "/41001.lock", dir .. "/41004.lock")
      local found = bridges.find(cc().status())
      eq(
        { 41001, 41005 },
        vim.tbl_map(function(l)
          return l.port
        end, found.locks)
      )
      eq(true, found.locks[1].this_nvim)
      eq(false, found.locks[1].ours)
      eq(true, found.locks[2].ours, "another Neovim with this plugin, its folder holding the project")
      -- setup() warns once a session, whatever the number of setup() calls.
      h.clear(messages)
      setup({ claudecode = { commands = true } })
      setup({ log_level = "debug", claudecode = { commands = true } })
      local warns = vim.tbl_filter(function(m)
        return m.level == vim.log.levels.WARN
      end, messages)
      eq(1, #warns, vim.inspect(messages))
      contains(warns[1].msg, "two bridges for this project")
      contains(warns[1].msg, "claudecode.nvim is on the runtimepath")
      contains(warns[1].msg, "41001.lock")
      contains(warns[1].msg, ":help claude-context-from-claudecode")
      -- :checkhealth says so, and what to do.
      local text = h.health_lines(function()
        require("claude_context.health.features").check_claudecode(cc().status())
      end, true)
      contains(text, "WARN claudecode.nvim is on the runtimepath (" .. other)
      contains(text, "Remove coder/claudecode.nvim")
      contains(
        text,
        "WARN "
          .. dir
          .. "/41001.lock: Neovim (pid "
          .. vim.fn.getpid()
          .. ", this Neovim) serves "
          .. project
          .. " too"
      )
      contains(
        text,
        "INFO " .. dir .. "/41005.lock: Neovim^[[31m (tmp, pid 1)",
        "another program's ideName is shown escaped"
      )
      contains(
        text,
        "WARN claudecode.commands: :ClaudeCode, :ClaudeCodeSend, … run this plugin's actions, but claudecode.nvim defines the same commands"
      )
      ok(not text:find("41002", 1, true) and not text:find("41003", 1, true) and not text:find("41004", 1, true), text)
    end,
  },
}
