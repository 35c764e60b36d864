#!/usr/bin/env python3
"""Neither side waits: the read-only IDE tools at scale, and a Claude Code turn at a
hit-enter prompt, for claude-context.nvim and — side by side, same client, same run — the pure-Lua
reference coder/claudecode.nvim when a checkout of it is given.

Each side runs in its own TUI Neovim on a pseudo-terminal (a hit-enter prompt needs a UI), with
the plugin set up, temporary HOME / CLAUDE_CONFIG_DIR / XDG dirs. A Python WebSocket client
(authenticated with the lock file's token) calls the tools; meanwhile a sampler process with its
own `--listen` connection calls `nvim_eval("1")` back to back: the longest sample that overlaps a
call is how long the editor was blocked (the issue's "editor blocked (max)").

Scenarios (SIZE × the issue's sizes; --scale 10 for the ×10 targets):
  diagnostics   getDiagnostics with 60·S diagnostics in each of 300 buffers (18,000 at S=1)
  editors       getOpenEditors with 1,500·S listed buffers
  visual        a whole-file Visual selection (`ggVG`) of 200,000·S lines, then cursor moves
                (`k`, `j`, `k`, `j`) and `<Esc>`, with pauses longer than the selection debounce
                and than reading the selection takes: the editor blocked (max) over the whole time
  prompt-turn   with a hit-enter prompt up: closeAllDiffTabs + getDiagnostics, as Claude Code
                does at the start of a turn (a side that cannot answer within --prompt-wait
                seconds is reported as "no answer")
  opendiff      openDiff of a 5·S MB file (100,000·S lines of 50 bytes, a few lines changed and
                inserted in the middle; the old file on disk in the project, the proposal in
                new_file_contents): "on screen" is from sending the call until a window in some
                tab page shows a buffer holding the whole proposal (its line count and its last
                line, polled on a connection of its own), with the editor blocked (max) over that
                time; then closeAllDiffTabs rejects it and the bench waits for the view to go. A
                side that does not get there within --diff-wait seconds is reported as "no answer"
                (it runs last: such a side may stay busy, and is killed at the end)

    .deps/venv/bin/python bench/nowait.py [--scale 0.1] [--reference DIR] [--json FILE]
                                          [--scenarios diagnostics,prompt-turn,visual,editors,opendiff]

DIR is a checkout of https://github.com/coder/claudecode.nvim (never committed here). Without it
the bench says so and prints our figures only. A benchmark, not a test: it fails only when a side
does not start.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from ptyproc import PtyProcess  # noqa: E402

NVIM = os.environ.get("CLAUDE_CONTEXT_TEST_NVIM") or str(ROOT / ".deps" / "venv" / "bin" / "nvim")
# crates/core/examples/bench_rpc.rs (`make bench` builds it): the prompt-turn's calls again from Rust.
BENCH_RPC = ROOT / "target" / "release" / "examples" / "bench_rpc"
AUTH = "x-claude-code-ide-authorization"


def wait_until(pred, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {what}")


class Side:
    """One TUI Neovim with one plugin set up."""

    def __init__(self, name: str, setup_lua: str, rtp: str | None, tmp: Path):
        import pynvim

        self.name = name
        self.busy = False  # set when a scenario gave up on it: never asked over RPC again
        self.dir = tmp / name
        home = self.dir / "home"
        self.project = self.dir / "project"
        for d in (home, self.project):
            d.mkdir(parents=True)
        self.config_dir = self.dir / "claude"
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local/share"),
            "XDG_STATE_HOME": str(home / ".local/state"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "CLAUDE_CONFIG_DIR": str(self.config_dir),
        }
        self.sock = self.dir / "nvim.sock"
        argv = [NVIM, "--clean", "-n", "--listen", str(self.sock)]
        if rtp:
            argv += ["--cmd", f"set rtp^={rtp}"]
        else:
            argv += ["-u", str(ROOT / "tests" / "minimal_init.lua")]
        self.pty = PtyProcess(argv, env=env, cwd=str(self.project), rows=30, cols=120)
        wait_until(lambda: self.sock.exists(), 30, f"{name}'s socket")
        self.nvim = pynvim.attach("socket", path=str(self.sock))
        self.nvim.exec_lua(setup_lua)
        lock = wait_until(lambda: list((self.config_dir / "ide").glob("*.lock")), 15, f"{name}'s lock file")[0]
        self.port = int(lock.stem)
        self.token = json.loads(lock.read_text())["authToken"]

    def ws(self):
        from websockets.sync.client import connect

        return connect(f"ws://127.0.0.1:{self.port}", additional_headers={AUTH: self.token}, proxy=None,
                       open_timeout=10, max_size=None)

    def stop(self):
        if self.busy:
            self.pty.kill()
            return
        try:
            if self.nvim.request("nvim_get_mode")["blocking"]:
                self.nvim.request("nvim_input", "<CR>")
                time.sleep(0.2)
            self.nvim.command("qa!")
        except Exception:
            pass
        self.pty.kill()


SAMPLES = 1 << 20  # ring of (start, end) pairs in shared memory


def settle(sampler, quiet_s: float = 1.0, limit_s: float = 120.0):
    """Waits until the editor has answered every sample within 10 ms for `quiet_s` (the tail of
    a setup — 15,000 buffers loaded — must not count as the call's)."""
    deadline = time.perf_counter() + limit_s
    while time.perf_counter() < deadline:
        a = time.perf_counter()
        time.sleep(quiet_s)
        if sampler.blocked_max_ms(a, time.perf_counter()) <= 10.0:
            return
    print(f"warning: the editor did not settle within {limit_s:.0f} s", file=sys.stderr)


def _sample(sock: str, ring, count, pending, stop):
    """The sampler's own process (a thread of the bench would share its GIL: decoding a big
    answer would show up as the editor being blocked)."""
    import pynvim

    nvim = pynvim.attach("socket", path=sock)
    i = 0
    while not stop.value:
        a = time.perf_counter()  # CLOCK_MONOTONIC: the same clock in every process
        pending.value = a
        try:
            nvim.eval("1")
        except Exception as e:  # the sample still counts (the editor answered, with an error)
            print(f"sampler: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
            try:
                nvim = pynvim.attach("socket", path=sock)
            except Exception:
                time.sleep(0.1)
        b = time.perf_counter()
        k = (i % SAMPLES) * 2
        ring[k], ring[k + 1] = a, b
        i += 1
        count.value = i
        pending.value = 0.0
        time.sleep(0.0005)


class Sampler:
    """nvim_eval("1") back to back on its own connection, in a process of its own."""

    def __init__(self, sock: Path):
        import multiprocessing as mp

        ctx = mp.get_context("spawn")
        self.ring = ctx.RawArray("d", 2 * SAMPLES)
        self.count = ctx.RawValue("q", 0)
        self.pending = ctx.RawValue("d", 0.0)
        self.stop = ctx.RawValue("b", 0)
        self.p = ctx.Process(target=_sample, args=(str(sock), self.ring, self.count, self.pending, self.stop),
                             daemon=True)
        self.p.start()
        wait_until(lambda: self.count.value > 0, 120, "the sampler")

    def blocked_max_ms(self, a: float, b: float) -> float:
        """The longest sample overlapping [a, b], in ms (a sample still waiting counts up to now)."""
        if not self.p.is_alive():
            raise RuntimeError("the sampler process died")
        ov = [e - s for s, e in self.samples(a, b)]
        p = self.pending.value
        if p and p <= b:
            ov.append(time.perf_counter() - p)
        return max(ov) * 1000 if ov else float("nan")

    def samples(self, a: float, b: float) -> list[tuple[float, float]]:
        """The samples overlapping [a, b]: (start, end) pairs on the monotonic clock (the one
        Neovim's `vim.uv.hrtime()` reads), oldest first."""
        n = self.count.value
        out = []
        for i in range(n - 1, max(-1, n - SAMPLES - 1), -1):
            k = (i % SAMPLES) * 2
            s, e = self.ring[k], self.ring[k + 1]
            if e < a:
                break
            if s <= b:
                out.append((s, e))
        return out[::-1]

    def close(self):
        self.stop.value = 1
        self.p.join(5)
        if self.p.is_alive():
            self.p.kill()


def call(conn, name, args=None, timeout=120.0, rid=1):
    msg = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, "arguments": args or {}}}
    a = time.perf_counter()
    conn.send(json.dumps(msg))
    return recv_answer(conn, rid, a, timeout)


def recv_answer(conn, rid, a, timeout):
    deadline = time.perf_counter() + timeout
    while True:
        m = json.loads(conn.recv(max(0.0, deadline - time.perf_counter())))
        if m.get("id") == rid:
            return (time.perf_counter() - a) * 1000, m


# Buffers of n files, loaded and listed (as files opened with :edit are), each with `per`
# diagnostics. One call: a round trip per buffer would make the x10 setups slow; FileType and
# Syntax are not fired while filling (ftplugins and syntax, ~2 ms a buffer, made the 15,000
# buffers of x10 take 100 s a side; the filetype is still detected and set).
FILL_BUFFERS = r"""
local dir, n, per = ...
local ns = vim.api.nvim_create_namespace("bench")
local ei = vim.o.eventignore
vim.o.eventignore = "FileType,Syntax"
for i = 1, n do
  local p = ("%s/f%05d.txt"):format(dir, i)
  local f = io.open(p, "w"); f:write(("line with text %d\n"):rep(math.max(per, 1))); f:close()
  local b = vim.fn.bufadd(p)
  vim.bo[b].buflisted = true
  vim.fn.bufload(b)
  if per > 0 then
    local ds = {}
    for l = 0, per - 1 do
      ds[#ds + 1] = { lnum = l, col = 5, end_col = 9, message = "bench " .. l, severity = 1 + l % 4, source = "bench" }
    end
    vim.diagnostic.set(ns, b, ds)
  end
end
vim.o.eventignore = ei
"""


def measure(side: Side, sampler: Sampler, tool: str, rounds: int):
    calls, blocked = [], []
    with side.ws() as c:
        for _ in range(rounds):
            a = time.perf_counter()
            ms, m = call(c, tool)
            b = time.perf_counter()
            assert "result" in m and not m["result"].get("isError"), str(m)[:300]
            time.sleep(0.05)  # let samples that overlap the end finish
            calls.append(ms)
            blocked.append(sampler.blocked_max_ms(a, b))
    return {"call_ms_median": statistics.median(calls), "call_ms_max": max(calls),
            "blocked_ms_max": max(blocked), "blocked_ms_median": statistics.median(blocked)}


def prompt_turn(side: Side, wait: float):
    side.nvim.request("nvim_input", ':echo "a\\nb\\nc\\nd"<CR>')
    wait_until(lambda: side.nvim.request("nvim_get_mode")["blocking"], 10, "the hit-enter prompt")
    out = {}
    try:
        with side.ws() as c:
            total = 0.0
            for tool in ("closeAllDiffTabs", "getDiagnostics"):
                try:
                    ms, m = call(c, tool, timeout=wait)
                except TimeoutError:
                    out[tool] = None
                    out["turn_ms"] = None
                    return out
                out[tool] = ms
                total += ms
            out["turn_ms"] = total
        # The same calls from a Rust client (tokio-tungstenite; time until the whole answer is
        # received): the Python client's own reading of a 3 MB answer takes ~15 ms.
        if BENCH_RPC.exists():
            total = 0.0
            for tool in ("closeAllDiffTabs", "getDiagnostics"):
                try:
                    r = subprocess.run([str(BENCH_RPC), str(side.port), side.token, "latency", "5", "1", tool],
                                       capture_output=True, text=True, timeout=wait * 6)
                    us = json.loads(r.stdout)["us"]["p50"]
                except (subprocess.TimeoutExpired, ValueError, KeyError) as e:
                    out["rust_note"] = f"{tool}: {e}"
                    break
                out[f"rust_{tool}"] = us / 1000
                total += us / 1000
            else:
                out["rust_turn_ms"] = total
        return out
    finally:
        side.nvim.request("nvim_input", "<CR>")
        wait_until(lambda: not side.nvim.request("nvim_get_mode")["blocking"], 30, "the prompt to close")


def visual(side: Side, scale: float):
    n = max(1000, int(200000 * scale))
    f = side.project / "visual.txt"
    with f.open("w") as out:
        for k in range(0, n, 100000):
            out.write("".join(f"local value_{i} = some_function_call(argument_{i}, 'a string literal')\n"
                              for i in range(k, min(n, k + 100000))))
    side.nvim.command(f"edit {f}")
    sampler = Sampler(side.sock)
    settle(sampler)
    # Longer than the debounce, and than a sliced read of the whole selection takes: each
    # selection settles and is read (and sent) before the next move.
    pause = max(0.6, 0.35 * scale)
    a = time.perf_counter()
    side.nvim.request("nvim_input", "ggVG")
    for keys in ("k", "j", "k", "j", "<Esc>"):
        time.sleep(pause)
        side.nvim.request("nvim_input", keys)
    time.sleep(pause + 1.0)
    b = time.perf_counter()
    blocked = sampler.blocked_max_ms(a, b)
    sampler.close()
    time.sleep(0.5)
    return {"lines": n, "blocked_ms_max": blocked}


# Whether some window in some tab page shows a buffer holding the whole proposal: its line count
# and its last line (unique in the file); never the whole text.
ON_SCREEN = r"""
local n, last, not_name = ...  -- not_name: the file's own buffer (open in a window) does not count
for _, w in ipairs(vim.api.nvim_list_wins()) do
  local b = vim.api.nvim_win_get_buf(w)
  if vim.api.nvim_buf_get_name(b) ~= not_name and vim.api.nvim_buf_line_count(b) == n and vim.api.nvim_buf_get_lines(b, n - 1, n, false)[1] == last then
    return true
  end
end
return false
"""


def opendiff(side: Side, sampler: Sampler, scale: float, wait: float, open_old: bool = False,
             old_lines: int | None = None, new_lines: int | None = None, name: str = "big.txt",
             accept: bool = False, every: int | None = None):
    """openDiff of a file of 100,000·S lines (or `old_lines`) to a proposal of as many lines with a
    few changed and inserted (or the first `new_lines` of them); `open_old`: the file is open in
    the current window first (the issue's case: 200,000 lines open, a 90,000-line proposal).
    `every`: instead, one line in `every` changed (issue 38: 90,000 lines, one in a thousand)."""
    n = old_lines or max(1000, int(100000 * scale))
    old = [f"line {i:09d} of the file the proposal changes..\n" for i in range(n)]  # 50 bytes
    new = list(old[:new_lines] if new_lines else old)
    if every:
        for i in range(every // 2, len(new), every):
            new[i] = f"line {i:09d} CHANGED by the proposal ..........\n"
    else:
        mid = len(new) // 2
        for i in range(mid, mid + 3):
            new[i] = f"line {i:09d} CHANGED by the proposal ..........\n"
        new[mid + 10:mid + 10] = [f"inserted line {k} of the proposal .................\n" for k in range(5)]
    path = side.project / name
    path.write_text("".join(old))
    if open_old:
        side.nvim.command(f"edit {path}")
    contents = "".join(new)
    expect_n, expect_last = len(new), new[-1].rstrip("\n")
    args = {"old_file_path": str(path), "new_file_path": str(path), "new_file_contents": contents,
            "tab_name": "bench-opendiff"}
    out = {"lines": n, "bytes": len(contents.encode())}
    conn = side.ws()
    state = {"shown": None}
    stop = threading.Event()

    def send_and_poll():
        a = state["a"] = time.perf_counter()
        try:
            conn.send(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                                  "params": {"name": "openDiff", "arguments": args}}))
        except Exception as e:  # e.g. the side reset the connection while the request was sent
            state["error"] = f"sending the request failed after {time.perf_counter() - a:.1f} s: {type(e).__name__}: {e}"
            return
        state["sent"] = time.perf_counter() - a
        while not stop.is_set():
            if side.nvim.exec_lua(ON_SCREEN, expect_n, expect_last, str(path)):
                state["shown"] = time.perf_counter()
                return
            time.sleep(0.005)

    t = threading.Thread(target=send_and_poll, daemon=True)
    t.start()
    t.join(wait)
    stop.set()
    if state["shown"] is None:
        out["on_screen_ms"] = None
        out["blocked_ms_max"] = sampler.blocked_max_ms(state.get("a", 0.0), time.perf_counter())
        out["note"] = state.get("error") or f"not on screen within {wait:.0f} s"
        side.busy = True  # its main thread may be busy for long still: not asked again
        conn.close()
        return out
    a, shown = state["a"], state["shown"]
    out["on_screen_ms"] = (shown - a) * 1000
    out["send_ms"] = state["sent"] * 1000
    out["sent_at"], out["shown_at"] = a, shown
    time.sleep(0.05)
    out["blocked_ms_max"] = sampler.blocked_max_ms(a, shown)
    if accept:
        return accepted(side, sampler, conn, path, contents, expect_n, wait, out)
    # Reject it as Claude Code does at the start of the next turn, and wait for the view to go.
    try:
        with side.ws() as c2:
            ms, m = call(c2, "closeAllDiffTabs", timeout=wait)
            out["close_ms"] = ms
            out["close_text"] = json.dumps(m.get("result", m.get("error")))[:120]
        _, m = recv_answer(conn, 7, time.perf_counter(), wait)
        out["answer"] = json.dumps(m.get("result", m.get("error")))[:120]
        wait_until(lambda: not side.nvim.exec_lua(ON_SCREEN, expect_n, expect_last, str(path)), wait, "the diff to go")
        out["gone_ms"] = (time.perf_counter() - shown) * 1000
    except (TimeoutError, RuntimeError) as e:
        out["note"] = f"closing: {e}"
        side.busy = True
    finally:
        conn.close()
    return out


RELOADED = r"""
local path, n = ...
local buf = vim.fn.bufnr(path)
return buf > 0 and vim.api.nvim_buf_line_count(buf) == n and not vim.bo[buf].modified
  and not (package.loaded["claude_context.ide.diff.reload"] or { running = {} }).running[buf]
"""


def accepted(side: Side, sampler: Sampler, conn, path: Path, contents: str, expect_n: int, wait: float, out: dict):
    """Accepts the view as the person's `:w` does, then writes the file as Claude Code does after
    FILE_SAVED; times until the file's open buffer holds it, and the editor's longest block then."""
    try:
        side.nvim.exec_lua("local d = require('claude_context.ide.diff'); d.accept(d.views['bench-opendiff'])")
        _, m = recv_answer(conn, 7, time.perf_counter(), wait)
        out["answer"] = json.dumps(m.get("result", m.get("error")))[:60]
        time.sleep(0.2)
        a = time.perf_counter()
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(contents)
        os.replace(tmp, path)
        wait_until(lambda: side.nvim.exec_lua(RELOADED, str(path), expect_n), wait, "the buffer to reload")
        b = time.perf_counter()
        time.sleep(0.05)
        out["reload_ms"] = (b - a) * 1000
        out["reload_blocked_ms_max"] = sampler.blocked_max_ms(a, b)
    except (TimeoutError, RuntimeError) as e:
        out["note"] = f"accepting: {e}"
        side.busy = True
    finally:
        conn.close()
    return out


SCENARIOS = ("diagnostics", "prompt-turn", "visual", "editors", "opendiff")


def run_side(side: Side, scale: float, rounds: int, wait: float, diff_wait: float, scenarios):
    """Each scenario gets a sampler of its own, started after its setup (a setup can keep the
    editor busy for seconds)."""
    res = {}

    def sampled(f, *args):
        sampler = Sampler(side.sock)
        try:
            settle(sampler)
            return f(side, sampler, *args)
        finally:
            sampler.close()

    nbuf, per = 300, max(1, int(60 * scale))
    if "diagnostics" in scenarios or "prompt-turn" in scenarios or "editors" in scenarios:
        d = side.project / "diag"
        d.mkdir()
        t = time.perf_counter()
        side.nvim.exec_lua(FILL_BUFFERS, str(d), nbuf, per)
        res["setup_diagnostics_s"] = time.perf_counter() - t
        time.sleep(0.5)
    if "diagnostics" in scenarios:
        res["diagnostics"] = dict(sampled(measure, "getDiagnostics", rounds), diagnostics=nbuf * per, buffers=nbuf)
    if "prompt-turn" in scenarios:
        res["prompt-turn"] = prompt_turn(side, wait)
    if "visual" in scenarios:
        res["visual"] = visual(side, scale)
    if "editors" in scenarios:
        e = side.project / "editors"
        e.mkdir()
        extra = max(1, int(1500 * scale)) - nbuf
        t = time.perf_counter()
        if extra > 0:
            side.nvim.exec_lua(FILL_BUFFERS, str(e), extra, 0)
        res["setup_editors_s"] = time.perf_counter() - t
        time.sleep(0.5)
        res["editors"] = dict(sampled(measure, "getOpenEditors", rounds), buffers=nbuf + max(extra, 0))
    if "opendiff" in scenarios:
        res["opendiff"] = sampled(opendiff, scale, diff_wait)
    return res


def fmt(v, unit=" ms"):
    if v is None:
        return "no answer"
    if isinstance(v, float) and v != v:
        return "—"
    return f"{v:.1f}{unit}" if isinstance(v, float) else str(v)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=float, default=1.0, help="multiple of the issue's sizes (10 for the x10 targets)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reference", help="a checkout of coder/claudecode.nvim (never committed here)")
    ap.add_argument("--prompt-wait", type=float, default=5.0, help="seconds a call may take at the prompt")
    ap.add_argument("--diff-wait", type=float, default=120.0,
                    help="seconds openDiff may take to be on screen (and to close)")
    ap.add_argument("--scenarios", default=",".join(SCENARIOS), help="comma-separated subset of " + ", ".join(SCENARIOS))
    ap.add_argument("--json", help="write every figure to this file")
    a = ap.parse_args()
    scenarios = [x for x in a.scenarios.split(",") if x]
    for x in scenarios:
        if x not in SCENARIOS:
            sys.exit(f"--scenarios: unknown scenario {x!r} (known: {', '.join(SCENARIOS)})")
    load0 = os.getloadavg()

    tmp = Path(tempfile.mkdtemp(prefix="cc-bench-nowait-"))
    sides = [("claude-context.nvim", "require('claude_context').setup({})", None)]
    if a.reference:
        ref = Path(a.reference).resolve()
        if not (ref / "lua" / "claudecode").is_dir():
            sys.exit(f"--reference {ref}: not a checkout of coder/claudecode.nvim (no lua/claudecode)")
        sides.append(("claudecode.nvim (pure Lua)", "require('claudecode').setup({ log_level = 'error' })", str(ref)))
    else:
        print("reference: ABSENT — pass --reference DIR (a checkout of coder/claudecode.nvim) to measure it "
              "side by side; printing our figures only.\n")
    results = {}
    try:
        for name, setup, rtp in sides:
            s = Side(name.split()[0], setup, rtp, tmp)
            try:
                results[name] = run_side(s, a.scale, a.rounds, a.prompt_wait, a.diff_wait, scenarios)
            finally:
                s.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    load1 = os.getloadavg()
    print(f"scale {a.scale} (sizes × {a.scale}), {a.rounds} rounds, load average {load0[0]:.2f} at the start, "
          f"{load1[0]:.2f} at the end\n")
    def row(*cells):
        print("| " + " | ".join(str(c) for c in cells) + " |")

    row("scenario", "side", "size", "call median", "call max", "editor blocked (max)")
    row(*["---"] * 6)
    for name, r in results.items():
        if "diagnostics" in r:
            d = r["diagnostics"]
            row("getDiagnostics", name, f"{d['diagnostics']} diagnostics / {d['buffers']} buffers",
                fmt(d["call_ms_median"]), fmt(d["call_ms_max"]), fmt(d["blocked_ms_max"]))
        if "editors" in r:
            e = r["editors"]
            row("getOpenEditors", name, f"{e['buffers']} buffers", fmt(e["call_ms_median"]),
                fmt(e["call_ms_max"]), fmt(e["blocked_ms_max"]))
        if "visual" in r:
            v = r["visual"]
            row("whole-file Visual selection + 4 cursor moves + Esc", name, f"{v['lines']} lines", "—", "—",
                fmt(v["blocked_ms_max"]))
        if "prompt-turn" in r:
            p = r["prompt-turn"]
            row("hit-enter prompt: closeAllDiffTabs + getDiagnostics", name, "prompt up",
                f"{fmt(p.get('turn_ms'))} (closeAllDiffTabs {fmt(p.get('closeAllDiffTabs'))})", "—", "—")
            if "rust_turn_ms" in p:
                row("hit-enter prompt, Rust client (p50 of 5)", name, "prompt up",
                    f"{fmt(p['rust_turn_ms'])} (closeAllDiffTabs {fmt(p['rust_closeAllDiffTabs'])})", "—", "—")
        if "opendiff" in r:
            o = r["opendiff"]
            shown = fmt(o["on_screen_ms"]) if o["on_screen_ms"] is not None else f"no answer in {a.diff_wait:.0f} s"
            row("openDiff: on screen", name, f"{o['bytes'] / 1e6:.1f} MB, {o['lines']} lines", shown, "—",
                fmt(o["blocked_ms_max"]))
    for name, r in results.items():
        notes = {k: v for k, v in r.items() if k.startswith("setup_")}
        if "opendiff" in r:
            notes.update({f"opendiff {k}": v for k, v in r["opendiff"].items()
                          if k not in ("on_screen_ms", "blocked_ms_max", "lines", "bytes")})
        if notes:
            print(f"\n{name}: " + ", ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}"
                                             for k, v in notes.items()))
    if a.json:
        Path(a.json).write_text(json.dumps({"scale": a.scale, "load": [load0, load1], "results": results}, indent=2))


if __name__ == "__main__":
    main()
