-- claude-context.nvim: defines :ClaudeContext cheaply. Nothing native is loaded and no server
-- starts here; that happens in require("claude_context").setup() or on the first command.
if vim.g.loaded_claude_context then
  return
end
vim.g.loaded_claude_context = true

vim.api.nvim_create_user_command("ClaudeContext", function(o)
  require("claude_context.commands").run(o)
end, {
  nargs = "*",
  range = true,
  bang = true,
  desc = "claude-context: bridge between Neovim and Claude Code",
  complete = function(arglead, cmdline)
    return require("claude_context.commands").complete(arglead, cmdline)
  end,
})

-- Edit in place as an operator (over a motion or a Visual selection): `.` repeats the last
-- instruction on a new range. The feature loads on first use.
vim.keymap.set({ "n", "x" }, "<Plug>(claude-context-edit)", function()
  return require("claude_context.edit").operator()
end, { expr = true, desc = "claude-context: edit in place (operator)" })

-- A Claude turn ended and its end checkpoint exists: its changes become the active review
-- (signs; the view with review.auto_open). The listener is the review's
-- (claude_context.review.turn_end); the review's code loads only then.
require("claude_context.review.turn_end").start()

-- setup() has taken effect: claudecode.nvim's commands and events (claudecode.commands), and the
-- once-a-session check for a second bridge on the project.
vim.api.nvim_create_autocmd("User", {
  group = vim.api.nvim_create_augroup("ClaudeContextSetupDone", { clear = true }),
  pattern = "ClaudeContextSetup",
  callback = function()
    require("claude_context.claudecode").apply()
  end,
  desc = "claude-context: apply the claudecode options",
})
