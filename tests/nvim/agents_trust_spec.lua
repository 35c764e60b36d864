-- A background session's worktree is the model's ground (issue 38): land, its view, the review of
-- a worktree and discard run git only on a worktree the project's git registers, with its
-- registered git dir, so nothing in the worktree chooses where git acts or what it runs (a
-- worktree whose .git file was removed, points at another repository, or at a git dir the model
-- built with a command in its config); discard removes only the named worktree and says when
-- there is none; stopping on an older CLI signals only the session's own process; names Claude
-- Code refuses are refused by `new`, and a session the service lists as failed is told of as one.
local h = require("helpers")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local sh, messages, tmp = h.sh, h.record_notify(), h.tmpdir()
local F = h.load("agents_fake")
local fake = F.new(tmp)
local agents_json, answer, called, refresh = fake.agents_json, fake.answer, fake.called, fake.refresh

---The background sessions' module.
local function A()
  return require("claude_context.agents")
end

local project = h.git_repo(tmp .. "/project")
h.write(project .. "/a.txt", "one\ntwo\nthree\n")
sh("git add -A && git commit -qm init", project)
-- The person's own work in progress: uncommitted and untracked.
h.write(project .. "/a.txt", "one\ntwo\nthree\nmine\n")
h.write(project .. "/untracked.txt", "not committed\n")

h.cc().setup({ claude = { cmd = fake.exe } })
vim.cmd.cd(project)

---What the person's checkout is: its HEAD, its index and status, its branches.
local function checkout_state(dir)
  return sh(
    "git rev-parse HEAD && git status --porcelain=v1 -uall && git branch -a && git stash list && git ls-files -s",
    dir
  )
end

---A command the model wrote into a git config: it makes `marker` when it runs.
local marker = tmp .. "/MARKER"
local evil = tmp .. "/evil.sh"
h.write(evil, ("#!/bin/sh\necho ran >> %q\nexit 1\n"):format(marker))
vim.fn.setfperm(evil, "rwxr-xr-x")

---A new worktree `name` of the project, registered by git, with a change of the session's.
local function worktree(name)
  sh(("git worktree add -q .claude/worktrees/%s -b worktree-%s"):format(name, name), project)
  local wt = project .. "/.claude/worktrees/" .. name
  h.write(wt .. "/a.txt", "one\nTWO\nthree\n")
  return wt
end

---A git dir the model built in the worktree `wt` from the project's objects, whose config runs
---`evil.sh` (fsmonitor, hooks, filters, an external diff), and the worktree's .git pointing at it.
local function model_git_dir(wt)
  local fakedir = wt .. "/.fakegit"
  sh(
    ("git clone -q --no-checkout %q %q && mv %q/.git %q && rmdir %q"):format(
      project,
      tmp .. "/clone",
      tmp .. "/clone",
      fakedir,
      tmp .. "/clone"
    ),
    tmp
  )
  sh(
    ("git --git-dir=%q update-ref refs/heads/main HEAD && git --git-dir=%q symbolic-ref HEAD refs/heads/main"):format(
      fakedir,
      fakedir
    ),
    tmp
  )
  vim.fn.mkdir(fakedir .. "/hooks-evil", "p")
  for _, hook in ipairs({
    "pre-commit",
    "post-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-index-change",
    "reference-transaction",
  }) do
    vim.uv.fs_copyfile(evil, fakedir .. "/hooks-evil/" .. hook)
    vim.fn.setfperm(fakedir .. "/hooks-evil/" .. hook, "rwxr-xr-x")
  end
  local cfg = ('[core]\n\tfsmonitor = %s\n\thooksPath = %s\n\tpager = %s\n[diff]\n\texternal = %s\n[filter "evil"]\n\tclean = %s\n\tsmudge = %s\n[diff "evil"]\n\ttextconv = %s\n'):format(
    evil,
    fakedir .. "/hooks-evil",
    evil,
    evil,
    evil,
    evil,
    evil
  )
  h.write(fakedir .. "/config", h.read(fakedir .. "/config") .. cfg)
  h.write(wt .. "/.gitattributes", "* filter=evil diff=evil\n")
  h.write(wt .. "/.git", "gitdir: " .. fakedir .. "\n")
end

---Every operation that runs git on worktree `name`: each must fail with a message, none succeed.
local function every_operation(name)
  local errs = {}
  h.clear(messages)
  local done = 0
  local function cb(e)
    errs[#errs + 1] = e or "(succeeded)"
    done = done + 1
  end
  require("claude_context.agents.land").land(name, { all = true, cb = cb })
  require("claude_context.agents.land").land(name, { cb = cb })
  require("claude_context.agents.land").review(name, cb)
  require("claude_context.agents.discard").discard(name, cb)
  wait_for(function()
    return done == 4
  end, 30000, "the four operations on " .. name)
  return errs
end

---Worktree `name` made hostile by `spoil(wt)`: every operation refuses with `expected`, no
---command of the model's runs, the person's checkout stays as it was. Returns the worktree.
local function hostile(name, spoil, expected)
  local wt = worktree(name)
  spoil(wt)
  local before = checkout_state(project)
  local errs = every_operation(name)
  ok(not vim.uv.fs_stat(marker), "the model's command ran: " .. (h.read(marker) or ""))
  eq(before, checkout_state(project))
  for _, e in ipairs(errs) do
    contains(e, expected)
  end
  return wt
end

---Discards `name`, waited for: its info (the discard must succeed).
local function discarded(name)
  local info
  require("claude_context.agents.discard").discard(name, function(e, i)
    eq(nil, e)
    info = i
  end)
  return wait_for(function()
    return info
  end, 30000, "the discard of " .. name)
end

return {
  {
    "the registered-worktree check: paths named by git's files, one registration",
    function()
      local W = require("claude_context.agents.worktree")
      eq("/p/.git/worktrees/x", W.named_path("gitdir: /p/.git/worktrees/x\n", "gitdir", "/w"))
      eq("/p/.git/worktrees/x", W.named_path("gitdir: ../../.git/worktrees/x", "gitdir", "/p/.claude/w"))
      eq(nil, W.named_path("gitdir:/p", "gitdir", "/w"))
      eq(nil, W.named_path("gitdir: ../../../../x", "gitdir", "/p/w"))
      eq(nil, W.named_path("gitdir: /a\n/b", "gitdir", "/w"))
      eq(nil, W.named_path("", nil, "/w"))
      eq("/p/.claude/worktrees/x/.git", W.named_path("/p/.claude/worktrees/x/.git\n", nil, "/p/.git/worktrees/x"))
      eq(
        "/c/worktrees/x",
        (W.registered({ ["/c/worktrees/x"] = "/p/w/x/.git\n", ["/c/worktrees/y"] = "/p/w/y/.git\n" }, "/p/w/x/.git"))
      )
      eq({ nil, "not registered" }, { W.registered({ ["/c/worktrees/y"] = "/p/w/y/.git\n" }, "/p/w/x/.git") })
      eq(
        { nil, "registered more than once" },
        { W.registered({ ["/c/worktrees/x"] = "/p/w/x/.git", ["/c/worktrees/x1"] = "/p/w/x/.git" }, "/p/w/x/.git") }
      )
    end,
  },
  {
    "the project of a folder in a worktree is the outer checkout, whatever .git the model made inside",
    function()
      local wt = worktree("nested")
      h.git_repo(wt .. "/sub")
      local N = require("claude_context.agents.names")
      eq(project, N.project_of(wt .. "/sub"))
      eq(project, N.project_of(wt))
      eq(project, N.project_of(project))
      sh("git worktree remove --force --force .claude/worktrees/nested", project)
    end,
  },
  {
    "a worktree whose .git file was removed: land, its view, review and discard refuse; the person's checkout is untouched",
    function()
      local wt = hostile("nogit", function(wt)
        os.remove(wt .. "/.git")
      end, "has no .git file")
      eq("one\ntwo\nthree\nmine\n", h.read(project .. "/a.txt"))
      ok(vim.uv.fs_stat(wt), "the worktree stays")
    end,
  },
  {
    "a worktree whose .git points at another repository: every operation refuses; that repository and the checkout are untouched",
    function()
      local other = h.git_repo(tmp .. "/other")
      h.write(other .. "/a.txt", "one\ntwo\nthree\n")
      sh("git add -A && git commit -qm other", other)
      h.write(other .. "/a.txt", "other's own work\n")
      h.write(other .. "/new.txt", "other's untracked\n")
      local before_other = checkout_state(other)
      hostile("elsewhere", function(wt)
        h.write(wt .. "/.git", "gitdir: " .. other .. "/.git\n")
      end, "points elsewhere than the project's git")
      eq(before_other, checkout_state(other))
    end,
  },
  {
    "a worktree whose .git points at a git dir the model built, with commands in its config: nothing of it runs",
    function()
      hostile("built", model_git_dir, "points elsewhere than the project's git")
    end,
  },
  {
    "a registered worktree with .gitattributes filters and a nested repository's fsmonitor: land and discard run none of them",
    function()
      local wt = worktree("attrs")
      -- The person's config defines a filter (as git-lfs does); the worktree's attributes may not
      -- choose to run it on the model's files.
      sh(("git config filter.evil.clean %q && git config filter.evil.smudge %q"):format(evil, evil), project)
      h.write(wt .. "/.gitattributes", "* filter=evil diff=evil\n")
      -- A nested repository committed as a submodule, whose own config runs a command.
      local sub = wt .. "/sub"
      h.git_repo(sub)
      h.write(sub .. "/s.txt", "s\n")
      sh(("git add -A && git commit -qm s && git config core.fsmonitor %q"):format(evil), sub)
      sh("git -c core.hooksPath=/dev/null add a.txt sub && git -c core.hooksPath=/dev/null commit -qm 'sub'", wt)
      h.write(sub .. "/s.txt", "changed\n")
      os.remove(marker)
      local err = h.land_all("attrs")
      eq(nil, err)
      eq("one\nTWO\nthree\nmine\n", h.read(project .. "/a.txt"))
      discarded("attrs")
      sh("git config --unset filter.evil.clean && git config --unset filter.evil.smudge", project)
      ok(not vim.uv.fs_stat(marker), "a command the worktree chose ran: " .. (h.read(marker) or ""))
      ok(not vim.uv.fs_stat(wt), "the worktree is gone")
      os.remove(project .. "/.gitattributes")
      sh("git checkout -q -- a.txt && printf 'one\\ntwo\\nthree\\nmine\\n' > a.txt", project)
    end,
  },
  {
    "land: a name with a line break, a nested .git, are never landed; the line break is said",
    function()
      local wt = worktree("odd")
      local nl = "x\nHEAD:a.txt"
      h.write(wt .. "/" .. nl, "the model's\n")
      vim.fn.mkdir(wt .. "/deep/.GIT", "p")
      h.write(wt .. "/deep/.GIT/config", "[core]\n")
      local err, report = h.land_all("odd")
      eq(nil, err)
      ok(not vim.uv.fs_lstat(project .. "/" .. nl), "a name with a line break was landed")
      ok(not vim.uv.fs_lstat(project .. "/deep"), "a .git folder was landed")
      contains(vim.inspect(report.skipped), "line break")
      eq("one\nTWO\nthree\nmine\n", h.read(project .. "/a.txt"))
      -- A path git will not add (a `.GIT` folder) does not keep the worktree from going: said.
      h.clear(messages)
      discarded("odd")
      contains(vim.inspect(messages), "not saved, git would not add it")
      eq("the model's\n", sh("git show worktree-odd:" .. vim.fn.shellescape(nl), project))
      sh("git checkout -q -- a.txt && printf 'one\\ntwo\\nthree\\nmine\\n' > a.txt", project)
    end,
  },
  {
    "discard: a name with no session and no worktree is an error; only the named worktree goes, the project's others stay",
    function()
      -- Another worktree whose folder was removed by hand: git would prune it, discard may not.
      local stale = worktree("stale-other")
      sh("rm -rf " .. vim.fn.shellescape(stale), project)
      local err
      require("claude_context.agents.discard").discard("nosuch", function(e)
        err = e or "(succeeded)"
      end)
      wait_for(function()
        return err
      end, 20000, "the discard")
      contains(err, 'no session or worktree "nosuch"')
      contains(sh("git worktree list --porcelain", project), "stale-other")
      local keep = worktree("keep-me")
      sh("rm -rf " .. vim.fn.shellescape(keep), project)
      discarded("stale-other")
      local list = sh("git worktree list --porcelain", project)
      ok(not list:find("stale-other", 1, true), list)
      contains(list, "keep-me")
      sh("git worktree remove --force --force .claude/worktrees/keep-me", project)
    end,
  },
  {
    "stop on a CLI without `claude stop`: the pid the service names is signalled only when it is the session's own process",
    function()
      local wt = worktree("pidded")
      -- An unrelated process of the person's (a claude of theirs in their checkout), and the
      -- session's own (a claude working in its worktree).
      local bin = tmp .. "/claude-sleep"
      vim.uv.fs_copyfile(vim.fn.exepath("sleep"), bin)
      vim.fn.setfperm(bin, "rwxr-xr-x")
      local unrelated = vim.system({ bin, "120" }, { cwd = project })
      local plain = vim.system({ "sleep", "120" }, { cwd = wt })
      fake.help_is(F.HELP_NO_STOP)
      answer(
        agents_json,
        vim.json.encode({
          {
            id = "dead0001",
            pid = unrelated.pid,
            cwd = wt,
            kind = "background",
            startedAt = 5,
            sessionId = "s-pid",
            status = "busy",
          },
        })
      )
      refresh()
      h.clear(messages)
      discarded("pidded")
      vim.wait(300)
      ok(vim.uv.kill(unrelated.pid, 0) == 0, "the unrelated process was signalled")
      contains(vim.inspect(messages), "not stopped")
      local D = require("claude_context.agents.discard")
      eq(false, (D.is_session_process(unrelated.pid, wt)))
      eq(false, (D.is_session_process(plain.pid, wt)))
      for _, bad in ipairs({ 0, -1, 1, 1.5, "12", 2 ^ 40 }) do
        eq(false, (D.is_session_process(bad, wt)), vim.inspect(bad))
      end
      -- The session's own process: a claude working in its worktree is ended.
      local wt2 = worktree("pidded2")
      local own = vim.system({ bin, "120" }, { cwd = wt2 })
      eq(true, (D.is_session_process(own.pid, wt2)))
      answer(
        agents_json,
        vim.json.encode({
          {
            id = "dead0002",
            pid = own.pid,
            cwd = wt2,
            kind = "background",
            startedAt = 5,
            sessionId = "s-pid2",
            status = "busy",
          },
        })
      )
      refresh()
      discarded("pidded2")
      eq(15, own:wait(10000).signal)
      unrelated:kill("sigkill")
      plain:kill("sigkill")
      fake.help_is(F.HELP)
      answer(agents_json, "[]")
    end,
  },
  {
    "new: a name Claude Code refuses is refused before anything runs; a session the service lists as failed is a failure, not shown working",
    function()
      for _, bad in ipairs({ "a+b", "caf\195\169", ("x"):rep(65), "x\255y" }) do
        local r, err = A().new(bad, "p")
        eq(nil, r)
        contains(err, bad == "x\255y" and 'the name "x\\xffy" is not UTF-8' or "not a name Claude Code takes")
      end
      ok(not called("--bg"), "nothing started")
      -- Claude Code prints an id; its service lists the session in the project (as 2.1.197 does
      -- until the worktree is made), then as failed.
      local function entry(state, cwd)
        answer(
          agents_json,
          vim.json.encode({
            {
              id = "abcd1234",
              cwd = cwd or project,
              kind = "background",
              startedAt = 5,
              sessionId = "s-f",
              state = state,
            },
          })
        )
      end
      entry("working")
      A().CONFIRM_EVERY_MS = 50
      local started, failed
      local function start(name)
        started, failed = nil, nil
        A().new(name, "p", {
          cb = function(e, s)
            started = { e, s }
          end,
          on_failed = function(e)
            failed = e
          end,
        })
        wait_for(function()
          return started
        end, 10000, "new's callback")
      end
      start("refused-later")
      vim.wait(300)
      eq(nil, failed)
      entry("failed")
      wait_for(function()
        return failed
      end, 20000, "the failure")
      eq(nil, started[1])
      contains(failed, "did not start")
      contains(failed, "failed")
      eq(nil, A().started["refused-later"])
      for _, e in ipairs(require("claude_context.agents.list").build()) do
        ok(e.name ~= "refused-later" or e.state ~= "working", vim.inspect(e))
      end
      -- Listed in its worktree: started, nothing told.
      entry("working", project .. "/.claude/worktrees/in-place")
      start("in-place")
      vim.wait(500)
      eq(nil, failed)
      ok(A().started["in-place"], "still known")
      A().started["in-place"] = nil
      answer(agents_json, "[]")
    end,
  },
  {
    "land and discard of a worktree whose name is not UTF-8: said in words",
    function()
      local name = "bad\255name"
      local errs = {}
      require("claude_context.agents.land").land(name, {
        all = true,
        cb = function(e)
          errs[#errs + 1] = e or "(succeeded)"
        end,
      })
      require("claude_context.agents.discard").discard(name, function(e)
        errs[#errs + 1] = e or "(succeeded)"
      end)
      wait_for(function()
        return #errs == 2
      end, 20000, "the answers")
      for _, e in ipairs(errs) do
        contains(e, "not UTF-8")
        ok(not e:find("\255", 1, true), "shown escaped")
      end
    end,
  },
}
