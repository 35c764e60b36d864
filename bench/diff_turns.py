#!/usr/bin/env python3
"""openDiff on a loaded editor, seen from inside the editor: the longest main-thread turns and
what ran in them, with CPU time beside wall time (a loaded machine preempts the editor; the CPU
time is the editor's own work).

The editor is loaded as bench/nowait.py's scenarios load it (300 buffers with 60·S diagnostics
each, 1,500·S buffers in all), then openDiff of bench/nowait.py's proposal (100,000·S lines) is
sent while bench/nowait.py's sampler runs. Inside the editor, a libuv check/prepare pair times
every event-loop turn (from the end of a poll to the start of the next one: the editor's own
work between two looks at its input), and the diff view's steps are wrapped to record wall and
CPU time (getrusage) per call: each fill slice's piece, view.set_up_buffers and view.show, the
buffer lookups, filetype detection, the snapshot's autocommands.

    .deps/venv/bin/python bench/diff_turns.py [--scale 1] [--open --old-lines 200000 --new-lines 90000 [--accept]]
    .deps/venv/bin/python bench/diff_turns.py --bare --open --old-lines 90000 --every 1000 --name big.py --control

The second line is issue 38's case as a client sees it: a 5 MB, 90,000-line file open in the
window, one line in a thousand changed, no other buffers. The sampler's longest waits (outside,
`nvim_eval("1")` over the --listen socket) are printed on the editor's clock with what ran in the
editor meanwhile (its 1 ms timer's gaps and the main thread's CPU in them, the view's steps);
`--control` samples a second, idle Neovim the same way at the same time (what the machine alone
does to a sampler); `--perf FILE` records the editor's context switches with call chains (where
its main thread sleeps).

Prints the sampler's figures (as bench/nowait.py's opendiff row), the longest turns, the longest
calls and the totals per step. A benchmark, not a test.
"""
import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import nowait as nw  # noqa: E402

INSTR = r"""
local uv = vim.uv
_G.PROF = { iters = {}, marks = {} }
local P = _G.PROF
local last_check, last_cpu
local prep = uv.new_prepare()
local chk = uv.new_check()
local ffi = require("ffi")
pcall(ffi.cdef, "struct bt_ts { long s; long ns; }; int clock_gettime(int, struct bt_ts *);")
local ts = ffi.new("struct bt_ts")
-- The main thread's own CPU time (ms): not the editor's other threads (libuv's pool, the bridge).
local function cpu()
  ffi.C.clock_gettime(3, ts)
  return tonumber(ts.s) * 1e3 + tonumber(ts.ns) / 1e6
end
-- A 1 ms timer: every gap over 2 ms between its ticks (whatever held the loop, the machine's
-- pauses included), with the main thread's CPU time in it.
-- With the time the main thread waited for a CPU (runnable, not running: /proc's schedstat), so
-- that the rest of a gap is the time it slept (a lock, the disk, or the loop's own poll).
P.gaps = {}
local tick = uv.new_timer()
local stat = io.open("/proc/thread-self/schedstat", "r")
local function rq()
  if not stat then return 0 end
  stat:seek("set", 0)
  local _, w = stat:read("*l"):match("^(%d+) (%d+)")
  return tonumber(w) / 1e6
end
local last_t, last_c, last_w = uv.hrtime(), cpu(), rq()
tick:start(1, 1, function()
  local now, c, w = uv.hrtime(), cpu(), rq()
  local d = (now - last_t) / 1e6
  if d > 2 and P.on then P.gaps[#P.gaps + 1] = { t = last_t / 1e6, d = d, c = c - last_c, w = w - last_w } end
  last_t, last_c, last_w = now, c, w
end)
chk:start(function() last_check = uv.hrtime(); last_cpu = cpu() end)
prep:start(function()
  if last_check then
    local d = (uv.hrtime() - last_check) / 1e6
    if d > 4 and P.on then P.iters[#P.iters + 1] = { t = last_check / 1e6, d = d, c = cpu() - last_cpu } end
  end
end)
P.cpu = cpu
function P.mark(name, t0, c0)
  if P.on then P.marks[#P.marks + 1] = { n = name, t = t0 / 1e6, d = (uv.hrtime() - t0) / 1e6, c = c0 and (cpu() - c0) or -1 } end
end
local function wrap(mod, fname, label)
  local m = mod == "vim.api" and vim.api or require(mod)
  local f = m[fname]
  m[fname] = function(...)
    local t0, c0 = uv.hrtime(), cpu()
    local r = { f(...) }
    P.mark(label, t0, c0)
    return unpack(r)
  end
end
-- each slice step of sliced()
local slices = require("claude_context.ide.slices")
local sliced = slices.sliced
slices.sliced = function(ms, piece, alive)
  local info = debug.getinfo(2, "S").short_src
  return sliced(ms, function()
    local t0, c0 = uv.hrtime(), cpu()
    local r = piece()
    P.mark("piece " .. info:match("[^/]*$"), t0, c0)
    return r
  end, alive)
end
wrap("claude_context.ide.diff.view", "show", "view.show")
if require("claude_context.ide.diff.view").set_up_buffers then wrap("claude_context.ide.diff.view", "set_up_buffers", "view.set_up_buffers") end
wrap("claude_context.ide.diff", "open", "diff.open")
wrap("claude_context.ide.diff.fill", "build", "fill.build")
wrap("claude_context.util.windows", "unused_buffer_name", "windows.unused_buffer_name")
wrap("claude_context.ide.util", "find_buf", "util.find_buf")
wrap("claude_context.ide.diff.inline", "render", "inline.render")
wrap("vim.filetype", "match", "filetype.match")
for _, k in ipairs({"nvim_buf_set_lines", "nvim_create_buf", "nvim_buf_set_name", "nvim_win_set_buf", "nvim_buf_delete", "nvim_exec_autocmds", "nvim_set_current_tabpage", "nvim_set_current_win"}) do wrap("vim.api", k, "api." .. k) end
local split = vim.split
vim.split = function(...) local t0, c0 = uv.hrtime(), cpu(); local r = split(...); P.mark("vim.split", t0, c0); return r end
local cmd = vim.cmd
vim.cmd = setmetatable({}, { __call = function(_, c) local t0, c0 = uv.hrtime(), cpu(); local r = cmd(c); P.mark("cmd " .. tostring(c):sub(1, 20), t0, c0); return r end, __index = cmd })
local snap = require("claude_context.ide.snapshot")
for _, k in ipairs({ "note_buf", "note_active", "gone", "note_diffs" }) do
  if snap[k] then wrap("claude_context.ide.snapshot", k, "snapshot." .. k) end
end
"""

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--open", action="store_true", help="the file open in the current window first")
    ap.add_argument("--old-lines", type=int, help="the file's lines (default 100,000·S)")
    ap.add_argument("--new-lines", type=int, help="the proposal's lines (default as many as the file's)")
    ap.add_argument("--name", default="big.txt", help="the file's name (its extension sets the filetype)")
    ap.add_argument("--accept", action="store_true", help="accept, then write the file as Claude Code does (the open buffer reloads)")
    ap.add_argument("--neovim-reload", action="store_true", help="the buffer reloaded by Neovim at once (:checktime), as before the sliced reload")
    ap.add_argument("--every", type=int, help="change one line in EVERY instead of a few in the middle (issue 38: --every 1000)")
    ap.add_argument("--bare", action="store_true", help="an editor with no other buffers (not loaded as bench/nowait.py's scenarios load it)")
    ap.add_argument("--perf", metavar="FILE", help="record the editor's context switches with call chains "
                    "(perf record -e sched:sched_switch -g) while openDiff runs, into FILE: where its main thread sleeps")
    ap.add_argument("--control", action="store_true", help="also sample a second, idle Neovim the same way "
                    "at the same time: what the machine alone does to a sampler (its waits beside ours)")
    ap.add_argument("--lua-split", action="store_true", help="the sliced reload splitting the lines in Lua (vim.split), as before buf_put_text")
    a = ap.parse_args()
    scale = a.scale
    tmp = Path(tempfile.mkdtemp(prefix="cc-bench-turns-"))
    s = nw.Side("cc", "require('claude_context').setup({})", None, tmp)
    try:
        if not a.bare:
            d = s.project / "diag"
            d.mkdir()
            s.nvim.exec_lua(nw.FILL_BUFFERS, str(d), 300, max(1, int(60 * scale)))
            e = s.project / "editors"
            e.mkdir()
            s.nvim.exec_lua(nw.FILL_BUFFERS, str(e), max(0, int(1500 * scale) - 300), 0)
        s.nvim.exec_lua(INSTR)
        if a.neovim_reload:
            s.nvim.exec_lua("local r = require('claude_context.ide.diff.reload'); r.min_lines = math.huge; r.min_bytes = math.huge")
        if a.lua_split:
            s.nvim.exec_lua("require('claude_context.ide.diff.reload').native = false")
        sampler = nw.Sampler(s.sock)
        control = None
        if a.control:
            import subprocess
            csock = tmp / "control.sock"
            cproc = subprocess.Popen([nw.NVIM, "--clean", "--headless", "-n", "--listen", str(csock)],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            nw.wait_until(lambda: csock.exists(), 30, "the control Neovim")
            control = (cproc, nw.Sampler(csock))
        nw.settle(sampler)
        s.nvim.exec_lua("_G.PROF.on = true")
        perf = None
        if a.perf:
            import subprocess
            pid = s.nvim.eval("getpid()")
            perf = subprocess.Popen(["perf", "record", "-q", "-e", "sched:sched_switch", "-g", "-p", str(pid), "-o", a.perf],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1.0)
            print(f"perf: recording the editor (pid {pid}, main thread {pid}) into {a.perf}")
        out = nw.opendiff(s, sampler, scale, 120, a.open, a.old_lines, a.new_lines, a.name, a.accept,
                          a.every)
        stalls = sampler.samples(out["sent_at"], out["shown_at"]) if out.get("sent_at") else []
        cstalls = control[1].samples(out["sent_at"], out["shown_at"]) if control and out.get("sent_at") else []
        if perf:
            import signal
            perf.send_signal(signal.SIGINT)
            perf.wait(30)
        kept_iters = s.nvim.exec_lua("return _G.PROF.iters")
        kept_gaps = s.nvim.exec_lua("local g = _G.PROF.gaps; _G.PROF.gaps = {}; return g")
        # The floor: the same editor doing nothing, the same sampler, windows as long as the
        # reload (or the view's showing): what the machine alone costs at this load.
        span = (out.get("reload_ms") or out.get("on_screen_ms") or 200) / 1000
        floors, idle_turns = [], []
        for _ in range(5):
            s.nvim.exec_lua("_G.PROF.iters = {}")
            a0 = time.perf_counter()
            time.sleep(span)
            floors.append(sampler.blocked_max_ms(a0, time.perf_counter()))
            idle_turns += s.nvim.exec_lua("return _G.PROF.iters")
        idle_gaps = s.nvim.exec_lua("return _G.PROF.gaps")
        out["floor_blocked_ms"] = [round(f, 1) for f in floors]
        out["floor_longest_turn_ms"] = round(max([i["d"] for i in idle_turns] or [0]), 1)
        s.nvim.exec_lua("_G.PROF.on = false")
        sampler.close()
        P = s.nvim.exec_lua("return { iters = _G.PROF.iters, marks = _G.PROF.marks, gaps = _G.PROF.gaps }")
        P["iters"] = kept_iters
        print(json.dumps({k: v for k, v in out.items() if k in ("lines", "on_screen_ms", "blocked_ms_max", "reload_ms", "reload_blocked_ms_max", "floor_blocked_ms", "floor_longest_turn_ms", "note")}))
        opened = [m for m in P["marks"] if m["n"] == "diff.open"]
        shown = [m for m in P["marks"] if m["n"] == "view.show"]
        if opened and shown and out.get("on_screen_ms"):
            span = shown[-1]["t"] + shown[-1]["d"] - opened[0]["t"]
            print(f"openDiff in the editor (arrival to the view shown): {span:.1f} ms of "
                  f"{out['on_screen_ms']:.1f} ms on screen (the rest: the request's way in and the bridge's preparation)")
        # From the request's arrival on (opening the file, with --open, came before).
        start = opened[0]["t"] if opened else 0
        iters = sorted((i for i in P["iters"] if i["t"] + i["d"] >= start), key=lambda i: -i["d"])
        print("longest event-loop turns (ms, over 4 ms):", [round(i["d"], 1) for i in iters[:12]])
        if opened:
            # Where they fell: from the request's arrival, with the steps that ran in them.
            t0 = opened[0]["t"]
            for i in iters[:6]:
                inside = sorted({m["n"] for m in P["marks"] if i["t"] <= m["t"] <= i["t"] + i["d"]})
                print(f"  turn of {i['d']:.1f} ms ({i['c']:.1f} ms CPU) at +{i['t'] - t0:.1f} ms: {', '.join(inside) or 'none of the steps timed'}")
        gaps = sorted((g for g in kept_gaps if g["t"] + g["d"] >= start), key=lambda g: -g["d"])
        print("1 ms timer: longest gaps from the request on (ms: wall, main thread's CPU, waiting for a CPU, asleep):",
              [(round(g["d"], 1), round(g["c"], 1), round(g["w"], 1), round(g["d"] - g["c"] - g["w"], 1)) for g in gaps[:8]])
        slept = sorted(gaps, key=lambda g: g["c"] + g["w"] - g["d"])[:3]
        print("  gaps the main thread slept through most (wall, asleep):",
              [(round(g["d"], 1), round(g["d"] - g["c"] - g["w"], 1)) for g in slept])
        for g in sorted(gaps, key=lambda g: -g["c"])[:3]:
            inside = {}
            for m in P["marks"]:
                if g["t"] <= m["t"] <= g["t"] + g["d"]:
                    inside[m["n"]] = inside.get(m["n"], 0) + max(m["c"], 0)
            print(f"  a gap with {g['c']:.1f} ms of main-thread CPU in {g['d']:.1f} ms at {g['t'] - start:+.1f} ms: "
                  + (", ".join(f"{k} {v:.1f}" for k, v in sorted(inside.items(), key=lambda kv: -kv[1])) or "none of the steps timed"))
        print("  most main-thread CPU in one gap: %.1f ms; idle floor (same editor doing nothing, %d windows): longest gap %.1f ms" % (
            max([g["c"] for g in gaps] or [0]), 5, max([g["d"] for g in idle_gaps] or [0])))
        # The sampler's longest waits (outside, nvim_eval("1") over the --listen socket), on the
        # same clock as the editor's marks: what ran in the editor while each waited.
        print("longest waits seen from outside (ms) and the steps that ran in them:")
        for st, en in sorted(stalls, key=lambda x: x[0] - x[1])[:5]:
            s0, e0 = st * 1e3, en * 1e3
            inside = sorted({m["n"] for m in P["marks"] if m["t"] < e0 and m["t"] + m["d"] > s0})
            over = [g for g in kept_gaps if g["t"] < e0 and g["t"] + g["d"] > s0]
            print(f"  {e0 - s0:.1f} ms at {s0 - start:+.1f} ms: the editor's 1 ms timer's longest gap there "
                  f"{max([g['d'] for g in over] or [0]):.1f} ms (main thread's CPU in its gaps "
                  f"{sum(g['c'] for g in over):.1f} ms, waiting for a CPU {sum(g['w'] for g in over):.1f} ms); steps: {', '.join(inside) or 'none of those timed'}"
                  + (f"; the idle control Neovim's longest wait then: {max([(e - b) * 1e3 for b, e in cstalls if b < en and e > st] or [0]):.1f} ms" if control else ""))
        after = [(b, e) for b, e in stalls if e * 1e3 > start]
        print(f"  from the request's arrival in the editor to the view shown ({out.get('on_screen_ms', 0) - (start - out['sent_at'] * 1e3 if stalls else 0):.0f} ms): "
              f"longest wait {max([(e - b) * 1e3 for b, e in after] or [0]):.1f} ms"
              + (f", the idle control Neovim's {max([(e - b) * 1e3 for b, e in cstalls if e * 1e3 > start] or [0]):.1f} ms" if control else ""))
        if control:
            print(f"  the idle control Neovim's longest wait from the request to the view shown: "
                  f"{max([(e - b) * 1e3 for b, e in cstalls] or [0]):.1f} ms (ours {out.get('blocked_ms_max', 0):.1f} ms)")
        print("longest calls:")
        for m in sorted(P["marks"], key=lambda m: -m["c"])[:12]:
            print(f"  {m['n']}: {m['d']:.2f} ms wall, {m['c']:.2f} ms CPU")
        print("per step: calls, wall, CPU, longest CPU (ms)")
        tot = {}
        for m in P["marks"]:
            t = tot.setdefault(m["n"], [0, 0.0, 0.0, 0.0])
            t[0] += 1
            t[1] += m["d"]
            t[2] += m["c"]
            t[3] = max(t[3], m["c"])
        for k, t in sorted(tot.items(), key=lambda kv: -kv[1][3]):
            print(f"  {k}: {t[0]}, {t[1]:.1f}, {t[2]:.1f}, {t[3]:.2f}")
    finally:
        if a.control and control:
            control[1].close()
            control[0].kill()
        s.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
