#!/usr/bin/env python3
"""`:ClaudeContext new` with the real CLI, side by side with doing it by hand.

In one run, against the loopback model stub, with its own HOME and CLAUDE_CONFIG_DIR (so its own
Claude Code service), N rounds each of, in turn:

- by hand: `git worktree add -q .claude/worktrees/hand-I -b worktree-hand-I`, then
  `claude --bg PROMPT` in that worktree; the wall time until `claude --bg` exited with its id
  (the floor: what a person types, without the plugin);
- the plugin: `require("claude_context").new("plug-I", PROMPT, {cb})` in a headless Neovim with
  the plugin set up (`claude --bg --worktree plug-I` with the relay's MCP config and the hooks'
  settings, after `git rev-parse` of the branch and, once, `claude --help`); the time the call
  held the main thread, the wall time until its callback (the CLI printed the id), and the
  editor's longest block meanwhile: a libuv timer on Neovim's main loop ticks every 1 ms and
  records the largest gap between two ticks, from before the call until the callback (a gap
  of about 1 ms is no block at all).

Reported: p50/p99/max of each, and the ratio of the plugin's wall time to the floor's (p50 over
p50). Each session is stopped after its round when the CLI has `claude stop`; at the end every
Claude Code process of this run's config dir is killed by pid, its socket directory
(/tmp/cc-daemon-<uid>/<id>) and the temporary world removed.

    .deps/venv/bin/python bench/agents_cli.py [--claude PATH] [--rounds 10]

A benchmark, not a test: it fails only when something does not start.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

import conftest as C  # noqa: E402
from model_stub import ModelStub  # noqa: E402
from cc_service import Service  # noqa: E402
from test_terminal_relay import stub_env  # noqa: E402

PROMPT = "say hello"


def pct(xs: list, p: float) -> float:
    xs = sorted(xs)
    k = min(len(xs) - 1, max(0, round(p / 100 * (len(xs) - 1))))
    return xs[k]


def summary(xs: list) -> str:
    return f"p50 {pct(xs, 50):.1f} ms, p99 {pct(xs, 99):.1f} ms, max {max(xs):.1f} ms"


def run(argv, cwd, env, timeout=120):
    r = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise SystemExit(f"{argv[:3]} failed ({r.returncode}): {r.stderr or r.stdout}")
    return r.stdout + r.stderr


CPU = """
function _G.bench_cpu()
  local r = vim.uv.getrusage()
  return (r.utime.sec + r.stime.sec) * 1000 + (r.utime.usec + r.stime.usec) / 1000
end
"""

NEW = """
local name = ...
_G.bench = { gap = 0, cpu0 = _G.bench_cpu() }
local uv = vim.uv
local tick = uv.new_timer()
local last = uv.hrtime()
tick:start(1, 1, function()
  local now = uv.hrtime()
  local g = (now - last) / 1e6
  if g > _G.bench.gap then
    _G.bench.gap = g
  end
  last = now
end)
-- The slowest callback the plugin scheduled meanwhile, and where it was made.
_G.bench.slice, _G.bench.where = 0, "?"
local orig = vim.schedule
vim.schedule = function(fn)
  orig(function()
    local s0 = uv.hrtime()
    fn()
    local d = (uv.hrtime() - s0) / 1e6
    if d > _G.bench.slice then
      local info = debug.getinfo(fn, "S")
      _G.bench.slice, _G.bench.where = d, info.short_src .. ":" .. info.linedefined
    end
  end)
end
local t0 = uv.hrtime()
require("claude_context").new(name, %r, {
  cb = function(err, s)
    _G.bench.cb_ms = (uv.hrtime() - t0) / 1e6
    _G.bench.cpu = _G.bench_cpu() - _G.bench.cpu0
    _G.bench.err = err
    _G.bench.id = s and s.id
    tick:stop()
    tick:close()
    vim.schedule = orig
  end,
})
_G.bench.call_ms = (uv.hrtime() - t0) / 1e6
""" % PROMPT


IDLE_START = """
_G.idle = { gap = 0, cpu0 = _G.bench_cpu() }
local uv = vim.uv
local tick = uv.new_timer()
local last = uv.hrtime()
_G.idle.tick = tick
tick:start(1, 1, function()
  local now = uv.hrtime()
  local g = (now - last) / 1e6
  if g > _G.idle.gap then
    _G.idle.gap = g
  end
  last = now
end)
"""

IDLE_STOP = """
_G.idle.tick:stop()
_G.idle.tick:close()
return { _G.idle.gap, _G.bench_cpu() - _G.idle.cpu0 }
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--claude", default=str(C.CLAUDE))
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args()
    args.claude = str(Path(args.claude).resolve()) if os.sep in args.claude else args.claude

    root = Path(tempfile.mkdtemp(prefix="cc-bench-agents-")).resolve()
    home, config_dir, project = root / "home", root / "claude-config", root / "project"
    for d in (home, project, root / "tmp"):
        d.mkdir(parents=True)
    C.seed_cli_config(config_dir, project)
    world = C.World(root=root, home=home, config_dir=config_dir, project=project, procs=C.Procs(f"CLAUDE_CONFIG_DIR={config_dir}"))
    # Claude Code 2.1.197 asks whether to trust a folder it has not seen: the worktrees too.
    world.trust(project, *(project / ".claude/worktrees" / f"{k}-{i}" for k in ("hand", "plug") for i in range(args.rounds)))
    for a in (["init", "-q", "-b", "main", "."], ["config", "user.email", "b@b"], ["config", "user.name", "b"]):
        run(["git", *a], project, None)
    (project / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 100)))
    run(["git", "add", "-A"], project, None)
    run(["git", "commit", "-qm", "init"], project, None)

    stub = ModelStub().start()
    stub.default = {"text": "hello from the stub"}
    service = Service(world.config_dir)
    bridge = None
    try:
        claude = C.Claude(world, stub, exe=Path(args.claude))
        env = claude.env()
        help_ = run([args.claude, "--help"], project, env)
        if "--bg" not in help_:
            raise SystemExit(f"Claude Code {claude.version} has no --bg")
        can_stop = "\n  stop" in help_
        senv = stub_env(claude)
        setup = {"claude": {"cmd": args.claude}, "terminal": {"env": senv, "permission_mode": "acceptEdits"}}
        bridge = C.NvimBridge(world, project, setup_opts=setup, extra_env=senv)
        load0 = os.getloadavg()

        def stop(sid):
            if can_stop and sid:
                subprocess.run([args.claude, "stop", sid], cwd=project, env=env, capture_output=True, timeout=60)
            service.note()

        hand, plug_wall, plug_call, plug_gap, slices, idle_gap = [], [], [], [], [], []
        plug_cpu, idle_cpu = [], []
        bridge.lua(CPU)
        for i in range(args.rounds):
            for kind in (("hand", "plug") if i % 2 == 0 else ("plug", "hand")):
                if kind == "hand":
                    wt = project / ".claude/worktrees" / f"hand-{i}"
                    bridge.lua(IDLE_START)
                    t0 = time.monotonic()
                    run(["git", "worktree", "add", "-q", str(wt), "-b", f"worktree-hand-{i}"], project, env)
                    out = run([args.claude, "--bg", PROMPT], wt, env)
                    hand.append((time.monotonic() - t0) * 1000)
                    g, cpu = bridge.lua(IDLE_STOP)
                    idle_gap.append(g)
                    idle_cpu.append(cpu)
                    sid = C_parse_id(out)
                    stop(sid)
                else:
                    bridge.lua(NEW, f"plug-{i}")
                    res = C.wait_until(lambda: bridge.lua("return _G.bench.cb_ms and _G.bench"), 120, 0.05, "new's callback")
                    if res.get("err"):
                        raise SystemExit(f"new failed: {res['err']}")
                    plug_wall.append(res["cb_ms"])
                    plug_call.append(res["call_ms"])
                    plug_gap.append(res["gap"])
                    plug_cpu.append(res["cpu"])
                    slices.append((res["slice"], res["where"]))
                    stop(res.get("id"))
        load1 = os.getloadavg()
        print(f"Claude Code {claude.version}, {args.rounds} rounds, load average {load0[0]:.2f} before, {load1[0]:.2f} after")
        print(f"by hand (git worktree add + claude --bg): {summary(hand)}")
        print(f"new(): until its callback {summary(plug_wall)}")
        print(f"new(): the call held the main thread {summary(plug_call)}")
        print(f"new(): the editor's longest block (1 ms ticks) {summary(plug_gap)}")
        print(f"the same Neovim doing nothing while it is done by hand: longest gap {summary(idle_gap)}")
        print(f"Neovim's CPU time (user + system): during new() until its callback {summary(plug_cpu)}; doing nothing while by hand {summary(idle_cpu)}")
        worst = max(slices)
        print(f"new(): the longest callback the plugin scheduled {summary([x[0] for x in slices])} (the longest at {worst[1]})")
        print(f"ratio new / by hand (p50 / p50): {pct(plug_wall, 50) / pct(hand, 50):.2f}")
    finally:
        if bridge is not None:
            bridge.stop()
        stub.stop()
        service.end()
        world.procs.cleanup()
        shutil.rmtree(root, ignore_errors=True)


def C_parse_id(out: str):
    import re

    m = re.search(r"backgrounded\s*\W*\s*([0-9a-f]+)", out)
    return m.group(1) if m else None


if __name__ == "__main__":
    main()
