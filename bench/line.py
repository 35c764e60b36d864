#!/usr/bin/env python3
"""The bridge at the line: pipelined throughput against the echo floor, and the editor's stall
while eight clients each send a 4 MB `ping`, with builds of the native library compared in one
run, rounds interleaved (issue 27, "At the line"; figures in BENCHMARKS.md).

    .deps/venv/bin/python bench/line.py [--rounds N] [--lib NAME=PATH ...] [--settle S] [--json FILE]

Each `--lib` (default: this checkout's, as the plugin finds it) gets a headless Neovim of its own
with the plugin set up on that library (`CLAUDE_CONTEXT_NATIVE`). Per round, for each Neovim in
turn (the order alternates):

* `bench_rpc line 20000 2`: the bridge's pipelined `getWorkspaceFolders` calls/s and, in the same
  process, the echo floors' (bare tokio-tungstenite servers that send each frame back: the
  minimal one with a `send` per frame, the batched one with a flush per batch), rounds
  interleaved; the ratio ours / echo per round;
* `bench_rpc latency 3000 300`: sequential round trips (p50), what batching must not cost;
* an idle window (0.4 s, nothing runs), a flood window (`bench_rpc bigflood 4194304 ping 8 1`:
  eight connections each send one 4 MB `ping` at once), and a control window: the same flood
  sent to a bridge outside Neovim (the core's `serve` example, its threads at the bridge's nice
  value) while Neovim idles; a sampler process per Neovim times `nvim_eval("1")` over its
  `--listen` socket every millisecond throughout the run.

The p99 of the samples taken during flood windows is the editor's stall; during idle windows,
what the shared machine gives anyway; during control windows, what the flood's load on the
machine (the client's and a bridge's CPU) does to an editor that has nothing to do with it.
This is a benchmark, not a test: it never fails on a slow figure, only on a broken bridge.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402


def client(n, *args):
    r = subprocess.run([run.bench_bin(), str(n["port"]), n["token"], *map(str, args)],
                       capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, BENCH_SERVER_PID=str(n["nv"].pid)))
    if r.returncode != 0:
        raise RuntimeError(f"bench_rpc {' '.join(map(str, args))} failed: {r.stderr.strip()}")
    return json.loads(r.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--lib", action="append", default=[], metavar="NAME=PATH")
    ap.add_argument("--env", action="append", default=[], metavar="NAME:K=V",
                    help="an environment variable for the Neovim of library NAME (experiments)")
    ap.add_argument("--settle", type=float, default=0.0, metavar="S",
                    help="seconds to wait after each flood before the next round (the trim after a "
                    "large message runs 100 ms after it: does the next round pay for it?)")
    ap.add_argument("--json")
    a = ap.parse_args()
    libs = [tuple(x.split("=", 1)) for x in a.lib] or [("checkout", "")]
    run.bench_bin()
    load_start = os.getloadavg()
    nvims = []
    control = start_control()
    try:
        for name, path in libs:
            env = run.Env()
            if path:
                env.env["CLAUDE_CONTEXT_NATIVE"] = os.path.abspath(path)
            for e in a.env:
                lib, kv = e.split(":", 1)
                if lib == name:
                    k, v = kv.split("=", 1)
                    env.env[k] = v
            sock = os.path.join(env.dir, "nvim.sock")
            nv = run.start_nvim(env, sock, setup=True)
            lock = env.lock_files()[0]
            with open(lock) as f:
                token = json.load(f)["authToken"]
            port = int(os.path.basename(lock).split(".")[0])
            run.run_client(port, token, "latency", 200, 50)
            nvims.append({"name": name, "env": env, "sock": sock, "nv": nv, "port": port,
                          "token": token, "line": [],
                          "spans": {"idle": [], "flood": [], "control": []},
                          "flood_ms": []})
        for n in nvims:
            n["sampler"] = run.Sampler(n["sock"])
        for rnd in range(a.rounds):
            order = nvims if rnd % 2 == 0 else nvims[::-1]
            for n in order:
                n["line"].append(client(n, "line", 20000, 2))
                n.setdefault("lat", []).append(client(n, "latency", 3000, 300)["us"]["p50"])
                t = time.monotonic()
                time.sleep(0.4)
                n["spans"]["idle"].append((t, time.monotonic()))
                t = time.monotonic()
                o = run.run_client(n["port"], n["token"], "bigflood", 4 << 20, "ping", 8, 1)
                n["spans"]["flood"].append((t, time.monotonic()))
                n["flood_ms"].append(o["total_ms"][0])
                t = time.monotonic()
                run.run_client(control["port"], control["token"], "bigflood", 4 << 20, "ping", 8, 1)
                n["spans"]["control"].append((t, time.monotonic()))
                if a.settle:
                    time.sleep(a.settle)
        for n in nvims:
            n["samples"] = n.pop("sampler").stop()
    finally:
        for n in nvims:
            if "sampler" in n:
                try:
                    n["sampler"].stop()
                except Exception:
                    pass
            run.stop_nvim(n["nv"], n["sock"])
            n["env"].cleanup()
        control["p"].stdin.close()
        control["p"].wait()
        shutil.rmtree(control["dir"], ignore_errors=True)
    load_end = os.getloadavg()
    out = {"rounds": a.rounds, "loadavg_start": load_start, "loadavg_end": load_end, "libs": {}}
    for n in nvims:
        def within(kind):
            return [lat for (t, lat) in n["samples"] if any(x <= t < y for x, y in n["spans"][kind])]
        ratios = [r for x in n["line"] for r in x["ratio"]]
        ours = [r for x in n["line"] for r in x["ours_calls_per_s"]]
        echo = [r for x in n["line"] for r in x["echo_calls_per_s"]]
        cpu_o = [r for x in n["line"] for r in x["ours_cpu_ns_per_call"] if r is not None]
        cpu_e = [r for x in n["line"] for r in x["echo_cpu_ns_per_call"] if r is not None]
        cpu_b = [r for x in n["line"] for r in x["echo_batched_cpu_ns_per_call"] if r is not None]
        batched = [r for x in n["line"] for r in x["ratio_batched"]]
        echo_b = [r for x in n["line"] for r in x["echo_batched_calls_per_s"]]
        out["libs"][n["name"]] = {
            "ratio": ratios, "ratio_min": min(ratios), "ratio_median": statistics.median(ratios),
            # Per position in a `line` call: the first measured round comes right after the
            # previous round's flood (and the trim it schedules), the last one later.
            "ratio_by_position": [[x["ratio"][i] for x in n["line"] if i < len(x["ratio"])]
                                  for i in range(max(len(x["ratio"]) for x in n["line"]))],
            "ours_median": statistics.median(ours), "echo_median": statistics.median(echo),
            "ours_calls_per_s": ours, "echo_calls_per_s": echo,
            "ratio_batched": batched, "ratio_batched_median": statistics.median(batched),
            "echo_batched_median": statistics.median(echo_b),
            "cpu_ns_per_call_median": {"ours": statistics.median(cpu_o), "echo": statistics.median(cpu_e),
                                       "echo_batched": statistics.median(cpu_b)},
            "flood": run.lat_stats(within("flood")), "idle": run.lat_stats(within("idle")),
            "control": run.lat_stats(within("control")),
            "flood_total_ms_median": statistics.median(n["flood_ms"]),
            "latency_p50_us_median": statistics.median(n["lat"]),
        }
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=2)
    print(f"load average {load_start[0]:.2f} at the start, {load_end[0]:.2f} at the end; "
          f"{a.rounds} rounds")
    for name, r in out["libs"].items():
        print(f"{name}: ours/echo median {r['ratio_median']:.2f} min {r['ratio_min']:.2f} "
              f"(ours {r['ours_median'] / 1e3:.1f}k/s, echo {r['echo_median'] / 1e3:.1f}k/s; "
              f"all {', '.join(f'{x:.2f}' for x in r['ratio'])}); "
              f"ours/batched echo median {r['ratio_batched_median']:.2f} "
              f"(batched echo {r['echo_batched_median'] / 1e3:.0f}k/s); "
              f"CPU per call ours/echo/batched echo "
              f"{r['cpu_ns_per_call_median']['ours'] / 1e3:.2f}/{r['cpu_ns_per_call_median']['echo'] / 1e3:.2f}/"
              f"{r['cpu_ns_per_call_median']['echo_batched'] / 1e3:.2f} µs; "
              f"nvim_eval 8x4MB p50/p99/max {r['flood']['p50_ms']:.2f}/{r['flood']['p99_ms']:.2f}/"
              f"{r['flood']['max_ms']:.1f} ms ({r['flood']['n']}) vs idle "
              f"{r['idle']['p50_ms']:.2f}/{r['idle']['p99_ms']:.2f}/{r['idle']['max_ms']:.1f} ms "
              f"({r['idle']['n']}) vs the flood sent elsewhere {r['control']['p50_ms']:.2f}/"
              f"{r['control']['p99_ms']:.2f}/{r['control']['max_ms']:.1f} ms ({r['control']['n']}); "
              f"flood total median {r['flood_total_ms_median']:.0f} ms; "
              f"sequential round trip p50 {r['latency_p50_us_median']:.0f} µs; "
              f"ratio median by round of a call {', '.join(f'{statistics.median(p):.2f}' for p in r['ratio_by_position'])} "
              f"(min {', '.join(f'{min(p):.2f}' for p in r['ratio_by_position'])}); "
              f"calls/s min–max: ours {min(r['ours_calls_per_s']) / 1e3:.0f}k–{max(r['ours_calls_per_s']) / 1e3:.0f}k, "
              f"echo {min(r['echo_calls_per_s']) / 1e3:.0f}k–{max(r['echo_calls_per_s']) / 1e3:.0f}k")


def start_control():
    """The control windows' bridge: the core's `serve` example (no Neovim), in a home of its own."""
    serve = os.path.join(run.ROOT, "target", "release", "examples", "serve")
    if not os.path.exists(serve):
        sys.exit(f"{serve} is missing: run `cargo build --release --workspace --examples` (or `make bench`)")
    d = tempfile.mkdtemp(prefix="line-control-")
    p = subprocess.Popen([serve, "--cwd", d], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True,
                         env=dict(os.environ, CLAUDE_CONFIG_DIR=d, HOME=d))
    info = json.loads(p.stdout.readline())
    return {"p": p, "port": info["port"], "token": info["token"], "dir": d}


if __name__ == "__main__":
    main()
