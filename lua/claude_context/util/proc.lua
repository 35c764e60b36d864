---@mod claude_context.util.proc The one way the plugin runs a program
---
--- Every program the Lua side runs (the CLI's background service, git on a worktree, the
--- installer's cargo and downloads, :checkhealth's probes) goes through `run`: |vim.system()|
--- underneath, argv without a shell, stdin closed unless given, text unless `text = false`. The
--- editor never waits on it: the callback runs on the main thread once the program ended; a
--- program that cannot start is a result too (code -1, the reason in stderr), never an error.
--- Without a callback the caller gets the process to wait on (`:wait(ms)`, :checkhealth only).
--- A long-lived program (edit in place's warm CLI) gets `stdin = true` (written with the
--- process's `:write()`), its output as it comes (`stdout`, `stderr`) and its own process group
--- (`detach`, ended whole with `kill_group`).

local M = {}

---@class claude_context.ProcResult
---@field code integer the exit code (-1: it could not start; 124: its timeout ran out)
---@field stdout string
---@field stderr string
---@field signal integer?

---@class claude_context.ProcOpts
---@field cwd string? where it runs
---@field env table<string,string>? its whole environment (nothing of Neovim's added)
---@field timeout integer? ms, after which it is killed (code 124)
---@field text boolean? false: stdout and stderr as bytes, line endings untouched (default true)
---@field stdin string|boolean? what it reads (default: nothing, stdin closed)
---@field stderr fun(err: string?, data: string?)? its stderr as it comes (not in the result then)
---@field stdout fun(err: string?, data: string?)? its stdout as it comes, in libuv's callback (not in the result then)
---@field detach boolean? its own process group (see `kill_group`)

---The vim.system options of `o`.
---@param o claude_context.ProcOpts
---@return vim.SystemOpts
local function system_opts(o)
  return {
    cwd = o.cwd,
    env = o.env,
    clear_env = o.env ~= nil,
    text = o.text ~= false,
    stdin = o.stdin or false,
    timeout = o.timeout,
    stderr = o.stderr,
    stdout = o.stdout,
    detach = o.detach,
  }
end

---Runs `argv`; `cb(result)` on the main thread when it ended (also when it could not start).
---Without `cb`: the process (nil and why when it could not start), for the caller to wait on.
---@param argv string[]
---@param opts claude_context.ProcOpts?
---@param cb fun(r: claude_context.ProcResult)?
---@return vim.SystemObj? proc, string? err
function M.run(argv, opts, cb)
  local o = system_opts(opts or {})
  if not cb then
    local ok, proc = pcall(vim.system, argv, o)
    if not ok then
      return nil, tostring(proc)
    end
    return proc
  end
  local ok, proc = pcall(vim.system, argv, o, function(r)
    vim.schedule(function()
      cb({ code = r.code, stdout = r.stdout or "", stderr = r.stderr or "", signal = r.signal })
    end)
  end)
  if not ok then
    vim.schedule(function()
      cb({ code = -1, stdout = "", stderr = tostring(proc) })
    end)
    return nil, tostring(proc)
  end
  return proc
end

---Sends `signal` to a program started with `detach` and to the rest of its process group
---(what it started), when they still run.
---@param proc vim.SystemObj
---@param signal string|integer
function M.kill_group(proc, signal)
  pcall(vim.uv.kill, -proc.pid, signal)
  pcall(vim.uv.kill, proc.pid, signal)
end

return M
