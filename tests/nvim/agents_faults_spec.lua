-- Background sessions' bad input and faults (issue 29), with a fake `claude`: a session ended
-- outside Neovim (`claude stop`), the service not running or failing, an older CLI without
-- `agents --json`, a worktree removed by hand, bad names, Neovim killed in the middle of a land
-- (a child Neovim, SIGKILLed), and two Neovims landing the same worktree at once. Each case: a
-- clear message, nothing of the person's lost, the editor alive.
local h = require("helpers")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local messages = h.record_notify()

local A = function()
  return require("claude_context.agents")
end

local sh = h.sh

local tmp = h.tmpdir()
local fake = h.load("agents_fake").new(tmp)
local agents_json, agents_fail, answer = fake.agents_json, fake.agents_fail, fake.answer

local project = h.git_repo(tmp .. "/project")
h.write(project .. "/a.txt", "one\ntwo\nthree\n")
sh("git add -A && git commit -qm init", project)

h.cc().setup({ claude = { cmd = fake.exe } })
vim.cmd.cd(project)

local refresh, called = fake.refresh, fake.called

local function by_name(list, name)
  for _, e in ipairs(list) do
    if e.name == name then
      return e
    end
  end
end

---A big project for the land faults: `n` files of 100 lines; the worktree `name` changes lines
---10, 40, 70 of each, the person line 99. Returns the paths, the person's and the merged text.
local function big_land(name, n)
  local lines = {}
  for l = 1, 100 do
    lines[l] = ("line %d of the file"):format(l)
  end
  local paths = {}
  for i = 1, n do
    paths[i] = ("big-%s/f%03d.txt"):format(name, i)
  end
  vim.fn.mkdir(project .. "/big-" .. name, "p")
  for _, p in ipairs(paths) do
    h.write(project .. "/" .. p, table.concat(lines, "\n") .. "\n")
  end
  sh("git add -A && git commit -qm 'big " .. name .. "'", project)
  sh("git worktree add -q .claude/worktrees/" .. name .. " -b worktree-" .. name, project)
  local theirs, mine, merged = vim.deepcopy(lines), vim.deepcopy(lines), vim.deepcopy(lines)
  for _, l in ipairs({ 10, 40, 70 }) do
    theirs[l] = ("line %d changed by the session"):format(l)
    merged[l] = theirs[l]
  end
  mine[99] = "the person's own line 99"
  merged[99] = mine[99]
  for _, p in ipairs(paths) do
    h.write(project .. "/.claude/worktrees/" .. name .. "/" .. p, table.concat(theirs, "\n") .. "\n")
    h.write(project .. "/" .. p, table.concat(mine, "\n") .. "\n")
  end
  return paths, table.concat(mine, "\n") .. "\n", table.concat(merged, "\n") .. "\n"
end

---A child Neovim with the plugin set up in the project.
local function child()
  local c = h.load("child").start(project)
  c:lua(
    "local cmd, dir = ...; require('claude_context').setup({ claude = { cmd = cmd } }); vim.cmd.cd(dir)",
    fake.exe,
    project
  )
  return c
end

return {
  {
    "a session stopped outside Neovim (claude stop): told once, listed as an ended worktree; attach/stop say so; land and discard still work",
    function()
      sh("git worktree add -q .claude/worktrees/gone-bg -b worktree-gone-bg", project)
      local wt = project .. "/.claude/worktrees/gone-bg"
      h.write(wt .. "/a.txt", "one\nTWO\nthree\n")
      answer(
        agents_json,
        vim.json.encode({
          { id = "feed0001", cwd = wt, kind = "background", startedAt = 5, sessionId = "s-gone", status = "idle" },
        })
      )
      local e = by_name(refresh().list, "gone-bg")
      eq("background", e.kind)
      -- `claude stop feed0001` in a shell: the service lists it no more.
      h.clear(messages)
      answer(agents_json, "[]")
      local list = refresh().list
      contains(vim.inspect(messages), "gone-bg is not running any more")
      e = by_name(list, "gone-bg")
      ok(e, vim.inspect(list))
      eq("worktree", e.kind)
      eq("ended", e.state)
      -- Before the service has answered (a Neovim just started), nothing is known to have ended.
      local cache = require("claude_context.agents.cli").cache
      local at = cache.at
      cache.at = nil
      ok(
        not by_name(require("claude_context.agents.list").build(), "gone-bg"),
        "not listed as ended before the service answered"
      )
      cache.at = at
      eq({ "review", "land", "discard" }, require("claude_context.agents.commands").actions_for(e))
      local err
      A().attach("gone-bg", function(x)
        err = x
      end)
      contains(err, "not running any more")
      err = nil
      A().stop("gone-bg", function(x)
        err = x
      end)
      contains(err, "not running any more")
      eq(nil, (h.land_all("gone-bg")))
      eq("one\nTWO\nthree\n", h.read(project .. "/a.txt"))
      local info
      require("claude_context.agents.discard").discard("gone-bg", function(x, i)
        eq(nil, x)
        info = i
      end)
      wait_for(function()
        return info
      end, 20000, "the discard")
      ok(not vim.uv.fs_stat(wt), "the worktree is gone")
      ok(not called("stop feed0001"), "nothing to stop")
      sh("git checkout -q -- a.txt", project)
    end,
  },
  {
    "the service not running, failing, or too old: agents() answers, the reason is given, the picker says it",
    function()
      -- Not running: Claude Code lists nothing (it does not start the service for a list).
      answer(agents_json, "[]")
      local r = refresh()
      eq(nil, r.err)
      -- Failing: the reason, and the editor goes on.
      answer(agents_fail, "Error: cannot reach the background service: connect ECONNREFUSED /tmp/cc-daemon-0/x/sock\n")
      r = refresh()
      contains(r.err, "ECONNREFUSED")
      eq("table", type(h.cc().agents()))
      h.clear(messages)
      local orig = vim.ui.select
      vim.ui.select = function(_, _, cb)
        cb(nil)
      end
      require("claude_context.agents.commands").pick()
      wait_for(function()
        return #messages > 0
      end, 10000, "the picker's message")
      vim.ui.select = orig
      contains(vim.inspect(messages), "ECONNREFUSED")
      -- An older CLI without `agents`: the version needed.
      answer(agents_fail, "error: unknown command 'agents'\n")
      r = refresh()
      contains(r.err, "2.1.197")
      os.remove(agents_fail)
      eq(nil, refresh().err)
    end,
  },
  {
    "a worktree removed by hand: land names the branch that keeps its commits; discard removes its registration; new with its name is refused",
    function()
      sh("git worktree add -q .claude/worktrees/byhand -b worktree-byhand", project)
      local wt = project .. "/.claude/worktrees/byhand"
      h.write(wt .. "/made.txt", "made\n")
      sh("git add made.txt && git commit -qm made", wt)
      sh("rm -rf " .. vim.fn.shellescape(wt), project)
      local err
      require("claude_context.agents.land").land("byhand", {
        all = true,
        cb = function(x)
          err = x
        end,
      })
      wait_for(function()
        return err
      end, 10000, "the refusal")
      contains(err, "is gone")
      contains(err, "worktree-byhand")
      err = nil
      require("claude_context.agents.land").land("byhand", {
        cb = function(x)
          err = x
        end,
      })
      wait_for(function()
        return err
      end, 10000, "the refusal")
      contains(err, "is gone")
      local info
      require("claude_context.agents.discard").discard("byhand", function(x, i)
        eq(nil, x)
        info = i
      end)
      wait_for(function()
        return info
      end, 20000, "the discard")
      ok(not sh("git worktree list --porcelain", project):find("byhand", 1, true), "pruned")
      eq("made\n", sh("git show worktree-byhand:made.txt", project))
      local got
      A().new("byhand", nil, {
        cb = function(x)
          got = x
        end,
      })
      wait_for(function()
        return got
      end, 10000, "the refusal")
      contains(got, "branch worktree-byhand already exists")
    end,
  },
  {
    "bad names: every command refuses with the rules, nothing run",
    function()
      for _, bad in ipairs({ "a b", "../up", "-x", "x.lock", "a~b" }) do
        local errs = {}
        local r, e = A().new(bad, "p")
        eq(nil, r)
        errs[#errs + 1] = e
        require("claude_context.agents.land").land(bad, {
          all = true,
          cb = function(x)
            errs[#errs + 1] = x
          end,
        })
        require("claude_context.agents.discard").discard(bad, function(x)
          errs[#errs + 1] = x
        end)
        eq(3, #errs, vim.inspect(errs))
        for _, x in ipairs(errs) do
          contains(x, "not a valid name")
        end
      end
      ok(not called("--worktree a b"), "nothing started")
    end,
  },
  {
    "Neovim killed in the middle of a land: every file holds the person's text or the whole merge; landing again finishes it once",
    function()
      local paths, mine, merged = big_land("killed", 150)
      local c = child()
      local pid = vim.fn.jobpid(c.ch)
      c:lua("require('claude_context').land('killed', { all = true })")
      -- Killed as soon as the first file is written (or later: nothing here depends on when).
      wait_for(function()
        for _, p in ipairs(paths) do
          if h.read(project .. "/" .. p) ~= mine then
            return true
          end
        end
      end, 30000, "the child's first write")
      vim.uv.kill(pid, "sigkill")
      vim.wait(200)
      pcall(vim.fn.jobstop, c.ch)
      local landed = 0
      for _, p in ipairs(paths) do
        local t = h.read(project .. "/" .. p)
        ok(t == mine or t == merged, p .. " holds a mix: " .. tostring(t))
        landed = landed + (t == merged and 1 or 0)
      end
      ok(landed > 0)
      -- Temporary files beside the files: one a killed write left long ago goes at the next
      -- land; one being written now (another Neovim's), another name, a link of that name, one
      -- outside the land's folders stay.
      local dir = project .. "/big-killed/"
      local old = os.time() - 3600
      local stale, fresh =
        dir .. ".f001.txt.claude-context-0123456789ab.tmp", dir .. ".f002.txt.claude-context-abcdefabcdef.tmp"
      local other, link, outside =
        dir .. ".f003.txt.other-0123456789ab.tmp",
        dir .. ".f004.txt.claude-context-000000000000.tmp",
        project .. "/.a.txt.claude-context-111111111111.tmp"
      for _, p in ipairs({ stale, fresh, other, outside }) do
        h.write(p, "half a file\n")
      end
      h.write(tmp .. "/target.txt", "not the project's\n")
      assert(vim.uv.fs_symlink(tmp .. "/target.txt", link))
      for _, p in ipairs({ stale, other, outside }) do
        assert(vim.uv.fs_utime(p, old, old))
      end
      -- Again, from this Neovim: the rest lands, nothing twice.
      local report, cleaned
      require("claude_context.agents.land").land("killed", {
        all = true,
        cb = function(err, r)
          eq(nil, err)
          report = r
        end,
        on_cleaned = function(removed)
          cleaned = removed
        end,
      })
      wait_for(function()
        return report and cleaned
      end, 60000, "the second land")
      ok(vim.tbl_contains(cleaned, stale), vim.inspect(cleaned))
      for _, p in ipairs(cleaned) do
        ok(vim.fs.basename(p):match("^%.f%d+%.txt%.claude%-context%-%x+%.tmp$") and vim.fs.dirname(p) .. "/" == dir, p)
        ok(p ~= fresh and p ~= link, p)
      end
      eq(nil, vim.uv.fs_lstat(stale))
      for _, p in ipairs({ fresh, other, outside, link }) do
        ok(vim.uv.fs_lstat(p), p .. " stays")
      end
      eq("not the project's\n", h.read(tmp .. "/target.txt"))
      contains(vim.inspect(messages), "removed ")
      for _, p in ipairs({ fresh, other, outside, link }) do
        os.remove(p)
      end
      require("claude_context.review").flush(10000)
      eq(#paths - landed, #report.written)
      eq({}, report.conflicts)
      for _, p in ipairs(paths) do
        eq(merged, h.read(project .. "/" .. p), p)
      end
    end,
  },
  {
    "two Neovims on one project: both list the sessions; landing the same worktree from both at once lands each hunk once",
    function()
      local paths, _, merged = big_land("twice", 60)
      answer(
        agents_json,
        vim.json.encode({
          {
            id = "beef0002",
            cwd = project .. "/.claude/worktrees/twice",
            kind = "background",
            startedAt = 7,
            sessionId = "s-two",
            status = "busy",
          },
        })
      )
      local c = child()
      eq("twice", by_name(refresh().list, "twice") and "twice")
      c:lua("_G.listed = nil; require('claude_context.agents.list').refresh(function(l) _G.listed = l end)")
      local listed = c:wait("return _G.listed and #_G.listed", "the child's list", 10000)
      ok(listed >= 1)
      c:lua(
        "_G.rep = nil; require('claude_context').land('twice', { all = true, cb = function(e, r) _G.rep = { err = e, r = r } end })"
      )
      local report
      require("claude_context.agents.land").land("twice", {
        all = true,
        cb = function(err, r)
          eq(nil, err)
          report = r
        end,
      })
      wait_for(function()
        return report
      end, 60000, "this Neovim's land")
      local theirs = c:wait("return _G.rep", "the child's land", 60000)
      ok(theirs.err == nil or theirs.err == vim.NIL, vim.inspect(theirs.err))
      c:lua("require('claude_context.review').flush(10000)")
      require("claude_context.review").flush(10000)
      c:stop()
      for _, p in ipairs(paths) do
        eq(merged, h.read(project .. "/" .. p), p)
      end
      -- A file both wrote at once: one of them was refused (the file changed under it), never
      -- written over with other text.
      ok(#report.written + #theirs.r.written >= #paths, vim.inspect({ #report.written, #theirs.r.written }))
      answer(agents_json, "[]")
    end,
  },
}
