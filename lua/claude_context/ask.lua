---@mod claude_context.ask The sub-agent: :ClaudeContext ask, history, session, reset, cancel
---
--- `:ClaudeContext ask {prompt}` (a range or visual selection goes along as context), `history`,
--- `session`, `reset`, `cancel`. Runs go through the bridge's `execute_claude` tool: in the
--- background, one at a time, continuing the same Claude conversation. While a run is under way a
--- spinner shows in the command line (normal mode only) and `require("claude_context.ask")
--- .statusline()` returns it for statuslines; `User ClaudeContextRun` fires when a run starts and
--- ends (`data = {id, status, prompt, active, elapsed, error}`).

local M = {}

---A run of the sub-agent or an entry of its history (execute_claude's structuredContent).
---@class claude_context.AskEntry
---@field prompt string?
---@field response string?
---@field error string?
---@field timestamp string|integer|nil
---@field execution_time number?
---@field context_file string?
---@field session_id string?
---@field success boolean?

---The effective value of `claude` key `k` (`timeout`, `progress`; nil: the native side's default).
local function opt(k)
  return require("claude_context.config.claude").get(k)
end

local function cc()
  return require("claude_context")
end

local notify = require("claude_context.util.notify")

-- Runs in progress (started from this editor): id -> {prompt, started}.
---@type table<integer, {prompt: string, started: integer}>
M.runs = {}
local next_id = 0
local answers = 0
local frames = { "⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏" }
local frame = 1
local timer
local echoed = false

local function active()
  return vim.tbl_count(M.runs)
end

local function oldest()
  local first
  for _, r in pairs(M.runs) do
    if not first or r.started < first then
      first = r.started
    end
  end
  return first
end

---A short progress text for statuslines: "" when idle, "⠹ Claude 12s" (or "×2") otherwise.
---@return string
function M.statusline()
  local n = active()
  if n == 0 then
    return ""
  end
  local secs = math.floor((vim.uv.now() - (oldest() or vim.uv.now())) / 1000)
  return ("%s Claude%s %ds"):format(frames[frame], n > 1 and (" ×" .. n) or "", secs)
end

local function tick()
  frame = frame % #frames + 1
  if opt("progress") == "echo" and vim.api.nvim_get_mode().mode == "n" then
    local line = M.statusline() .. "  (:ClaudeContext cancel)"
    -- Never wider than the command line: a wrapped echo would raise a hit-enter prompt.
    local room = math.max(1, (tonumber(vim.v.echospace) or vim.o.columns) - 1)
    if vim.fn.strdisplaywidth(line) > room then
      line = vim.fn.strcharpart(line, 0, room)
    end
    vim.api.nvim_echo({ { line, "Comment" } }, false, {})
    echoed = true
  end
  pcall(vim.cmd.redrawstatus)
end

local function progress_update()
  if active() > 0 and not timer then
    timer = vim.uv.new_timer()
    timer:start(
      0,
      120,
      vim.schedule_wrap(function()
        if active() > 0 then
          tick()
        end
      end)
    )
  elseif active() == 0 and timer then
    timer:stop()
    timer:close()
    timer = nil
    if echoed then
      vim.api.nvim_echo({ { "" } }, false, {})
      echoed = false
    end
    pcall(vim.cmd.redrawstatus)
  end
end

local function fire(data)
  data.active = active()
  vim.api.nvim_exec_autocmds("User", { pattern = "ClaudeContextRun", modeline = false, data = data })
end

---Makes sure the bridge runs (starting it if needed); returns an error text otherwise.
---@return string? err
local function ensure_running()
  if cc().status() then
    return nil
  end
  local ok, e = cc().start({ silent = true })
  if not ok then
    return e or "the bridge is not running"
  end
end

---Calls a tool; `cb(structured, err)` gets the structured result or an error text.
---@param name string
---@param args table<string, any>
---@param cb fun(sc: table<string, any>?, err: string?) sc: the tool's structuredContent
function M.call(name, args, cb)
  local e = ensure_running()
  if e then
    return cb(nil, e)
  end
  -- The native callback runs inside a libuv callback: hop out of it before touching windows.
  local ok, err = pcall(
    cc().call_tool,
    name,
    args,
    vim.schedule_wrap(function(r)
      if r.error then
        return cb(nil, r.error.message)
      end
      if r.isError then
        local t = r.content and r.content[1] and r.content[1].text or "the tool failed"
        return cb(nil, t)
      end
      cb(r.structuredContent or {}, nil)
    end)
  )
  if not ok then
    cb(nil, require("claude_context.native").message(err))
  end
end

---The answer buffer of a run or history entry.
---@param e claude_context.AskEntry
---@return integer buf
function M.show(e)
  answers = answers + 1
  local lines = { "# Claude", "" }
  for _, l in ipairs(vim.split(e.prompt or "", "\n", { plain = true })) do
    table.insert(lines, "> " .. l)
  end
  table.insert(lines, "")
  if e.success == false then
    table.insert(lines, "**Error:** " .. tostring(e.error or "unknown error"))
  else
    vim.list_extend(lines, vim.split(e.response or "", "\n", { plain = true }))
  end
  table.insert(lines, "")
  local meta = {}
  if e.timestamp then
    table.insert(meta, e.timestamp)
  end
  if e.execution_time then
    table.insert(meta, ("%.1f s"):format(e.execution_time))
  end
  if e.context_file then
    table.insert(meta, "context: " .. e.context_file)
  end
  if e.session_id and e.session_id ~= vim.NIL then
    table.insert(meta, "session " .. e.session_id)
  end
  if #meta > 0 then
    table.insert(lines, "<!-- " .. table.concat(meta, " · ") .. " -->")
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = "markdown"
  pcall(vim.api.nvim_buf_set_name, buf, ("claude-context://answer/%d"):format(answers))
  vim.cmd("botright split")
  vim.api.nvim_win_set_buf(0, buf)
  return buf
end

---The prompt with lines `l1..l2` of `buf` as context.
---@return string
function M.with_selection(prompt, buf, l1, l2)
  local lines = vim.api.nvim_buf_get_lines(buf, l1 - 1, l2, false)
  local body = table.concat(lines, "\n")
  local longest = 2
  for run in body:gmatch("`+") do
    longest = math.max(longest, #run)
  end
  local fence = ("`"):rep(longest + 1)
  local name = vim.api.nvim_buf_get_name(buf)
  name = name ~= "" and vim.fn.fnamemodify(name, ":~:.") or "[No Name]"
  return ("%s\n\nSelected lines %d-%d of %s:\n%s%s\n%s\n%s"):format(
    prompt,
    l1,
    l2,
    name,
    fence,
    vim.bo[buf].filetype,
    body,
    fence
  )
end

---Asks Claude in the background; the answer opens in a Markdown scratch buffer.
---@param prompt string
---@param o {range: integer?, line1: integer?, line2: integer?, buf: integer?, timeout: number?, on_done: fun(sc: claude_context.AskEntry?, err: string?)?}?
---@return integer? id
function M.ask(prompt, o)
  o = o or {}
  prompt = vim.trim(prompt or "")
  if prompt == "" then
    notify("usage: :[range]ClaudeContext ask {prompt}", vim.log.levels.ERROR)
    return nil
  end
  local full = prompt
  if (o.range or 0) > 0 then
    full = M.with_selection(prompt, o.buf or 0, o.line1, o.line2)
  end
  next_id = next_id + 1
  local id = next_id
  M.runs[id] = { prompt = prompt, started = vim.uv.now() }
  if opt("progress") == "notify" or active() > 1 then
    notify(active() > 1 and ("Claude: queued behind %d run(s)"):format(active() - 1) or "Claude: thinking…")
  end
  fire({ id = id, status = "running", prompt = prompt })
  progress_update()
  M.call("execute_claude", { prompt = full, timeout = o.timeout or opt("timeout") }, function(sc, err)
    local run = M.runs[id]
    M.runs[id] = nil
    progress_update()
    local elapsed = run and (vim.uv.now() - run.started) / 1000 or 0
    local status
    if err then
      status = "failed"
      notify("Claude: " .. err, vim.log.levels.ERROR)
    elseif not sc.success then
      err = sc.error or "unknown error"
      status = err:find("cancelled", 1, true) and "cancelled" or "failed"
      notify("Claude: " .. err, status == "cancelled" and vim.log.levels.WARN or vim.log.levels.ERROR)
    else
      status = "done"
      sc.prompt = prompt
      M.show(sc)
    end
    fire({ id = id, status = status, prompt = prompt, elapsed = elapsed, error = err })
    if o.on_done then
      o.on_done(sc, err)
    end
  end)
  return id
end

local function first_line(s, n)
  s = (s or ""):gsub("\n.*", "")
  if #s > n then
    s = s:sub(1, n - 1) .. "…"
  end
  return s
end

---Lists past runs (newest first); the chosen one opens in a scratch buffer.
function M.history()
  M.call("get_execution_history", { limit = 100 }, function(sc, err)
    if err then
      return notify(err, vim.log.levels.ERROR)
    end
    local items = {}
    for i = #sc.history, 1, -1 do
      table.insert(items, sc.history[i])
    end
    if #items == 0 then
      return notify("Claude: no history yet")
    end
    vim.ui.select(items, {
      prompt = ("Claude history (%d)"):format(sc.total_entries),
      format_item = function(e)
        return ("%s %s %s"):format(
          (e.timestamp or ""):sub(1, 19):gsub("T", " "),
          e.success and "✓" or "✗",
          first_line(e.prompt, 70)
        )
      end,
    }, function(choice)
      if choice then
        M.show(choice)
      end
    end)
  end)
end

---Lines describing the current session and the run statistics.
---@param cb fun(lines: string[]?, err: string?)
function M.session_lines(cb)
  M.call("get_execution_stats", {}, function(st, err)
    if err then
      return cb(nil, err)
    end
    local lines = {
      ("Claude session: %s"):format(st.current_session_id or "(none: the next run starts a new conversation)"),
      ("  runs: %d (%d ok, %d failed) since %s"):format(st.runs, st.successes, st.failures, st.since or "-"),
      ("  cost: $%.4f · tokens in %d / out %d"):format(
        st.total_cost_usd or 0,
        st.input_tokens or 0,
        st.output_tokens or 0
      ),
    }
    if st.mean_execution_time then
      table.insert(lines, ("  mean run: %.1f s"):format(st.mean_execution_time))
    end
    if active() > 0 then
      table.insert(lines, ("  in progress here: %d"):format(active()))
    end
    cb(lines)
  end)
end

-- A window, not the command line: no hit-enter prompt (claude_context.util.output).
local function echo(lines)
  require("claude_context.util.output").show(lines, { title = "Claude session" })
end

---Registers the subcommands on `commands` (claude_context.commands).
function M.register_commands(commands)
  commands.register("ask", {
    desc = "ask Claude (with a range: the lines go along); the answer opens in a scratch buffer",
    run = function(o, args)
      M.ask(table.concat(args, " "), { range = o.range, line1 = o.line1, line2 = o.line2, buf = 0 })
    end,
  })
  commands.register("history", {
    desc = "pick a past Claude run to open",
    run = function()
      M.history()
    end,
  })
  commands.register("session", {
    desc = "show the current Claude session and run statistics",
    run = function()
      M.session_lines(function(lines, err)
        if err then
          return notify(err, vim.log.levels.ERROR)
        end
        echo(lines)
      end)
    end,
  })
  commands.register("reset", {
    desc = "forget the Claude session: the next ask starts a new conversation",
    run = function()
      M.call("reset_session", {}, function(sc, err)
        notify(err or sc.message, err and vim.log.levels.ERROR or nil)
      end)
    end,
  })
  commands.register("cancel", {
    desc = "cancel the Claude run in progress and those waiting (or the edit in place under way)",
    run = function()
      -- An edit in place streaming: that is what the person stops.
      local edit = package.loaded["claude_context.edit"]
      if edit and edit.cancel() then
        return
      end
      M.call("cancel_claude_execution", {}, function(sc, err)
        notify(err or sc.message, err and vim.log.levels.ERROR or nil)
      end)
    end,
  })
end

return M
