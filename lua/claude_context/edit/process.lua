---@mod claude_context.edit.process The warm Claude Code process behind edit in place
---
--- One `claude -p` that reads user messages as stream-json on stdin and prints its answers as
--- stream-json (text deltas included), started on the first edit and kept for the next ones,
--- restarted when it dies. Its command line is the native side's (`edit_command`,
--- crates/core/src/claude/edit.rs: the sub-agent's confinement with the read tools only); the
--- CLI is found by the native side too (claude_context.cli). The process runs through
--- claude_context.util.proc (stdin kept open, its output as it comes, its own process group): its
--- output is split into lines where it arrives and decoded on the main thread in short slices.

local M = {}

local uv = vim.uv

---How long one slice of decoding may take on the main thread (ms).
M.SLICE_MS = 4

---The process: nil when none runs.
---@class claude_context.EditProc
---@field proc vim.SystemObj the program (claude_context.util.proc), its stdin open
---@field pid integer
---@field lines {[1]: string, [2]: number}[] output lines (and when they arrived), decoded from `head` on
---@field head integer
---@field tail integer
---@field partial string the output's last line, not ended yet
---@field stderr string the end of its stderr (for the message when it dies)
---@field edits integer edits it answered
---@field started number vim.uv.hrtime() at its start
---@field cli string the CLI it runs
---@type claude_context.EditProc?
local P = nil

---The edit under way: its callbacks.
---@class claude_context.EditTurn
---@field on_text fun(text: string, arrived: number) a piece of the answer's text (and when its line arrived)
---@field on_done fun(err: string?, result: table<string, any>?) the answer ended (err when it failed; result: the stream's `result` message)
---@field sent number? vim.uv.hrtime() when the request left
---@field saw_delta boolean a text delta came for the current message
---@field texts integer text blocks seen
---@type claude_context.EditTurn?
local T = nil

---Why the last process ended when nobody stopped it (told on the next edit), or nil.
---@type string?
M.died = nil

---How many processes were started (for :checkhealth and the specs).
M.starts = 0

local draining = false

local function opts()
  return require("claude_context.config.edit").options()
end

---The project root the process runs in: `project_root` when set, else Neovim's current directory.
---@return string
function M.root()
  local r = require("claude_context.config").options.project_root
  return r and vim.fn.expand(r) or vim.fn.getcwd()
end

---The program, its arguments and its environment, or nil and why not.
---@return {cli: string, args: string[], env: table<string, string>}? cmd, string? err
function M.command()
  local cli, why = require("claude_context.cli").find(nil, true)
  if not cli then
    return nil, why
  end
  local native, missing = require("claude_context.native").get()
  if not native then
    return nil, missing
  end
  if not native.edit_command then
    return nil, "the native library is older than edit in place: rebuild it (:ClaudeContext build)"
  end
  local config = require("claude_context.config")
  local ok, json = pcall(native.edit_command, config.to_native(config.options), cli, M.root(), opts().persist)
  if not ok then
    return nil, tostring(json)
  end
  local c = vim.json.decode(json)
  return { cli = cli, args = c.args, env = require("claude_context.agents.cli").env(c.env) }
end

---The state for :checkhealth and the statusline: "stopped", "ready" or "busy", its pid, the
---edits it answered, and why the last one died.
---@return {state: string, pid: integer?, edits: integer, starts: integer, died: string?}
function M.state()
  return {
    state = P and (T and "busy" or "ready") or "stopped",
    pid = P and P.pid or nil,
    edits = P and P.edits or 0,
    starts = M.starts,
    died = M.died,
  }
end

-- The answer's text decoded in this slice, given to the turn at once at the slice's end (or
-- before anything else happens): one write of many lines, not one per delta.
local pending, pending_at = {}, nil

local function emit(text, arrived)
  pending[#pending + 1] = text
  pending_at = pending_at or arrived
end

local function flush()
  if #pending == 0 then
    return
  end
  local text, at = table.concat(pending), pending_at
  pending, pending_at = {}, nil
  if T then
    T.on_text(text, at)
  end
end

local function finish_turn(err, result)
  flush()
  local t = T
  T = nil
  if t then
    t.on_done(err, result)
  end
end

---One decoded stream-json message of the process.
---@param m table<string, any> the message's JSON (its `type` says which)
---@param arrived number
local function handle(m, arrived)
  local t = T
  if not t or type(m) ~= "table" then
    return
  end
  if m.type == "stream_event" and m.parent_tool_use_id == nil and type(m.event) == "table" then
    local ev = m.event
    if ev.type == "message_start" then
      t.saw_delta = false
    elseif
      ev.type == "content_block_start"
      and type(ev.content_block) == "table"
      and ev.content_block.type == "text"
    then
      -- Text blocks of one answer are one text, a line apart.
      if t.texts > 0 then
        emit("\n", arrived)
      end
      t.texts = t.texts + 1
    elseif ev.type == "content_block_delta" and type(ev.delta) == "table" and ev.delta.type == "text_delta" then
      t.saw_delta = true
      emit(tostring(ev.delta.text or ""), arrived)
    end
  elseif m.type == "assistant" and m.parent_tool_use_id == nil and not t.saw_delta and type(m.message) == "table" then
    -- A CLI that streams no deltas: the whole message at once.
    for _, b in ipairs(type(m.message.content) == "table" and m.message.content or {}) do
      if type(b) == "table" and b.type == "text" and type(b.text) == "string" then
        if t.texts > 0 then
          emit("\n", arrived)
        end
        t.texts = t.texts + 1
        emit(b.text, arrived)
      end
    end
  elseif m.type == "result" then
    if P then
      P.edits = P.edits + 1
    end
    if m.is_error or (m.subtype and m.subtype ~= "success") then
      local why = type(m.result) == "string" and m.result or tostring(m.subtype or "error")
      finish_turn(("Claude Code answered with an error: %s"):format(why), m)
    else
      finish_turn(nil, m)
    end
    if P and P.edits >= opts().max_edits_per_process then
      -- A fresh conversation for the next edits, started now so that they find it warm.
      M.stop()
      M.start()
    end
  end
end

---Decodes the waiting lines in slices of at most SLICE_MS, each slice on its own turn of the
---event loop.
local function drain()
  draining = false
  local p = P
  if not p then
    return
  end
  local deadline = uv.hrtime() + M.SLICE_MS * 1e6
  while p.head <= p.tail do
    local item = p.lines[p.head]
    p.lines[p.head] = nil
    p.head = p.head + 1
    local ok, m = pcall(vim.json.decode, item[1], { luanil = { object = true, array = true } })
    if ok then
      handle(m, item[2])
    end
    if P ~= p then
      return
    end
    if uv.hrtime() > deadline and p.head <= p.tail then
      draining = true
      vim.schedule(drain)
      return flush()
    end
  end
  -- The queue starts again before the text is written: a long write polls libuv
  -- (os_breakcheck), and the lines that arrive in the stdout callback meanwhile go into the new
  -- queue (and a drain of their own), not into the one emptied here.
  p.lines, p.head, p.tail = {}, 1, 0
  flush()
end

local function on_stdout(p, data)
  local now = uv.hrtime()
  local text = p.partial .. data
  local start = 1
  while true do
    local nl = text:find("\n", start, true)
    if not nl then
      break
    end
    if nl > start then
      p.tail = p.tail + 1
      p.lines[p.tail] = { text:sub(start, nl - 1), now }
    end
    start = nl + 1
  end
  p.partial = text:sub(start)
  if not draining and p.head <= p.tail then
    draining = true
    vim.schedule(drain)
  end
end

---What becomes of process `p` when it ended (on the main thread): the turn under way ends with
---why, unless it was stopped on purpose (`P` is another one then, or none).
---@param p claude_context.EditProc
---@param r claude_context.ProcResult
local function ended(p, r)
  if P ~= p then
    return
  end
  P = nil
  local tail = vim.trim(p.stderr):gsub("\n", " "):sub(-300)
  local signal = r.signal or 0
  M.died = ("the Claude Code process of edit in place ended (exit code %d%s)%s"):format(
    r.code,
    signal ~= 0 and (", signal " .. signal) or "",
    tail ~= "" and (": " .. tail) or ""
  )
  finish_turn(M.died .. "; the next edit starts a new one")
end

---Starts the process unless it runs. Returns nil, or why it cannot start.
---@return string? err
function M.start()
  if P then
    return nil
  end
  local cmd, err = M.command()
  if not cmd then
    return err
  end
  local p =
    { lines = {}, head = 1, tail = 0, partial = "", stderr = "", edits = 0, started = uv.hrtime(), cli = cmd.cli }
  local proc, why = require("claude_context.util.proc").run(vim.list_extend({ cmd.cli }, cmd.args), {
    env = cmd.env,
    cwd = M.root(),
    text = false,
    stdin = true,
    -- Its own process group: a cancel stops the CLI and whatever it started.
    detach = true,
    stdout = function(_, data)
      if data and P == p then
        on_stdout(p, data)
      end
    end,
    stderr = function(_, data)
      if data then
        p.stderr = (p.stderr .. data):sub(-2000)
      end
    end,
  }, function(r)
    ended(p, r)
  end)
  if not proc then
    return ("cannot start %s: %s"):format(vim.fn.strtrans(cmd.cli), tostring(why))
  end
  p.proc, p.pid = proc, proc.pid
  P = p
  M.starts = M.starts + 1
  -- Its own process group outlives Neovim unless stopped: stopped when Neovim leaves.
  require("claude_context.util.autocmds").group("claude_context_edit_process", {
    {
      "VimLeavePre",
      function()
        M.stop()
      end,
      desc = "claude-context: stop edit in place's Claude Code process",
    },
  })
  return nil
end

---Stops the process (its whole process group) without telling anybody; the edit under way, if
---any, ends without a callback.
function M.stop()
  local p = P
  P, T = nil, nil
  pending, pending_at = {}, nil
  if p then
    require("claude_context.util.proc").kill_group(p.proc, "sigterm")
    pcall(p.proc.write, p.proc, nil)
  end
end

---Sends one edit's prompt; `turn.on_text` gets the answer's text as it streams and
---`turn.on_done` its end. Returns nil, or why it could not be sent (`restarted` says the
---process was started again after it died).
---@param prompt string
---@param turn claude_context.EditTurn
---@return string? err, string? restarted
function M.send(prompt, turn)
  if T then
    return "an edit is under way (:ClaudeContext cancel stops it)"
  end
  local restarted = not P and M.died or nil
  local err = M.start()
  if err then
    return err
  end
  M.died = nil
  local msg =
    vim.json.encode({ type = "user", message = { role = "user", content = { { type = "text", text = prompt } } } })
  turn.saw_delta, turn.texts = false, 0
  T = turn
  P.proc:write(msg .. "\n")
  turn.sent = uv.hrtime()
  return nil, restarted
end

---Stops the edit under way: the process is stopped (a turn cannot be taken back from it) and
---a fresh one started, so the next edit still finds one warm.
---@return boolean stopped whether an edit was under way
function M.cancel()
  if not T then
    return false
  end
  M.stop()
  M.start()
  return true
end

---Whether an edit is under way.
function M.busy()
  return T ~= nil
end

return M
