---@mod claude_context.edit.input The one-line prompt of an edit without an instruction
---
--- A small float below the cursor: type the instruction, <CR> sends it, <Esc> (or <C-c>) closes
--- it; <Up> and <Down> walk the earlier instructions.

local M = {}

---The prompt's window while it is open.
---@type integer?
M.win = nil

---Opens the prompt; `on_submit(text)` gets a non-empty instruction.
---@param history string[] earlier instructions, oldest first
---@param on_submit fun(text: string)
---@param title string?
function M.ask(history, on_submit, title)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  local width = math.max(20, math.min(72, vim.o.columns - 6))
  local win = vim.api.nvim_open_win(buf, true, {
    relative = "cursor",
    row = 1,
    col = 0,
    width = width,
    height = 1,
    style = "minimal",
    border = "rounded",
    title = " " .. (title or "Claude: edit") .. " ",
    title_pos = "left",
  })
  M.win = win
  local idx = #history + 1
  local typed = ""
  local function close()
    M.win = nil
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_close(win, true)
    end
    vim.cmd("stopinsert")
  end
  local function set(text)
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { text })
    vim.api.nvim_win_set_cursor(win, { 1, #text })
  end
  local function walk(d)
    if idx == #history + 1 then
      typed = vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] or ""
    end
    idx = math.max(1, math.min(#history + 1, idx + d))
    set(history[idx] or typed)
  end
  local function submit()
    local text = vim.trim(vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] or "")
    close()
    if text ~= "" then
      vim.schedule(function()
        on_submit(text)
      end)
    end
  end
  local o = { buffer = buf, nowait = true }
  vim.keymap.set({ "i", "n" }, "<CR>", submit, o)
  vim.keymap.set({ "i", "n" }, "<Up>", function()
    walk(-1)
  end, o)
  vim.keymap.set({ "i", "n" }, "<Down>", function()
    walk(1)
  end, o)
  vim.keymap.set("n", "<Esc>", close, o)
  vim.keymap.set({ "i", "n" }, "<C-c>", close, o)
  vim.api.nvim_create_autocmd("WinLeave", {
    buffer = buf,
    once = true,
    callback = function()
      vim.schedule(close)
    end,
  })
  vim.cmd("startinsert!")
  return buf, win
end

return M
