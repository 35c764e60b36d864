"""End to end for background sessions in worktrees (claude_context.agents) with the real CLI in
background mode (`claude --bg --worktree`, Claude Code's own service) and the model stub:

- `new` starts a worktree session whose scripted turn edits files there; `agents()` shows it,
  then done (from the plugin's hooks, which found the editor through the lock file);
- `land(name)` opens the land in the review view as a proposal: nothing is written until a hunk is
  kept, a rejected file never comes, the kept hunk lands beside the person's edit;
- `land(name, {all = true})` brings its edits into the main checkout; the person's uncommitted
  edit of another file, and of another region of the same file, survive;
- a session stopped in a shell (`claude stop`): told once, listed as an ended worktree, attach says
  so, its work still lands; its turn is recorded in its worktree, none in the main project;
- the service not running: an empty list, no error, nothing started;
- two Neovims on one project: both list the session, its permission request reaches one only;
- a restarted Neovim lists the session still running, and `attach` shows its conversation;
- `discard` stops it and removes the worktree; the branch stays.

Each test has its own HOME and CLAUDE_CONFIG_DIR, so its own service, which it ends by pid.
A CLI without `--bg` is skipped (the reason says which version is needed).
"""

from __future__ import annotations

import json
import subprocess

import pytest

from cc_service import Service
from conftest import REPO, WAIT, wait_until
from test_terminal_relay import stub_env

RELAY = REPO / "lib/claude-context-mcp"


def help_text(claude) -> str:
    r = subprocess.run([str(claude.exe), "--help"], capture_output=True, text=True, env=claude.env(), timeout=120)
    return r.stdout + r.stderr


def need_bg(claude) -> str:
    text = help_text(claude)
    if "--bg" not in text or "\n  agents " not in text:
        pytest.skip(f"Claude Code {claude.version} has no `--bg` / `claude agents --json` (background sessions need 2.1.197 or newer)")
    return text


def git(*args, cwd):
    r = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, f"git {args}: {r.stderr}"
    return r.stdout


def make_project(world):
    p = world.project
    git("init", "-q", "-b", "main", ".", cwd=p)
    git("config", "user.email", "t@t", cwd=p)
    git("config", "user.name", "t", cwd=p)
    (p / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 13)))
    (p / "README").write_text("readme\n")
    git("add", "-A", cwd=p)
    git("commit", "-qm", "init", cwd=p)
    return p


@pytest.fixture
def service(world):
    """Ends the service this test started, by pid, and removes its socket directory (the sessions'
    processes carry the test's config dir: the world fixture kills any left after)."""
    svc = Service(world.config_dir)
    yield svc.note
    svc.end()


def nvim_with_cli(make_bridge, claude, **terminal):
    env = stub_env(claude)
    setup = {"claude": {"cmd": str(claude.exe)}, "terminal": {"env": env, "permission_mode": "acceptEdits", **terminal}}
    # Neovim's own environment too: the service `claude --bg` starts inherits it.
    return make_bridge("nvim", setup_opts=setup, extra_env=env)


def lua_wait(b, code: str, what: str, timeout: float = WAIT * 2):
    """Runs `code` (which sets _G.agents_result through a callback) and waits for the result."""
    b.lua("_G.agents_result = nil")
    b.lua(code)
    return wait_until(lambda: b.lua("return _G.agents_result"), timeout, 0.2, what)


def entry(b, name):
    for e in b.lua("return require('claude_context').agents()"):
        if e.get("name") == name:
            return e
    return None


def test_new_agents_land_restart_attach_discard(make_bridge, claude, model_stub, world, service):
    if not RELAY.exists():
        pytest.fail(f"{RELAY} is missing: run `make build`")
    help_ = need_bg(claude)
    project = make_project(world)
    wt = project / ".claude/worktrees/feat"
    # Claude Code 2.1.197 asks whether to trust a folder it has not seen, the new worktree too.
    world.trust(wt)
    b = nvim_with_cli(make_bridge, claude)

    model_stub.push(
        {"tool_use": {"name": "Read", "input": {"file_path": str(wt / "a.txt")}}},
        {"tool_use": {"name": "Edit", "input": {"file_path": str(wt / "a.txt"), "old_string": "line 2\n", "new_string": "line 2 by claude\n"}}},
        {"tool_use": {"name": "Write", "input": {"file_path": str(wt / "new.txt"), "content": "made in the worktree\n"}}},
        {"text": "bg-turn-done-5521"},
    )
    started = lua_wait(
        b,
        "require('claude_context').new('feat', 'edit a and write new', { cb = function(err, s) _G.agents_result = { err = err, s = s } end })",
        "new's callback",
    )
    service()
    assert not started.get("err"), started
    assert started["s"]["id"], started

    def done():
        b.lua("require('claude_context.agents.list').refresh()")
        e = entry(b, "feat")
        return e if e and e["state"] == "done" else None

    try:
        e = wait_until(done, WAIT * 3, 0.5, "the background session to be done")
    except BaseException:
        print("agents:", b.lua("return require('claude_context').agents()"))
        print("sessions:", b.lua("return require('claude_context').status().sessions"))
        print("requests:", [(r.path, r.is_agent) for r in model_stub.requests])
        raise
    assert e["kind"] == "background", e
    assert e["worktree"] == str(wt), e
    assert e["branch"] == "worktree-feat", e
    assert e["prompt"] == "edit a and write new", e
    assert (wt / "new.txt").read_text() == "made in the worktree\n"
    assert "line 2 by claude\n" in (wt / "a.txt").read_text()
    # Nobody looks at a background session: its finish was notified, by the worktree's name.
    notified = b.lua("return require('claude_context.sessions.state').notified")
    assert any(n["state"] == "done" and n["message"].startswith("Claude [feat] finished: edit a and write new") for n in notified), notified
    git("rev-parse", "--verify", "refs/heads/worktree-feat", cwd=project)

    # The person's uncommitted edits in the main checkout: another file, another region.
    lines = (project / "a.txt").read_text().splitlines(keepends=True)
    lines[9] = "line 10 by me\n"
    (project / "a.txt").write_text("".join(lines))
    (project / "README").write_text("readme, my edit\n")

    # The land in the review view: nothing written until kept; a rejected file never comes; the
    # kept hunk lands beside the person's edit.
    view = lua_wait(
        b,
        "require('claude_context').land('feat', { on_ready = function(v) _G.agents_result = { files = vim.tbl_map(function(f) return f.path end, v.review.cs.files), proposal = v.review.cs.proposal } end })",
        "the land's view",
    )
    assert view["proposal"] is True and sorted(view["files"]) == ["a.txt", "new.txt"], view
    assert not (project / "new.txt").exists()
    assert "line 2 by claude" not in (project / "a.txt").read_text()
    kept = b.lua(
        """
        local R = require('claude_context.review')
        local M = require('claude_context.review.model')
        local rv = R.active()
        local by = {}
        for i, rf in ipairs(rv.cs.files) do by[rf.path] = M.file(rv, i) end
        local r = R.reject({ targets = { { f = by['new.txt'], hi = 1 } } })
        local k = R.keep({ targets = { { f = by['a.txt'], hi = 1 } } })
        R.flush()
        R.close()
        return { rejected = r.done, kept = k.done }
        """
    )
    assert kept == {"rejected": 1, "kept": 1}, kept
    a = (project / "a.txt").read_text()
    assert "line 2 by claude\n" in a and "line 10 by me\n" in a, a
    assert not (project / "new.txt").exists()

    report = lua_wait(
        b,
        "require('claude_context').land('feat', { all = true, cb = function(err, r) _G.agents_result = { err = err, r = r } end })",
        "the land",
    )
    b.lua("require('claude_context.review').flush(5000)")
    assert not report.get("err"), report
    a = (project / "a.txt").read_text()
    assert "line 2 by claude\n" in a and "line 10 by me\n" in a, a
    assert (project / "new.txt").read_text() == "made in the worktree\n"
    assert (project / "README").read_text() == "readme, my edit\n"
    assert not report["r"]["conflicts"], report

    # A restarted Neovim lists the session still running.
    b.stop()
    b2 = nvim_with_cli(make_bridge, claude)

    def listed():
        b2.lua("require('claude_context.agents.list').refresh()")
        e = entry(b2, "feat")
        return e if e and e["kind"] == "background" else None

    e2 = wait_until(listed, WAIT, 0.5, "the session listed by a new Neovim")
    assert e2["kind"] == "background" and e2["id"] == e["id"], e2

    if "\n  attach <" in help_:
        b2.lua("vim.o.columns = 200; vim.o.lines = 80")
        buf = lua_wait(b2, "require('claude_context.agents').attach('feat', function(err, buf) _G.agents_result = err or buf end)", "attach")
        assert isinstance(buf, int), buf

        def screen():
            return b2.lua("return table.concat(vim.api.nvim_buf_get_lines(..., 0, -1, false), '\\n')", buf)

        try:
            wait_until(lambda: "bg-turn-done-5521" in screen(), WAIT * 2, 0.5, "the conversation in the attach terminal")
        except BaseException:
            print("screen:\n" + screen()[-3000:])
            raise
        # Closing the terminal leaves the session running.
        b2.lua("vim.api.nvim_buf_delete(..., { force = true })", buf)
        assert wait_until(listed, WAIT, 0.5, "the session still listed")["id"] == e["id"]

    info = lua_wait(b2, "require('claude_context').discard('feat', function(err, i) _G.agents_result = { err = err, i = i } end)", "the discard")
    assert not info.get("err"), info
    assert not wt.exists()
    git("rev-parse", "--verify", "refs/heads/worktree-feat", cwd=project)
    assert "made in the worktree" in git("show", "worktree-feat:new.txt", cwd=project)
    service()


def bash_asking(make_bridge, claude, model_stub, world, service, name: str, command: str):
    """A background session `name` whose model runs Bash `command` under "default" (Bash asks
    the person): the Neovim, the worktree, and a function giving the first ask waiting."""
    if not RELAY.exists():
        pytest.fail(f"{RELAY} is missing: run `make build`")
    need_bg(claude)
    project = make_project(world)
    wt = project / f".claude/worktrees/{name}"
    world.trust(wt)
    b = nvim_with_cli(make_bridge, claude, permission_mode="default")
    model_stub.push(
        {"tool_use": {"name": "Bash", "input": {"command": command, "description": "Make a file"}}},
        {"text": f"{name}-turn-done"},
    )
    started = lua_wait(
        b,
        f"require('claude_context').new('{name}', 'run a command', {{ cb = function(err, s) _G.agents_result = {{ err = err, s = s }} end }})",
        "new's callback",
    )
    service()
    assert not started.get("err"), started

    def asked():
        ps = b.lua("return require('claude_context').permissions()")
        return ps[0] if ps else None

    return b, wt, asked


def test_a_background_permission_waits_for_decide(make_bridge, claude, model_stub, world, service):
    # "default": Bash asks the person.
    b, wt, asked = bash_asking(make_bridge, claude, model_stub, world, service, "perm", "touch made-by-bash.txt")
    try:
        ask = wait_until(asked, WAIT * 3, 0.5, "the Bash permission in permissions()")
    except BaseException:
        print("agents:", b.lua("return require('claude_context').agents()"))
        print("sessions:", b.lua("return require('claude_context').status().sessions"))
        raise
    assert ask["tool"] == "Bash", ask
    assert ask["name"] == "perm", ask
    assert ask["input"]["command"] == "touch made-by-bash.txt", ask
    # Nothing answers it by itself: still waiting a while later, and the command did not run.
    b.lua("vim.wait(1500)")
    assert not (wt / "made-by-bash.txt").exists()
    assert b.lua("return #require('claude_context').permissions()") == 1
    waiting = entry(b, "perm")
    assert waiting and waiting["state"] == "waiting", waiting
    # Told once, by the worktree's name, with what it asks; the statusline counts it.
    told = [n for n in b.lua("return require('claude_context.sessions.state').notified") if n["state"] == "waiting"]
    assert len(told) == 1, told
    assert told[0]["message"].startswith("Claude [perm] needs you: permission to run Bash"), told
    assert "touch made-by-bash.txt" in told[0]["message"], told
    assert "1 waiting" in b.lua("return require('claude_context.sessions.state').statusline()")

    assert b.lua("return require('claude_context').decide(...)", ask["id"], "allow") is True
    wait_until(lambda: (wt / "made-by-bash.txt").exists(), WAIT * 2, 0.2, "the allowed command to run")

    def done():
        b.lua("require('claude_context.agents.list').refresh()")
        e = entry(b, "perm")
        return e if e and e["state"] == "done" else None

    wait_until(done, WAIT * 2, 0.5, "the session to finish")
    assert not b.lua("return require('claude_context').permissions()")
    service()


def test_a_padded_permission_shows_its_end_and_cannot_be_allowed_cut(make_bridge, claude, model_stub, world, service):
    """A Bash command padded past 64 KiB, then `; touch ran.txt` (for `; curl … | sh`): the ask
    reaches Neovim as its start and its end with the count of what is cut between; it cannot be
    allowed there; a deny reaches the CLI and nothing of it runs."""
    b, wt, asked = bash_asking(make_bridge, claude, model_stub, world, service, "pad", "echo hello" + " " * (70 * 1024) + "; touch ran.txt")
    ask = wait_until(asked, WAIT * 3, 0.5, "the padded Bash permission in permissions()")
    assert ask["tool"] == "Bash", ask
    cut = ask.get("cut")
    assert cut, "the ask says it is cut"
    assert "; touch ran.txt" in cut["tail"], cut["tail"][-200:]
    assert cut["omitted_bytes"] > 0 and cut["total_bytes"] > 70 * 1024, {k: cut[k] for k in ("omitted_bytes", "total_bytes")}
    line = b.lua("return (require('claude_context.sessions.permissions').summary(...))", None, cut)
    assert "; touch ran.txt" in line and "not sent to the editor" in line, line
    allowed = b.lua("return { require('claude_context').decide(...) }", ask["id"], "allow")
    assert allowed[0] is None and "cannot be allowed here" in allowed[1], allowed
    assert b.lua("return require('claude_context').decide(...)", ask["id"], "deny") is True

    def done():
        b.lua("require('claude_context.agents.list').refresh()")
        e = entry(b, "pad")
        return e if e and e["state"] == "done" else None

    wait_until(done, WAIT * 2, 0.5, "the session to finish after the deny")
    assert not (wt / "ran.txt").exists()
    service()


def test_a_session_stopped_outside_neovim(make_bridge, claude, model_stub, world, service):
    """`claude stop` run in a shell: the editor says so once, lists the worktree as ended, attach
    says it is not running, and its work still lands."""
    if not RELAY.exists():
        pytest.fail(f"{RELAY} is missing: run `make build`")
    help_ = need_bg(claude)
    if "\n  stop" not in help_:
        pytest.skip(f"Claude Code {claude.version} has no `claude stop` (2.1.330 or newer)")
    project = make_project(world)
    wt = project / ".claude/worktrees/stopped"
    world.trust(wt)
    b = nvim_with_cli(make_bridge, claude)
    model_stub.push(
        {"tool_use": {"name": "Write", "input": {"file_path": str(wt / "made.txt"), "content": "made before the stop\n"}}},
        {"text": "stop-turn-done"},
    )
    started = lua_wait(
        b,
        "require('claude_context').new('stopped', 'write a file', { cb = function(err, s) _G.agents_result = { err = err, s = s } end })",
        "new's callback",
    )
    service()
    assert not started.get("err"), started

    def done():
        b.lua("require('claude_context.agents.list').refresh()")
        e = entry(b, "stopped")
        # (Its session id comes with the service's list or its first hook, whichever is first.)
        return e if e and e["kind"] == "background" and e["state"] == "done" and e.get("session_id") else None

    e = wait_until(done, WAIT * 3, 0.5, "the background session to be done")
    assert (wt / "made.txt").exists()
    # Its turn and checkpoints belong to its worktree: the review of its last turn is there, and
    # the main project has no turn of it.
    sid = json.dumps(e["session_id"])
    mine = lua_wait(
        b,
        "require('claude_context.review.source').changeset({ n = 1, session = %s }, function(err, cs) _G.agents_result = { err = err or false, root = cs and cs.root or false, files = cs and vim.tbl_map(function(f) return f.path end, cs.files) or {} } end)" % sid,
        "the session's change set",
    )
    assert mine["err"] is False, mine
    assert mine["root"] == str(wt) and mine["files"] == ["made.txt"], mine
    main = lua_wait(
        b,
        "require('claude_context.review.source').turns({ root = %s }, function(err, r) _G.agents_result = { err = err or false, n = r and #r.turns or 0 } end)" % json.dumps(str(project)),
        "the main project's turns",
    )
    assert main["n"] == 0, main
    # Stopped in a shell, with the same configuration home (so the same service).
    env = claude.env()
    r = subprocess.run([str(claude.exe), "stop", e["id"]], capture_output=True, text=True, env=env, cwd=project, timeout=120)
    assert r.returncode == 0, r.stderr + r.stdout
    b.lua("_G.seen_messages = {}; local n = vim.notify; vim.notify = function(m, l) table.insert(_G.seen_messages, m); return n(m, l) end")

    def ended():
        b.lua("require('claude_context.agents.list').refresh()")
        x = entry(b, "stopped")
        # (Its hooks say "ended" first; the service's list drops it a moment later.)
        return x if x and x["state"] == "ended" and x["kind"] == "worktree" else None

    try:
        x = wait_until(ended, WAIT * 2, 0.5, "the session listed as ended")
    except BaseException:
        print("agents:", b.lua("return require('claude_context').agents()"))
        raise
    assert x["kind"] == "worktree", x
    msgs = b.lua("return _G.seen_messages")
    assert any("stopped is not running any more" in m for m in msgs), msgs
    err = lua_wait(b, "require('claude_context.agents').attach('stopped', function(err) _G.agents_result = err or 'attached' end)", "attach's answer")
    assert "not running any more" in err, err
    report = lua_wait(
        b,
        "require('claude_context').land('stopped', { all = true, cb = function(err, r) _G.agents_result = { err = err, r = r } end })",
        "the land",
    )
    b.lua("require('claude_context.review').flush(5000)")
    assert not report.get("err"), report
    assert (project / "made.txt").read_text() == "made before the stop\n"
    service()


def test_the_service_not_running(make_bridge, claude, world):
    """A fresh configuration home has no service: the list is empty, no error, nothing started;
    the picker says there is no session and how to start one."""
    need_bg(claude)
    make_project(world)
    b = nvim_with_cli(make_bridge, claude)
    got = lua_wait(b, "require('claude_context.agents.list').refresh(function(l, err) _G.agents_result = { n = #l, err = err or false } end)", "the list")
    assert got == {"n": 0, "err": False}, got
    b.lua("_G.seen_messages = {}; vim.notify = function(m) table.insert(_G.seen_messages, m) end")
    b.lua("require('claude_context.agents.commands').pick()")
    msgs = wait_until(lambda: b.lua("return #_G.seen_messages > 0 and _G.seen_messages or nil"), WAIT, 0.2, "the picker's message")
    assert any("no Claude session in this project" in m and ":ClaudeContext new" in m for m in msgs), msgs
    # Listing started no service.
    assert not Service(world.config_dir).running(), Service(world.config_dir).running()


def test_two_neovims_on_one_project(make_bridge, claude, model_stub, world, service):
    """Two Neovims on one project: both list the background session; its permission request
    reaches one of them only (never answered twice, never by itself), and deciding there lets
    it run."""
    if not RELAY.exists():
        pytest.fail(f"{RELAY} is missing: run `make build`")
    need_bg(claude)
    project = make_project(world)
    wt = project / ".claude/worktrees/both"
    world.trust(wt)
    b1 = nvim_with_cli(make_bridge, claude, permission_mode="default")
    b2 = nvim_with_cli(make_bridge, claude, permission_mode="default")
    model_stub.push(
        {"tool_use": {"name": "Bash", "input": {"command": "touch made-by-both.txt", "description": "Make a file"}}},
        {"text": "both-turn-done"},
    )
    started = lua_wait(
        b1,
        "require('claude_context').new('both', 'run a command', { cb = function(err, s) _G.agents_result = { err = err, s = s } end })",
        "new's callback",
    )
    service()
    assert not started.get("err"), started

    def asked():
        got = [(b, b.lua("return require('claude_context').permissions()")) for b in (b1, b2)]
        got = [(b, ps) for b, ps in got if ps]
        return got or None

    try:
        got = wait_until(asked, WAIT * 3, 0.5, "the Bash permission in one Neovim")
    except BaseException:
        print("agents:", b1.lua("return require('claude_context').agents()"))
        raise
    b1.lua("vim.wait(1000)")
    got = asked()
    assert len(got) == 1 and len(got[0][1]) == 1, [(ps) for _, ps in got]
    owner, asks = got[0]
    assert not (wt / "made-by-both.txt").exists()

    # Both list it (its hooks may reach a Neovim before the service's list does: listed by its
    # worktree's name at once, as a background session once the service lists it).
    def listed(b):
        b.lua("require('claude_context.agents.list').refresh()")
        e = entry(b, "both")
        return e if e and e["kind"] == "background" else None

    for b in (b1, b2):
        e = wait_until(lambda: listed(b), WAIT, 0.5, "the session listed")
        assert e["kind"] == "background", e

    assert owner.lua("return require('claude_context').decide(...)", asks[0]["id"], "allow") is True
    wait_until(lambda: (wt / "made-by-both.txt").exists(), WAIT * 2, 0.2, "the allowed command to run")
    assert not b1.lua("return require('claude_context').permissions()")
    assert not b2.lua("return require('claude_context').permissions()")
    service()


def test_a_session_the_service_fails_is_told_as_a_failure(make_bridge, claude, model_stub, world, service):
    """`claude --bg` prints an id, then its service fails the session (here: `.claude/worktrees` is
    a file, so no worktree can be made): `new` tells of the failure (`on_failed`), and the session
    is neither listed nor counted as working."""
    if not RELAY.exists():
        pytest.fail(f"{RELAY} is missing: run `make build`")
    need_bg(claude)
    project = make_project(world)
    (project / ".claude").mkdir()
    (project / ".claude/worktrees").write_text("not a folder\n")
    b = nvim_with_cli(make_bridge, claude)
    b.lua("_G.failed = nil; require('claude_context.agents').CONFIRM_EVERY_MS = 500")
    started = lua_wait(
        b,
        "require('claude_context').new('blocked', 'do something', { cb = function(err, s) _G.agents_result = { err = err or false, s = s } end,"
        " on_failed = function(err) _G.failed = err end })",
        "new's callback",
    )
    service()
    if started.get("err"):
        # (A CLI that refuses at once says so through the callback: a failure too.)
        return
    failed = wait_until(lambda: b.lua("return _G.failed"), WAIT * 3, 0.5, "the failure")
    assert "did not start" in failed, failed
    assert b.lua("return require('claude_context.agents').started.blocked") is None
    e = entry(b, "blocked")
    assert e is None or e["state"] != "working", e
