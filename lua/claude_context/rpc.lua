---@mod claude_context.rpc Requests from the bridge that must run on Neovim's main thread
---
--- The Rust side calls `handle(method, params_json, respond, id)`. A handler receives the decoded
--- params, a `respond(result)` / `respond(nil, message)` function, which it may call at once or
--- later (openDiff waits for the person), and the method's name. Every method the bridge calls
--- is in one table, `M.methods`: the method's module (required the first time it is called) and
--- the function of it that handles it. The Rust side names the same methods as constants
--- (crates/core/src/editor.rs, `methods`); rpc_spec ties the two.
---
--- A handler that answers later may return a function: it is called (once) when nobody waits for
--- the answer any more — the client cancelled the request or disconnected — so the handler can
--- undo what it set up (close the diff view). The Rust side signals that with `cancel(id)`.

local M = {}

---A handler: the request's params (decoded JSON, each method its own shape), how to answer, and
---the method's name; may return what undoes it when nobody waits for the answer any more.
---@alias claude_context.RpcHandler fun(params: any, respond: fun(result: any, err: string?), method: string): (fun()|nil)

---Every method the bridge calls on the editor: { module, function } (no function: the module is
---the handler itself).
---@type table<string, {[1]: string, [2]: string?}>
M.methods = {
  -- The IDE tools: each one's module under claude_context.ide, named as the tool in snake case.
  openFile = { "claude_context.ide.open_file" },
  openDiff = { "claude_context.ide.open_diff" },
  getCurrentSelection = { "claude_context.ide.get_current_selection" },
  getLatestSelection = { "claude_context.ide.get_latest_selection" },
  getOpenEditors = { "claude_context.ide.get_open_editors" },
  getDiagnostics = { "claude_context.ide.get_diagnostics" },
  checkDocumentDirty = { "claude_context.ide.check_document_dirty" },
  saveDocument = { "claude_context.ide.save_document" },
  close_tab = { "claude_context.ide.close_tab" },
  closeAllDiffTabs = { "claude_context.ide.close_all_diff_tabs" },
  -- A Claude Code session is ready for notifications.
  ide_connected = { "claude_context.ide", "on_connected" },
  -- The code tools (claude_context.code runs each as a task).
  lsp_definition = { "claude_context.code", "handle" },
  lsp_references = { "claude_context.code", "handle" },
  lsp_implementations = { "claude_context.code", "handle" },
  lsp_type_definition = { "claude_context.code", "handle" },
  lsp_hover = { "claude_context.code", "handle" },
  lsp_symbols = { "claude_context.code", "handle" },
  lsp_calls = { "claude_context.code", "handle" },
  code_outline = { "claude_context.code", "handle" },
  lsp_diagnostics = { "claude_context.code", "handle" },
  -- The hooks' asks.
  permission_request = { "claude_context.sessions.permissions", "handle" },
  plan_review = { "claude_context.sessions.plans", "handle" },
  -- What the turns tell.
  session_state = { "claude_context.sessions.state", "handle" },
  tool_call = { "claude_context.follow.trail", "handle" },
  checkpoint_error = { "claude_context.checkpoints", "on_error" },
  checkpoint_progress = { "claude_context.checkpoints", "on_progress" },
  turn_checkpointed = { "claude_context.checkpoints", "on_checkpointed" },
}

---The handlers found so far, by method (a spec may put its own here).
---@type table<string, claude_context.RpcHandler>
M.handlers = {}

---Requests whose handler has not answered yet and can be cancelled: id -> cancel function.
---@type table<integer, fun()>
M.pending = {}

---The handler of `method` (its module required now), or nil and why not.
---@param method string
---@return claude_context.RpcHandler? handler, string? err
local function find(method)
  local h = M.handlers[method]
  if h then
    return h
  end
  local where = M.methods[method]
  if not where then
    return nil, ("no editor handler for %q"):format(method)
  end
  local ok, mod = pcall(require, where[1])
  if not ok then
    vim.schedule(function()
      vim.notify(("claude-context: cannot load %s: %s"):format(where[1], mod), vim.log.levels.ERROR)
    end)
    return nil, ("cannot load %s"):format(where[1])
  end
  h = where[2] and mod[where[2]] or mod
  if type(h) ~= "function" then
    return nil, ("no editor handler for %q in %s"):format(method, where[1])
  end
  M.handlers[method] = h
  return h
end

---Called by the native library on the main thread.
---@param method string
---@param params_json string
---@param respond fun(ok_json: string?, err: string?)
---@param id integer? the request's id, for `cancel`
function M.handle(method, params_json, respond, id)
  local h, why = find(method)
  if not h then
    respond(nil, why)
    return
  end
  local done = false
  local function reply(result, err)
    if done then
      return
    end
    done = true
    if id then
      M.pending[id] = nil
    end
    if err then
      respond(nil, tostring(err))
    else
      local ok, json = pcall(vim.json.encode, result == nil and vim.NIL or result)
      if ok then
        respond(json)
      else
        respond(nil, "cannot encode the editor's answer: " .. tostring(json))
      end
    end
  end
  local ok, params = pcall(vim.json.decode, params_json, { luanil = { object = true, array = true } })
  if not ok then
    reply(nil, "invalid params: " .. tostring(params))
    return
  end
  local ok2, cancel = pcall(h, params or {}, reply, method)
  if not ok2 then
    reply(nil, cancel)
  elseif not done and id and type(cancel) == "function" then
    M.pending[id] = function()
      done = true
      cancel()
    end
  end
end

---Nobody waits for request `id` any more: its handler's cancel function runs (once); a later
---`respond` is ignored. Unknown ids (answered already) are ignored.
---@param id integer
function M.cancel(id)
  local c = M.pending[id]
  M.pending[id] = nil
  if c then
    local ok, err = pcall(c)
    if not ok then
      vim.schedule(function()
        vim.notify("claude-context: cancelling a request failed: " .. tostring(err), vim.log.levels.ERROR)
      end)
    end
  end
end

return M
