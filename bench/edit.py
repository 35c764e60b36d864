#!/usr/bin/env python3
"""Edit in place (`:ClaudeContext edit`) with the real CLI against the loopback model stub.

In one run, with its own HOME and CLAUDE_CONFIG_DIR, a headless Neovim with the plugin set up
(`claude.cmd` = the CLI under test) and:

1. Warm edits: N rounds of a 10-line edit of a 40-line buffer, the answer streamed one line per
   delta. Per round, from `require("claude_context").edit{…}` (what a key press calls):
   `request` = until the request left (written to the warm process's stdin), `first change` =
   until the answer's first line was in the buffer; each streamed piece from its line's arrival
   on the process's stdout to it written in the buffer. The first round starts the process
   (reported apart, "cold").
2. The same edit through a fresh `claude -p` (the same arguments but stream-json input, the same
   prompt on stdin, a new process each time), interleaved with the warm rounds: from the spawn to
   the answer's first line complete on its stdout. The ratio warm / fresh (p50 over p50).
3. A 2,000-line answer streamed into a 20,000-line buffer (a 2,000-line range in its middle,
   every 10th line changed: 200 hunks): the editor's longest block while it streams and while
   the hunks are shown (a libuv timer on Neovim's main loop ticks every 1 ms and records the
   largest gap between two ticks, and the CPU time Neovim's process used in it: the main
   thread's own work at most, the rest of a gap being the scheduler's waits on a loaded
   machine), and the edit's own longest main-thread step. Twice: headless
   as the rounds above, then with a UI attached (120x40, the window on the range: every write's
   redraw included). Before each, the bench waits until Neovim is quiet (no block over 16 ms for
   0.5 s) and reports apart what it waited for: replacing a Lua buffer's text with 20,000 lines
   makes Neovim's own tree-sitter parse it again, in blocks of 0.3-0.8 s with no plugin loaded
   at all (`nvim --clean`), which the edit started right after used to be charged with.

   `--big N` runs it N times each; `--content lua` makes the buffer valid Lua (tree-sitter then
   highlights it and parses each change again; with the default "line N" text its first parse
   runs out of 'redrawtime' and the highlighter gives up); `--trace MS` lists each gap of MS or
   more with every main-thread slice in it, timed apart (bench/edit_trace.lua: the edit's steps,
   each vim.schedule callback, tree-sitter's parse, each redraw, Lua collection cycles).

    .deps/venv/bin/python bench/edit.py [--claude PATH] [--rounds 10] [--nvim PATH]
        [--big N] [--content lines|lua] [--trace MS] [--no-treesitter]

A benchmark, not a test: it fails only when something does not start.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "bench"))

import conftest as C  # noqa: E402
import headless  # noqa: E402
from agents_cli import pct  # noqa: E402
from model_stub import ModelStub  # noqa: E402

GAPS = """
_G.bench_gap = { max = 0, cpu = 0 }
local t = vim.uv.new_timer()
local last, last_cpu = vim.uv.hrtime(), os.clock()
t:start(1, 1, function()
  local now, cpu = vim.uv.hrtime(), os.clock()
  local gap = (now - last) / 1e6
  if gap > _G.bench_gap.max then
    _G.bench_gap.max, _G.bench_gap.cpu = gap, (cpu - last_cpu) * 1000
  end
  last, last_cpu = now, cpu
end)
_G.bench_gap.reset = function() _G.bench_gap.max, _G.bench_gap.cpu = 0, 0; last, last_cpu = vim.uv.hrtime(), os.clock() end
"""

EDIT = """
local range, instruction = ...
_G.bench_done = false
_G.bench_gap.reset()
require("claude_context").edit({ buf = 0, range = range, instruction = instruction })
"""

DONE = """
local s = require("claude_context.edit").stats
return { done = _G.bench_done, stats = s, gap = _G.bench_gap.max, gap_cpu = _G.bench_gap.cpu }
"""


# The big edit's buffer, line n: "line n" (not Lua: tree-sitter's parse of the 20,000 lines ends in
# error recovery and runs out of 'redrawtime', so the Lua highlighter gives up on the window), or
# valid Lua (tree-sitter highlights it, and parses each change again while the answer streams).
LINE = {"lines": lambda n: f"line {n}", "lua": lambda n: f"local v{n} = {n}"}
CHANGED = {"lines": lambda n: f"changed {n}", "lua": lambda n: f"local v{n} = {n} + 1"}


def summary(xs: list) -> str:
    return f"p50 {pct(xs, 50):.2f} ms, p99 {pct(xs, 99):.2f} ms, max {max(xs):.2f} ms (n={len(xs)})"


def fenced(lines: list) -> str:
    return "```lua\n" + "\n".join(lines) + "\n```\n"


def edit_round(nvim, stub, answer, rng, instruction="rewrite it", trace=False):
    """One edit through the plugin: its stats and the editor's longest block meanwhile (with
    `trace`, bench/edit_trace.lua's report of its slices too, as r["trace"])."""
    stub.push({"text": answer, "pieces": "lines"})
    if trace:
        nvim.exec_lua("_G.bench_trace.start()")
    nvim.exec_lua(EDIT, rng, instruction)
    r = C.wait_until(lambda: (lambda v: v if v["done"] else None)(nvim.exec_lua(DONE)), 300, 0.02, "the edit")
    if trace:
        time.sleep(0.3)  # the redraws after the hunks are shown
        r["trace"] = nvim.exec_lua("return _G.bench_trace.report(...)", trace, 6)
    nvim.exec_lua("require('claude_context.edit.hunks').act(0, 'keep_all'); vim.cmd('silent undo')")
    return r


def quiet(nvim, window=0.5, timeout=60.0):
    """Waits until Neovim's main loop had no block over 16 ms for `window` seconds (blocks
    counted from the last `_G.bench_gap.reset()`); returns the seconds waited and the longest
    block seen meanwhile (ms)."""
    t0, worst = time.monotonic(), 0.0
    while time.monotonic() - t0 < timeout:
        time.sleep(window)
        gap = nvim.exec_lua("local g = _G.bench_gap.max; _G.bench_gap.reset(); return g")
        worst = max(worst, gap)
        if gap <= 16:
            break
    return time.monotonic() - t0 - window, worst


def big_round(nvim, stub, a, label):
    """The 2,000-line answer into the middle of the 20,000-line buffer, once Neovim is quiet."""
    s = a.buffer_lines // 2 - a.answer_lines // 2
    # The window moves to the range before the wait: its redraw (and tree-sitter's parse of what
    # it shows) is the bench's, not the edit's.
    nvim.exec_lua("vim.api.nvim_win_set_cursor(0, { ..., 0 }); vim.cmd('normal! zz')", s + 1)
    waited, worst = quiet(nvim)
    print(f"{label}: before the edit, Neovim was busy {waited:.2f} s on its own (its longest block {worst:.1f} ms); load average {os.getloadavg()[0]:.2f}")
    big = fenced([LINE[a.content](s + i) if i % 10 else CHANGED[a.content](s + i) for i in range(1, a.answer_lines + 1)])
    r = edit_round(nvim, stub, big, [s + 1, s + a.answer_lines], "change every 10th line", a.trace)
    st = r["stats"]
    print(
        f"{label}: {a.answer_lines}-line answer into a {a.buffer_lines}-line buffer: editor's longest block {r['gap']:.2f} ms ({r['gap_cpu']:.2f} ms of CPU time in it); "
        f"the edit's longest step {st['slice_max']:.2f} ms wall, {st['slice_cpu_max']:.2f} ms CPU ({st.get('slice_cpu_name') or '-'}); request {st['request']:.2f} ms; pieces {summary(st['piece_ms'])}; whole edit {st['done']:.0f} ms"
    )
    if a.trace:
        print(f"{label}: the ticker's gaps of {a.trace} ms or more, and what ran in them:\n{r['trace']}")


def fresh_round(cli, args, prompt, env, cwd):
    """The same edit through a new `claude -p`: ms from the spawn to the first answer line."""
    argv = [cli] + [a for a in args if a != "--input-format=stream-json"]
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd, text=True)
    p.stdin.write(prompt)
    p.stdin.close()
    text, first = "", None
    for line in p.stdout:
        try:
            m = json.loads(line)
        except ValueError:
            continue
        ev = m.get("event") or {}
        if m.get("type") == "stream_event" and ev.get("type") == "content_block_delta":
            text += (ev.get("delta") or {}).get("text", "")
            if first is None and text.count("\n") >= 2:
                first = (time.perf_counter() - t0) * 1000
        if m.get("type") == "result":
            break
    p.wait(60)
    return first


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--claude", default=str(C.CLAUDE))
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--buffer-lines", type=int, default=20000)
    ap.add_argument("--answer-lines", type=int, default=2000)
    ap.add_argument("--nvim", default=str(headless.NVIM), help="the Neovim to run (default 0.11.4)")
    ap.add_argument("--big", type=int, default=1, help="how many times the 2,000-line edit runs, headless and then with a UI")
    ap.add_argument("--content", choices=sorted(LINE), default="lines", help="the big edit's buffer: 'line N' (not Lua: tree-sitter gives up on it) or valid Lua (highlighted and parsed again as it changes)")
    ap.add_argument("--redrawtime", type=int, default=0, metavar="MS", help="'redrawtime' for the big edit's buffer: tree-sitter's highlighter gives up on a window whose parse takes longer (Neovim's default 2000)")
    ap.add_argument("--no-treesitter", action="store_true", help="the big edit's buffer without tree-sitter (vim.treesitter.stop()): what Neovim's own parse costs")
    ap.add_argument("--trace", type=float, default=0, metavar="MS", help="list the 2,000-line edit's main-thread gaps of MS or more and what ran in each (bench/edit_trace.lua)")
    a = ap.parse_args()
    headless.NVIM = Path(a.nvim)
    tmp = Path(tempfile.mkdtemp(prefix="bench-edit-"))
    project = tmp / "project"
    project.mkdir()
    config = tmp / "claude-config"
    C.seed_cli_config(config, project)
    stub = ModelStub().start()
    env = dict(
        os.environ,
        HOME=str(tmp),
        CLAUDE_CONFIG_DIR=str(config),
        ANTHROPIC_BASE_URL=stub.url,
        ANTHROPIC_API_KEY=C.API_KEY,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
    )
    os.environ.update({k: env[k] for k in ("CLAUDE_CONFIG_DIR", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_AUTOUPDATER")})
    proc, nvim = headless.start(tmp, project)
    try:
        nvim.exec_lua("require('claude_context').setup({ auto_start = false, claude = { cmd = ... } })", a.claude)
        nvim.exec_lua(GAPS)
        if a.trace:
            nvim.exec_lua("dofile(...).install()", str(ROOT / "bench" / "edit_trace.lua"))
        nvim.exec_lua("vim.api.nvim_create_autocmd('User', { pattern = 'ClaudeContextEdit', callback = function(e) if e.data.state == 'done' then _G.bench_done = true end end })")
        version = C.cli_version(Path(a.claude))
        nv = subprocess.run([a.nvim, "--version"], capture_output=True, text=True).stdout.split("\n")[0]
        print(f"Claude Code {version} ({a.claude}); {nv}; load average {os.getloadavg()[0]:.2f}")
        # 1 and 2: warm edits and fresh runs, interleaved.
        nvim.exec_lua("vim.api.nvim_buf_set_lines(0, 0, -1, false, vim.tbl_map(function(i) return 'line ' .. i end, vim.fn.range(1, 40))); vim.bo.filetype = 'lua'")
        answer = fenced([f"LINE {i}" for i in range(1, 11)])
        prompt = nvim.exec_lua("return (require('claude_context.edit.prompt').build({ buf = 0, s = 0, e = 10, instruction = 'rewrite it', root = vim.fn.getcwd(), context = 30 }))")
        cmd = json.loads(
            nvim.exec_lua(
                "local c = require('claude_context.config'); return require('claude_context.native').get().edit_command(c.to_native(c.options), ..., vim.fn.getcwd(), false)",
                a.claude,
            )
        )
        fresh_env = dict(env, **cmd["env"])
        cold = edit_round(nvim, stub, answer, [1, 10])
        requests, firsts, pieces, fresh = [], [], [], []
        for _ in range(a.rounds):
            r = edit_round(nvim, stub, answer, [1, 10])
            requests.append(r["stats"]["request"])
            firsts.append(r["stats"]["first_change"])
            pieces.extend(r["stats"]["piece_ms"])
            stub.push({"text": answer, "pieces": "lines"})
            f = fresh_round(a.claude, cmd["args"], prompt, fresh_env, project)
            if f is not None:
                fresh.append(f)
        print(f"cold first edit: request {cold['stats']['request']:.2f} ms, first change {cold['stats']['first_change']:.1f} ms")
        print(f"warm request leaving: {summary(requests)}")
        print(f"warm first change: {summary(firsts)}")
        print(f"fresh claude -p first line: {summary(fresh)}")
        print(f"ratio warm/fresh (p50): {pct(firsts, 50) / pct(fresh, 50):.3f}")
        print(f"streamed piece -> in the buffer: {summary(pieces)}")
        # 3: the big answer.
        if a.redrawtime:
            nvim.exec_lua("vim.o.redrawtime = ...", a.redrawtime)
        nvim.exec_lua("_G.bench_gap.reset(); vim.api.nvim_buf_set_lines(0, 0, -1, false, ...)", [LINE[a.content](i) for i in range(1, a.buffer_lines + 1)])
        if a.no_treesitter:
            nvim.exec_lua("vim.treesitter.stop()")
        for i in range(a.big):
            big_round(nvim, stub, a, "headless" + (f" #{i + 1}" if a.big > 1 else ""))
        nvim.exec_lua("_G.bench_gap.reset()")
        nvim.ui_attach(120, 40, rgb=True)
        # The headless rounds' messages ("edit: N hunk(s) kept", one per round) scrolled with no
        # UI to clear them: the first redraw with one asks for Enter (a hit-enter prompt holds
        # every later request). Answer it as a person would.
        for _ in range(20):
            time.sleep(0.05)
            if nvim.request("nvim_get_mode").get("blocking"):
                nvim.input("<CR>")
        for i in range(a.big):
            big_round(nvim, stub, a, "UI attached" + (f" #{i + 1}" if a.big > 1 else ""))
        print(f"load average at the end {os.getloadavg()[0]:.2f}")
    finally:
        headless.stop(proc)
        stub.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
