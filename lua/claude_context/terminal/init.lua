---@mod claude_context.terminal Claude Code in a terminal
---
--- `:ClaudeContext open` toggles a terminal running `claude` wired to the bridge (see
--- claude_context.terminal.launch): the IDE connection (diffs, selections, diagnostics) and the
--- bridge registered as the MCP server "claude-context", so the model can call the plugin's own
--- tools. Where the terminal runs is the provider's business (claude_context.terminal.providers).
---
--- Buffers Claude changes on disk are reloaded: `:checktime` on FocusGained, BufEnter,
--- TermLeave and (throttled) whenever the terminal prints.
---
--- Public: `show()`, `hide()`, `toggle()`, `focus()`, `close()`, `switch()`, `pick_model()`;
--- `_state` is the current session's state (read by status() and the tests).

local M = {}

local sessions = require("claude_context.terminal.sessions")
local launch = require("claude_context.terminal.launch")
local reload = require("claude_context.util.reload")
local notify = require("claude_context.util.notify")

local function options()
  return require("claude_context.config.terminal").options()
end

---Shows the terminal (starting it when needed).
---@param extra string[]? arguments for a new claude (refused while one runs)
---@return boolean ok, string? err
function M.show(extra)
  if not sessions.job_running() then
    return launch.start(extra)
  end
  if extra and #extra > 0 then
    return false, "claude is already running here: :ClaudeContext close first, then open with the arguments"
  end
  local s = sessions.current
  local st = require("claude_context.bridge").status()
  if s.port and (not st or st.port ~= s.port) then
    notify(
      "this claude was started for a bridge that has since stopped or restarted: :ClaudeContext close, then open again",
      vim.log.levels.WARN
    )
  end
  local wins = sessions.windows()
  if #wins == 0 and s.provider and s.provider.show then
    s.provider.show(s.buf)
    wins = sessions.windows()
  end
  if #wins > 0 then
    vim.api.nvim_set_current_win(wins[1])
  end
  if options().auto_insert then
    vim.cmd.startinsert()
  end
  return true
end

---Hides the terminal's windows in this tab page; the job keeps running.
function M.hide()
  local s = sessions.current
  if s.provider and s.provider.hide and #sessions.windows() > 0 then
    s.provider.hide(s.buf)
    return
  end
  for _, w in ipairs(sessions.windows()) do
    if #vim.api.nvim_tabpage_list_wins(0) == 1 then
      -- The last window: show another buffer in it instead of closing it.
      local alt = vim.fn.bufnr("#")
      if alt > 0 and alt ~= s.buf and vim.api.nvim_buf_is_valid(alt) then
        vim.api.nvim_win_set_buf(w, alt)
      else
        vim.api.nvim_win_set_buf(w, vim.api.nvim_create_buf(true, false))
      end
    else
      vim.api.nvim_win_close(w, false)
    end
  end
end

---`:ClaudeContext open`: hides the terminal when it is shown in this tab page, else shows it.
---@param extra string[]? arguments for a new claude (`--resume`, `--model opus`, …)
---@return boolean ok, string? err
function M.toggle(extra)
  sessions.sync_tab()
  if sessions.job_running() and #sessions.windows() > 0 and not (extra and #extra > 0) then
    M.hide()
    return true
  end
  return M.show(extra)
end

---`:ClaudeContext focus`: the cursor in the terminal when it is shown elsewhere; hidden when
---the cursor is in it already; shown (started when needed) when hidden.
---@return boolean ok, string? err
function M.focus()
  sessions.sync_tab()
  local wins = sessions.windows()
  if sessions.job_running() and #wins > 0 then
    if vim.api.nvim_get_current_buf() == sessions.current.buf then
      M.hide()
      return true
    end
    vim.api.nvim_set_current_win(wins[1])
    if options().auto_insert then
      vim.cmd.startinsert()
    end
    return true
  end
  return M.show()
end

---Ends the job and wipes the terminal buffer (of the current session). The session is gone at
---once and its windows close; a buffer whose job still runs is wiped when the job has ended
---(`TermClose`); the job is stopped once its program runs (terminal/stop.lua). Wiping a
---terminal while Neovim still owes it a write callback (text just typed into claude) makes
---Neovim (0.11 and 0.12) re-queue the terminal's free event forever in any `vim.wait` or
---`:sleep` that follows in the same tick: the editor spins at 100% CPU. After `TermClose` the
---job's streams are closed and nothing is owed.
function M.close()
  local s = sessions.current
  sessions.forget(s)
  sessions.current = {}
  local buf = s.buf
  local stop = require("claude_context.terminal.stop")
  if not (buf and vim.api.nvim_buf_is_valid(buf)) then
    if s.job then
      stop.stop(s.job, s.started_ms)
    end
    return
  end
  local running = s.job ~= nil and vim.fn.jobwait({ s.job }, 0)[1] == -1
  if not running then
    pcall(vim.api.nvim_buf_delete, buf, { force = true })
    return
  end
  for _, w in ipairs(vim.fn.win_findbuf(buf)) do
    pcall(vim.api.nvim_win_close, w, true) -- fails for the last window: it goes with the buffer
  end
  vim.api.nvim_create_autocmd("TermClose", {
    buffer = buf,
    once = true,
    callback = function()
      vim.schedule(function()
        if vim.api.nvim_buf_is_valid(buf) then
          pcall(vim.api.nvim_buf_delete, buf, { force = true })
        end
      end)
    end,
  })
  stop.stop(s.job, s.started_ms)
end

---`:ClaudeContext sessions {name}`: makes `name` the current session (hiding the current one's
---window in this tab page) and shows it, starting a new claude when it has none.
---@param name string
---@return boolean ok, string? err
function M.switch(name)
  if name == sessions.name then
    return M.show()
  end
  if #sessions.windows() > 0 then
    M.hide()
  end
  sessions.select(name)
  return M.show()
end

---The models `:ClaudeContext model` offers (Claude Code's aliases).
M.models = { "default", "sonnet", "opus", "haiku", "opusplan", "sonnet[1m]" }

---`:ClaudeContext model [name]`: picks a model (vim.ui.select without a name); in a running
---claude types `/model <name>` and Enter, else starts claude with `--model <name>`.
---@param name string?
function M.pick_model(name)
  sessions.sync_tab()
  local function apply(choice)
    if not choice then
      return
    end
    if sessions.job_running() then
      pcall(vim.fn.chansend, sessions.current.job, "/model " .. choice .. "\r")
      notify("model: /model " .. choice .. " sent to Claude")
    else
      local ok, err = launch.start(choice ~= "default" and { "--model", choice } or nil)
      if not ok then
        notify.error(err)
      end
    end
  end
  if name and name ~= "" then
    return apply(name)
  end
  vim.ui.select(M.models, { prompt = "Claude model", kind = "claude_context.model" }, apply)
end

return setmetatable(M, {
  __index = function(_, k)
    if k == "_state" then
      return sessions.current
    end
  end,
  __newindex = function(t, k, v)
    if k == "_state" then
      sessions.current = v
    else
      rawset(t, k, v)
    end
  end,
})
