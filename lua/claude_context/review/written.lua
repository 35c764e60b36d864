---@mod claude_context.review.written The buffers of files the review writes
---
--- The review writes a file on the native library's file thread (claude_context.review.fs);
--- the buffer showing it must neither be reloaded half-way through a series of writes nor ask
--- the person about a change the review made itself. This module keeps, per buffer, the text
--- the review wrote last and the buffer's own 'autoread' while the writes are under way.

local M = {}

local fs = require("claude_context.review.fs")

---Buffers whose file the review wrote: the text it wrote last, the buffer's own 'autoread'
---before (nil: the global one), and whether writes may still be under way.
---@type table<integer, {text:string, ar:boolean?, busy:boolean, missed?:boolean, id?:integer}>
local wrote = {}

---After our own write, buffer `buf` sees the disk change on its next check without a prompt:
---unmodified, it is reloaded (the same lines; Neovim then knows the file's new time, so a later
---`:w` does not warn); modified, it is left as it is while the disk holds what we wrote.
---
---While the review's writes are under way the buffer must not be reloaded: it already holds the
---text of the last one, and the file may hold only the earlier ones. Any timestamp check (the
---plugin's own `:checktime` on BufEnter, FocusGained, the person's) reloads an unmodified buffer
---through 'autoread' without asking FileChangedShell, so 'autoread' is off for the buffer until
---the writes are done (|M.settle|), and the FileChangedShell below keeps the buffer meanwhile.
---@param buf integer
---@param text string
function M.quiet_reload(buf, text)
  local w = wrote[buf]
  if w and not w.busy then
    w.ar = vim.api.nvim_get_option_value("autoread", { buf = buf })
    vim.bo[buf].autoread = false
  end
  if w then
    w.text, w.busy = text, true
    return
  end
  w = { text = text, ar = vim.api.nvim_get_option_value("autoread", { buf = buf }), busy = true }
  wrote[buf] = w
  vim.bo[buf].autoread = false
  w.id = vim.api.nvim_create_autocmd("FileChangedShell", {
    buffer = buf,
    callback = function()
      local cur = wrote[buf]
      if not cur then
        return true
      end
      if cur.busy and not fs.idle() then
        -- Keep the buffer (it holds the last write's text). Neovim will not ask again for
        -- this change, so the buffer is reloaded once the last write is in (|M.settle|).
        vim.v.fcs_choice = ""
        cur.missed = true
        return
      end
      wrote[buf] = nil
      if not vim.bo[buf].modified then
        vim.v.fcs_choice = "reload"
      elseif fs.read(vim.api.nvim_buf_get_name(buf)) == cur.text then
        vim.v.fcs_choice = ""
      else
        vim.v.fcs_choice = "ask"
      end
      return true
    end,
    desc = "claude-context: the review wrote this file",
  })
end

---Once no review write is under way: each written buffer gets its 'autoread' back (its
---FileChangedShell stays for the next check, then goes). An unmodified buffer whose check came
---while the writes were under way is reloaded now (the file holds the last write's text; the
---reload makes Neovim know the file's time, so a later `:w` does not warn).
function M.settle()
  for buf, w in pairs(wrote) do
    if w.busy then
      w.busy = false
      if vim.api.nvim_buf_is_valid(buf) then
        if w.ar == nil then
          vim.api.nvim_buf_call(buf, function()
            vim.cmd("set autoread<")
          end)
        else
          vim.bo[buf].autoread = w.ar
        end
        if w.missed and vim.api.nvim_buf_is_loaded(buf) and not vim.bo[buf].modified then
          wrote[buf] = nil
          pcall(vim.api.nvim_del_autocmd, w.id)
          vim.api.nvim_buf_call(buf, function()
            pcall(vim.cmd, "silent! edit")
          end)
        end
      else
        wrote[buf] = nil
      end
    end
  end
end

---After the review wrote or removed the file of `buf` as a whole: an unmodified buffer is
---wiped when the file was `removed`, else read again; a buffer with unsaved edits is left alone.
---@param buf integer?
---@param removed boolean
function M.follow(buf, removed)
  if not (buf and vim.api.nvim_buf_is_valid(buf)) or vim.bo[buf].modified then
    return
  end
  if removed then
    pcall(vim.api.nvim_buf_delete, buf, {})
  else
    vim.api.nvim_buf_call(buf, function()
      pcall(vim.cmd, "silent! edit")
    end)
  end
end

return M
