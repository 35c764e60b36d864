---@mod claude_context.install.proc Waiting without blocking, and running programs, for the installer
---
--- Programs run through claude_context.util.proc. Inside lazy.nvim's build coroutine the task is
--- suspended and resumed by the callback; inside a coroutine started by `M.spawn`
--- (:ClaudeContext build) the callback resumes it; in `nvim -l build.lua` (no coroutine)
--- vim.wait runs the event loop.

local M = {}

---The coroutines started by `M.spawn`, which `await` resumes itself.
---@type table<thread, boolean>
local own = setmetatable({}, { __mode = "k" })

---lazy.nvim's task running this coroutine, if any.
---@return table<string, any>? lazy.nvim's async task (its own type)
function M.lazy_async()
  local co = coroutine.running()
  local A = co and package.loaded["lazy.async"]
  return A and type(A.running) == "function" and A.running() or nil
end

---Runs `start(cb)` and returns what it passes to `cb`. Inside lazy.nvim, `poll()` (when given) is
---asked every half second for a progress line to show while waiting.
---@param start fun(cb: fun(res: any))
---@param poll (fun(): string?)?
---@return any
local function await(start, poll)
  local co = coroutine.running()
  local la = M.lazy_async()
  if la then
    local done, res = false, nil
    start(function(r)
      done, res = true, r
      vim.schedule(function()
        la:resume()
      end)
    end)
    while not done do
      if poll and type(la.sleep) == "function" then
        la:sleep(500)
        local line = not done and poll() or nil
        if line then
          coroutine.yield(line)
        end
      else
        la:suspend()
      end
    end
    return res
  elseif co and own[co] then
    local done, res = false, nil
    local waiting = false
    start(function(r)
      done, res = true, r
      if waiting then
        vim.schedule(function()
          local ok, err = coroutine.resume(co)
          if not ok then
            vim.notify("claude-context: build: " .. tostring(err), vim.log.levels.ERROR, { title = "claude-context" })
          end
        end)
      end
    end)
    if not done then
      waiting = true
      coroutine.yield()
    end
    return res
  end
  local done, res = false, nil
  start(function(r)
    done, res = true, r
  end)
  vim.wait(30 * 60 * 1000, function()
    return done
  end, 20)
  return res
end

---Runs a command; never raises (a missing program is a result with code -1). With `progress`,
---the latest line of its stderr is shown as progress inside lazy.nvim (cargo's "Compiling …").
---@param argv string[]
---@param o claude_context.ProcOpts? claude_context.util.proc's options
---@param progress boolean?
---@return claude_context.ProcResult
function M.run(argv, o, progress)
  local opts = vim.deepcopy(o or {})
  local err_buf, latest, shown = {}, nil, nil
  if progress then
    opts.stderr = function(_, data)
      if data then
        table.insert(err_buf, data)
        if #err_buf > 256 then
          err_buf = { table.concat(err_buf):sub(-16384) }
        end
        for line in data:gmatch("[^\r\n]+") do
          if vim.trim(line) ~= "" then
            latest = vim.trim(line)
          end
        end
      end
    end
  end
  local poll = progress
      and function()
        if latest ~= shown then
          shown = latest
          return latest
        end
      end
    or nil
  return await(function(cb)
    require("claude_context.util.proc").run(argv, opts, function(r)
      cb({ code = r.code, stdout = r.stdout, stderr = progress and r.code ~= -1 and table.concat(err_buf) or r.stderr })
    end)
  end, poll)
end

---Runs `fn` in a coroutine of its own, in which `M.run` waits without blocking the editor.
---@param fn fun()
function M.spawn(fn)
  local co = coroutine.create(fn)
  own[co] = true
  local ok, err = coroutine.resume(co)
  if not ok then
    vim.notify("claude-context: build: " .. tostring(err), vim.log.levels.ERROR, { title = "claude-context" })
  end
end

return M
