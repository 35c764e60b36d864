-- Conversations (claude_context.conversations), the editor's side, over a CLAUDE_CONFIG_DIR that
-- bench/conversations.py filled (1,000 copies of a conversation the real CLI made). Prints JSON:
--   * `conversations()` of the project: the first call (nothing cached), the second (all
--     cached), a third after 10 files grew (those read again), from the call to its callback;
--   * `conversations({all = true, query = Q})`: from the call to its callback;
--   * the picker: from `:ClaudeContext conversations` until vim.ui.select is handed the list and
--     every line is formatted;
--   and for each, the longest the main thread was held meanwhile (a 1 ms timer's largest gap)
--   and the main thread's own CPU time in that gap;
--   then waits for the index the library keeps in stdpath("cache") to be written. With a third
--   argument "restart": only the first call (a new editor over that index).
--
--   CLAUDE_CONFIG_DIR=… nvim --headless --clean -u tests/minimal_init.lua -l bench/conversations.lua ROOT QUERY
local uv = vim.uv
local ROOT, QUERY, MODE = _G.arg[1], _G.arg[2], _G.arg[3]
vim.notify = function() end
local cc = require("claude_context")

---The main thread's own CPU time (ms; CLOCK_THREAD_CPUTIME_ID through LuaJIT's ffi), or nil: a
---block much longer than the CPU spent in it is the process waiting for a core, not work.
local thread_cpu = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*)/") .. "/thread_cpu.lua")

---The longest gap of a 1 ms timer while `fn(done)` runs until `done()` is called, the main
---thread's CPU time in that gap and the Lua heap's change over it, and the time.
local function measure(fn)
  local last, worst, last_cpu, worst_cpu = uv.hrtime(), 0, thread_cpu(), nil
  local last_kb, worst_kb = collectgarbage("count"), 0
  local t = uv.new_timer()
  t:start(1, 1, function()
    local now, cpu, kb = uv.hrtime(), thread_cpu(), collectgarbage("count")
    if now - last > worst then
      worst = now - last
      worst_cpu = cpu and last_cpu and cpu - last_cpu
      worst_kb = kb - last_kb
    end
    last, last_cpu, last_kb = now, cpu, kb
  end)
  local finished
  local t0 = uv.hrtime()
  fn(function()
    finished = finished or uv.hrtime()
  end)
  vim.wait(120000, function()
    return finished ~= nil
  end, 1)
  assert(finished, "no answer in 120 s")
  t:stop()
  t:close()
  -- The Lua heap's change over that gap (a collection in it frees memory: negative).
  return { ms = (finished - t0) / 1e6, block_ms = worst / 1e6, block_cpu_ms = worst_cpu, block_heap_kb = worst_kb }
end

local out = {}
-- The floor: the longest gap of the timer while the editor does nothing for 300 ms (on a loaded
-- machine the process waits for a core now and then: every "block" below includes that).
out.idle = measure(function(done)
  vim.defer_fn(done, 300)
end)
local n
out.first = measure(function(done)
  cc.conversations({ root = ROOT }, function(l)
    n = #l
    done()
  end)
end)
out.count = n
if MODE == "restart" then
  -- A new editor over the index an earlier one wrote: its first listing only.
  io.stdout:write(vim.json.encode(out) .. "\n")
  vim.cmd("qa!")
end
out.second = measure(function(done)
  cc.conversations({ root = ROOT }, done)
end)
-- Ten conversations grow (the CLI appends a turn): read again, the others not.
local list
cc.conversations({ root = ROOT }, function(l)
  list = l
end)
vim.wait(60000, function()
  return list ~= nil
end, 1)
local dir = vim.env.CLAUDE_CONFIG_DIR .. "/projects/" .. ROOT:gsub("[^%w]", "-")
for i = 1, 10 do
  local f = assert(io.open(dir .. "/" .. list[i].id .. ".jsonl", "ab"))
  f:write(vim.json.encode({
    type = "user",
    message = { role = "user", content = "one more" },
    timestamp = "2026-12-01T00:00:00.000Z",
  }) .. "\n")
  f:close()
end
out.changed10 = measure(function(done)
  cc.conversations({ root = ROOT }, done)
end)
local hits
out.query = measure(function(done)
  cc.conversations({ all = true, query = QUERY }, function(l)
    hits = #l
    done()
  end)
end)
out.query_hits = hits
-- The picker: vim.ui.select handed the list, every line formatted (what it draws).
require("claude_context.config").options.sessions.picker = "select"
vim.cmd.cd(vim.fn.fnameescape(ROOT))
out.picker = measure(function(done)
  vim.ui.select = function(items, opts)
    for _, it in ipairs(items) do
      opts.format_item(it)
    end
    done()
  end
  vim.cmd("ClaudeContext conversations")
end)
-- The files read whole and the index written (by a thread below the editor's priority), for
-- the next editor ("restart").
local index = vim.fn.stdpath("cache") .. "/claude-context/conversations.json"
-- Written, and not again for a second (the last batch done).
local t0, seen, since = uv.hrtime(), nil, uv.hrtime()
vim.wait(120000, function()
  local st = uv.fs_stat(index)
  local m = st and (st.mtime.sec * 1e9 + st.mtime.nsec)
  if m ~= seen then
    seen, since = m, uv.hrtime()
  end
  return seen ~= nil and uv.hrtime() - since > 1e9
end, 50)
out.index_ms = (uv.hrtime() - t0) / 1e6 - 1000
io.stdout:write(vim.json.encode(out) .. "\n")
vim.cmd("qa!")
