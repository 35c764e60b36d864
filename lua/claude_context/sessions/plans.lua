---@mod claude_context.sessions.plans Claude's plans and questions, answered in Neovim
---
--- The bridge's `plan_review` request (from the PreToolUse hook of `ExitPlanMode` and
--- `AskUserQuestion` the plugin adds to the sessions it starts, see claude_context.sessions.hooks):
---
--- * A plan opens in a Markdown buffer (`claude-plan://<session>`, 'buftype' acwrite, in a new
---   tab or split: `sessions.plan_window`). `:w` of the unchanged plan approves it and Claude
---   proceeds; `:w` of an edited plan (changed lines, comments written into it) declines it with
---   the person's changes as the reason, and Claude revises; closing it unwritten (`:q!`,
---   `:bwipeout!`) declines. The buffer closes once decided.
--- * Questions are asked one by one with `vim.ui.select`; cancelling one leaves them all to the
---   terminal.
---
--- The handler returns at once: the decision is the request's later answer. When Claude stops
--- waiting (the hook's timeout, Esc in the terminal) the review closes by itself.

local M = {}

---The bridge's `plan_review` request (the PreToolUse hook's input).
---@class claude_context.PlanRequest
---@field session_id string?
---@field terminal string? The plugin's terminal the session runs in
---@field tool "ExitPlanMode"|"AskUserQuestion"|string
---@field input any The tool's input (untrusted): `plan`, or `questions`

---The answer to a plan review: approve, revise (with the edited plan), decline, the questions'
---answers, or pass (the terminal asks).
---@class claude_context.PlanDecision
---@field decision "approve"|"revise"|"decline"|"answers"|"pass"
---@field text string? The edited plan (`revise`)
---@field answers table<string, string>? By question (`answers`)

---A review open now.
---@class claude_context.PlanOpen
---@field session string?
---@field terminal string?
---@field tool string

---Reviews open now, by buffer.
---@type table<integer, claude_context.PlanOpen>
M.open = {}

---The last decisions sent (newest last, at most 20), for :checkhealth-like inspection and tests.
---@type {session: string?, decision: string}[]
M.decided = {}

local function remember(session, decision)
  table.insert(M.decided, { session = session, decision = decision.decision })
  if #M.decided > 20 then
    table.remove(M.decided, 1)
  end
end

---`s` split in lines, without the empty line after a final newline.
---@param s string
---@return string[]
local function lines_of(s)
  local lines = vim.split(s, "\n", { plain = true })
  if #lines > 1 and lines[#lines] == "" then
    table.remove(lines)
  end
  return lines
end

---A buffer name for a review of `session` not taken yet.
---@param session string
---@return string
local function buffer_name(session)
  local short = tostring(session or ""):sub(1, 8)
  if short == "" then
    short = "session"
  end
  local base = "claude-plan://" .. short
  local name, n = base, 1
  while vim.fn.bufexists(name) == 1 do
    n = n + 1
    name = ("%s-%d"):format(base, n)
  end
  return name
end

---Opens `buf` where `sessions.plan_window` says.
---@param buf integer
local function show(buf)
  local where = require("claude_context.config.sessions").options().plan_window or "tab"
  -- Out of the terminal's insert mode first: the plan gets the keys.
  if vim.api.nvim_get_mode().mode == "t" then
    vim.cmd.stopinsert()
  end
  local cmd = ({ tab = "tab sbuffer %d", split = "sbuffer %d", vsplit = "vertical sbuffer %d" })[where]
  vim.cmd((cmd or "tab sbuffer %d"):format(buf))
end

---The plan's Markdown buffer (written with `:w`, never to a file), holding `original`.
---@param params claude_context.PlanRequest
---@param original string[]
---@return integer buf
local function plan_buffer(params, original)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, buffer_name(params.session_id))
  vim.bo[buf].buftype = "acwrite"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, original)
  vim.bo[buf].modified = false
  vim.bo[buf].filetype = "markdown"
  vim.b[buf].claude_context_plan = { session = params.session_id, terminal = params.terminal }
  return buf
end

---The plan buffer's answers: `:w` approves it (unchanged) or asks for a revision (edited);
---closing it unwritten declines it. `finish(decision, close)` takes the answer; `decided()` says
---whether one was given.
---@param buf integer
---@param original string[]
---@param finish fun(decision: claude_context.PlanDecision, close: boolean)
---@param decided fun(): boolean
local function watch_plan(buf, original, finish, decided)
  local group = vim.api.nvim_create_augroup("ClaudeContextPlan" .. buf, { clear = true })
  vim.api.nvim_create_autocmd("BufWriteCmd", {
    group = group,
    buffer = buf,
    callback = function(ev)
      local now = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
      if ev.match ~= "" and ev.match ~= vim.api.nvim_buf_get_name(buf) then
        -- `:w other.md`: a copy, not an answer.
        local ok, err = pcall(vim.fn.writefile, now, ev.match)
        if not ok or err ~= 0 then
          vim.notify("claude-context: cannot write " .. ev.match, vim.log.levels.ERROR)
        end
        return
      end
      vim.bo[buf].modified = false
      if vim.deep_equal(now, original) then
        vim.notify("claude-context: plan approved; Claude proceeds", vim.log.levels.INFO)
        finish({ decision = "approve" }, true)
      else
        vim.notify("claude-context: your changes went to Claude; it revises the plan", vim.log.levels.INFO)
        finish({ decision = "revise", text = table.concat(now, "\n") .. "\n" }, true)
      end
    end,
    desc = "claude-context: :w answers Claude's plan",
  })
  vim.api.nvim_create_autocmd({ "BufWipeout", "BufUnload" }, {
    group = group,
    buffer = buf,
    once = true,
    callback = function()
      pcall(vim.api.nvim_del_augroup_by_id, group)
      if not decided() then
        vim.schedule(function()
          vim.notify("claude-context: plan closed without writing: declined", vim.log.levels.INFO)
        end)
        finish({ decision = "decline" }, false)
      end
    end,
    desc = "claude-context: closing Claude's plan unwritten declines it",
  })
end

---Opens the plan `plan` of `session` for review; `decide(decision)` is called once.
---@param params claude_context.PlanRequest
---@param decide fun(decision: claude_context.PlanDecision)
---@return fun() cancel closes the review without deciding
function M.review_plan(params, decide)
  local plan = type(params.input) == "table" and params.input.plan or ""
  local original = lines_of(plan)
  local buf = plan_buffer(params, original)
  M.open[buf] = { session = params.session_id, terminal = params.terminal, tool = params.tool }

  local decided = false
  local function finish(decision, close)
    if decided then
      return
    end
    decided = true
    M.open[buf] = nil
    remember(params.session_id, decision)
    decide(decision)
    if close then
      vim.schedule(function()
        if vim.api.nvim_buf_is_valid(buf) then
          pcall(vim.api.nvim_buf_delete, buf, { force = true })
        end
      end)
    end
  end
  watch_plan(buf, original, finish, function()
    return decided
  end)

  show(buf)
  vim.notify(
    "claude-context: Claude's plan — :w approves it; edit it (or write comments into it) and :w to ask for a revision; :q! declines",
    vim.log.levels.INFO
  )
  return function()
    if decided then
      return
    end
    decided = true
    M.open[buf] = nil
    vim.schedule(function()
      if vim.api.nvim_buf_is_valid(buf) then
        pcall(vim.api.nvim_buf_delete, buf, { force = true })
      end
      vim.notify(
        "claude-context: Claude stopped waiting for the plan review; answer in its terminal",
        vim.log.levels.WARN
      )
    end)
  end
end

---Asks `params.input.questions` one by one with vim.ui.select; `decide` gets the answers, or
---`pass` when the person cancels one.
---@param params claude_context.PlanRequest
---@param decide fun(decision: claude_context.PlanDecision)
---@return fun() cancel
function M.ask_questions(params, decide)
  local questions = type(params.input) == "table" and params.input.questions or {}
  local answers = {}
  local cancelled = false
  local function ask(i)
    if cancelled then
      return
    end
    if i > #questions then
      remember(params.session_id, { decision = "answers" })
      decide({ decision = "answers", answers = answers })
      return
    end
    local q = questions[i]
    local options = type(q.options) == "table" and q.options or {}
    local prompt = q.question
    if type(q.header) == "string" and q.header ~= "" then
      prompt = ("[%s] %s"):format(q.header, q.question)
    end
    vim.ui.select(options, {
      prompt = "Claude asks: " .. prompt,
      kind = "claude_context_question",
      format_item = function(o)
        if type(o.description) == "string" and o.description ~= "" then
          return ("%s — %s"):format(o.label, o.description)
        end
        return tostring(o.label)
      end,
    }, function(choice)
      if cancelled then
        return
      end
      if not choice then
        remember(params.session_id, { decision = "pass" })
        decide({ decision = "pass" })
        return
      end
      answers[q.question] = choice.label
      vim.schedule(function()
        ask(i + 1)
      end)
    end)
  end
  vim.schedule(function()
    ask(1)
  end)
  return function()
    cancelled = true
  end
end

---The `plan_review` handler.
---@param params claude_context.PlanRequest
---@param respond fun(result: claude_context.PlanDecision?, err: string?)
---@return fun()? cancel
function M.handle(params, respond)
  local o = require("claude_context.config.sessions").options()
  local function decide(d)
    respond(d)
  end
  if params.tool == "ExitPlanMode" and o.plan_review ~= false then
    return M.review_plan(params, decide)
  elseif params.tool == "AskUserQuestion" and o.questions ~= false then
    return M.ask_questions(params, decide)
  end
  respond({ decision = "pass" })
end

return M
