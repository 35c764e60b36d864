---@mod claude_context.terminal.input Text into Claude's prompt
---
--- Pastes into Claude's terminal, `:ClaudeContext send-text` and `:ClaudeContext compose` all
--- type their text as one bracketed paste (its newlines stay in the prompt).

local M = {}

local sessions = require("claude_context.terminal.sessions")
local notify = require("claude_context.notify")

---Bytes per chansend of a paste: big pastes go in slices (one write of megabytes is what
---truncated streamed pastes before Neovim 0.12.2).
local PASTE_CHUNK = 4096

---Types `text` into Claude's prompt as one bracketed paste, in slices of `PASTE_CHUNK` bytes;
---with `submit`, then Enter. `name`: the terminal session of that name (default: the current
---one).
---@param text string
---@param submit boolean?
---@param name string?
---@return boolean ok, string? err
function M.send_text(text, submit, name)
  local state
  if name then
    state = sessions.by_name[name] or {}
    if not sessions.job_running(state) then
      return false, ("claude's terminal %q is not running"):format(name)
    end
  else
    sessions.sync_tab()
    state = sessions.current
    if not sessions.job_running() then
      return false, "no claude terminal is running (:ClaudeContext open)"
    end
  end
  if text == "" then
    return false, "nothing to send"
  end
  local job = state.job
  local sent = pcall(function()
    vim.fn.chansend(job, "\27[200~")
    for i = 1, #text, PASTE_CHUNK do
      vim.fn.chansend(job, text:sub(i, i + PASTE_CHUNK - 1))
    end
    vim.fn.chansend(job, "\27[201~")
  end)
  if not sent then
    return false, "claude's terminal did not take the text"
  end
  require("claude_context.ide.commands").send_complete({ kind = "text", bytes = #text, submitted = submit == true })
  if submit then
    -- Apart from the paste, so that the CLI sees a key press, not pasted text.
    vim.defer_fn(function()
      pcall(vim.fn.chansend, job, "\r")
    end, 50)
  end
  return true
end

local paste_installed, paste_acc
---Wraps |vim.paste()| once: a paste into Claude's terminal (Terminal-Job mode) is gathered over
---its phases and sent as one bracketed paste in slices (see send_text); other pastes are
---untouched.
function M.install_paste()
  if paste_installed then
    return
  end
  paste_installed = true
  local orig = vim.paste
  vim.paste = function(lines, phase)
    local buf = vim.api.nvim_get_current_buf()
    if not (buf == sessions.current.buf and vim.api.nvim_get_mode().mode == "t" and sessions.job_running()) then
      if paste_acc and phase == 3 then
        paste_acc = nil
      end
      return orig(lines, phase)
    end
    if phase == -1 or phase == 1 or not paste_acc then
      paste_acc = {}
    end
    table.insert(paste_acc, table.concat(lines, "\n"))
    if phase == -1 or phase == 3 then
      local text = table.concat(paste_acc)
      paste_acc = nil
      M.send_text(text)
    end
    return true
  end
end

---`:[range]ClaudeContext send-text {text}`: the range's lines and/or {text}, typed into Claude's
---prompt (not sent: you add to it and press Enter).
---@param o table user command opts
---@param args string[]
function M.send_text_command(o, args)
  local parts = {}
  if o.range and o.range > 0 then
    table.insert(parts, table.concat(vim.api.nvim_buf_get_lines(0, o.line1 - 1, o.line2, false), "\n"))
  end
  if #args > 0 then
    table.insert(parts, table.concat(args, " "))
  end
  if #parts == 0 then
    return notify.error("send-text: usage: :[range]ClaudeContext send-text {text}")
  end
  local ok, err = M.send_text(table.concat(parts, "\n"))
  if not ok then
    notify.error("send-text: " .. err)
  end
end

---`:ClaudeContext compose`: a buffer to write a long prompt in; `:w` sends it to Claude (and
---empties the buffer), `:q` keeps the draft for next time.
---@return integer buf
function M.compose()
  local name = "claude-compose://" .. vim.fn.fnamemodify(vim.fn.getcwd(), ":t")
  local buf
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b) == name and vim.b[b].claude_context_compose then
      buf = b
    end
  end
  if not buf then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, name)
    vim.bo[buf].buftype = "acwrite"
    vim.bo[buf].bufhidden = "hide"
    vim.bo[buf].swapfile = false
    vim.bo[buf].filetype = "markdown"
    vim.b[buf].claude_context_compose = true
    vim.api.nvim_create_autocmd("BufWriteCmd", {
      buffer = buf,
      callback = function()
        local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
        local ok, err = M.send_text(text, true)
        if not ok then
          notify.error("compose: " .. err .. " (the draft is kept)")
          return
        end
        vim.api.nvim_buf_set_lines(buf, 0, -1, false, {})
        vim.bo[buf].modified = false
        notify("compose: sent to Claude")
      end,
      desc = "claude-context: send the prompt to Claude",
    })
  end
  local wins = vim.fn.win_findbuf(buf)
  if #wins > 0 then
    vim.api.nvim_set_current_win(wins[1])
  else
    local target = require("claude_context.windows").edit_target()
    vim.api.nvim_set_current_win(target)
    vim.cmd("belowright 10split")
    vim.api.nvim_win_set_buf(0, buf)
  end
  return buf
end

return M
