-- A stand-in for Claude Code in tests/nvim specs: tests/nvim/ws_client.py (Python `websockets`,
-- from the .deps venv or $CLAUDE_CONTEXT_TEST_PYTHON) connected to the running bridge.
local M = {}

local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
local root = vim.fn.fnamemodify(here, ":h:h")

local function python()
  local p = vim.env.CLAUDE_CONTEXT_TEST_PYTHON
  if p and p ~= "" then
    return p
  end
  return root .. "/.deps/venv/bin/python"
end

---@class WsClient
---@field messages table[] every JSON message received, decoded
---@field closed boolean
local Client = {}
Client.__index = Client

---Connects to the bridge; waits for the handshake. `path`: the request path ("/mcp" for the
---model's door; the IDE door by default).
---@param path string?
---@return WsClient
function M.connect(path)
  local st = require("claude_context").status()
  assert(st, "the bridge is not running")
  local token = require("claude_context.native").load().token()
  local self = setmetatable({ messages = {}, closed = false, connected = false, buf = "", stderr = "" }, Client)
  self.proc = vim.system({ python(), here .. "/ws_client.py", tostring(st.port), token, path or "" }, {
    stdin = true,
    stdout = function(_, data)
      if not data then
        return
      end
      self.buf = self.buf .. data
      while true do
        local nl = self.buf:find("\n", 1, true)
        if not nl then
          break
        end
        local line = self.buf:sub(1, nl - 1)
        self.buf = self.buf:sub(nl + 1)
        if line == "CONNECTED" then
          self.connected = true
        elseif line == "CLOSED" then
          self.closed = true
        else
          local ok, v = pcall(vim.json.decode, line, { luanil = { object = true, array = true } })
          if ok then
            table.insert(self.messages, v)
          end
        end
      end
    end,
    stderr = function(_, data)
      if data then
        self.stderr = self.stderr .. data
      end
    end,
  })
  local ok = vim.wait(15000, function()
    return self.connected or self.proc:is_closing()
  end, 10)
  assert(ok and self.connected, "the test client did not connect: " .. self.stderr)
  return self
end

function Client:send(msg)
  self.proc:write(vim.json.encode({ send = msg }) .. "\n")
end

---Sends initialize (+ initialized, + ide_connected unless `ide = false`) like Claude Code.
function Client:handshake(ide)
  self:send({
    jsonrpc = "2.0",
    id = "init",
    method = "initialize",
    params = {
      protocolVersion = "2025-11-25",
      capabilities = vim.empty_dict(),
      clientInfo = { name = "test", version = "0" },
    },
  })
  self:wait_for(function(m)
    return m.id == "init"
  end, "initialize answer")
  self:send({ jsonrpc = "2.0", method = "notifications/initialized" })
  if ide ~= false then
    self:send({ jsonrpc = "2.0", method = "ide_connected", params = { pid = vim.fn.getpid() } })
  end
end

---Sends tools/call with id `id`.
function Client:call(id, name, args)
  self:send({
    jsonrpc = "2.0",
    id = id,
    method = "tools/call",
    params = { name = name, arguments = args or vim.empty_dict() },
  })
end

---Calls tool `name` with a fresh id and waits for its answer; returns its `result` (an error
---when the answer has none).
function Client:result(name, args)
  self.calls = (self.calls or 0) + 1
  local id = "call-" .. self.calls
  self:call(id, name, args)
  local m = self:wait_for(function(m)
    return m.id == id
  end, name .. " answer")
  if not m.result then
    error("no result: " .. vim.inspect(m), 2)
  end
  return m.result
end

---Lets the editor and the client exchange everything pending: a ping's answer (id `id`)
---arrives after whatever the bridge sent this client before it.
function Client:sync(id)
  self:send({ jsonrpc = "2.0", id = id, method = "ping" })
  self:wait_for(function(m)
    return m.id == id
  end, "ping " .. id)
end

---The text of a tool result's first content block ("" without one).
function M.text_of(r)
  return r.content and r.content[1] and r.content[1].text or ""
end

---The messages matching `pred`.
function Client:find(pred)
  return vim.tbl_filter(pred, self.messages)
end

---Waits for a message matching `pred`; returns it.
function Client:wait_for(pred, what, timeout)
  local found
  local ok = vim.wait(timeout or 10000, function()
    for _, m in ipairs(self.messages) do
      if pred(m) then
        found = m
        return true
      end
    end
    return false
  end, 10)
  if not ok then
    error(
      ("timed out waiting for %s; got %s; stderr %s"):format(
        what or "a message",
        vim.inspect(self.messages),
        self.stderr
      ),
      2
    )
  end
  return found
end

---Notifications of `method` received so far.
function Client:notifications(method)
  return self:find(function(m)
    return m.method == method
  end)
end

---Closes the connection and waits for the process to end.
function Client:close()
  if not self.proc:is_closing() then
    self.proc:write(vim.json.encode({ close = true }) .. "\n")
    self.proc:wait(10000)
  end
  self.closed = true
end

return M
