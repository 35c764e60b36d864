-- Background sessions (claude_context.agents), the editor's side, with a fake `claude` (the real
-- CLI's time is its own: `new` returns before it runs). Prints:
--   * `new(name, prompt)`: the time the call holds the main thread, over 20 starts (p50, p99,
--     max), the time until its callback (the fake CLI's `--bg` answered), and the editor's
--     longest block meanwhile (a 1 ms timer's largest gap; the same doing nothing beside it);
--   * `agents()` from its cache with 20 background sessions listed (p50, p99 over 1000 calls);
--   * the picker: from `:ClaudeContext agents` until vim.ui.select is handed the sessions;
--   * a permission decided here: from `decide()` until the hook process (what Claude Code runs)
--     printed its answer and exited (p50, p99 over 20 asks);
--   * `land(name)` of F files with H changed lines each (default 200 × 5 = 1,000 hunks) into a
--     checkout where the person edited another region of every file: the time until the review
--     view is built, then "keep all" there until every kept hunk is written (the merges run
--     off the main thread, crates/core/src/merge.rs);
--   * `land(name, {all = true})` of the same: the wall time until every file is written;
--   and for each, the longest the main thread was held meanwhile (the longest vim.schedule
--   callback, and the largest gap of a 1 ms timer: every callback, native answers included),
--   and for the view, the main thread's own CPU time (which the machine's load inflates less).
--
--   .deps/venv/bin/nvim --headless --clean -u tests/minimal_init.lua -l bench/agents.lua [F] [H]
local uv = vim.uv
-- (Absolute: the bench changes the current folder before it needs this.)
local BENCH_DIR = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
local F = tonumber(_G.arg[1]) or 200
local HN = tonumber(_G.arg[2]) or 5
vim.notify = function() end

local tmp = vim.fn.tempname() .. "-agents-bench"
vim.fn.mkdir(tmp, "p")
tmp = uv.fs_realpath(tmp)
local function sh(cmd, cwd)
  local r = vim.system({ "sh", "-c", cmd }, { cwd = cwd, text = true }):wait(120000)
  assert(r.code == 0, cmd .. ": " .. (r.stderr or ""))
  return r.stdout
end

local fake = tmp .. "/claude"
local agents_json = tmp .. "/agents.json"
local f = assert(io.open(fake, "w"))
f:write(([[#!/bin/sh
case "$1" in
  --help) printf 'Options:\n  --bg, --background  x\nCommands:\n  agents [options]  x\n  attach <id>  x\n  stop|kill <id>  x\n' ;;
  agents) cat %q ;;
  *) printf 'backgrounded \302\267 %%08x\n' $$ ;;
esac
]]):format(agents_json))
f:close()
vim.fn.setfperm(fake, "rwxr-xr-x")

local project = tmp .. "/project"
vim.fn.mkdir(project, "p")
sh("git init -q -b main . && git config user.email b@b && git config user.name b", project)
local lines = {}
for l = 1, 100 do
  lines[l] = ("line %d: the quick brown fox jumps over the lazy dog"):format(l)
end
for i = 1, F do
  local p = ("%s/src/dir%02d/file%03d.txt"):format(project, i % 20, i)
  vim.fn.mkdir(vim.fs.dirname(p), "p")
  local h = assert(io.open(p, "w"))
  h:write(table.concat(lines, "\n") .. "\n")
  h:close()
end
sh("git add -A && git commit -qm init", project)

local entries = {}
for i = 1, 20 do
  entries[i] = {
    id = ("%08x"):format(i),
    cwd = project .. "/.claude/worktrees/s" .. i,
    kind = "background",
    startedAt = i,
    sessionId = "sid-" .. i,
    status = "busy",
    state = "working",
  }
end
local h = assert(io.open(agents_json, "w"))
h:write(vim.json.encode(entries))
h:close()

require("claude_context").setup({ claude = { cmd = fake } })
vim.cmd.cd(project)
local agents = require("claude_context.agents")

local function pct(t, p)
  table.sort(t)
  return t[math.max(1, math.ceil(#t * p))]
end

-- Warm: the CLI's features are asked once per CLI.
local warmed
require("claude_context.agents.cli").features(fake, function()
  warmed = true
end)
vim.wait(10000, function()
  return warmed
end)

-- The editor's longest block while each `new` runs: a timer on the main loop ticks every 1 ms
-- and keeps the largest gap between two ticks, from before the call until its callback (about
-- 1 ms is no block); beside it, the same over a second of doing nothing (the machine's floor).
local tick_gap, tick_last = 0, uv.hrtime()
local function tick()
  local now = uv.hrtime()
  tick_gap = math.max(tick_gap, (now - tick_last) / 1e6)
  tick_last = now
end
local ticker = uv.new_timer()
ticker:start(1, 1, tick)
vim.wait(1000, function()
  return false
end, 1)
local idle_gap = tick_gap
local held, until_cb, gaps = {}, {}, {}
for i = 1, 20 do
  tick_gap, tick_last = 0, uv.hrtime()
  local t0 = uv.hrtime()
  local got
  local ok = agents.new("bench-" .. i, "a prompt for the bench", {
    cb = function(err)
      assert(not err, err)
      got = uv.hrtime()
    end,
  })
  held[i] = (uv.hrtime() - t0) / 1e6
  assert(ok)
  vim.wait(10000, function()
    return got ~= nil
  end, 1)
  until_cb[i] = (got - t0) / 1e6
  gaps[i] = tick_gap
end
ticker:stop()
print(
  ("new(): main thread held p50 %.2f ms, p99 %.2f ms, max %.2f ms; callback after p50 %.1f ms (20 starts)"):format(
    pct(held, 0.5),
    pct(held, 0.99),
    pct(vim.deepcopy(held), 1),
    pct(until_cb, 0.5)
  )
)
print(
  ("new(): the editor's longest block until the callback (1 ms ticks) p50 %.1f ms, p99 %.1f ms, max %.1f ms; doing nothing for 1 s: %.1f ms"):format(
    pct(gaps, 0.5),
    pct(gaps, 0.99),
    pct(vim.deepcopy(gaps), 1),
    idle_gap
  )
)

local refreshed
require("claude_context.agents.list").refresh(function()
  refreshed = true
end)
vim.wait(10000, function()
  return refreshed
end)
local n = #require("claude_context.agents.list").list()
local times = {}
for i = 1, 1000 do
  local t0 = uv.hrtime()
  require("claude_context.agents.list").list()
  times[i] = (uv.hrtime() - t0) / 1e6
end
print(("agents() from the cache (%d sessions): p50 %.3f ms, p99 %.3f ms"):format(n, pct(times, 0.5), pct(times, 0.99)))

-- The picker (`:ClaudeContext agents`, vim.ui.select's adapter): from pick() until the
-- picker is handed the sessions, over 20 opens.
local C = require("claude_context.agents.commands")
local orig_select = vim.ui.select
local opened = {}
for i = 1, 20 do
  local t0 = uv.hrtime()
  local got
  vim.ui.select = function(items, _, cb)
    got = uv.hrtime()
    assert(#items == n)
    cb(nil)
  end
  C.pick()
  opened[i] = (got - t0) / 1e6
end
vim.ui.select = orig_select
print(
  ("picker (%d sessions) handed to vim.ui.select: p50 %.2f ms, p99 %.2f ms (20 opens)"):format(
    n,
    pct(opened, 0.5),
    pct(opened, 0.99)
  )
)

-- A permission decided here: from decide() until the hook process (what Claude Code runs) has
-- printed its answer and exited, over 20 asks.
local bin = require("claude_context.sessions.hooks").binary()
local port = require("claude_context").status().port
local lat = {}
for i = 1, 20 do
  local exited
  vim.system({ bin, "hook", "PermissionRequest" }, {
    stdin = vim.json.encode({
      hook_event_name = "PermissionRequest",
      session_id = "bench-" .. i,
      tool_name = "Bash",
      tool_input = { command = "ls" },
      cwd = project,
    }),
    env = { CLAUDE_CODE_SSE_PORT = tostring(port) },
  }, function()
    exited = uv.hrtime()
  end)
  vim.wait(10000, function()
    return #require("claude_context").permissions() > 0
  end, 1)
  local ask = require("claude_context").permissions()[1]
  local t0 = uv.hrtime()
  assert(require("claude_context").decide(ask.id, "allow"))
  vim.wait(10000, function()
    return exited ~= nil
  end, 1)
  lat[i] = (exited - t0) / 1e6
end
print(
  ("decide() until the hook printed its answer and exited: p50 %.1f ms, p99 %.1f ms (20 asks)"):format(
    pct(lat, 0.5),
    pct(lat, 0.99)
  )
)

-- Land: a worktree changing H lines of every file, the person's edit in another region.
local wt = project .. "/.claude/worktrees/land"
sh("git worktree add -q .claude/worktrees/land -b worktree-land", project)
for i = 1, F do
  local rel = ("src/dir%02d/file%03d.txt"):format(i % 20, i)
  local theirs, mine = vim.deepcopy(lines), vim.deepcopy(lines)
  for k = 1, HN do
    theirs[math.floor(k * 90 / (HN + 1))] = ("changed %d by the session"):format(k)
  end
  mine[99] = "the person's own edit"
  for path, text in pairs({ [wt .. "/" .. rel] = theirs, [project .. "/" .. rel] = mine }) do
    local w = assert(io.open(path, "w"))
    w:write(table.concat(text, "\n") .. "\n")
    w:close()
  end
end
-- The main thread's own CPU time (Linux: CLOCK_THREAD_CPUTIME_ID), which the machine's load
-- does not inflate as it does the wall times; nil elsewhere.
local thread_cpu_ms = dofile(BENCH_DIR .. "/thread_cpu.lua")
local max_slice, max_where = 0, "?"
local orig = vim.schedule
local function reset_slices()
  max_slice, max_where = 0, "?"
end
vim.schedule = function(fn)
  orig(function()
    local t0 = uv.hrtime()
    fn()
    local d = (uv.hrtime() - t0) / 1e6
    if d > max_slice then
      local info = debug.getinfo(fn, "S")
      max_where = info.short_src .. ":" .. info.linedefined
    end
    max_slice = math.max(max_slice, d)
  end)
end
-- The view: from land() until the review view is built, then "keep all" in it until every
-- kept hunk is on disk.
local R = require("claude_context.review")
local got, ready
-- Beside the slices, the editor's longest block (the 1 ms ticks' largest gap) meanwhile.
ticker:start(1, 1, tick)
tick_gap, tick_last = 0, uv.hrtime()
local cpu0 = thread_cpu_ms()
local t0 = uv.hrtime()
require("claude_context.agents.land").land("land", {
  cb = function(err, r)
    assert(not err, err)
    got = r
  end,
  on_ready = function()
    ready = uv.hrtime()
  end,
})
vim.wait(120000, function()
  return ready ~= nil
end, 1)
local view_ms = (ready - t0) / 1e6
local view_cpu = cpu0 and (thread_cpu_ms() - cpu0)
local view_slice, view_where, view_gap = max_slice, max_where, tick_gap
reset_slices()
tick_gap, tick_last = 0, uv.hrtime()
local targets = {}
for _, f in ipairs(R.active().files) do
  for hi, hk in ipairs(f.hunks) do
    if hk.state == "pending" then
      targets[#targets + 1] = { f = f, hi = hi }
    end
  end
end
local kept, kept_at
t0 = uv.hrtime()
R.keep({
  targets = targets,
  on_done = function(out)
    kept, kept_at = out, uv.hrtime()
  end,
})
vim.wait(120000, function()
  return kept ~= nil and require("claude_context.review.fs").idle()
end, 1)
local keep_ms = (uv.hrtime() - t0) / 1e6
local keep_gap = tick_gap
print(
  ("land (view): %d files, %d hunks: the view built in %.0f ms (longest slice %.1f ms, %s; longest block, 1 ms ticks: %.1f ms; main thread CPU %s ms); keep all: %.0f ms until every file is written (the editor's part done at %.0f ms; %d hunks kept, %d refused; longest slice %.1f ms, %s; longest block %.1f ms)"):format(
    #got.view.review.cs.files,
    #targets,
    view_ms,
    view_slice,
    view_where,
    view_gap,
    view_cpu and ("%.0f"):format(view_cpu) or "?",
    keep_ms,
    (kept_at - t0) / 1e6,
    kept.done,
    #kept.refused,
    max_slice,
    max_where,
    keep_gap
  )
)
R.close()
-- The main checkout as the person had it again, for the land without the view.
for i = 1, F do
  local rel = ("src/dir%02d/file%03d.txt"):format(i % 20, i)
  local mine = vim.deepcopy(lines)
  mine[99] = "the person's own edit"
  local w = assert(io.open(project .. "/" .. rel, "w"))
  w:write(table.concat(mine, "\n") .. "\n")
  w:close()
end
reset_slices()
local report
tick_gap, tick_last = 0, uv.hrtime()
t0 = uv.hrtime()
require("claude_context.agents.land").land("land", {
  all = true,
  cb = function(err, r)
    assert(not err, err)
    report = r
  end,
})
vim.wait(120000, function()
  return report ~= nil
end, 1)
local wall = (uv.hrtime() - t0) / 1e6
local all_gap = tick_gap
ticker:stop()
ticker:close()
vim.schedule = orig
print(
  ("land {all}: %d files, %d hunks: %.0f ms until every file is written (%d written, %d conflicts); longest main-thread slice %.1f ms (%s); longest block, 1 ms ticks: %.1f ms"):format(
    F,
    F * HN,
    wall,
    #report.written,
    #report.conflicts,
    max_slice,
    max_where,
    all_gap
  )
)
sh("rm -rf " .. vim.fn.shellescape(tmp), "/")
vim.cmd("qa!")
