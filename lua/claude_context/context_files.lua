---@mod claude_context.context_files Editor state sent to Claude as files it reads
---
--- `:ClaudeContext add-terminal [buf]`, `add-diagnostics` and `add-quickfix` write what they
--- collect to a private file (`stdpath("run")/claude-context/context/`, 0700; written
--- atomically) and @-mention it, so Claude reads it like any file you mention.

local M = {}

local uv = vim.uv or vim.loop

---The directory the files go into (made 0700).
---@return string
function M.dir()
  local d = require("claude_context.native").mcp_config_dir() .. "/context"
  vim.fn.mkdir(d, "p", tonumber("700", 8))
  pcall(uv.fs_chmod, vim.fs.dirname(d), tonumber("700", 8))
  pcall(uv.fs_chmod, d, tonumber("700", 8))
  return d
end

---Writes `lines` to `<dir>/<name>` atomically (a temporary file renamed over it), mode 0600.
---@param name string a file name (no slashes)
---@param lines string[]
---@return string? path, string? err
function M.write(name, lines)
  name = name:gsub("[^%w%._%-]", "_")
  local path = M.dir() .. "/" .. name
  local ok, err =
    require("claude_context.install.files").write_atomic(path, table.concat(lines, "\n") .. "\n", tonumber("600", 8))
  return ok and path or nil, err
end

---Writes and mentions; reports with one line.
---@param name string
---@param lines string[]
---@param what string for the messages
---@return string? path
function M.send(name, lines, what)
  local path, err = M.write(name, lines)
  local cmds = require("claude_context.ide.commands")
  if not path then
    vim.notify(("claude-context: cannot write %s: %s"):format(what, tostring(err)), vim.log.levels.ERROR)
    return nil
  end
  local ok, msg = require("claude_context.ide.mentions").mention(path)
  vim.notify(
    "claude-context: " .. (ok and (what .. ": " .. msg) or msg),
    ok and vim.log.levels.INFO or vim.log.levels.ERROR
  )
  if ok then
    cmds.send_complete({ kind = "file", what = what, path = path })
  end
  return path
end

---The terminal buffer `:ClaudeContext add-terminal` means: {arg} (a buffer number or name),
---else the current buffer when it is a terminal, else the most recently used terminal that is
---not Claude's.
---@param arg string?
---@return integer? buf, string? err
function M.terminal_buf(arg)
  if arg and arg ~= "" then
    local b = tonumber(arg) or vim.fn.bufnr(arg)
    if not b or b < 1 or not vim.api.nvim_buf_is_valid(b) then
      return nil, ("no buffer %s"):format(arg)
    end
    if vim.bo[b].buftype ~= "terminal" then
      return nil, ("buffer %d is not a terminal"):format(b)
    end
    return b
  end
  local cur = vim.api.nvim_get_current_buf()
  if vim.bo[cur].buftype == "terminal" and not vim.b[cur].claude_context_terminal then
    return cur
  end
  local best, used = nil, -1
  for _, info in ipairs(vim.fn.getbufinfo()) do
    if
      vim.bo[info.bufnr].buftype == "terminal"
      and not vim.b[info.bufnr].claude_context_terminal
      and info.lastused > used
    then
      best, used = info.bufnr, info.lastused
    end
  end
  if not best then
    return nil, "no terminal buffer (other than Claude's) to take output from"
  end
  return best
end

---`:ClaudeContext add-terminal [buf]`: the last `n` lines of a terminal buffer.
---@param arg string?
---@param n integer
---@return string? path
function M.add_terminal(arg, n)
  local buf, err = M.terminal_buf(arg)
  if not buf then
    vim.notify("claude-context: add-terminal: " .. err, vim.log.levels.ERROR)
    return nil
  end
  local count = vim.api.nvim_buf_line_count(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, math.max(0, count - n - 200), count, false)
  while #lines > 0 and vim.trim(lines[#lines]) == "" do
    table.remove(lines)
  end
  lines = vim.list_slice(lines, math.max(1, #lines - n + 1), #lines)
  local title = vim.api.nvim_buf_get_name(buf)
  table.insert(lines, 1, ("# The last %d lines of terminal %s"):format(#lines, title))
  return M.send(("terminal-%d.txt"):format(buf), lines, ("terminal output (%d lines)"):format(#lines - 1))
end

local SEV = { "ERROR", "WARN", "INFO", "HINT" }

---`:ClaudeContext add-diagnostics`: the current buffer's diagnostics, one per line
---(`path:line:col: SEVERITY [source] message`).
---@return string? path
function M.add_diagnostics()
  local buf = vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(buf)
  local rel = name ~= "" and vim.fn.fnamemodify(name, ":~:.") or ("buffer " .. buf)
  local diags = vim.diagnostic.get(buf)
  if #diags == 0 then
    vim.notify("claude-context: add-diagnostics: " .. rel .. " has no diagnostics", vim.log.levels.WARN)
    return nil
  end
  table.sort(diags, function(a, b)
    return a.lnum < b.lnum or (a.lnum == b.lnum and a.col < b.col)
  end)
  local lines = { ("# Diagnostics of %s (%s)"):format(rel, name) }
  for _, d in ipairs(diags) do
    local msg = d.message:gsub("\n", " ")
    table.insert(
      lines,
      ("%s:%d:%d: %s%s %s"):format(
        rel,
        d.lnum + 1,
        d.col + 1,
        SEV[d.severity] or "?",
        d.source and (" [" .. d.source .. "]") or "",
        msg
      )
    )
  end
  return M.send(("diagnostics-%s.txt"):format(vim.fn.fnamemodify(rel, ":t")), lines, ("%d diagnostics"):format(#diags))
end

---`:ClaudeContext add-quickfix`: the quickfix list (`path:line:col: text`).
---@return string? path
function M.add_quickfix()
  local qf = vim.fn.getqflist({ items = 0, title = 0 })
  if #qf.items == 0 then
    vim.notify("claude-context: add-quickfix: the quickfix list is empty", vim.log.levels.WARN)
    return nil
  end
  local lines = { ("# Quickfix list: %s"):format(qf.title ~= "" and qf.title or "(untitled)") }
  for _, it in ipairs(qf.items) do
    local file = it.bufnr > 0 and vim.fn.fnamemodify(vim.api.nvim_buf_get_name(it.bufnr), ":~:.") or ""
    local text = it.text:gsub("\n", " ")
    if file ~= "" then
      table.insert(
        lines,
        ("%s:%d:%d: %s%s"):format(file, it.lnum, it.col, it.type ~= "" and (it.type .. ": ") or "", text)
      )
    else
      table.insert(lines, text)
    end
  end
  return M.send("quickfix.txt", lines, ("quickfix list (%d entries)"):format(#qf.items))
end

---Adds the subcommands.
---@param commands claude_context.Commands
function M.register(commands)
  commands.register("add-terminal", {
    desc = "send the last lines of a terminal buffer to Claude as a file",
    run = function(_, args)
      local n = 200
      local ok, t = pcall(require("claude_context.config.terminal").options)
      if ok and t.context_lines then
        n = t.context_lines
      end
      M.add_terminal(args[1], n)
    end,
    complete = function(arglead)
      local out = {}
      for _, b in ipairs(vim.api.nvim_list_bufs()) do
        if vim.bo[b].buftype == "terminal" and vim.startswith(tostring(b), arglead) then
          table.insert(out, tostring(b))
        end
      end
      return out
    end,
  })
  commands.register("add-diagnostics", {
    desc = "send the current buffer's diagnostics to Claude as a file",
    run = function()
      M.add_diagnostics()
    end,
  })
  commands.register("add-quickfix", {
    desc = "send the quickfix list to Claude as a file",
    run = function()
      M.add_quickfix()
    end,
  })
end

return M
