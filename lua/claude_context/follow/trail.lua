---@mod claude_context.follow.trail Where each session's tools went (the bridge's tool_call requests)
---
--- The bridge tells the editor of every tool call on a file that a session's hooks report
--- (`tool_call`: `{ event, session_id, terminal, cwd, tool, file, line }`, from the hook before
--- each tool, crates/core/src/turns/record.rs). Each session keeps its trail here (file, line,
--- tool, time; the newest `MAX` entries), and the listeners (the follow window,
--- claude_context.follow) hear of each call as it comes.

local M = {}

---The bridge's `tool_call` params (untrusted: each field checked).
---@class claude_context.ToolCall
---@field event string?
---@field session_id string?
---@field terminal string?
---@field cwd string?
---@field tool string?
---@field file string?
---@field line integer|string|nil

---One step of a session's trail.
---@class claude_context.TrailEntry
---@field file string
---@field line integer
---@field tool string
---@field event string?
---@field terminal string?
---@field cwd string?
---@field time_ms integer uv.now()
---@field wall integer os.time()

---How many entries a session's trail keeps.
M.MAX = 500

---Trails by session id, oldest first: `{ file, line, tool, time_ms, event, terminal, cwd }`.
---@type table<string, claude_context.TrailEntry[]>
M.trails = {}

---Called with each new entry and its session id (`fn(session_id, entry)`), by key.
---@type table<string, fun(session: string, entry: claude_context.TrailEntry)>
M.listeners = {}

local function str(x)
  return type(x) == "string" and x ~= "" and x or nil
end

---A `tool_call` from the bridge: kept in its session's trail, then told to the listeners.
---@param p claude_context.ToolCall
function M.on_tool_call(p)
  local session, file = str(p.session_id), str(p.file)
  if not (session and file) then
    return
  end
  local line = tonumber(p.line)
  local e = {
    file = file,
    line = line and line >= 1 and math.floor(line) or 1,
    tool = str(p.tool) or "?",
    event = str(p.event),
    terminal = str(p.terminal),
    cwd = str(p.cwd),
    time_ms = math.floor(vim.uv.now()),
    wall = os.time(),
  }
  local t = M.trails[session] or {}
  M.trails[session] = t
  -- The hook before a tool and the one after it (sessions without the bridge's server) name
  -- the same call: kept once.
  local last = t[#t]
  if not (last and e.event == "PostToolUse" and last.file == e.file and last.tool == e.tool) then
    t[#t + 1] = e
    if #t > M.MAX then
      table.remove(t, 1)
    end
  end
  for _, fn in pairs(M.listeners) do
    pcall(fn, session, e)
  end
end

---The session the person works with: the newest session of the current Claude terminal, else
---the newest session that has not ended; nil when no hook reported one.
---@return claude_context.Session?
function M.current()
  local list = require("claude_context.sessions.state").list()
  local term = package.loaded["claude_context.terminal.sessions"]
  local name = term and term.name
  for _, s in ipairs(list) do
    if name and s.terminal == name and s.state ~= "ended" then
      return s
    end
  end
  for _, s in ipairs(list) do
    if s.state ~= "ended" then
      return s
    end
  end
  return list[1]
end

---The bridge's `tool_call` (claude_context.rpc's table of methods routes it here).
---@param params table
---@param respond fun(result: any, err: string?)
function M.handle(params, respond)
  local ok, err = pcall(M.on_tool_call, params)
  respond(nil, not ok and tostring(err) or nil)
end

return M
