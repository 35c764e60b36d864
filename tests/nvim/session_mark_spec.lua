-- The state mark of a Claude terminal: the real hook binary reports a session of the terminal
-- "main"; its window's winbar shows the glyph, the state and the prompt; the tab's glyph is there
-- for a tabline; `sessions.mark = false` takes the winbar away; other windows never get it.
local h = require("helpers")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local cc = h.cc

h.record_notify()

local mark = require("claude_context.sessions.mark")

local function hook(event, input)
  local bin = assert(require("claude_context.sessions.hooks").binary(), "claude-context-mcp is built")
  input.hook_event_name = event
  input.cwd = vim.fn.getcwd()
  local r = vim
    .system({ bin, "hook", event }, {
      stdin = vim.json.encode(input),
      env = { CLAUDE_CODE_SSE_PORT = tostring(cc().status().port), CLAUDE_CONTEXT_SESSION = "main" },
    })
    :wait(20000)
  eq(0, r.code, r.stderr)
end

local function winbar_text(win)
  return vim.api.nvim_eval_statusline(vim.wo[win].winbar, { winid = win, use_winbar = true }).str
end

return {
  {
    "a Claude terminal's winbar shows its session's state; sessions.mark = false takes it away",
    function()
      cc().setup({})
      if not cc().is_running() then
        assert(cc().start({ silent = true }))
      end
      vim.cmd.cd(h.tmpdir())
      local other = vim.api.nvim_get_current_win()
      vim.cmd.vnew()
      local buf = vim.api.nvim_get_current_buf()
      local job = vim.fn.jobstart({ "sleep", "300" }, { term = true })
      vim.b[buf].claude_context_terminal = true
      require("claude_context.terminal.sessions").by_name.main = { buf = buf, job = job, name = "main" }
      local win = vim.api.nvim_get_current_win()

      hook("UserPromptSubmit", { session_id = "s-mark", prompt = "rename the parser" })
      wait_for(function()
        return winbar_text(win):find("working", 1, true)
      end, 10000, "the winbar mark")
      local text = winbar_text(win)
      contains(text, mark.glyphs.working)
      contains(text, "rename the parser")
      eq(mark.glyphs.working, mark.tab())
      eq("", vim.wo[other].winbar, "not on other windows")

      hook("Stop", { session_id = "s-mark" })
      wait_for(function()
        local t = winbar_text(win)
        return t:find("done", 1, true) or t:find("idle", 1, true)
      end, 10000, "the mark to follow the state")

      cc().setup({ sessions = { mark = false } })
      mark.refresh()
      eq("", vim.wo[win].winbar)
      cc().setup({})
      mark.refresh()
      ok(winbar_text(win) ~= "", "back on")
      pcall(vim.fn.jobstop, job)
    end,
  },
}
