---@mod claude_context.code.task One code-intelligence request, run as a coroutine
---
--- A tool's handler runs as a coroutine that waits for the language servers' callbacks (never
--- for the servers themselves: the editor keeps running). What it set up is tracked so that a
--- cancellation (`notifications/cancelled`, the client gone) or the end of the request undoes
--- it: the LSP requests still running are cancelled (`$/cancelRequest`), timers stopped, and the
--- hidden buffers it loaded are unloaded (claude_context.code.buffers, which loads them).

local M = {}

local buffers = require("claude_context.code.buffers")

---How long one LSP request may take (ms).
M.request_timeout_ms = 10000
---The longest the main thread may be held by one slice of a task (ms): the goal.
M.block_goal_ms = 2
---When a slice yields (ms of work done): half the goal, so that the step under way when the
---budget runs out, and what Lua's runtime does inside the slice (its collector finishing a
---cycle, LuaJIT compiling a trace: up to ~0.8 ms seen), still end it within `block_goal_ms`.
M.slice_ms = 1
---The longest single run of a task's coroutine on the main thread, for the bench: wall time
---(ns) and the process's CPU time (s; what the run cost, without the waits of a busy machine).
M.longest_slice_ns = 0
M.longest_slice_cpu_s = 0

---For the bench: the slices `slow_slices` gets are those over this (ms; nil: `block_goal_ms`).
M.slow_over_ms = nil
---For the bench: set to a list, it gets every slice over `block_goal_ms` with where it started and
---ended, the Lua heap's size (KiB) before and after it, and how many LuaJIT traces were
---compiled or aborted in it (`M.count_traces()` first).
M.slow_slices = nil
---LuaJIT's trace events seen since `count_traces` (the bench's).
M.jit_traces = 0

---For the bench: counts LuaJIT's trace events (compilations, aborts), which run on the main
---thread inside whatever Lua code makes a loop hot.
function M.count_traces()
  local ok, jit = pcall(require, "jit")
  if ok and jit.attach then
    jit.attach(function()
      M.jit_traces = M.jit_traces + 1
    end, "trace")
  end
end
---For the bench: set to a list, it gets every slice (start, wall and CPU ms, where it began
---and ended: `M.where`).
M.trace = nil

---A code tool's run: a coroutine that yields between slices of the main thread.
---@class claude_context.CodeTask
local Task = {}
Task.__index = Task

local unpack = unpack or table.unpack ---@diagnostic disable-line: deprecated

---This thread's CPU time (s): the main thread's own work, not the bridge's threads' (which
---`os.clock()`, the whole process's, counts too); `os.clock()` where LuaJIT's ffi is missing.
local thread_cpu = os.clock
do
  local ok, ffi = pcall(require, "ffi")
  if ok and jit and jit.os == "Linux" then
    local defined = pcall(
      ffi.cdef,
      "struct cc_timespec { long tv_sec; long tv_nsec; }; int clock_gettime(int, struct cc_timespec *);"
    )
    if defined then
      local ts = ffi.new("struct cc_timespec")
      thread_cpu = function()
        if ffi.C.clock_gettime(3, ts) ~= 0 then -- CLOCK_THREAD_CPUTIME_ID
          return os.clock()
        end
        return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) / 1e9
      end
    end
  end
end

---For the bench: where a task's coroutine stands, its first two frames outside this file and the
---C functions ("" before it starts, "done" once it has ended).
function M.where(co)
  if coroutine.status(co) == "dead" then
    return "done"
  end
  local out = {}
  for line in debug.traceback(co, "", 1):gmatch("\n%s*([^\n]+)") do
    if #out < 2 and not line:find("^%[C%]") and not line:find("code/task%.lua") and line ~= "stack traceback:" then
      out[#out + 1] = (line:gsub("^.*/lua/claude_context/", ""))
    end
  end
  return table.concat(out, " < ")
end

---For the bench: what a slice of `co` cost, with where it began (`from`: `M.where` and a
---traceback, taken before it ran) and the Lua heap (KiB) and trace events before it.
local function record(co, t0, took, cpu, from, kb0, traces0)
  if took > M.longest_slice_ns then
    M.longest_slice_ns = took
  end
  if cpu > M.longest_slice_cpu_s then
    M.longest_slice_cpu_s = cpu
  end
  if M.trace then
    local where = from.where .. " ==> " .. M.where(co)
    table.insert(M.trace, { at = t0 / 1e6, ms = took / 1e6, cpu_ms = cpu * 1000, where = where })
  end
  if M.slow_slices and took > (M.slow_over_ms or M.block_goal_ms) * 1e6 then
    -- (The Lua heap's size before and after: a drop is the collector finishing a cycle in it.)
    local kb = { kb0, collectgarbage("count") }
    local traces = M.jit_traces - traces0
    table.insert(
      M.slow_slices,
      { ms = took / 1e6, cpu_ms = cpu * 1000, where = debug.traceback(co), from = from.stack, kb = kb, traces = traces }
    )
  end
end

local function pack(...)
  return { n = select("#", ...), ... }
end

---Whether `path` lies under one of `roots` once its symlinks are resolved.
---@param path string
---@param roots string[]?
function M.inside(path, roots)
  local real = vim.uv.fs_realpath(path)
  if not real or not roots then
    return false
  end
  for _, r in ipairs(roots) do
    if real == r or vim.startswith(real, r:gsub("/+$", "") .. "/") then
      return true
    end
  end
  return false
end

---Runs `fn(task)` as a coroutine; `respond` gets what it returns (or its error). Returns the
---cancel function for rpc.lua.
---@param fn fun(task: claude_context.CodeTask): any
---@param respond fun(result: any, err: string?)
---@return fun()
function M.run(fn, respond)
  local task = setmetatable({ requests = {}, timers = {}, bufs = {}, done = false }, Task)
  local co
  local function finish(result, err)
    if task.done then
      return
    end
    task.done = true
    task:cleanup()
    respond(result, err)
  end
  co = coroutine.create(function()
    local ok, result, err = xpcall(fn, debug.traceback, task)
    if not ok then
      finish(nil, tostring(result))
    else
      finish(result, err)
    end
  end)
  task.resume = function(...)
    if task.done or coroutine.status(co) ~= "suspended" then
      return
    end
    local from = (M.trace or M.slow_slices)
      and {
        stack = M.slow_slices and debug.traceback(co, "", 1),
        where = M.trace and M.where(co),
      }
    local kb0 = M.slow_slices and collectgarbage("count")
    local traces0 = M.jit_traces
    local t0, c0 = vim.uv.hrtime(), thread_cpu()
    local ok, err = coroutine.resume(co, ...)
    record(co, t0, vim.uv.hrtime() - t0, thread_cpu() - c0, from, kb0, traces0)
    if not ok then
      finish(nil, tostring(err))
    end
  end
  task.started = vim.uv.hrtime()
  task.slice_start = task.started
  vim.schedule(task.resume)
  return function()
    if not task.done then
      task.done = true
      task:cleanup()
    end
  end
end

---Waits for `start(cb)` to call `cb(...)`; returns what it was called with.
function Task:await(start)
  local waiting, sync, result = false, false, nil
  start(function(...)
    if waiting then
      waiting = false
      local args = pack(...)
      -- Resumed from the event loop, not from inside whatever called back.
      vim.schedule(function()
        self.resume(unpack(args, 1, args.n))
      end)
    else
      sync, result = true, pack(...)
    end
  end)
  if sync then
    return unpack(result, 1, result.n)
  end
  waiting = true
  local r = pack(coroutine.yield())
  self.slice_start = vim.uv.hrtime()
  return unpack(r, 1, r.n)
end

---Sleeps `ms` (lets the editor run).
function Task:sleep(ms)
  self:await(function(cb)
    local t = vim.uv.new_timer()
    self.timers[t] = true
    t:start(ms, 0, function()
      self.timers[t] = nil
      t:close()
      cb()
    end)
  end)
end

---Yields to the event loop.
function Task:yield()
  self:await(function(cb)
    vim.schedule(cb)
  end)
end

---Yields to the event loop when this slice has used its budget (`ms`, default `slice_ms`: a
---caller whose steps are long gives less, so that the slice ends within the budget).
function Task:check_slice(ms)
  if (vim.uv.hrtime() - self.slice_start) / 1e6 >= (ms or M.slice_ms) then
    self:yield()
  end
end

---Sends `method` to `client` for `buf`; returns (err, result). Times out with a message; the
---request is cancelled when the task is.
function Task:request(client, method, params, buf, timeout_ms)
  timeout_ms = timeout_ms or M.request_timeout_ms
  return self:await(function(cb)
    local fired = false
    local id
    local timer = vim.uv.new_timer()
    local function once(err, result)
      if fired then
        return
      end
      fired = true
      if id then
        self.requests[id] = nil
      end
      self.timers[timer] = nil
      if not timer:is_closing() then
        timer:stop()
        timer:close()
      end
      cb(err, result)
    end
    local ok, rid = client:request(method, params, function(err, result)
      once(err and (err.message or vim.inspect(err)) or nil, result)
    end, buf)
    if not ok then
      once(("the language server %s did not take %s (it is shutting down?)"):format(client.name, method))
      return
    end
    id = rid
    if not fired then
      self.requests[id] = client
      self.timers[timer] = true
      timer:start(timeout_ms, 0, function()
        vim.schedule(function()
          if not fired then
            pcall(client.cancel_request, client, id)
            once(
              ("the language server %s did not answer %s within %d s (try again when it has finished indexing)"):format(
                client.name,
                method,
                timeout_ms / 1000
              )
            )
          end
        end)
      end)
    end
  end)
end

---Cancels what is still running and unloads the hidden buffers this task loaded.
function Task:cleanup()
  for id, client in pairs(self.requests) do
    pcall(client.cancel_request, client, id)
  end
  self.requests = {}
  for t in pairs(self.timers) do
    if not t:is_closing() then
      t:stop()
      t:close()
    end
  end
  self.timers = {}
  buffers.release_all(self)
end

---Runs the libuv fs call `fn(..., cb)` and waits for its callback; returns (err, result). An
---error raised at once (before any callback) is returned the same way.
function Task:fs(fn, ...)
  local args = pack(...)
  return self:await(function(cb)
    args[args.n + 1] = cb
    local r, e = fn(unpack(args, 1, args.n + 1))
    if r == nil and e ~= nil then
      cb(e)
    end
  end)
end

---The buffer holding `path`, loaded out of sight when no buffer holds it (then unloaded when
---the task ends). Returns (buf, err). (claude_context.code.buffers)
function Task:buffer(path)
  return buffers.get(self, path)
end

---The clients attached to `buf` (waiting for one to attach to a buffer just loaded).
---@return vim.lsp.Client[] clients
function Task:clients(buf)
  return buffers.clients(self, buf)
end

return M
