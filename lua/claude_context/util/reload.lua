---@mod claude_context.util.reload Reload buffers Claude changed on disk
---
--- `:checktime` on FocusGained, BufEnter and TermLeave (option `terminal.reload`, default on).
--- Kept apart from `claude_context.terminal` so that setup() can install it without loading
--- the terminal module (start-up time: see BENCHMARKS.md).

local M = {}

local group

---`:checktime` now, unless a command line is being edited.
function M.checktime()
  if vim.fn.getcmdwintype() ~= "" or vim.api.nvim_get_mode().mode:sub(1, 1) == "c" then
    return
  end
  pcall(vim.cmd.checktime)
end

---Installs the reload autocmds (FocusGained, BufEnter, TermLeave); idempotent.
function M.install()
  if group then
    return
  end
  group = vim.api.nvim_create_augroup("ClaudeContextReload", { clear = true })
  vim.api.nvim_create_autocmd({ "FocusGained", "BufEnter", "TermLeave" }, {
    group = group,
    callback = function(ev)
      -- BufEnter of the terminal itself would check every buffer on each toggle: cheap, fine.
      if ev.event == "BufEnter" and vim.bo[ev.buf].buftype ~= "" and vim.bo[ev.buf].buftype ~= "terminal" then
        return
      end
      -- Inside an autocommand :checktime is postponed by Neovim: run it right after.
      vim.schedule(M.checktime)
    end,
    desc = "claude-context: reload buffers Claude changed on disk",
  })
end

function M.uninstall()
  if group then
    pcall(vim.api.nvim_del_augroup_by_id, group)
    group = nil
  end
end

return M
