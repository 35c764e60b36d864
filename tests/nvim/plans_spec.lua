-- Plans and questions reviewed in Neovim: the real `claude-context-mcp hook PreToolUse` binary
-- sends an ExitPlanMode (or AskUserQuestion) to this Neovim's bridge and waits; the plan opens in
-- a Markdown buffer; :w unchanged approves, :w edited declines with the diff, closing it unwritten
-- declines, the hook going away closes it; questions go through vim.ui.select. The hook prints
-- Claude Code's PreToolUse answer. Also the options and the --settings entry.
local h = require("helpers")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local cc = h.cc

h.record_notify()

local PLAN = "# Plan\n\n1. read the parser\n2. rename it\n"

local function bridge_port()
  if not cc().is_running() then
    assert(cc().start({ silent = true }))
  end
  return cc().status().port
end

---Starts the hook binary as Claude Code would for a PreToolUse of `tool`; returns the process
---and a box that gets its result.
---Waits until session `id` is in `state` (status().sessions).
local function wait_state(id, state)
  wait_for(function()
    for _, s in ipairs(cc().status().sessions) do
      if s.id == id and s.state == state then
        return true
      end
    end
  end, 10000, "session " .. id .. " to be " .. state)
end

local function run_hook(tool, input, session)
  local bin = assert(require("claude_context.sessions.hooks").binary(), "claude-context-mcp is built")
  local box = {}
  local proc = vim.system({ bin, "hook", "PreToolUse" }, {
    stdin = vim.json.encode({
      session_id = session,
      transcript_path = "/tmp/t.jsonl",
      cwd = vim.fn.getcwd(),
      hook_event_name = "PreToolUse",
      permission_mode = "plan",
      tool_name = tool,
      tool_input = input,
    }),
    env = { CLAUDE_CODE_SSE_PORT = tostring(bridge_port()), CLAUDE_CONTEXT_SESSION = "main" },
  }, function(r)
    box.result = r
  end)
  return proc, box
end

local function answer(box)
  local r = wait_for(function()
    return box.result
  end, 20000, "the hook to answer")
  eq(0, r.code, r.stderr)
  if r.stdout == "" then
    return nil
  end
  return vim.json.decode(r.stdout).hookSpecificOutput
end

local function plan_buffer()
  return wait_for(function()
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(b) and vim.api.nvim_buf_get_name(b):match("^claude%-plan://") then
        return b
      end
    end
  end, 20000, "the plan buffer")
end

local function no_plan_buffer()
  wait_for(function()
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_get_name(b):match("^claude%-plan://") then
        return false
      end
    end
    return true
  end, 5000, "the plan buffer to close")
end

return {
  {
    "setup{sessions} checks the plan options; the --settings hold the review entry",
    function()
      for _, bad in ipairs({
        { sessions = { plan_review = "yes" } },
        { sessions = { questions = 1 } },
        { sessions = { plan_timeout = 0 } },
        { sessions = { plan_timeout = 1.5 } },
        { sessions = { plan_window = "float" } },
      }) do
        local okk, err = pcall(cc().setup, bad)
        ok(not okk, vim.inspect(bad))
        contains(tostring(err), "sessions.", vim.inspect(bad))
      end
      cc().setup({ sessions = { plan_timeout = 7200 } })
      bridge_port()
      local arg = assert(require("claude_context.sessions.hooks").settings_arg({ "claude" }))
      local pre = vim.json.decode(arg:match("^%-%-settings=(.+)$")).hooks.PreToolUse
      eq(2, #pre)
      eq("ExitPlanMode|AskUserQuestion", pre[2].matcher)
      eq(7200, pre[2].hooks[1].timeout)
      contains(pre[2].hooks[1].command, "claude-context-mcp")
      eq({ "hook", "PreToolUse" }, pre[2].hooks[1].args)
      eq(nil, pre[2].hooks[1].async, "Claude waits for the decision")
      cc().setup({ sessions = { plan_review = false } })
      pre = vim.json.decode(
        require("claude_context.sessions.hooks").settings_arg({ "claude" }):match("^%-%-settings=(.+)$")
      ).hooks.PreToolUse
      eq("AskUserQuestion", pre[2].matcher)
      cc().setup({ sessions = { plan_review = false, questions = false } })
      pre = vim.json.decode(
        require("claude_context.sessions.hooks").settings_arg({ "claude" }):match("^%-%-settings=(.+)$")
      ).hooks.PreToolUse
      eq(1, #pre)
      cc().setup({})
      eq(3600, require("claude_context.config.sessions").options().plan_timeout)
    end,
  },
  {
    "the plan opens as Markdown; :w unchanged approves with the input given back",
    function()
      bridge_port()
      local tabs = #vim.api.nvim_list_tabpages()
      local _, box = run_hook("ExitPlanMode", { plan = PLAN, planFilePath = "/tmp/plan.md" }, "s-approve")
      local buf = plan_buffer()
      eq("markdown", vim.bo[buf].filetype)
      eq("acwrite", vim.bo[buf].buftype)
      eq({ "# Plan", "", "1. read the parser", "2. rename it" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
      eq(buf, vim.api.nvim_get_current_buf(), "the plan has the focus")
      eq(tabs + 1, #vim.api.nvim_list_tabpages(), "in a new tab")
      -- Waiting for the person meanwhile.
      wait_state("s-approve", "waiting")
      vim.cmd.write()
      local out = answer(box)
      eq("allow", out.permissionDecision)
      eq(PLAN, out.updatedInput.plan)
      eq("/tmp/plan.md", out.updatedInput.planFilePath)
      no_plan_buffer()
      eq(tabs, #vim.api.nvim_list_tabpages(), "its tab closed")
      -- Approved: Claude goes ahead, the session works again (no hook after the tool tells it).
      wait_state("s-approve", "working")
    end,
  },
  {
    "an edited plan written with :w declines with the diff and the edit",
    function()
      bridge_port()
      local _, box = run_hook("ExitPlanMode", { plan = PLAN }, "s-revise")
      local buf = plan_buffer()
      vim.api.nvim_buf_set_lines(buf, 3, 3, false, { "   > keep the old name as an alias" })
      -- A copy written elsewhere is not an answer.
      local copy = h.tmpdir() .. "/copy.md"
      vim.cmd.write(copy)
      eq("   > keep the old name as an alias", vim.fn.readfile(copy)[4])
      ok(vim.api.nvim_buf_is_valid(buf) and box.result == nil, "still open")
      vim.cmd.write()
      local out = answer(box)
      eq("deny", out.permissionDecision)
      contains(out.permissionDecisionReason, "+   > keep the old name as an alias\n")
      contains(out.permissionDecisionReason, " 1. read the parser\n")
      contains(out.permissionDecisionReason, "ExitPlanMode")
      no_plan_buffer()
      eq(
        "revise",
        require("claude_context.sessions.plans").decided[#require("claude_context.sessions.plans").decided].decision
      )
    end,
  },
  {
    "closing the plan unwritten declines; the hook going away closes it",
    function()
      bridge_port()
      local _, box = run_hook("ExitPlanMode", { plan = PLAN }, "s-decline")
      local buf = plan_buffer()
      vim.api.nvim_buf_set_lines(buf, 0, 1, false, { "# Plan (edited, not written)" })
      vim.cmd("quit!")
      local out = answer(box)
      eq("deny", out.permissionDecision)
      contains(out.permissionDecisionReason, "without approving")
      no_plan_buffer()

      local proc = run_hook("ExitPlanMode", { plan = PLAN }, "s-gone")
      plan_buffer()
      proc:kill("sigkill")
      no_plan_buffer()
    end,
  },
  {
    "questions are answered with vim.ui.select; cancelling leaves them to the terminal",
    function()
      bridge_port()
      local orig = vim.ui.select
      local asked = {}
      vim.ui.select = function(items, opts, on_choice)
        table.insert(asked, { prompt = opts.prompt, item = opts.format_item(items[2]) })
        on_choice(items[2], 2)
      end
      local questions = {
        {
          question = "Which color?",
          header = "Color",
          multiSelect = false,
          options = { { label = "Red", description = "warm" }, { label = "Blue", description = "cold" } },
        },
        {
          question = "Which size?",
          header = "Size",
          multiSelect = false,
          options = { { label = "S" }, { label = "L" } },
        },
      }
      local _, box = run_hook("AskUserQuestion", { questions = questions }, "s-ask")
      local out = answer(box)
      eq("allow", out.permissionDecision)
      eq({ ["Which color?"] = "Blue", ["Which size?"] = "L" }, out.updatedInput.answers)
      eq(2, #asked)
      contains(asked[1].prompt, "Which color?")
      eq("Blue — cold", asked[1].item)

      vim.ui.select = function(_, _, on_choice)
        on_choice(nil)
      end
      _, box = run_hook("AskUserQuestion", { questions = questions }, "s-ask-2")
      eq(nil, answer(box), "nothing printed: the terminal asks")
      vim.ui.select = orig
    end,
  },
}
