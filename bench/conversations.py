#!/usr/bin/env python3
"""Conversations at scale (issue 36's targets): 1,000 conversations of realistic size, made by
the real Claude Code CLI against the loopback model stub (one conversation of three turns with a
tool call, then copied with new session ids and one distinct word each), then measured in
headless Neovim by bench/conversations.lua (first / cached / after 10 changes, a query over all,
the picker) beside `rg -l` over the same folder in the same run (skipped with a line when rg is
missing: `apt-get install ripgrep`).

    .deps/venv/bin/python bench/conversations.py [--n 1000] [--claude PATH] [--rounds 3] [--data DIR] [--against CHECKOUT]
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
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests" / "e2e"))
from model_stub import ModelStub  # noqa: E402

NVIM = REPO / ".deps/venv/bin/nvim"
CLAUDE = REPO / ".deps/node_modules/.bin/claude"
KEY = "sk-ant-bench-0000000000000000000000000000"


def make_one(claude: Path, cfg: Path, project: Path) -> Path:
    """One conversation by the real CLI: three prompts, a Read tool call, the stub's answers."""
    stub = ModelStub().start()
    try:
        (project / "notes.txt").write_text("".join(f"line {i}: the quick brown fox\n" for i in range(200)))
        stub.push(
            {"tool_use": {"name": "Read", "input": {"file_path": str(project / "notes.txt")}}},
            {"text": "The notes list 200 lines about a fox. " * 20},
            {"text": "Here is a longer answer about the parser and its tests. " * 40},
            {"text": "Done: MARKER-0 checked."},
        )
        env = dict(os.environ, HOME=str(cfg.parent), CLAUDE_CONFIG_DIR=str(cfg), ANTHROPIC_BASE_URL=stub.url,
                   ANTHROPIC_API_KEY=KEY, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1",
                   IS_SANDBOX="1", NO_PROXY="127.0.0.1,localhost", ENABLE_TOOL_SEARCH="false")
        sid = None
        for prompt in ("Read notes.txt and summarise it.", "Explain the parser, at length.", "Check MARKER-0."):
            argv = [str(claude), "-p", prompt, "--output-format", "json", "--dangerously-skip-permissions"]
            if sid:
                argv += ["--resume", sid]
            r = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=180)
            assert r.returncode == 0, r.stderr[-2000:]
            sid = json.loads(r.stdout)["session_id"]
    finally:
        stub.stop()
    files = list((cfg / "projects").glob(f"*/{sid}.jsonl"))
    assert files, list((cfg / "projects").rglob("*"))
    return files[0]


def multiply(src: Path, n: int) -> tuple[str, int]:
    """n copies in src's folder, each with its own id and word (MARKER-i); one in ten holds the
    query's word. Returns the query and how many hold it."""
    text = src.read_text()
    sid = src.stem
    hits = 0
    for i in range(1, n):
        new = str(uuid.uuid4())
        body = text.replace(sid, new).replace("MARKER-0", f"MARKER-{i}")
        if i % 10 == 0:
            body = body.replace("Check MARKER", "Check needle-word MARKER")
            hits += 1
        p = src.with_name(f"{new}.jsonl")
        p.write_text(body)
        t = time.time() - (n - i)
        os.utime(p, (t, t))
    return "needle-word", hits


def rg_time(query: str, folder: Path, rounds: int):
    rg = shutil.which("rg")
    if not rg:
        return None
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        subprocess.run([rg, "-l", "-i", "-F", query, str(folder)], capture_output=True)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def report(rows, query):
    """The medians of the rounds `rows`, each with the longest main-thread block of any round."""
    def med(k, f="ms"):
        return statistics.median(r[k][f] for r in rows)

    for k, what in (("first", "conversations(), first call (no index)"),
                    ("restart", "conversations(), a new editor's first (index)"),
                    ("second", "conversations(), cached"),
                    ("changed10", "conversations(), 10 files grew"), ("query", f"query {query!r} over all"),
                    ("picker", "picker drawn (vim.ui.select, lines formatted)")):
        worst = max(rows, key=lambda r: r[k]["block_ms"])[k]
        cpu = worst.get("block_cpu_ms")
        print(f"{what:48s} {med(k):8.1f} ms   longest main-thread block {worst['block_ms']:5.1f} ms"
              + (f" (its CPU {cpu:4.1f} ms, Lua heap {worst.get('block_heap_kb', 0):+7.0f} kB)" if cpu is not None else ""))
    print(f"{'idle editor, 300 ms (the floor of a block)':48s} {'':8s}      longest main-thread block {max(r['idle']['block_ms'] for r in rows):5.1f} ms (median {statistics.median(r['idle']['block_ms'] for r in rows):.1f})")
    print(f"{'files read whole, index written (a thread)':48s} {statistics.median(r['index_ms'] for r in rows):8.1f} ms after the picker")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--claude", default=str(CLAUDE))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--data", help="keep the conversations in this folder and use them again when it exists")
    ap.add_argument("--against", help="another checkout (with its built lib/, e.g. main's): each round runs its "
                                      "editor and bench/conversations.lua, then this one's, and both are reported")
    a = ap.parse_args()
    tmp = Path(a.data or tempfile.mkdtemp(prefix="cc-conv-bench-")).resolve()
    try:
        cfg, project = tmp / "home" / ".claude", tmp / "project"
        made = tmp / "made.json"
        if a.data and made.exists():
            one, want = Path(json.loads(made.read_text())["one"]), json.loads(made.read_text())["want"]
            query = "needle-word"
        else:
            cfg.mkdir(parents=True)
            project.mkdir()
            subprocess.run(["git", "init", "-q", "."], cwd=project)
            one = make_one(Path(a.claude).absolute(), cfg, project)
            query, want = multiply(one, a.n)
            made.write_text(json.dumps({"one": str(one), "want": want}))
        files = list(one.parent.glob("*.jsonl"))
        size = sum(f.stat().st_size for f in files)
        print(f"{len(files)} conversations, {size / 1e6:.1f} MB ({one.stat().st_size / 1e3:.0f} kB each), "
              f"CLI {subprocess.run([a.claude, '--version'], capture_output=True, text=True).stdout.strip()}")
        def run(repo, env, *extra):
            r = subprocess.run([str(NVIM), "--headless", "--clean", "-u", str(repo / "tests/minimal_init.lua"), "-l",
                                str(repo / "bench/conversations.lua"), str(project), query, *extra], cwd=repo, env=env,
                               capture_output=True, text=True, timeout=600)
            line = [x for x in r.stdout.splitlines() + r.stderr.splitlines() if x.startswith("{")]
            assert line, r.stdout + r.stderr
            return json.loads(line[-1])

        repos = ([Path(a.against).resolve()] if a.against else []) + [REPO]
        results = {repo: [] for repo in repos}
        for _ in range(a.rounds):
            for repo in repos:
                # A cache folder of its own: the first editor finds no index, the second the first's.
                cache = Path(tempfile.mkdtemp(prefix="cc-conv-cache-"))
                env = dict(os.environ, CLAUDE_CONFIG_DIR=str(cfg), XDG_CACHE_HOME=str(cache))
                row = run(repo, env)
                row["restart"] = run(repo, env, "restart")["first"]
                results[repo].append(row)
                shutil.rmtree(cache, ignore_errors=True)
        print(f"load average after the rounds: {os.getloadavg()[0]:.1f}")
        for repo, rows in results.items():
            assert rows[0]["count"] == len(files), rows[0]
            assert rows[0]["query_hits"] == want, rows[0]
            if len(repos) > 1:
                print(f"--- {repo}")
            report(rows, query)
        query_ms = statistics.median(r["query"]["ms"] for r in results[REPO])
        rg = rg_time(query, cfg / "projects", a.rounds)
        if rg is None:
            print("rg -l: ripgrep is not installed (apt-get install ripgrep): not compared")
        else:
            print(f"{'rg -l -i -F over the same folder':48s} {rg:8.1f} ms   (query / rg = {query_ms / rg:.2f})")
    finally:
        if not a.data:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
