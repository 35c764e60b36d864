---@mod claude_context.rpc Requests from the bridge that must run on Neovim's main thread
---
--- The Rust side calls `handle(method, params_json, respond, id)`. A handler receives the decoded
--- params and a `respond(result)` / `respond(nil, message)` function, which it may call at once or
--- later (openDiff waits for the person). Handlers are registered by method name.
---
--- A handler that answers later may return a function: it is called (once) when nobody waits for
--- the answer any more — the client cancelled the request or disconnected — so the handler can
--- undo what it set up (close the diff view). The Rust side signals that with `cancel(id)`.

local M = {}

---A handler: the request's params (decoded JSON, each method its own shape) and how to answer;
---may return what undoes it when nobody waits for the answer any more.
---@alias claude_context.RpcHandler fun(params: any, respond: fun(result: any, err: string?)): (fun()|nil)

---@type table<string, claude_context.RpcHandler>
M.handlers = {}

---Modules that register handlers, loaded the first time a method has none.
M.providers = { "claude_context.ide", "claude_context.code", "claude_context.sessions.permissions" }

---Requests whose handler has not answered yet and can be cancelled: id -> cancel function.
---@type table<integer, fun()>
M.pending = {}

---@param method string
---@param fn claude_context.RpcHandler
function M.register(method, fn)
  M.handlers[method] = fn
end

local providers_loaded = false

local function find(method)
  local h = M.handlers[method]
  if h or providers_loaded then
    return h
  end
  providers_loaded = true
  for _, mod in ipairs(M.providers) do
    local ok, err = pcall(require, mod)
    if not ok then
      vim.schedule(function()
        vim.notify(("claude-context: cannot load %s: %s"):format(mod, err), vim.log.levels.ERROR)
      end)
    end
  end
  return M.handlers[method]
end

---Called by the native library on the main thread.
---@param method string
---@param params_json string
---@param respond fun(ok_json: string?, err: string?)
---@param id integer? the request's id, for `cancel`
function M.handle(method, params_json, respond, id)
  local h = find(method)
  if not h then
    respond(nil, ("no editor handler for %q"):format(method))
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
  local ok2, cancel = pcall(h, params or {}, reply)
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
