---@mod claude_context.ide Claude Code IDE integration: the IDE tools and notifications
---
--- Requiring this module registers one rpc handler per IDE tool (each tool's code is loaded
--- the first time it is called: `lua/claude_context/ide/<tool>.lua`). `start()` (run when the
--- bridge starts) installs the autocommands behind `selection_changed` and the active-editor
--- tracking; `stop()` removes them.

local M = {}

local rpc = require("claude_context.rpc")
local util = require("claude_context.ide.util")

---The IDE tools the editor answers. Each one's handler is the module under claude_context.ide
---named as the tool in snake case (openFile: ide/open_file.lua).
M.tools = {
  "openFile",
  "openDiff",
  "getCurrentSelection",
  "getLatestSelection",
  "getOpenEditors",
  "getDiagnostics",
  "checkDocumentDirty",
  "saveDocument",
  "close_tab",
  "closeAllDiffTabs",
}

---The module of IDE tool `tool` (openFile -> "open_file").
---@param tool string
---@return string
function M.module_of(tool)
  return (tool:gsub("%u", function(c)
    return "_" .. c:lower()
  end))
end

for _, tool in ipairs(M.tools) do
  local mod = M.module_of(tool)
  rpc.register(tool, function(params, respond)
    return require("claude_context.ide." .. mod)(params, respond)
  end)
end

-- A Claude Code session is ready for notifications: send it what is queued for it.
rpc.register("ide_connected", function(params, respond)
  respond({})
  vim.schedule(function()
    require("claude_context.ide.mentions").flush()
    require("claude_context.ide.selection").resend()
  end)
end)

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
