-- The review view at size: a change set of F files with H hunks each (default 200 × 5, files
-- of 100 lines), opened with claude_context.review.open. Prints the time until the whole view
-- is built, the longest the main thread was held meanwhile (the longest of the open call and
-- of each callback run through vim.schedule or vim.defer_fn: the slices), the time of keeping and of
-- rejecting one hunk (a reject writes the file atomically and redraws its section; median and
-- max over 50 of each), then of rejecting all the other hunks at once (in slices, a file's
-- hunks in one write) with its longest slice. The CPU time (getrusage, user + system) says
-- what the work costs apart from a busy machine's waits.
--
--   .deps/venv/bin/nvim --headless --clean -u tests/minimal_init.lua -l bench/review.lua [F] [H]
local uv = vim.uv
local F = tonumber(_G.arg[1]) or 200
local HN = tonumber(_G.arg[2]) or 5
vim.notify = function() end
require("claude_context").setup({ auto_start = false, review = { context = tonumber(os.getenv("CTX") or "2") } })
local review = require("claude_context.review")

local root = vim.fn.tempname()
vim.fn.mkdir(root, "p")
root = uv.fs_realpath(root)
local cs =
  { root = root, turns = { { id = "t", session = "s", prompt = "bench", started_ms = 0, files = {} } }, files = {} }
for i = 1, F do
  local before, after = {}, {}
  for l = 1, 100 do
    before[l] = ("file %d line %d: the quick brown fox jumps over the lazy dog"):format(i, l)
    after[l] = before[l]
  end
  for k = 1, HN do
    after[math.floor(k * 100 / (HN + 1))] = ("changed %d in file %d"):format(k, i)
  end
  local path = ("src/dir%02d/file%03d.txt"):format(i % 20, i)
  local abs = root .. "/" .. path
  vim.fn.mkdir(vim.fs.dirname(abs), "p")
  local b, a = table.concat(before, "\n") .. "\n", table.concat(after, "\n") .. "\n"
  local f = assert(io.open(abs, "wb"))
  f:write(a)
  f:close()
  cs.files[i] = { path = path, absolute = abs, status = "modified", before = b, after = a }
end

local function median(t)
  table.sort(t)
  return t[math.ceil(#t / 2)]
end

-- The longest the main thread is held: every callback run through vim.schedule (the view's
-- slices) or vim.defer_fn (a keep/reject's slices, claude_context.ide.slices) is timed, and so
-- is each synchronous call.
local max_gap = 0
local function timed(fn)
  return function()
    local s = uv.hrtime()
    fn()
    max_gap = math.max(max_gap, (uv.hrtime() - s) / 1e6)
  end
end
local orig_schedule, orig_defer = vim.schedule, vim.defer_fn
vim.schedule = function(fn)
  return orig_schedule(timed(fn))
end
vim.defer_fn = function(fn, ms)
  return orig_defer(timed(fn), ms)
end

local function cpu_ms()
  local r = uv.getrusage()
  return (r.utime.sec + r.stime.sec) * 1e3 + (r.utime.usec + r.stime.usec) / 1e3
end
local c0 = cpu_ms()
local t0 = uv.hrtime()
local first_block = 0
local v = review.open(cs)
first_block = (uv.hrtime() - t0) / 1e6
vim.wait(60000, function()
  return v.ready
end, 1)
local open_ms = (uv.hrtime() - t0) / 1e6
local open_cpu = cpu_ms() - c0
max_gap = math.max(max_gap, first_block)
local open_block = max_gap

local model = require("claude_context.review.model")
local keep, reject, reject_cpu = {}, {}, {}
for i = 1, 50 do
  local f = model.file(v.review, i)
  local s = uv.hrtime()
  review.act("keep", { targets = { { f = f, hi = 1 } } })
  keep[#keep + 1] = (uv.hrtime() - s) / 1e6
  s = uv.hrtime()
  local c = cpu_ms()
  review.act("reject", { targets = { { f = f, hi = 2 } } })
  reject[#reject + 1] = (uv.hrtime() - s) / 1e6
  reject_cpu[#reject_cpu + 1] = cpu_ms() - c
end
local function mx(t)
  return math.max(unpack(t))
end

-- Reject everything left (sliced over the files): its wall time and longest block.
local all = model.pending(v.review)
local all_done
max_gap = 0
local ta = uv.hrtime()
local s0 = uv.hrtime()
review.act("reject", {
  targets = all,
  on_done = function()
    all_done = true
  end,
})
max_gap = math.max(max_gap, (uv.hrtime() - s0) / 1e6)
vim.wait(120000, function()
  return all_done
end, 1)
local all_ms = (uv.hrtime() - ta) / 1e6
io.stdout:write(
  ("review view, %d files x %d hunks (%d hunks): open until built %.0f ms (CPU %.0f ms), first slice %.1f ms, longest block %.1f ms; keep median %.2f ms max %.2f ms; reject median %.2f ms max %.2f ms (CPU median %.2f ms); reject of the other %d hunks %.0f ms, longest block %.1f ms\n"):format(
    F,
    HN,
    F * HN,
    open_ms,
    open_cpu,
    first_block,
    open_block,
    median(keep),
    mx(keep),
    median(reject),
    mx(reject),
    median(reject_cpu),
    #all,
    all_ms,
    max_gap
  )
)
require("claude_context.review.fs").flush()
vim.fn.delete(root, "rf")
vim.cmd("qa!")
