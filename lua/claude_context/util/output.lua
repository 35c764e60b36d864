---@mod claude_context.util.output Output that never causes a hit-enter prompt
---
--- The plugin's commands never echo several lines (Neovim would wait at "Press ENTER", and
--- while it waits no request of Claude's that needs the editor can run). A line that fits in
--- the command line goes through `vim.notify`; anything longer opens in a floating scratch
--- window that `q` (or `<Esc>`) closes, and that closes itself when left.

local M = {}

---@class claude_context.OutputOpts
---@field title string? the window's title
---@field level integer? vim.log.levels for a one-liner (default INFO)
---@field float boolean? always a window, even for one line (text meant to be copied)
---@field filetype string? the scratch buffer's filetype

---The window shown last (closed when another one opens).
---@type integer?
M.win = nil

---Closes the output window, if one is open.
function M.close()
  if M.win and vim.api.nvim_win_is_valid(M.win) then
    pcall(vim.api.nvim_win_close, M.win, true)
  end
  M.win = nil
end

---Does `line` fit in the command line without a hit-enter prompt?
---@param line string
---@return boolean
local function fits(line)
  local room = vim.v.echospace
  if type(room) ~= "number" or room <= 0 then
    room = vim.o.columns - 12
  end
  return not line:find("\n", 1, true) and vim.fn.strdisplaywidth(line) < room
end

---Opens `lines` in a floating scratch window (focused; `q` / `<Esc>` close it).
---@param lines string[]
---@param opts claude_context.OutputOpts?
---@return integer buf, integer win
function M.float(lines, opts)
  opts = opts or {}
  M.close()
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].modifiable = false
  if opts.filetype then
    vim.bo[buf].filetype = opts.filetype
  end
  local width = 20
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l))
  end
  if opts.title then
    width = math.max(width, vim.fn.strdisplaywidth(opts.title) + 2)
  end
  local cols, rows = vim.o.columns, vim.o.lines - vim.o.cmdheight
  width = math.max(1, math.min(width + 1, cols - 4))
  local height = math.max(1, math.min(#lines, rows - 4))
  local cfg = {
    relative = "editor",
    width = width,
    height = height,
    row = math.max(0, math.floor((rows - height) / 2) - 1),
    col = math.max(0, math.floor((cols - width) / 2)),
    style = "minimal",
    border = "rounded",
  }
  if opts.title then
    cfg.title = " " .. opts.title .. " "
    cfg.title_pos = "center"
  end
  local win = vim.api.nvim_open_win(buf, true, cfg)
  vim.wo[win].wrap = true
  M.win = win
  for _, key in ipairs({ "q", "<Esc>" }) do
    vim.keymap.set("n", key, M.close, { buffer = buf, nowait = true, desc = "claude-context: close" })
  end
  vim.api.nvim_create_autocmd("WinLeave", {
    buffer = buf,
    once = true,
    callback = function()
      vim.schedule(function()
        if M.win == win then
          M.close()
        end
      end)
    end,
    desc = "claude-context: the output window closes when left",
  })
  return buf, win
end

---Shows `lines`: one short line through `vim.notify`, anything more in a floating window.
---@param lines string[]
---@param opts claude_context.OutputOpts?
---@return integer? buf the window's buffer (nil when notified)
function M.show(lines, opts)
  opts = opts or {}
  if #lines == 0 then
    return nil
  end
  if #lines == 1 and not opts.float and fits(lines[1]) then
    vim.notify(lines[1], opts.level or vim.log.levels.INFO, { title = "claude-context" })
    return nil
  end
  return (M.float(lines, opts))
end

return M
