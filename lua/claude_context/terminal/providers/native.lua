---@mod claude_context.terminal.providers.native Claude in a window of this Neovim
---
--- A terminal buffer (|jobstart()| with `term = true`) in a split on `terminal.side`, or a
--- floating window.

local M = {}

local function dim(size, total)
  local n = size < 1 and math.floor(total * size + 0.5) or math.floor(size)
  return math.max(1, math.min(n, total))
end

---Opens a window for `buf` as `opts.side` says; returns its id.
---@param buf integer
---@param opts claude_context.TerminalConfig
---@return integer win
local function open_window(buf, opts)
  local win
  if opts.side == "float" then
    local cols, lines = vim.o.columns, vim.o.lines - vim.o.cmdheight - 1
    local w, h = dim(opts.float.width, cols), dim(opts.float.height, lines)
    win = vim.api.nvim_open_win(buf, true, {
      relative = "editor",
      width = math.max(1, w - 2),
      height = math.max(1, h - 2),
      col = math.floor((cols - w) / 2),
      row = math.floor((lines - h) / 2),
      border = opts.float.border,
      style = "minimal",
    })
  else
    local vertical = opts.side == "left" or opts.side == "right"
    local cfg = { split = opts.side == "top" and "above" or opts.side == "bottom" and "below" or opts.side, win = -1 }
    if vertical then
      cfg.width = dim(opts.size, vim.o.columns)
    else
      cfg.height = dim(opts.size, vim.o.lines)
    end
    win = vim.api.nvim_open_win(buf, true, cfg)
    vim.wo[win].winfixwidth = vertical
    vim.wo[win].winfixheight = not vertical
  end
  vim.wo[win].number = false
  vim.wo[win].relativenumber = false
  vim.wo[win].signcolumn = "no"
  vim.wo[win].spell = false
  return win
end

---@param opts claude_context.TerminalConfig
---@return claude_context.TerminalProvider
function M.new(opts)
  -- (`open` is defined next.)
  ---@diagnostic disable-next-line: missing-fields
  local p = {} ---@type claude_context.TerminalProvider
  function p.open(cmd, env, cwd, events)
    events = events or {}
    local buf = vim.api.nvim_create_buf(false, false)
    local win = open_window(buf, opts)
    local started, job = pcall(vim.api.nvim_win_call, win, function()
      return vim.fn.jobstart(
        cmd,
        { term = true, env = env, cwd = cwd, on_stdout = events.on_output, on_exit = events.on_exit }
      )
    end)
    if not started or type(job) ~= "number" or job <= 0 then
      pcall(vim.api.nvim_win_close, win, true)
      pcall(vim.api.nvim_buf_delete, buf, { force = true })
      error(
        ("cannot start %s: %s"):format(cmd[1], started and ("jobstart returned " .. tostring(job)) or tostring(job)),
        0
      )
    end
    vim.bo[buf].bufhidden = "hide"
    if opts.auto_insert then
      vim.cmd.startinsert()
    end
    return buf, job
  end
  function p.show(buf)
    open_window(buf, require("claude_context.config.terminal").options())
  end
  return p
end

return M
