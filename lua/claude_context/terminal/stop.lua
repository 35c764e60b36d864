--- Stopping a terminal job without taking Neovim down with it.
---
--- Neovim starts a terminal job with forkpty(): until the child has run exec(), it still holds
--- Neovim's signal handlers, and those write into the signal pipe it shares with Neovim. Stopping
--- the job in that window (|jobstop()| closes the pty, the kernel sends SIGHUP to the child)
--- delivers the SIGHUP to Neovim itself, which exits ("Caught deadly signal 'SIGHUP'"). Closing
--- Claude's terminal right after opening it hit this on a loaded machine. So the stop waits,
--- without blocking, until the child runs its own program (Linux: /proc/<pid>/exe is no longer
--- Neovim's), and elsewhere a short while after the start.
local M = {}

local uv = vim.uv

--- How often to look, and how long at the most before stopping anyway.
M.poll_ms, M.limit_ms = 10, 2000
--- Without /proc: how long after its start a job is surely past its exec().
M.blind_ms = 100

local self_exe = uv.fs_readlink("/proc/self/exe")

---Whether `pid` runs its own program already: true, false, or nil when this system cannot tell.
---@param pid integer
---@return boolean?
function M.started(pid)
  if not self_exe then
    return nil
  end
  local exe = uv.fs_readlink(("/proc/%d/exe"):format(pid))
  -- Gone (or not readable): nothing of Neovim's is left in it.
  return exe == nil or exe ~= self_exe
end

---Stops `job` (a |jobstart()| id) once its child is past exec(); returns at once.
---@param job integer
---@param started_ms number? when the job was started (|vim.uv.now()|), for systems without /proc
function M.stop(job, started_ms)
  local okp, pid = pcall(vim.fn.jobpid, job)
  if not okp or type(pid) ~= "number" or pid <= 0 then
    pcall(vim.fn.jobstop, job)
    return
  end
  local since = uv.now()
  local function try()
    local ready = M.started(pid)
    if ready == nil then
      ready = uv.now() - (started_ms or since) >= M.blind_ms
    end
    if ready or uv.now() - since >= M.limit_ms then
      pcall(vim.fn.jobstop, job)
    else
      vim.defer_fn(try, M.poll_ms)
    end
  end
  try()
end

return M
