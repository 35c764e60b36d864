---@mod claude_context.ide Claude Code IDE integration: the IDE tools and notifications
---
--- Each IDE tool's handler is its module, `lua/claude_context/ide/<tool in snake case>.lua`,
--- loaded the first time it is called (claude_context.rpc's table of methods names them).
--- `start()` (run when the bridge starts) installs the autocommands behind `selection_changed` and the active-editor
--- tracking; `stop()` removes them.

local M = {}

local util = require("claude_context.ide.util")

---The bridge's `ide_connected`: a Claude Code session is ready for notifications; it is sent
---what is queued for it.
---@param _ table
---@param respond fun(result: any, err: string?)
function M.on_connected(_, respond)
  respond({})
  vim.schedule(function()
    require("claude_context.ide.mentions").flush()
    require("claude_context.ide.selection").resend()
  end)
end

---The `ide` options of setup() (merged over their defaults by claude_context.config.ide).
---@return claude_context.IdeConfig
function M.options()
  return require("claude_context.config").options.ide
end

local group

---Installs the autocommands (idempotent).
function M.start()
  group = vim.api.nvim_create_augroup("ClaudeContextIde", { clear = true })
  vim.api.nvim_create_autocmd({ "WinEnter", "BufEnter" }, {
    group = group,
    callback = util.note_window,
    desc = "claude-context: remember the active editor window",
  })
  util.note_window()
  require("claude_context.ide.selection").start(group, M.options())
  -- The read-only tools answer from a mirror of the editor state on the bridge's threads.
  require("claude_context.ide.snapshot").start(group)
end

---Removes them.
function M.stop()
  if group then
    pcall(vim.api.nvim_del_augroup_by_id, group)
    group = nil
  end
  require("claude_context.ide.selection").stop()
  require("claude_context.ide.snapshot").stop()
end

---Wraps a handler so it runs from Neovim's event queue (a safe point for changing windows and
---buffers), not inside the bridge's wake-up callback.
---@param fn fun(params: any, respond: fun(result: any, err: string?))
---@return claude_context.RpcHandler
function M.deferred(fn)
  return function(params, respond)
    vim.schedule(function()
      local ok, err = pcall(fn, params, respond)
      if not ok then
        respond(nil, err)
      end
    end)
  end
end

return M
