#!/usr/bin/env python3
"""The bridge's own cost per pipelined `getWorkspaceFolders` call, measured two ways that the
shared machine's noise moves less than `bench/line.py`'s throughput ratio (issue 38, "At the
line"; figures in BENCHMARKS.md). Both run the core's example server (`serve`, no Neovim) and
drive it with `bench_rpc pipeline`:

* `ir SERVE [SERVE ...]`: instructions per call under valgrind's cachegrind, the difference
  between a run of 20,000 pipelined calls and a run of none (same start-up and warm-up). glibc's
  `rep movsb` copies are switched off (`GLIBC_TUNABLES`), so a copy counts as the loop of
  vector moves it is rather than one instruction per byte. Deterministic to ~2 %: threads run
  one at a time under valgrind, so how messages batch moves a little between runs.
* `cpu ROUNDS NAME=SERVE ...`: CPU time per call of each server (all its threads, from
  `/proc/PID/task/*/schedstat`) and its calls/s, servers alternated round by round, medians.

    cargo build --release -p claude-context-core --example serve --example bench_rpc
    .deps/venv/bin/python bench/line_cost.py ir target/release/examples/serve
    .deps/venv/bin/python bench/line_cost.py cpu 10 before=/tmp/serve-before after=target/release/examples/serve
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "target", "release", "examples", "bench_rpc")
TUNABLES = "glibc.cpu.hwcaps=-ERMS,-AVX512F,-AVX512VL"


def start(serve, wrap=()):
    d = tempfile.mkdtemp(prefix="line-cost-")
    env = dict(os.environ, CLAUDE_CONFIG_DIR=d, HOME=d)
    if wrap:
        env["GLIBC_TUNABLES"] = TUNABLES
    p = subprocess.Popen([*wrap, serve, "--cwd", d], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    return p, json.loads(p.stdout.readline())


def client(info, *args):
    r = subprocess.run([BENCH, str(info["port"]), info["token"], *map(str, args)],
                       check=True, capture_output=True, text=True)
    return json.loads(r.stdout)


def instructions(serve, calls):
    p, info = start(serve, ["valgrind", "--tool=cachegrind", "--cache-sim=no",
                            "--cachegrind-out-file=/dev/null"])
    client(info, "latency", 100, 10)
    if calls:
        client(info, "pipeline", calls, 1)
    p.stdin.close()
    err = p.stderr.read()
    p.wait()
    return int(re.search(r"I\s+refs:\s+([\d,]+)", err).group(1).replace(",", ""))


def ir(servers, calls=20000):
    for s in servers:
        per = (instructions(s, calls) - instructions(s, 0)) / calls
        print(f"{s}: {per:.0f} instructions per call")


def cpu_of(pid):
    t = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                t += int(f.read().split()[0])
        except OSError:
            pass
    return t


def cpu(rounds, named, n=20000, reps=3):
    procs = {}
    for name, path in named:
        p, info = start(path)
        client(info, "pipeline", n, 2)  # warm-up
        procs[name] = (p, info)
    got = {name: ([], []) for name, _ in named}
    for r in range(rounds):
        for name, _ in (named if r % 2 == 0 else named[::-1]):
            p, info = procs[name]
            c0 = cpu_of(p.pid)
            out = client(info, "pipeline", n, reps)
            got[name][0].append((cpu_of(p.pid) - c0) / (n * reps))
            got[name][1].append(out["median_calls_per_s"])
    for name, _ in named:
        c, t = got[name]
        print(f"{name}: CPU per call median {statistics.median(c):.0f} ns (min {min(c):.0f}), "
              f"calls/s median {statistics.median(t) / 1000:.0f}k (max {max(t) / 1000:.0f}k)")
    for p, _ in procs.values():
        p.stdin.close()
        p.wait()
    print("load average", " ".join(f"{x:.2f}" for x in os.getloadavg()))


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "ir":
        ir(sys.argv[2:])
    elif len(sys.argv) >= 4 and sys.argv[1] == "cpu":
        cpu(int(sys.argv[2]), [a.split("=", 1) for a in sys.argv[3:]])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
