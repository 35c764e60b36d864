#!/usr/bin/env python3
"""The code tools against the person's own language server: a headless Neovim with the plugin set
up and python-lsp-server (.deps/lsp, `make deps`) configured as a person would, on a generated
project of 100 files where one function is used 200 times (2 calls in each file).

Figures:
  first answer     lsp_references right after the server has attached to the first file the
                   person opened (nothing asked of it before)
  references p50   lsp_references of that function, warm, over --rounds calls (its file not open:
                   loaded out of sight and unloaded each time)
  blocked (max)    the longest `nvim_eval("1")` round trip of a sampler on its own connection
                   while the calls ran: how long the editor could not answer; beside it, the
                   same sampler's figure over 3 s with nothing asked (the machine's own noise)
  servers          language-server processes under Neovim (the person's own: nothing extra)
  memory           the server's resident memory (VmRSS) after the calls

Serena (PyPI `serena-agent`, "the IDE for your agent") is the comparison the project aims at. Its
side is measured only when it is installed in bench/.serena/ (ignored by git, never committed):
    python3 -m venv bench/.serena/venv && bench/.serena/venv/bin/pip install serena-agent
Driving it is not written yet; without it the bench says so and prints our figures.

    .deps/venv/bin/python bench/code_intel.py [--rounds 20] [--json FILE]
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

REPO = Path(__file__).resolve().parent.parent
NVIM = REPO / ".deps/venv/bin/nvim"
PYLSP = REPO / ".deps/lsp/venv/bin/pylsp"
SERENA = REPO / "bench/.serena/venv/bin/serena"


def make_project(root: Path, files: int = 100, uses: int = 2) -> None:
    (root / ".git").mkdir(parents=True)
    (root / "core.py").write_text("def compute(x):\n    return x * 2\n")
    for i in range(files):
        body = ["from core import compute", ""]
        for j in range(uses):
            body.append(f"def f{i}_{j}(v):\n    return compute(v) + {j}\n")
        (root / f"mod{i:03}.py").write_text("\n".join(body))
    (root / "start.py").write_text("from core import compute\n\nprint(compute(1))\n")


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def children(pid: int) -> list:
    out = subprocess.run(["ps", "-o", "pid=,args=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [line.strip().split(None, 1) for line in out.splitlines() if line.strip()]


CALL = """
local name, args = ...
local done, t0 = nil, vim.uv.hrtime()
require('claude_context').call_tool(name, args, function(r) done = { r, vim.uv.hrtime() } end)
vim.wait(120000, function() return done ~= nil end, 1)
if not done then return { ms = -1, error = 'no answer' } end
local r = done[1]
local sc = r.structuredContent or {}
local total = sc.sections and sc.sections[1] and sc.sections[1].total or 0
return { ms = (done[2] - t0) / 1e6, total = total, error = r.isError and r.content[1].text or nil }
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--json")
    ap.add_argument("--open", action="store_true", help="the asked file is open (no hidden buffer)")
    a = ap.parse_args()
    if not PYLSP.exists():
        print(f"python-lsp-server is not at {PYLSP}: run `make deps`", file=sys.stderr)
        return 1
    import pynvim

    tmp = Path(tempfile.mkdtemp(prefix="cc-code-bench-"))
    proj = tmp / "project"
    make_project(proj)
    sock = tmp / "nvim.sock"
    env = dict(os.environ, XDG_STATE_HOME=str(tmp / "state"), XDG_DATA_HOME=str(tmp / "data"), HOME=str(tmp))
    nv = subprocess.Popen(
        [str(NVIM), "--headless", "--clean", "-u", str(REPO / "tests/minimal_init.lua"), "--listen", str(sock)],
        cwd=proj,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(300):
            if sock.exists():
                break
            time.sleep(0.1)
        n = pynvim.attach("socket", path=str(sock))
        n.exec_lua(
            """
            local pylsp, dir = ...
            require('claude_context').setup({ project_root = dir })
            vim.cmd('filetype on')
            vim.lsp.config('pylsp', { cmd = { pylsp }, filetypes = { 'python' }, root_markers = { '.git' } })
            vim.lsp.enable('pylsp')
            vim.cmd.edit(dir .. '/start.py')
            vim.wait(60000, function() return #vim.lsp.get_clients({ bufnr = 0 }) > 0 end, 10)
            """,
            str(PYLSP),
            str(proj),
        )
        if a.open:
            n.exec_lua("vim.cmd.edit(...)", str(proj / "core.py"))
        args = {"file": "core.py", "line": 1, "text": "compute"}
        stop = threading.Event()
        worst = [0.0]

        def sampler():
            s = pynvim.attach("socket", path=str(sock))
            while not stop.is_set():
                t = time.perf_counter()
                s.eval("1")
                worst[0] = max(worst[0], (time.perf_counter() - t) * 1000)
                time.sleep(0.002)
            s.close()

        th = threading.Thread(target=sampler, daemon=True)
        th.start()
        # The same sampler with nothing asked first: what the machine itself adds.
        time.sleep(3)
        idle = worst[0]
        worst[0] = 0.0
        first = n.exec_lua(CALL, "lsp_references", args)
        times = []
        for _ in range(a.rounds):
            r = n.exec_lua(CALL, "lsp_references", args)
            if r.get("error"):
                print("error:", r["error"], file=sys.stderr)
                return 1
            times.append(r["ms"])
        stop.set()
        th.join()
        kids = children(nv.pid)
        servers = [k for k in kids if "pylsp" in k[1]]
        mem = sum(rss_kb(int(k[0])) for k in servers)
        out = {
            "references": first.get("total"),
            "first_answer_ms": round(first["ms"], 1),
            "references_p50_ms": round(statistics.median(times), 1),
            "references_max_ms": round(max(times), 1),
            "blocked_max_ms": round(worst[0], 1),
            "idle_blocked_max_ms": round(idle, 1),
            "server_processes": len(servers),
            "extra_server_processes": 0,
            "server_rss_mb": round(mem / 1024, 1),
            "rounds": a.rounds,
        }
        print("claude-context.nvim (the person's pylsp, through the editor):")
        print(f"  references found            {out['references']}")
        print(f"  first answer                {out['first_answer_ms']} ms")
        print(f"  references p50 / max        {out['references_p50_ms']} / {out['references_max_ms']} ms ({a.rounds} rounds)")
        print(f"  editor blocked (max)        {out['blocked_max_ms']} ms during the calls, {out['idle_blocked_max_ms']} ms idle (same sampler, 3 s before)")
        print(f"  language-server processes   {out['server_processes']} (the person's own; none extra)")
        print(f"  server memory (RSS)         {out['server_rss_mb']} MB")
        if SERENA.exists():
            print(f"Serena: found at {SERENA}, but this bench does not drive it yet: no figures for it.")
        else:
            print("Serena: absent (install serena-agent into bench/.serena/venv to compare): our figures only.")
        if a.json:
            Path(a.json).write_text(json.dumps(out, indent=2))
        n.close()
    finally:
        nv.terminate()
        try:
            nv.wait(10)
        except subprocess.TimeoutExpired:
            nv.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
