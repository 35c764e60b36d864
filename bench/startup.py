#!/usr/bin/env python3
"""Startup cost of setup(), measured with `nvim --startuptime` (median of N runs).

Each variant is an init file that puts one plugin on the runtimepath and calls its setup();
the figure is the init file's "self+sourced" time from --startuptime, minus the same for an
init that only sets the runtimepath (the baseline), plus the plugin/ files' own lines.

    python3 bench/startup.py [--nvim PATH] [--runs 7] [--claudecode DIR]

--claudecode points at a checkout of coder/claudecode.nvim (kept in an ignored folder such as
.reference/, never committed) to measure its setup() beside ours.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def init_file(tmp, name, rtp, body):
    path = os.path.join(tmp, name + ".lua")
    with open(path, "w") as f:
        f.write("vim.opt.runtimepath:prepend(%r)\n" % rtp if rtp else "")
        f.write("vim.opt.swapfile = false\nvim.opt.shadafile = 'NONE'\n")
        f.write(body + "\n")
    return path


def one_run(nvim, init, env):
    with tempfile.NamedTemporaryFile("r", suffix=".log") as log:
        subprocess.run(
            [nvim, "--headless", "--clean", "-u", init, "--startuptime", log.name, "+qa!"],
            env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60,
        )
        text = log.read()
    init_ms = plugin_ms = 0.0
    for line in text.splitlines():
        m = re.match(r"\s*[\d.]+\s+([\d.]+)\s+([\d.]+):\s+sourcing (.*)$", line)
        if not m:
            continue
        path = m.group(3)
        if path.endswith(os.path.basename(init)):
            init_ms = float(m.group(1))
        elif "/plugin/" in path and (ROOT in path or "claudecode" in path):
            plugin_ms += float(m.group(1))
    return init_ms, plugin_ms


def median(nvim, init, runs, env):
    inits, plugins = [], []
    for _ in range(runs):
        i, p = one_run(nvim, init, env)
        inits.append(i)
        plugins.append(p)
    return statistics.median(inits), statistics.median(plugins)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvim", default=os.path.join(ROOT, ".deps/venv/bin/nvim"))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--claudecode")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="startup-")
    env = dict(os.environ, CLAUDE_CONFIG_DIR=os.path.join(tmp, "claude"),
               XDG_STATE_HOME=os.path.join(tmp, "state"), XDG_DATA_HOME=os.path.join(tmp, "data"))
    variants = [
        ("baseline (runtimepath only)", init_file(tmp, "base", ROOT, "")),
        ("claude-context.nvim setup({})", init_file(tmp, "ours", ROOT, 'require("claude_context").setup({})')),
    ]
    if a.claudecode:
        variants.append(("claudecode.nvim setup({})", init_file(tmp, "theirs", a.claudecode, 'require("claudecode").setup({})')))
    rows = []
    for label, init in variants:
        rows.append((label,) + median(a.nvim, init, a.runs, env))
    base = rows[0][1]
    print("| variant | init file (median of %d) | setup() on the startup path | plugin/ files |" % a.runs)
    print("|---|---|---|---|")
    for label, i, p in rows:
        print("| %s | %.2f ms | %s | %.2f ms |" % (label, i, "–" if label.startswith("baseline") else "%.2f ms" % max(0.0, i - base), p))
    return 0


if __name__ == "__main__":
    sys.exit(main())
