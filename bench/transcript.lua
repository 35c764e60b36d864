-- The transcript buffer and the follow window at size (claude_context.transcript, .follow):
--
-- 1. A conversation file of MB megabytes (default 50: prompts, Claude's text, Read calls with
--    results of ~4 KB) opened as `:ClaudeContext transcript` does (transcript(id), shown in the
--    current window with its fold options): the time until every line is in the buffer, the
--    longest the main thread was held meanwhile (the open call, the library's answer and each
--    slice run through vim.schedule are timed; the turns that set the filetype and load the
--    syntax are named), the screen redrawn every 10 ms as a UI would (`:redraw`, timed: folds,
--    syntax or tree-sitter of what the window shows), and the longest stall of the event loop
--    whatever held it (a 1 ms timer's longest gap, less 1 ms); then the first computation of
--    every fold (the 'foldexpr' over the whole buffer).
-- 2. Live growth: a writer process appends N records (default 200) 20–60 ms apart, each holding
--    its write time; the latency until its line is in the buffer (on_lines), p50/p99/max.
-- 3. Follow: the hook binary's PostToolUse of a Read, N times: from the hook's start until the
--    follow window shows the file (a process start included), p50/p99/max.
--
--   .deps/venv/bin/nvim --headless --clean -u tests/minimal_init.lua -l bench/transcript.lua [MB] [N] [open]
--
-- `open` (third argument): part 1 only. Environment: CLAUDE_CONTEXT_BENCH_TS=1 starts tree-sitter
-- highlighting on Markdown buffers (as nvim-treesitter's `highlight` or a FileType autocommand
-- calling vim.treesitter.start do); CLAUDE_CONTEXT_BENCH_TRANSCRIPT=FILE uses FILE as the
-- transcript module (another version of lua/claude_context/transcript/init.lua, to compare in
-- the same run: `git show main:lua/claude_context/transcript/init.lua > /tmp/old.lua`).
local uv = vim.uv
local MB = tonumber(_G.arg[1]) or 50
local N = tonumber(_G.arg[2]) or 200
local OPEN_ONLY = _G.arg[3] == "open"
local other = os.getenv("CLAUDE_CONTEXT_BENCH_TRANSCRIPT") or ""
if other ~= "" then
  package.loaded["claude_context.transcript"] = dofile(other)
end
if os.getenv("CLAUDE_CONTEXT_BENCH_TS") == "1" then
  vim.api.nvim_create_autocmd("FileType", {
    pattern = "markdown",
    callback = function(ev)
      pcall(vim.treesitter.start, ev.buf, "markdown")
    end,
  })
end
vim.notify = function() end
local tmp = uv.fs_realpath(vim.fn.tempname() .. "") or vim.fn.tempname()
vim.fn.mkdir(tmp, "p")
tmp = uv.fs_realpath(tmp)
vim.env.CLAUDE_CONFIG_DIR = tmp .. "/claude"
vim.fn.chdir(tmp)
local folder = tmp .. "/claude/projects/" .. tmp:gsub("[^%w]", "-")
vim.fn.mkdir(folder, "p")

-- 1. The big conversation.
local function rec(t)
  return vim.json.encode(t)
end
local chunk = {}
local body = ("x"):rep(70) .. "\n"
local result = body:rep(60)
for i = 1, 40 do
  chunk[#chunk + 1] =
    rec({ type = "user", cwd = tmp, message = { content = ("prompt %d: please look at the code"):format(i) } })
  chunk[#chunk + 1] = rec({
    type = "assistant",
    cwd = tmp,
    message = { content = { { type = "text", text = ("Looking at file %d.\nIt has several parts."):format(i) } } },
  })
  chunk[#chunk + 1] = rec({
    type = "assistant",
    cwd = tmp,
    message = {
      content = {
        {
          type = "tool_use",
          id = "t" .. i,
          name = "Read",
          input = { file_path = tmp .. "/src/f" .. i .. ".rs", offset = i },
        },
      },
    },
  })
  chunk[#chunk + 1] = rec({
    type = "user",
    message = { content = { { type = "tool_result", tool_use_id = "t" .. i, content = result } } },
  })
end
local block = table.concat(chunk, "\n") .. "\n"
local f = assert(io.open(folder .. "/big.jsonl", "wb"))
local size = 0
while size < MB * 1024 * 1024 do
  f:write(block)
  size = size + #block
end
f:close()

local max_block, blocks, all = 0, {}, {}
local buf
---What a turn did to the transcript buffer, when it set its filetype or loaded its syntax.
local function named(what, before)
  if not (buf and vim.api.nvim_buf_is_valid(buf)) then
    return what
  end
  if before.ft == "" and vim.bo[buf].filetype ~= "" then
    return before.syn == nil and vim.b[buf].current_syntax ~= nil and "filetype and syntax" or "filetype"
  end
  if before.syn == nil and vim.b[buf].current_syntax ~= nil then
    return "syntax"
  end
  return what
end
local function timed(fn, what)
  return function(...)
    local before = buf
        and vim.api.nvim_buf_is_valid(buf)
        and { ft = vim.bo[buf].filetype, syn = vim.b[buf].current_syntax }
      or {}
    local t = uv.hrtime()
    local r = { fn(...) }
    local ms = (uv.hrtime() - t) / 1e6
    what = named(what, before)
    max_block = math.max(max_block, ms)
    blocks[what] = math.max(blocks[what] or 0, ms)
    all[what] = all[what] or {}
    table.insert(all[what], ms)
    return unpack(r)
  end
end
local orig_schedule = vim.schedule
vim.schedule = function(fn)
  return orig_schedule(timed(fn, "slice"))
end
local native = require("claude_context.native").load()
local orig_read = native.transcript_read
native.transcript_read = function(opts, cb)
  return orig_read(opts, timed(cb, "answer"))
end

local T = require("claude_context.transcript")
-- The event loop's stalls (a 1 ms timer's gaps) and the screen, redrawn every 10 ms.
local stall, last_tick, last_redraw = 0, uv.hrtime(), uv.hrtime()
local ticker, redraw_due = uv.new_timer(), false
local redraw = timed(function()
  vim.cmd("redraw")
  last_redraw, redraw_due = uv.hrtime(), false
end, "redraw")
ticker:start(1, 1, function()
  local now = uv.hrtime()
  stall = math.max(stall, (now - last_tick) / 1e6 - 1)
  last_tick = now
  if not redraw_due and now - last_redraw > 10e6 then
    redraw_due = true
    orig_schedule(redraw)
  end
end)
local ready, first
local t0 = uv.hrtime()
buf = timed(function()
  local b = T.transcript("big", {
    on_ready = function()
      ready = uv.hrtime()
    end,
  })
  vim.api.nvim_win_set_buf(0, b)
  T.window_options(0)
  return b
end, "open call")()
vim.wait(120000, function()
  if not first and vim.api.nvim_buf_line_count(buf) > 1 then
    first = uv.hrtime()
  end
  return ready ~= nil
end, 1)
-- (The syntax may come in a turn after the last lines: a moment for it, and a last redraw.)
vim.wait(200, function()
  return vim.b[buf].current_syntax ~= nil or vim.b[buf].ts_highlight
end, 1)
vim.wait(50)
local first_ms = (first - t0) / 1e6
local open_ms = (ready - t0) / 1e6
local lines = vim.api.nvim_buf_line_count(buf)
local function report(named)
  local out = {}
  for _, k in ipairs(named) do
    local t = all[k]
    if t and #t > 2 then
      table.sort(t)
      out[#out + 1] = ("%s %.1f (%d of them: p50 %.1f, p90 %.1f)"):format(
        k,
        blocks[k],
        #t,
        t[math.ceil(#t * 0.5)],
        t[math.ceil(#t * 0.9)]
      )
    elseif blocks[k] then
      out[#out + 1] = ("%s %.1f"):format(k, blocks[k])
    end
  end
  return table.concat(out, ", ")
end
io.stdout:write(
  ("transcript of %.1f MB (%d lines)%s: first lines in %.0f ms, every line in %.0f ms, longest main-thread block %.1f ms (%s), longest event-loop stall %.1f ms\n"):format(
    size / 1048576,
    lines,
    os.getenv("CLAUDE_CONTEXT_BENCH_TS") == "1" and " with tree-sitter highlighting" or "",
    first_ms,
    open_ms,
    max_block,
    report({ "open call", "filetype", "syntax", "filetype and syntax", "answer", "slice", "redraw" }),
    stall
  )
)
-- Then the person goes to its end (G) and reads on for a second: the redraws there (the syntax
-- synced at the end of a large buffer; a tree-sitter parse, in slices of its own).
max_block, blocks, all, stall = 0, {}, {}, 0
vim.api.nvim_win_set_cursor(0, { lines, 0 })
vim.wait(1000)
ticker:stop()
ticker:close()
local tf = uv.hrtime()
vim.fn.foldlevel(lines)
local fold_ms = (uv.hrtime() - tf) / 1e6
io.stdout:write(
  ("  then G and a second's reading: longest main-thread block %.1f ms (%s), longest event-loop stall %.1f ms; a fold level at the end %.1f ms\n"):format(
    max_block,
    report({ "redraw", "slice" }),
    stall,
    fold_ms
  )
)
if OPEN_ONLY then
  vim.fn.delete(tmp, "rf")
  vim.cmd("qa!")
end

-- 2. Live growth.
vim.cmd("enew")
local grow = folder .. "/grow.jsonl"
local g = assert(io.open(grow, "wb"))
g:write(rec({ type = "user", message = { content = "go" } }) .. "\n")
g:close()
local gready
local gbuf = T.transcript("grow", {
  on_ready = function()
    gready = true
  end,
})
vim.wait(10000, function()
  return gready
end)
local lat = {}
vim.api.nvim_buf_attach(gbuf, false, {
  on_lines = function(_, b, _, first, _, last)
    local now = uv.clock_gettime("realtime")
    local now_ms = now.sec * 1000 + now.nsec / 1e6
    for _, l in ipairs(vim.api.nvim_buf_get_lines(b, first, last, false)) do
      local w = l:match("^w=(%d+%.?%d*)$")
      if w then
        lat[#lat + 1] = now_ms - tonumber(w)
      end
    end
  end,
})
local writer = [[
import json, random, sys, time
with open(sys.argv[1], "ab", buffering=0) as f:
    for i in range(int(sys.argv[2])):
        time.sleep(random.uniform(0.02, 0.06))
        rec = {"type": "assistant", "message": {"content": [{"type": "text", "text": "w=%.3f" % (time.time() * 1000)}]}}
        f.write((json.dumps(rec) + "\n").encode())
]]
local wdone
vim.system({ "python3", "-c", writer, grow, tostring(N) }, {}, function()
  wdone = true
end)
vim.wait(120000, function()
  return wdone and #lat >= N
end, 5)
local function pct(t, p)
  table.sort(t)
  return t[math.max(1, math.ceil(#t * p))] or 0
end
io.stdout:write(
  ("live growth, %d records 20-60 ms apart: write -> line in the buffer p50 %.1f ms, p99 %.1f ms, max %.1f ms\n"):format(
    #lat,
    pct(lat, 0.5),
    pct(lat, 0.99),
    pct(lat, 1)
  )
)

-- 3. Follow, from the hook.
require("claude_context").setup({})
vim.wait(10000, function()
  return require("claude_context").status() ~= nil
end)
local F = require("claude_context.follow")
F.follow(true)
local target = tmp .. "/followed.txt"
local tf2 = assert(io.open(target, "wb"))
tf2:write(("line\n"):rep(100))
tf2:close()
local bin = assert(require("claude_context.sessions.hooks").binary(), "claude-context-mcp is built")
local port = tostring(require("claude_context").status().port)
local flat = {}
for i = 1, math.min(N, 100) do
  F.last = nil
  local input = vim.json.encode({
    hook_event_name = "PostToolUse",
    session_id = "bench",
    cwd = tmp,
    tool_name = "Read",
    tool_input = { file_path = target },
  })
  local start = uv.now()
  uv.update_time()
  start = uv.now()
  vim.system({ bin, "hook", "PostToolUse" }, { stdin = input, env = { CLAUDE_CODE_SSE_PORT = port } })
  vim.wait(10000, function()
    return F.last ~= nil
  end, 1)
  if F.last then
    flat[#flat + 1] = F.last.shown_ms - start
  end
  vim.wait(i % 5 == 0 and 50 or 10)
end
io.stdout:write(
  ("follow, %d Read calls: hook binary started -> file shown in the follow window p50 %.1f ms, p99 %.1f ms, max %.1f ms\n"):format(
    #flat,
    pct(flat, 0.5),
    pct(flat, 0.99),
    pct(flat, 1)
  )
)
require("claude_context").stop()
vim.fn.delete(tmp, "rf")
vim.cmd("qa!")
