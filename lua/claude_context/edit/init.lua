---@mod claude_context.edit Edit in place: select, say what you want, get Claude's change where you are
---
--- `:'<,'>ClaudeContext edit {instruction}` or `require("claude_context").edit({buf, range,
--- instruction})`: Claude (the person's Claude Code CLI, model, settings and login; the read tools
--- only) rewrites the range, and its answer streams into the buffer as a diff in place
--- (claude_context.edit.live), then each hunk is kept or rejected with the review's keys
--- (claude_context.edit.hunks). Without a range, the function or paragraph at the cursor;
--- without an instruction, a one-line prompt (claude_context.edit.input). One warm CLI process
--- answers every edit (claude_context.edit.process). `:ClaudeContext edit!` and the operator
--- `<Plug>(claude-context-edit)` (`.` repeats it) reuse the last instruction.

local M = {}

---What `require("claude_context").edit()` edits.
---@class claude_context.EditOpts
---@field buf integer? The buffer (default: the current one)
---@field range integer[]? `{first, last}` lines (1-based); default the function or paragraph at the cursor
---@field instruction string? No instruction: the prompt asks for one
---@field repeat_last boolean? With the prompt: the last instruction

local process = require("claude_context.edit.process")
local live = require("claude_context.edit.live")
local hunks = require("claude_context.edit.hunks")
local prompt = require("claude_context.edit.prompt")
local notify = require("claude_context.util.notify")

local uv = vim.uv

---Earlier instructions, oldest first (the prompt's <Up>).
---@type string[]
M.history = {}

---The figures of the last edit (ms, for bench/edit.py): `request` from the call to the request
---leaving (a slice after the call's), `first_change` to the first line shown, `piece_ms` each
---streamed piece that changed the buffer from its line's arrival to it written (`piece_max` the
---largest), `slice_max` the longest main-thread step of the edit's own, the call included
---(`slice_cpu_max` the most CPU time one took: without the waits of a loaded machine's
---scheduler; `slice_cpu_name` which step that was), `done` to its end.
---@type {request: number?, first_change: number?, piece_ms: number[], piece_max: number, slice_max: number, slice_cpu_max: number, slice_cpu_name: string?, done: number?}
M.stats = { piece_ms = {}, piece_max = 0, slice_max = 0, slice_cpu_max = 0 }

---The edit under way.
---@type {buf: integer, live: claude_context.EditLive, parser: claude_context.EditParser, t0: number, turn: claude_context.EditTurn}?
local E = nil

local function opts()
  return require("claude_context.config.edit").options()
end

local function remember(instruction)
  for i = #M.history, 1, -1 do
    if M.history[i] == instruction then
      table.remove(M.history, i)
    end
  end
  M.history[#M.history + 1] = instruction
  while #M.history > opts().history do
    table.remove(M.history, 1)
  end
end

---The last instruction, or nil.
---@return string?
function M.last()
  return M.history[#M.history]
end

---Whether an edit is streaming.
---@return boolean
function M.busy()
  return E ~= nil
end

local function unmap_cancel(e)
  local key = opts().cancel_key
  if key ~= "" and vim.api.nvim_buf_is_valid(e.buf) then
    pcall(vim.keymap.del, "n", key, { buffer = e.buf })
  end
end

local function done(e)
  if E == e then
    E = nil
  end
  unmap_cancel(e)
  M.stats.done = (uv.hrtime() - e.t0) / 1e6
  vim.api.nvim_exec_autocmds(
    "User",
    { pattern = "ClaudeContextEdit", modeline = false, data = { buf = e.buf, state = "done" } }
  )
end

---The person changed the range while the answer streamed: their text wins.
local function refuse(e)
  process.cancel()
  local l = e.live
  if not vim.api.nvim_buf_is_valid(e.buf) then
    return done(e)
  end
  local top = live.top(l)
  -- The answer's lines go when they are still as written; the person's lines stay.
  if top and #l.new > 0 then
    local got = vim.api.nvim_buf_get_lines(e.buf, top, top + #l.new, false)
    if vim.deep_equal(got, l.new) then
      vim.api.nvim_buf_set_lines(e.buf, top, top + #l.new, false, {})
    end
  end
  live.clear(l)
  done(e)
  notify.prefixed("edit refused: you changed the lines it was rewriting; your text is kept", vim.log.levels.WARN)
end

---Counts one main-thread step of the edit's, `name`d, in the stats.
local function account(name, wall, cpu)
  M.stats.slice_max = math.max(M.stats.slice_max, wall)
  if cpu > M.stats.slice_cpu_max then
    M.stats.slice_cpu_max, M.stats.slice_cpu_name = cpu, name
  end
end

local function timed(name, fn)
  local t, c = uv.hrtime(), os.clock()
  fn()
  account(name, (uv.hrtime() - t) / 1e6, (os.clock() - c) * 1000)
end

local function on_text(e, text, arrived)
  if E ~= e then
    return
  end
  local lines = e.parser.feed(text)
  if #lines == 0 then
    return
  end
  if not live.append(e.live, lines) then
    return refuse(e)
  end
  local now = uv.hrtime()
  local ms = (now - arrived) / 1e6
  M.stats.piece_ms[#M.stats.piece_ms + 1] = ms
  M.stats.piece_max = math.max(M.stats.piece_max, ms)
  M.stats.first_change = M.stats.first_change or (now - e.t0) / 1e6
end

local function same(a, b)
  return vim.deep_equal(a, b)
end

---Runs `fn()` in a main-thread slice of its own, when edit `e` is still under way (not
---cancelled meanwhile) and its range still holds what it wrote; else `changed()` when the
---person changed the range in between.
---@param e table the edit
---@param name string the step's name in the stats
---@param fn fun()
---@param changed fun()
local function next_slice(e, name, fn, changed)
  vim.schedule(function()
    timed(name, function()
      if E ~= e then
        return
      end
      if not live.intact(e.live) then
        return changed()
      end
      fn()
    end)
  end)
end

---The person changed the range of the settled edit `e` before its hunks were shown: their
---text is kept, no hunks.
local function changed_before_show(e)
  live.clear(e.live)
  done(e)
  notify.prefixed("edit: the lines changed before its hunks were shown; your text is kept", vim.log.levels.WARN)
end

---Shows the hunks of the settled edit `e` (the lines it replaced: `old`).
local function show(e, old)
  local l = e.live
  local top = live.top(l)
  live.clear(l)
  hunks.show(e.buf, top, old, l.new, l)
  done(e)
end

local function on_done(e, err)
  if E ~= e then
    return
  end
  if err then
    live.revert(e.live)
    done(e)
    return notify.prefixed(err, vim.log.levels.ERROR)
  end
  if not live.append(e.live, e.parser.finish()) then
    return refuse(e)
  end
  local l = e.live
  if not e.parser.found() or same(l.new, l.old) then
    if not live.revert(l) then
      return refuse(e)
    end
    done(e)
    return notify.prefixed("edit: no change (Claude's answer had no new text for these lines)")
  end
  local top, old = live.settle(l)
  if not top then
    return refuse(e)
  end
  -- The hunks (the diff and its paint) in a slice of their own.
  next_slice(e, "the hunks shown", function()
    show(e, old)
  end, function()
    changed_before_show(e)
  end)
end

---The rows [s, e) to edit: `range` ({first, last} 1-based lines), else around the cursor.
local function rows(buf, range)
  if range then
    local n = vim.api.nvim_buf_line_count(buf)
    local a, b = math.max(1, math.min(range[1], range[2])), math.min(n, math.max(range[1], range[2]))
    return a - 1, b
  end
  local row = vim.api.nvim_get_current_buf() == buf and vim.api.nvim_win_get_cursor(0)[1] - 1 or 0
  local s, e = require("claude_context.edit.range").around(buf, row)
  return s, e
end

---Builds the prompt of edit `e` and sends it (the range where `live.start` took it).
local function send(e, instruction)
  local l = e.live
  local s = live.top(l)
  local text = prompt.build({
    buf = e.buf,
    s = s,
    e = s + #l.old,
    instruction = instruction,
    root = process.root(),
    context = opts().context_lines,
  })
  local err, restarted = process.send(text, e.turn)
  if err then
    live.clear(l)
    done(e)
    return notify.prefixed("edit: " .. err, vim.log.levels.ERROR)
  end
  M.stats.request = (e.turn.sent - e.t0) / 1e6
  if restarted then
    notify.prefixed(restarted .. "; a new one was started for this edit", vim.log.levels.WARN)
  end
end

---Starts the edit of rows [s, e) of `buf`: the range shown as under edit at once, the request
---built and sent in the next slice (`send`).
local function run(buf, s, en, instruction, t0, c0)
  if E then
    return notify.prefixed("an edit is under way (:ClaudeContext cancel or <C-c> stops it)", vim.log.levels.WARN)
  end
  if hunks.active[buf] then
    return notify.prefixed(
      "the last edit's hunks are pending in this buffer: keep or reject them first",
      vim.log.levels.WARN
    )
  end
  if not vim.bo[buf].modifiable then
    return notify.prefixed("edit: the buffer is not modifiable", vim.log.levels.ERROR)
  end
  remember(instruction)
  M.stats = { piece_ms = {}, piece_max = 0, slice_max = 0, slice_cpu_max = 0 }
  local e = { buf = buf, parser = prompt.parser(), t0 = t0 }
  e.live = live.start(buf, s, en)
  e.turn = {
    on_text = function(t, arrived)
      timed("a streamed piece written", function()
        on_text(e, t, arrived)
      end)
    end,
    on_done = function(err)
      timed("the answer's end", function()
        on_done(e, err)
      end)
    end,
  }
  E = e
  local key = opts().cancel_key
  if key ~= "" then
    vim.keymap.set("n", key, M.cancel, { buffer = buf, desc = "claude-context: stop the edit" })
  end
  vim.api.nvim_exec_autocmds(
    "User",
    { pattern = "ClaudeContextEdit", modeline = false, data = { buf = buf, state = "started" } }
  )
  next_slice(e, "the request sent", function()
    send(e, instruction)
  end, function()
    refuse(e)
  end)
  account("the call", (uv.hrtime() - t0) / 1e6, (os.clock() - c0) * 1000)
end

---Edits a range of a buffer as the instruction says.
---@param o claude_context.EditOpts?
function M.edit(o)
  local t0, c0 = uv.hrtime(), os.clock()
  o = o or {}
  local buf = (o.buf == nil or o.buf == 0) and vim.api.nvim_get_current_buf() or o.buf
  if not vim.api.nvim_buf_is_valid(buf) then
    return notify.prefixed("edit: no such buffer", vim.log.levels.ERROR)
  end
  local s, e = rows(buf, o.range)
  local instruction = o.instruction and vim.trim(o.instruction) or ""
  if instruction == "" and o.repeat_last then
    instruction = M.last() or ""
    if instruction == "" then
      return notify.prefixed("edit!: no earlier instruction to repeat", vim.log.levels.WARN)
    end
  end
  if instruction ~= "" then
    return run(buf, s, e, instruction, t0, c0)
  end
  require("claude_context.edit.input").ask(M.history, function(text)
    run(buf, s, e, text, uv.hrtime(), os.clock())
  end, ("Claude: edit lines %d-%d"):format(s + 1, e))
end

---Stops the edit under way: the buffer as it was. Returns whether there was one.
---@return boolean
function M.cancel()
  local e = E
  if not e then
    return false
  end
  E = nil
  process.cancel()
  live.revert(e.live)
  done(e)
  notify.prefixed("edit cancelled; the buffer is as it was")
  return true
end

---Starts the warm process now (else the first edit starts it). Returns nil or why not.
---@return string? err
function M.warm()
  return process.start()
end

---The state for :checkhealth: the process's, and whether an edit streams.
---@return table<string, any> state the process's (claude_context.edit.process `state()`) and `editing`
function M.state()
  local st = process.state()
  st.editing = E ~= nil
  return st
end

-- The operator: `g@` over a motion or a Visual selection; `.` repeats it with the instruction
-- it was first given.
local fresh = false

---`<Plug>(claude-context-edit)`: an expr mapping's keys (the operator).
---@return string
function M.operator()
  fresh = true
  vim.o.operatorfunc = "v:lua.require'claude_context.edit'.opfunc"
  return "g@"
end

---The operator's function (`'operatorfunc'`).
function M.opfunc()
  local range = { vim.fn.line("'["), vim.fn.line("']") }
  local first = fresh
  fresh = false
  M.edit({ range = range, repeat_last = not first })
end

return M
