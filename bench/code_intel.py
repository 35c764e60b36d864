#!/usr/bin/env python3
"""The code tools against the person's own language server, side by side with Serena.

A headless Neovim with the plugin set up and a language server from .deps/lsp (`make deps`)
configured as a person would (`vim.lsp.config` / `vim.lsp.enable`), on a generated project of 100
files where one function is used 200 times (2 calls in each file). Two projects:

  ts   TypeScript, typescript-language-server: measured for us and for Serena, both driving the
       same server binary (.deps/lsp/node_modules/.bin/typescript-language-server, given to
       Serena through its `ls_specific_settings.typescript.ls_path`);
  py   Python, python-lsp-server: ours only (Serena's Python support runs pyright, another
       server, so the two would not be comparable).

Our figures:
  first answer     lsp_references right after the server has attached to the first file the
                   person opened (nothing asked of it before)
  references p50   lsp_references of that function, warm, over --rounds calls (its file not open:
                   loaded out of sight and unloaded each time)
  main thread      the longest gap between the ticks of a 1 ms libuv timer inside Neovim while
                   the calls ran (how long the main loop could not run), and the longest single
                   resume of the tools' coroutines (their own slices)
  blocked (rpc)    the longest `nvim_eval("1")` round trip of a sampler on its own connection
                   while the calls ran; beside it, the same sampler's figure over 3 s with nothing
                   asked (the machine's own noise)
  servers          language-server processes under Neovim (the person's own: nothing extra)
  memory           VmRSS of Neovim and of the server's process tree after the calls

Serena (PyPI `serena-agent`) is driven as an MCP server over stdio (`serena start-mcp-server
--project DIR --transport stdio`, dashboard, GUI log window and browser off, its own SERENA_HOME
under the bench's temporary directory). It is installed on demand into bench/.serena/venv
(ignored by git, never committed; it needs Python >= 3.11). Its figures:
  cold start       from starting its process to its first `find_referencing_symbols` answer
  warm p50         `find_referencing_symbols` of the same function over --rounds calls
  memory           VmRSS of Serena's process tree (Python + the servers it started)
Without network (or with --no-serena) it says Serena is absent and prints our figures.

    .deps/venv/bin/python bench/code_intel.py [--rounds 20] [--langs ts,py] [--no-serena] [--json FILE]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
import headless  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
NVIM = REPO / ".deps/venv/bin/nvim"
PYLSP = REPO / ".deps/lsp/venv/bin/pylsp"
TSLS = REPO / ".deps/lsp/node_modules/.bin/typescript-language-server"
SERENA_DIR = REPO / "bench/.serena"
SERENA = SERENA_DIR / "venv/bin/serena"
SERENA_VERSION = "2.1.0"


def make_py(root: Path, files: int = 100, uses: int = 2) -> None:
    (root / "core.py").write_text("def compute(x):\n    return x * 2\n")
    for i in range(files):
        body = ["from core import compute", ""]
        for j in range(uses):
            body.append(f"def f{i}_{j}(v):\n    return compute(v) + {j}\n")
        (root / f"mod{i:03}.py").write_text("\n".join(body))
    (root / "start.py").write_text("from core import compute\n\nprint(compute(1))\n")


def make_ts(root: Path, files: int = 100, uses: int = 2) -> None:
    # Scripts (no import/export): one program through tsconfig.json, where `compute` is used
    # exactly files × uses times.
    (root / "tsconfig.json").write_text('{"compilerOptions": {"target": "es2020", "strict": true, "noEmit": true}}\n')
    (root / "core.ts").write_text("function compute(x: number): number {\n  return x * 2;\n}\n")
    for i in range(files):
        body = []
        for j in range(uses):
            body.append(f"function f{i}_{j}(v: number): number {{\n  return compute(v) + {j};\n}}\n")
        (root / f"mod{i:03}.ts").write_text("\n".join(body))
    (root / "start.ts").write_text("const started: number = 1;\n")


LANGS = {
    "ts": {
        "title": "TypeScript, typescript-language-server",
        "server": TSLS,
        "cmd": [str(TSLS), "--stdio"],
        "filetypes": ["typescript"],
        "make": make_ts,
        "core": "core.ts",
        "start": "start.ts",
        "ps": ("typescript-language-server", "tsserver"),
        "serena_language": "typescript",
        "probe_symbol": "f99_1",
    },
    "py": {
        "title": "Python, python-lsp-server",
        "server": PYLSP,
        "cmd": [str(PYLSP)],
        "filetypes": ["python"],
        "make": make_py,
        "core": "core.py",
        "start": "start.py",
        "ps": ("pylsp",),
        "serena_language": None,
        "probe_symbol": "f99_1",
    },
}


def rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree(pid: int) -> list:
    """(pid, args) of `pid`'s descendants."""
    out = subprocess.run(["ps", "-eo", "pid=,ppid=,args="], capture_output=True, text=True).stdout
    kids: dict = {}
    args: dict = {}
    for line in out.splitlines():
        parts = line.split(None, 2)
        if len(parts) < 2:
            continue
        p, pp = int(parts[0]), int(parts[1])
        kids.setdefault(pp, []).append(p)
        args[p] = parts[2] if len(parts) > 2 else ""
    found, todo = [], list(kids.get(pid, []))
    while todo:
        p = todo.pop()
        found.append((p, args.get(p, "")))
        todo.extend(kids.get(p, []))
    return found


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

READY = """
local name = ...
local t0 = vim.uv.hrtime()
local c = vim.lsp.get_clients({ name = 'bench' })[1]
if not c or not c:supports_method('workspace/symbol') then return 0 end
vim.wait(120000, function()
  local r = c:request_sync('workspace/symbol', { query = name }, 10000)
  return r and r.result and #r.result > 0
end, 100)
return (vim.uv.hrtime() - t0) / 1e6
"""

# A 1 ms libuv timer inside Neovim: the longest gap between two of its ticks, minus its period,
# is the longest time the main loop did not run. The tools' own slices are timed by
# claude_context.code.task (the longest resume of a task's coroutine).
PROBE_START = """
local task = require('claude_context.code.task')
task.longest_slice_ns = 0
task.longest_slice_cpu_s = 0
_G.__cc_probe = { worst = 0, last = vim.uv.hrtime(), timer = vim.uv.new_timer() }
local p = _G.__cc_probe
p.timer:start(1, 1, function()
  local now = vim.uv.hrtime()
  p.worst = math.max(p.worst, now - p.last)
  p.last = now
end)
"""
PROBE_STOP = """
local p = _G.__cc_probe
p.timer:stop(); p.timer:close()
local task = require('claude_context.code.task')
return { gap_ms = math.max(0, p.worst / 1e6 - 1), slice_ms = task.longest_slice_ns / 1e6, slice_cpu_ms = task.longest_slice_cpu_s * 1000 }
"""


def ours(lang: str, spec: dict, rounds: int, open_core: bool) -> dict:
    import pynvim

    tmp = Path(tempfile.mkdtemp(prefix="cc-code-bench-"))
    proj = tmp / "project"
    (proj / ".git").mkdir(parents=True)
    spec["make"](proj)
    nv = None
    try:
        nv, n = headless.start(tmp, proj)
        n.exec_lua(
            """
            local cmd, fts, dir, start = ...
            require('claude_context').setup({ project_root = dir })
            vim.cmd('filetype on')
            vim.lsp.config('bench', { cmd = cmd, filetypes = fts, root_markers = { '.git' } })
            vim.lsp.enable('bench')
            vim.cmd.edit(dir .. '/' .. start)
            vim.wait(60000, function() return #vim.lsp.get_clients({ bufnr = 0 }) > 0 end, 10)
            """,
            spec["cmd"],
            spec["filetypes"],
            str(proj),
            spec["start"],
        )
        if open_core:
            n.exec_lua("vim.cmd.edit(...)", str(proj / spec["core"]))
        args = {"file": spec["core"], "line": 1, "text": "compute"}
        stop = threading.Event()
        worst = [0.0]

        def sampler():
            s = pynvim.attach("socket", path=str(tmp / "nvim.sock"))
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
        # The first answer may wait for the server to load the project: not cut at 10 s.
        n.exec_lua("require('claude_context.code.task').request_timeout_ms = 120000")
        n.exec_lua(PROBE_START)
        # The person's server has loaded the project (it has been running while they worked):
        # polled with a workspace-symbol search for a symbol of the last file, not with the
        # question asked below. typescript-language-server answers references with nothing
        # while tsserver is still loading the project.
        ready_ms = n.exec_lua(READY, spec["probe_symbol"])
        first = n.exec_lua(CALL, "lsp_references", args)
        if first.get("error"):
            raise RuntimeError(f"lsp_references: {first['error']}")
        times = []
        for _ in range(rounds):
            r = n.exec_lua(CALL, "lsp_references", args)
            if r.get("error"):
                raise RuntimeError(f"lsp_references: {r['error']}")
            times.append(r["ms"])
        probe = n.exec_lua(PROBE_STOP)
        stop.set()
        th.join()
        kids = tree(nv.pid)
        servers = [k for k in kids if any(m in k[1] for m in spec["ps"])]
        top = [k for k in servers if not any(k[0] in [c[0] for c in tree(s[0])] for s in servers)]
        out = {
            "references": first.get("total"),
            "first_answer_ms": round(first["ms"], 1),
            "server_ready_ms": round(ready_ms, 1),
            "references_p50_ms": round(statistics.median(times), 1),
            "references_max_ms": round(max(times), 1),
            "main_thread_max_ms": round(probe["gap_ms"], 1),
            "longest_slice_ms": round(probe["slice_ms"], 2),
            "longest_slice_cpu_ms": round(probe["slice_cpu_ms"], 2),
            "blocked_max_ms": round(worst[0], 1),
            "idle_blocked_max_ms": round(idle, 1),
            "server_processes": len(top),
            "server_tree_processes": len(servers),
            "extra_server_processes": 0,
            "nvim_rss_mb": round(rss_kb(nv.pid) / 1024, 1),
            "server_rss_mb": round(sum(rss_kb(k[0]) for k in servers) / 1024, 1),
            "rounds": rounds,
        }
        n.close()
        return out
    finally:
        if nv is not None:
            headless.stop(nv)
        shutil.rmtree(tmp, ignore_errors=True)


def python311() -> str | None:
    if sys.version_info >= (3, 11):
        return sys.executable
    for name in ("python3.13", "python3.12", "python3.11"):
        p = shutil.which(name)
        if p:
            return p
    return None


def ensure_serena() -> str | None:
    """Serena's executable, installed into bench/.serena/venv on first use; or None and why not
    (printed)."""
    if SERENA.exists():
        return str(SERENA)
    py = python311()
    if not py:
        print("Serena: absent: it needs Python >= 3.11 and none was found", file=sys.stderr)
        return None
    print(f"Serena: installing serena-agent=={SERENA_VERSION} from PyPI into {SERENA_DIR}/venv ...", file=sys.stderr)
    try:
        subprocess.run([py, "-m", "venv", str(SERENA_DIR / "venv")], check=True, timeout=300)
        subprocess.run(
            [str(SERENA_DIR / "venv/bin/pip"), "install", "--quiet", "--disable-pip-version-check", f"serena-agent=={SERENA_VERSION}"],
            check=True,
            timeout=900,
        )
    except (subprocess.SubprocessError, OSError) as e:
        print(f"Serena: absent: installing it failed ({e}); no network?", file=sys.stderr)
        shutil.rmtree(SERENA_DIR / "venv", ignore_errors=True)
        return None
    return str(SERENA) if SERENA.exists() else None


class Mcp:
    """A minimal MCP client over stdio (newline-delimited JSON-RPC)."""

    def __init__(self, proc: subprocess.Popen):
        self.p = proc
        self.id = 0

    def send(self, m: dict) -> None:
        self.p.stdin.write((json.dumps(m) + "\n").encode())
        self.p.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.id += 1
        self.send({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params})
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError(f"Serena closed its output (exit {self.p.poll()})")
            try:
                m = json.loads(line)
            except ValueError:
                continue
            if m.get("id") == self.id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m["result"]


def serena(exe: str, spec: dict, rounds: int) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="cc-serena-bench-"))
    proj = tmp / "project"
    (proj / ".git").mkdir(parents=True)
    spec["make"](proj)
    home = tmp / "serena-home"
    home.mkdir()
    # Serena's global configuration: tools (not its REPL), no dashboard, no GUI, the same server
    # binary as ours; the temporary project trusted (its settings honoured).
    (home / "serena_config.yml").write_text(
        "language_backend: LSP\n"
        "agent_interface: tools\n"
        "gui_log_window: False\n"
        "web_dashboard: False\n"
        "web_dashboard_open_on_launch: False\n"
        "log_level: 30\n"
        "trace_lsp_communication: False\n"
        "ls_specific_settings:\n"
        f"  {spec['serena_language']}:\n"
        f"    ls_path: {spec['server']}\n"
        f'trusted_project_path_patterns: ["{tmp}/**"]\n'
        "projects: []\n"
    )
    (proj / ".serena").mkdir()
    (proj / ".serena/project.yml").write_text(
        f'project_name: "bench"\nlanguage_servers: ["{spec["serena_language"]}"]\nencoding: "utf-8"\n'
    )
    env = dict(os.environ, SERENA_HOME=str(home), HOME=str(tmp))
    args = {"name_path": "compute", "relative_path": spec["core"]}
    t0 = time.perf_counter()
    p = subprocess.Popen(
        [
            exe,
            "start-mcp-server",
            "--project",
            str(proj),
            "--context",
            "claude-code",
            "--transport",
            "stdio",
            "--agent-interface",
            "tools",
            "--enable-web-dashboard",
            "false",
            "--open-web-dashboard",
            "false",
            "--enable-gui-log-window",
            "false",
            "--log-level",
            "WARNING",
        ],
        cwd=proj,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=open(tmp / "serena.log", "w"),
    )
    try:
        c = Mcp(p)
        c.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}})
        c.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

        def call() -> tuple:
            t = time.perf_counter()
            r = c.request("tools/call", {"name": "find_referencing_symbols", "arguments": args})
            ms = (time.perf_counter() - t) * 1000
            text = "".join(x.get("text", "") for x in r.get("content", []))
            if r.get("isError"):
                raise RuntimeError(f"find_referencing_symbols: {text[:500]}")
            return ms, text.count('"content_around_reference"')

        _, refs = call()
        cold = (time.perf_counter() - t0) * 1000
        times = [call()[0] for _ in range(rounds)]
        kids = tree(p.pid)
        servers = [k for k in kids if any(m in k[1] for m in spec["ps"])]
        top = [k for k in servers if not any(k[0] in [c2[0] for c2 in tree(s[0])] for s in servers)]
        return {
            "references": refs,
            "cold_start_ms": round(cold, 1),
            "references_p50_ms": round(statistics.median(times), 1),
            "references_max_ms": round(max(times), 1),
            "server_processes": len(top),
            "server_tree_processes": len(servers),
            "serena_rss_mb": round(rss_kb(p.pid) / 1024, 1),
            "server_rss_mb": round(sum(rss_kb(k[0]) for k in servers) / 1024, 1),
            "total_rss_mb": round((rss_kb(p.pid) + sum(rss_kb(k[0]) for k in kids)) / 1024, 1),
            "rounds": rounds,
        }
    finally:
        p.terminate()
        try:
            p.wait(15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(5)
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--langs", default="ts,py")
    ap.add_argument("--no-serena", action="store_true", help="our figures only")
    ap.add_argument("--json")
    ap.add_argument("--open", action="store_true", help="the asked file is open (no hidden buffer)")
    a = ap.parse_args()
    results: dict = {}
    exe = None if a.no_serena else ensure_serena()
    if a.no_serena:
        print("Serena: not run (--no-serena): our figures only.")
    for lang in [x for x in a.langs.split(",") if x]:
        spec = LANGS[lang]
        if not Path(spec["server"]).exists():
            print(f"{spec['title']}: the server is not at {spec['server']}: run `make deps`", file=sys.stderr)
            return 1
        o = ours(lang, spec, a.rounds, a.open)
        results[lang] = {"ours": o}
        print(f"[{lang}] {spec['title']}: a function used 200 times in 100 files")
        print("  claude-context.nvim (the person's server, through the editor):")
        print(f"    references found            {o['references']}")
        print(f"    first answer                {o['first_answer_ms']} ms (our first call, the server running: it had loaded the project {o['server_ready_ms']} ms after attaching)")
        print(f"    references p50 / max        {o['references_p50_ms']} / {o['references_max_ms']} ms ({a.rounds} rounds)")
        print(f"    main thread blocked (max)   {o['main_thread_max_ms']} ms (1 ms timer's longest gap); longest tool slice {o['longest_slice_ms']} ms ({o['longest_slice_cpu_ms']} ms of CPU)")
        print(f"    editor blocked (rpc, max)   {o['blocked_max_ms']} ms during the calls, {o['idle_blocked_max_ms']} ms idle (same sampler, 3 s before)")
        print(f"    language-server processes   {o['server_processes']} ({o['server_tree_processes']} with children; the person's own: 0 extra)")
        print(f"    memory (RSS)                Neovim {o['nvim_rss_mb']} MB; the person's server {o['server_rss_mb']} MB (not extra)")
        if not spec["serena_language"]:
            print("  Serena: not compared here (its Python support runs pyright, not python-lsp-server)")
            continue
        if not exe:
            if not a.no_serena:
                print("  Serena: absent (not installed and could not be installed: no network?): our figures only.")
            continue
        try:
            s = serena(exe, spec, a.rounds)
        except (RuntimeError, OSError) as e:
            print(f"  Serena: failed: {e}")
            continue
        results[lang]["serena"] = s
        print(f"  Serena {SERENA_VERSION} (its own server process, same binary):")
        print(f"    references found            {s['references']}")
        print(f"    cold start to first answer  {s['cold_start_ms']} ms")
        print(f"    references p50 / max        {s['references_p50_ms']} / {s['references_max_ms']} ms ({a.rounds} rounds)")
        print(f"    language-server processes   {s['server_processes']} extra ({s['server_tree_processes']} with children)")
        print(f"    memory (RSS)                Serena {s['serena_rss_mb']} MB + its servers {s['server_rss_mb']} MB = {s['total_rss_mb']} MB extra")
        print("  ratios:")
        print(f"    references p50 ours/Serena  {o['references_p50_ms'] / s['references_p50_ms']:.3f} (target <= 0.5)")
        print(f"    first answer / cold start   {o['first_answer_ms'] / s['cold_start_ms']:.3f} (target <= 0.1)")
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
