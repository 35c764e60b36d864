-- Commands run from Claude's terminal open files elsewhere: :ClaudeContext memory (the bug: it
-- replaced the terminal in its window), and the window rules behind it.
local h = require("helpers")
local eq, ok, contains = h.eq, h.ok, h.contains
local cc = h.cc
local term = h.term

local messages = h.record_notify()

local dir, bank

local function pick_first()
  local orig = vim.ui.select
  vim.ui.select = function(items, _, cb)
    vim.ui.select = orig
    cb(items[1])
  end
end

return {
  {
    "setup: a memory bank document and Claude's terminal",
    function()
      dir = h.tmpdir()
      bank = dir .. "/bank"
      vim.cmd.cd(dir)
      cc().setup({
        memory_bank = { root = bank },
        claude = { cmd = "sh" },
        terminal = { args = { "-c", "cat" }, mcp_config = false, permission_mode = false, auto_insert = false },
      })
      eq(false, h.call("write_global_memory_bank", { path = "glossary.md", content = "# Glossary\n" }).isError)
      vim.cmd.edit(vim.fn.fnameescape(dir .. "/code.txt"))
      vim.cmd("ClaudeContext open")
      ok(term()._state.job, "the terminal runs")
      eq(term()._state.buf, vim.api.nvim_get_current_buf(), "the cursor is in Claude's terminal")
    end,
  },
  {
    ":ClaudeContext memory from Claude's terminal opens the document in the file window; the terminal stays",
    function()
      local twin = vim.api.nvim_get_current_win()
      local tbuf = term()._state.buf
      local wins = #vim.api.nvim_tabpage_list_wins(0)
      pick_first()
      vim.cmd("ClaudeContext memory")
      eq(tbuf, vim.api.nvim_win_get_buf(twin), "the terminal is still in its window")
      ok(vim.api.nvim_get_current_win() ~= twin, "the document is in another window")
      contains(vim.api.nvim_buf_get_name(0), "global-memory-bank/")
      eq(wins, #vim.api.nvim_tabpage_list_wins(0), "the existing file window was used, none added")
    end,
  },
  {
    "with the terminal the only window, a split is made for the document",
    function()
      vim.api.nvim_set_current_win(vim.fn.bufwinid(term()._state.buf))
      vim.cmd("only")
      local twin = vim.api.nvim_get_current_win()
      pick_first()
      vim.cmd("ClaudeContext memory")
      eq(term()._state.buf, vim.api.nvim_win_get_buf(twin))
      eq(2, #vim.api.nvim_tabpage_list_wins(0))
      contains(vim.api.nvim_buf_get_name(0), "global-memory-bank/")
      -- :tab ClaudeContext memory: a new tab page, as asked.
      vim.api.nvim_set_current_win(twin)
      pick_first()
      vim.cmd("tab ClaudeContext memory")
      eq(2, #vim.api.nvim_list_tabpages())
      contains(vim.api.nvim_buf_get_name(0), "global-memory-bank/")
      vim.cmd("tabclose")
      term().close()
    end,
  },
}
