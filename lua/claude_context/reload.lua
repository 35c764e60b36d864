---@mod claude_context.reload Reload buffers Claude changed on disk
---
--- `:checktime` on FocusGained, BufEnter and TermLeave (option `terminal.reload`, default on):
--- entering a file's buffer checks that buffer; the others check every buffer, in slices.
--- Kept apart from `claude_context.terminal` so that setup() can install it without loading
--- the terminal module (start-up time: see BENCHMARKS.md).

local M = {}

local group

---Milliseconds of buffer checks per event-loop turn in a check of every buffer.
M.slice_ms = 2

---Checks of every buffer started, and the event-loop turns they took (tests).
M.full_checks, M.turns = 0, 0

local checking, again = false, false

---`:checktime` for `buf` only, or without `buf` for every loaded file buffer a slice of ~2 ms
---per event-loop turn: a whole `:checktime` stats every buffer's file in one piece (~60 ms with
---15,000 buffers, and Claude's terminal asks for one every 300 ms while it prints). Not while a
---command line is being edited. A check asked for while one runs starts again after it.
---@param buf integer?
function M.checktime(buf)
  if vim.fn.getcmdwintype() ~= "" or vim.api.nvim_get_mode().mode:sub(1, 1) == "c" then
    return
  end
  if buf then
    pcall(vim.cmd.checktime, buf)
    return
  end
  if checking then
    again = true
    return
  end
  checking, again = true, false
  M.full_checks = M.full_checks + 1
  local list, i = vim.api.nvim_list_bufs(), 0
  require("claude_context.ide.util").sliced(M.slice_ms, function()
    i = i + 1
    local b = list[i]
    if not b then
      checking = false
      if again then
        M.checktime()
      end
      return false
    end
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == "" and vim.api.nvim_buf_get_name(b) ~= "" then
      pcall(vim.cmd.checktime, b)
    end
    return true
  end, function()
    M.turns = M.turns + 1
    return true
  end)
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
      local bt = ev.event == "BufEnter" and vim.bo[ev.buf].buftype or nil
      if bt ~= nil and bt ~= "" and bt ~= "terminal" then
        return
      end
      -- Entering a file's buffer checks that buffer; entering Claude's terminal, focus and
      -- leaving Terminal mode check them all (in slices). Inside an autocommand :checktime is
      -- postponed by Neovim: run it right after.
      local only = bt == "" and ev.buf or nil
      vim.schedule(function()
        M.checktime(only)
      end)
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
