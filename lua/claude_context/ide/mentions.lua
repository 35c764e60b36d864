---@mod claude_context.ide.mentions `at_mentioned` notifications, queued while no Claude Code is
--- connected
---
--- `at_mentioned {filePath, lineStart?, lineEnd?}` (0-based lines) goes to the connected
--- interactive Claude Code sessions (clients that sent `ide_connected`). When there is none yet,
--- the mention waits (`ide.mention_queue_ms`, 30 s by default) and is sent when one connects;
--- if none does in time, a message says it was dropped.

local M = {}

---An `at_mentioned` notification's params (0-based lines).
---@class claude_context.Mention
---@field filePath string
---@field lineStart integer?
---@field lineEnd integer?

local uv = vim.uv or vim.loop

---@type {params: claude_context.Mention, expires: integer, label: string}[]
M.queue = {}
local timer

local notify = require("claude_context.ide.util").notify

---How long a mention waits for a session (the `ide` options; claude_context.ide's options()).
local function ttl()
  return require("claude_context.config").options.ide.mention_queue_ms
end

local function label(p)
  local s = vim.fn.fnamemodify(p.filePath, ":~:.")
  if p.lineStart then
    s = s .. ("#L%d"):format(p.lineStart + 1)
    if p.lineEnd and p.lineEnd ~= p.lineStart then
      s = s .. ("-%d"):format(p.lineEnd + 1)
    end
  end
  return s
end

---Sends to the interactive clients; returns how many got it (nil when the bridge is stopped).
local function deliver(params)
  local ok, native = pcall(require("claude_context.native").load)
  if not ok or not native.status() then
    return nil
  end
  return native.broadcast("at_mentioned", vim.json.encode(params), true)
end

local function expire()
  local now = uv.now()
  local kept = {}
  for _, m in ipairs(M.queue) do
    if m.expires <= now then
      notify(("no Claude Code connected: dropped the mention of %s"):format(m.label), vim.log.levels.WARN)
    else
      table.insert(kept, m)
    end
  end
  M.queue = kept
  if #kept == 0 and timer then
    timer:stop()
  end
end

local function arm()
  timer = timer or uv.new_timer()
  if timer:is_active() then
    return
  end
  timer:start(200, 200, function()
    vim.schedule(expire)
  end)
end

---Mentions a file (and lines) to Claude. `line_start`/`line_end` are 0-based, inclusive.
---@param path string absolute
---@param line_start integer?
---@param line_end integer?
---@return boolean ok, string message
function M.mention(path, line_start, line_end)
  local params = { filePath = path, lineStart = line_start, lineEnd = line_end }
  local n = deliver(params)
  if n == nil then
    local _, missing = require("claude_context.native").get()
    return false, missing or "the bridge is not running (:ClaudeContext start)"
  end
  if n > 0 then
    return true, ("sent %s to %s"):format(label(params), require("claude_context.sessions.route").describe())
  end
  table.insert(M.queue, { params = params, expires = uv.now() + ttl(), label = label(params) })
  arm()
  return true,
    ("no Claude Code is connected yet: %s will be sent when one connects (within %d s)"):format(
      label(params),
      math.floor(ttl() / 1000)
    )
end

---Sends what is queued (a client connected). Mentions nobody received stay queued.
function M.flush()
  expire()
  local kept = {}
  for _, m in ipairs(M.queue) do
    local n = deliver(m.params)
    if n and n > 0 then
      notify(("sent %s to %s"):format(m.label, require("claude_context.sessions.route").describe()))
    else
      table.insert(kept, m)
    end
  end
  M.queue = kept
end

return M
