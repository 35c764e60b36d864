#!/usr/bin/env python3
"""A symbol alone (`lsp_definition` / `lsp_hover` / `lsp_references {symbol}`) with a server that
cannot search the workspace (python-lsp-server), in a generated Python project of --files files.

The bridge finds the files that hold the name (crates/core/src/tools/code/index.rs: an
ignore-aware walk off the main thread, words hashed per file, cached by stat), the editor parses
those with tree-sitter for the definitions (lua/claude_context/code/defs.lua, cached per file by
stat), then asks the server there. Neovim bundles no Python parser: the bench builds one from the
`tree-sitter-python` sdist on PyPI (its C sources, with the headers of the `tree-sitter` sdist)
into its temporary directory, unless --no-parser (then the server's document symbols of the
candidate files stand in).

Figures:
  first          the first question of a symbol (nothing indexed or parsed before; the files
                 were just written, so they are in the page cache)
  warm p50/max   the same question again, --rounds times (the index and the outlines cached)
  slice          the longest single resume of the tools' coroutines on the main thread
  gap            the longest gap between the ticks of a 1 ms libuv timer in Neovim (how long
                 the main loop could not run), during the calls

    .deps/venv/bin/python bench/symbols.py [--files 10000] [--rounds 10] [--no-parser] [--json FILE]

The slices over 2 ms of wall time are printed on stderr with where they began and ended, the Lua
heap around them and LuaJIT's trace events in them; SYMBOLS_SLOW_MS=1 prints those over 1 ms.
SYMBOLS_TRACE=1 prints every slice of one warm call.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import headless  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
NVIM = REPO / ".deps/venv/bin/nvim"
PYLSP = REPO / ".deps/lsp/venv/bin/pylsp"
PIP = REPO / ".deps/lsp/venv/bin/pip"


def make_project(root: Path, files: int) -> None:
    """`files` modules in packages of 100; `compute_total` defined once, used in 20 files."""
    (root / ".git").mkdir(parents=True)
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    (root / "build/gen.py").write_text("def compute_total():\n    pass\n")
    for i in range(files):
        pkg = root / f"pkg{i // 100:03}"
        pkg.mkdir(exist_ok=True)
        body = []
        if i == files // 2:
            body.append("def compute_total(items):\n    return sum(items)\n\n")
        if i % (files // 20 or 1) == 0 and i != files // 2:
            body.append(f"from pkg{(files // 2) // 100:03}.mod{files // 2:05} import compute_total\n\n")
            body.append(f"def use_{i}(xs):\n    return compute_total(xs)\n\n")
        body.append(f"class Thing{i}:\n    def __init__(self, v):\n        self.v = v\n\n")
        for j in range(3):
            body.append(f"    def method_{j}(self, x):\n        return self.v + x * {j}\n\n")
        body.append(f"def helper_{i}(a, b):\n    # adds\n    return a + b\n")
        (pkg / f"mod{i:05}.py").write_text("".join(body))
        if i % 100 == 0:
            (pkg / "__init__.py").write_text("")
    (root / "start.py").write_text("x = 1\n")


def build_parser(tmp: Path) -> Path | None:
    """A directory with parser/python.so, built from PyPI sdists; None when that fails."""
    d = tmp / "ts"
    try:
        for spec in ("tree-sitter-python==0.23.6", "tree-sitter==0.23.2"):
            subprocess.run(
                [str(PIP), "download", "--quiet", "--no-deps", "--no-binary", ":all:", spec, "-d", str(d)],
                check=True,
                timeout=300,
                capture_output=True,
            )
        for t in d.glob("*.tar.gz"):
            with tarfile.open(t) as tf:
                tf.extractall(d, filter="data")
        src = next(d.glob("tree_sitter_python-*/src"))
        core = next(d.glob("tree-sitter-*/tree_sitter/core/lib/src"))
        inc = d / "inc/tree_sitter"
        inc.mkdir(parents=True)
        for h in ("parser.h", "alloc.h", "array.h", "ts_assert.h"):
            if (core / h).exists():
                shutil.copy(core / h, inc / h)
        (d / "parser").mkdir()
        subprocess.run(
            ["cc", "-O2", "-shared", "-fPIC", "-I", str(d / "inc"), "-I", str(src), str(src / "parser.c"), str(src / "scanner.c"), "-o", str(d / "parser/python.so")],
            check=True,
            timeout=300,
            capture_output=True,
        )
        return d
    except (subprocess.SubprocessError, OSError, StopIteration) as e:
        print(f"no Python parser ({e}): the server's document symbols stand in", file=sys.stderr)
        return None


CALL = """
local name, args = ...
local done, t0 = nil, vim.uv.hrtime()
require('claude_context').call_tool(name, args, function(r) done = { r, vim.uv.hrtime() } end)
vim.wait(300000, function() return done ~= nil end, 1)
if not done then return { ms = -1, error = 'no answer' } end
local r = done[1]
local sc = r.structuredContent or {}
local total = sc.sections and sc.sections[1] and sc.sections[1].total or 0
return { ms = (done[2] - t0) / 1e6, total = total, note = sc.note, error = r.isError and r.content[1].text or nil }
"""

TRACE = """
local sym = ...
local task = require('claude_context.code.task')
task.trace = {}
local done, t0 = nil, vim.uv.hrtime()
require('claude_context').call_tool('lsp_definition', { symbol = sym }, function(r) done = vim.uv.hrtime() end)
vim.wait(300000, function() return done ~= nil end, 1)
local out = {}
for _, s in ipairs(task.trace) do
  out[#out + 1] = ("+%.1f ms: %.2f ms (%.2f CPU) %s"):format(s.at - t0 / 1e6, s.ms, s.cpu_ms, s.where)
end
task.trace = nil
return { ms = (done - t0) / 1e6, slices = out }
"""

PROBE_START = """
local task = require('claude_context.code.task')
task.longest_slice_ns = 0
task.longest_slice_cpu_s = 0
task.slow_slices = {}
task.slow_over_ms = tonumber(vim.env.SYMBOLS_SLOW_MS or '')
if not task.counting then task.counting = true; task.count_traces() end
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
local slow = task.slow_slices or {}
table.sort(slow, function(a, b) return a.cpu_ms > b.cpu_ms end)
local top = {}
for i = 1, math.min(6, #slow) do
  local w = slow[i].where:gsub("\\n%s*%[C%][^\\n]*", ""):gsub("stack traceback:%s*", "")
  local f = (slow[i].from or ""):gsub("\\n%s*%[C%][^\\n]*", "")
  local kb = slow[i].kb or { 0, 0 }
  top[i] = ("%.2f ms (%.2f CPU; Lua heap %.0f -> %.0f KiB; %d trace events): ended %s\\n  started %s"):format(slow[i].ms, slow[i].cpu_ms, kb[1], kb[2], slow[i].traces or 0, w:sub(1, 400), f:sub(1, 300))
end
task.slow_slices = nil
return { gap_ms = math.max(0, p.worst / 1e6 - 1), slice_ms = task.longest_slice_ns / 1e6, slice_cpu_ms = task.longest_slice_cpu_s * 1000, slow = top, nslow = #slow }
"""


def run(files: int, rounds: int, parser: bool) -> dict:
    import pynvim

    tmp = Path(tempfile.mkdtemp(prefix="cc-symbols-bench-"))
    proj = tmp / "project"
    t0 = time.perf_counter()
    make_project(proj, files)
    made_s = time.perf_counter() - t0
    ts = build_parser(tmp) if parser else None
    nv = None
    try:
        nv, n = headless.start(tmp, proj)
        n.exec_lua(
            """
            local cmd, dir, ts = ...
            if ts ~= '' then vim.opt.runtimepath:prepend(ts) end
            require('claude_context').setup({ project_root = dir })
            vim.cmd('filetype on')
            vim.lsp.config('pylsp', { cmd = cmd, filetypes = { 'python' }, root_markers = { '.git' } })
            vim.lsp.enable('pylsp')
            vim.cmd.edit(dir .. '/start.py')
            vim.wait(60000, function() return #vim.lsp.get_clients({ bufnr = 0 }) > 0 end, 10)
            require('claude_context.code.task').request_timeout_ms = 300000
            """,
            [str(PYLSP)],
            str(proj),
            str(ts) if ts else "",
        )
        has_parser = n.exec_lua("return vim.treesitter.language.add('python') == true")
        out = {"files": files, "python_parser": has_parser, "generated_s": round(made_s, 1)}
        # The floor: the same editor doing nothing for 2 s, the same 1 ms timer.
        n.exec_lua(PROBE_START)
        time.sleep(2)
        out["idle_gap_ms"] = round(n.exec_lua(PROBE_STOP)["gap_ms"], 1)
        n.exec_lua(PROBE_START)
        def calls(tool, args, count, what="", fails=False):
            """`count` calls' answers; a tool error ends the bench unless `fails` (expected)."""
            times = []
            for _ in range(count):
                r = n.exec_lua(CALL, tool, args)
                if r.get("error") and not fails:
                    raise RuntimeError(f"{tool}{what}: {r['error']}")
                times.append(r)
            return times

        extras = {"lsp_hover": {}, "lsp_references": {"include_declaration": True}}
        for tool in ("lsp_definition", "lsp_hover", "lsp_references"):
            args = dict({"symbol": "compute_total"}, **extras.get(tool, {}))
            first = calls(tool, args, 1)[0]
            times = [r["ms"] for r in calls(tool, args, rounds)]
            out[tool] = {
                "first_ms": round(first["ms"], 1),
                "warm_p50_ms": round(statistics.median(times), 1),
                "warm_max_ms": round(max(times), 1),
                "total": first.get("total"),
            }
        # The same questions at the place (file, line, column given): the server's own time, with
        # no symbol lookup; the difference is what a symbol alone costs.
        place = {"file": f"pkg{(files // 2) // 100:03}/mod{files // 2:05}.py", "line": 1, "column": 5}
        for tool, extra in extras.items():
            times = [r["ms"] for r in calls(tool, dict(place, **extra), rounds, " at the place")]
            out[tool]["at_place_warm_p50_ms"] = round(statistics.median(times), 1)
        # A name in no file: the walk and the index alone (nothing to parse, no server asked).
        times = [r["ms"] for r in calls("lsp_definition", {"symbol": "no_such_name_anywhere"}, rounds, fails=True)]
        out["absent_name_p50_ms"] = round(statistics.median(times), 1)
        if os.environ.get("SYMBOLS_TRACE"):
            for sym in ("compute_total", "no_such_name_anywhere"):
                tr = n.exec_lua(TRACE, sym)
                print(f"trace of a warm lsp_definition {sym}: {tr['ms']:.1f} ms", file=sys.stderr)
                for line in tr["slices"]:
                    print("  ", line, file=sys.stderr)
        probe = n.exec_lua(PROBE_STOP)
        out["longest_slice_ms"] = round(probe["slice_ms"], 2)
        out["longest_slice_cpu_ms"] = round(probe["slice_cpu_ms"], 2)
        out["main_loop_gap_ms"] = round(probe["gap_ms"], 1)
        out["slices_over_budget"] = probe["nslow"]
        for w in probe["slow"]:
            print("slow slice:", w, file=sys.stderr)
        out["load"] = os.getloadavg()
        n.close()
        return out
    finally:
        if nv is not None:
            headless.stop(nv)
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--no-parser", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args()
    out = run(a.files, a.rounds, not a.no_parser)
    print(json.dumps(out, indent=2))
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
