---@mod claude_context.terminal.input Text into Claude's prompt
---
--- Pastes into Claude's terminal, `:ClaudeContext send-text` and `:ClaudeContext compose` all
--- type their text as one bracketed paste (its newlines stay in the prompt).

local M = {}

local sessions = require("claude_context.terminal.sessions")
local notify = require("claude_context.util.notify")

---Bytes per chansend of a paste: big pastes go in slices (one write of megabytes is what
---truncated streamed pastes before Neovim 0.12.2).
local PASTE_CHUNK = 4096

---The bytes a paste must not carry raw: C0 controls but tab and newline, DEL, and every byte of
---a non-ASCII character (looked at one character at a time).
local SUSPECT = "[%z\1-\8\11-\31\127-\255]"

---The length of the valid UTF-8 character at `i` of `s` and its code point, or nil (a lone or
---stray byte, an overlong form, a surrogate, beyond U+10FFFF, or cut short).
local function utf8_char(s, i)
  local b = s:byte(i)
  local len, cp, min
  if b >= 0xC2 and b <= 0xDF then
    len, cp, min = 2, b - 0xC0, 0x80
  elseif b >= 0xE0 and b <= 0xEF then
    len, cp, min = 3, b - 0xE0, 0x800
  elseif b >= 0xF0 and b <= 0xF4 then
    len, cp, min = 4, b - 0xF0, 0x10000
  else
    return nil
  end
  for k = i + 1, i + len - 1 do
    local c = s:byte(k)
    if not c or c < 0x80 or c > 0xBF then
      return nil
    end
    cp = cp * 64 + (c - 0x80)
  end
  if cp < min or cp > 0x10FFFF or (cp >= 0xD800 and cp <= 0xDFFF) then
    return nil
  end
  return len, cp
end

---`text` made safe to paste into a terminal: the only paste end Claude's terminal sees is the one
---`send_text` puts at the end, and nothing in the text can act as a key or an escape sequence.
---Kept: printable text (valid UTF-8), tab and newline (a CR LF or a lone CR becomes a newline:
---the prompt's own line break). Every other control is written out as text: the C0 controls and
---DEL as `\xNN` (ESC is `\x1b`, so `ESC [201~` arrives as the 9 characters `\x1b[201~`), the
---C1 controls U+0080–U+009F (CSI among them) as `\uNNNN`, and a byte that is not UTF-8 as
---`\xNN`. File names and the person's text alike go through it.
---@param text string
---@return string
function M.paste_safe(text)
  if not text:find(SUSPECT) then
    return text
  end
  text = text:gsub("\r\n?", "\n")
  local out, i, n = {}, 1, #text
  while i <= n do
    local s = text:find(SUSPECT, i)
    if not s then
      out[#out + 1] = text:sub(i)
      break
    end
    local b = text:byte(s)
    local len, cp
    if b >= 0x80 then
      len, cp = utf8_char(text, s)
    end
    if len and cp > 0x9F then
      -- A printable character: keep it with the run it is in.
      out[#out + 1] = text:sub(i, s + len - 1)
      i = s + len
    else
      out[#out + 1] = text:sub(i, s - 1)
      if len then
        out[#out + 1] = ("\\u%04x"):format(cp)
        i = s + len
      else
        out[#out + 1] = ("\\x%02x"):format(b)
        i = s + 1
      end
    end
  end
  return table.concat(out)
end

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
  -- Nothing in the text may end the paste early or act as keys (M.paste_safe).
  text = M.paste_safe(text)
  local job = state.job
  local sent = pcall(function()
    vim.fn.chansend(job, "\27[200~")
    local i = 1
    while i <= #text do
      -- A slice ends on a character's boundary (never inside a UTF-8 sequence).
      local j = math.min(i + PASTE_CHUNK - 1, #text)
      while j > i and j < #text do
        local nb = text:byte(j + 1)
        if nb < 0x80 or nb > 0xBF then
          break
        end
        j = j - 1
      end
      vim.fn.chansend(job, text:sub(i, j))
      i = j + 1
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
---@param o claude_context.CommandOpts
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
    local target = require("claude_context.util.windows").edit_target()
    vim.api.nvim_set_current_win(target)
    vim.cmd("belowright 10split")
    vim.api.nvim_win_set_buf(0, buf)
  end
  return buf
end

return M
