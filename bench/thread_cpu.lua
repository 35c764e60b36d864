-- The calling thread's own CPU time in ms (CLOCK_THREAD_CPUTIME_ID through LuaJIT's ffi, Linux),
-- for the benches' main-thread figures; a function that returns nil elsewhere.
--   local thread_cpu_ms = dofile(bench_dir .. "/thread_cpu.lua")
local ok, ffi = pcall(require, "ffi")
if not ok or ffi.os ~= "Linux" then
  return function() end
end
pcall(ffi.cdef, "typedef struct { long tv_sec; long tv_nsec; } cc_bench_ts; int clock_gettime(int, cc_bench_ts *);")
local ts = ffi.new("cc_bench_ts")
return function()
  ffi.C.clock_gettime(3, ts)
  return tonumber(ts.tv_sec) * 1e3 + tonumber(ts.tv_nsec) / 1e6
end
