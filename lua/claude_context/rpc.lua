---@mod claude_context.rpc Requests from the bridge that must run on Neovim's main thread
---
--- The Rust side calls `handle(method, params_json, respond)`. A handler receives the decoded
--- params and a `respond(result)` / `respond(nil, message)` function, which it may call at once or
--- later (openDiff waits for the person). Handlers are registered by method name.

local M = {}

---@type table<string, fun(params: table, respond: fun(result: any, err: string?))>
M.handlers = {}

---@param method string
---@param fn fun(params: table, respond: fun(result: any, err: string?))
function M.register(method, fn)
  M.handlers[method] = fn
end

---Called by the native library on the main thread.
---@param method string
---@param params_json string
---@param respond fun(ok_json: string?, err: string?)
function M.handle(method, params_json, respond)
  local h = M.handlers[method]
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
    if err then
      respond(nil, tostring(err))
    else
      respond(vim.json.encode(result == nil and vim.NIL or result))
    end
  end
  local ok, params = pcall(vim.json.decode, params_json, { luanil = { object = true, array = true } })
  if not ok then
    reply(nil, "invalid params: " .. tostring(params))
    return
  end
  local ok2, err = pcall(h, params or {}, reply)
  if not ok2 then
    reply(nil, err)
  end
end

return M
