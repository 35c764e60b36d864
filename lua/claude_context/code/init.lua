---@mod claude_context.code The editor's code intelligence for the model
---
--- `handle` answers the code tools (crates/core/src/tools/code/):
--- `lsp_*` ask the person's own language servers (claude_context.code.lsp), `code_outline` a
--- tree-sitter parser (claude_context.code.outline), `lsp_diagnostics` the servers'
--- diagnostics of files open or not (claude_context.code.diagnostics). Each runs as a task
--- (claude_context.code.task): asynchronous, cancellable, its hidden buffers unloaded after it.

local M = {}

---tool name -> { module under claude_context.code, function }
M.tools = {
  lsp_definition = { "lsp", "lsp_definition" },
  lsp_references = { "lsp", "lsp_references" },
  lsp_implementations = { "lsp", "lsp_implementations" },
  lsp_type_definition = { "lsp", "lsp_type_definition" },
  lsp_hover = { "lsp", "lsp_hover" },
  lsp_symbols = { "lsp", "lsp_symbols" },
  lsp_calls = { "lsp", "lsp_calls" },
  code_outline = { "outline", "code_outline" },
  lsp_diagnostics = { "diagnostics", "lsp_diagnostics" },
}

---The handlers' modules, bottom first: the first request loads them one a slice (each takes a
---part of a ms; all in one slice they took 1.3–1.4 ms of the main thread).
M.modules = { "answer", "locate", "lsp", "defs", "outline", "diagnostics" }

---Loads what is not loaded yet of `M.modules`, yielding after each.
local function load_modules(task)
  for _, m in ipairs(M.modules) do
    local name = "claude_context.code." .. m
    if not package.loaded[name] then
      require(name)
      task:yield()
    end
  end
end

---The bridge's call of code tool `tool` (claude_context.rpc's table of methods routes them here).
---@param params table
---@param respond fun(result: any, err: string?)
---@param tool string
---@return fun()? cancel
function M.handle(params, respond, tool)
  local where = M.tools[tool]
  if not where then
    return respond(nil, ("no code tool %q"):format(tostring(tool)))
  end
  return require("claude_context.code.task").run(function(task)
    load_modules(task)
    return require("claude_context.code." .. where[1])[where[2]](task, params)
  end, respond)
end

return M
