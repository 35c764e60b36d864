---@mod claude_context.ide.commands :ClaudeContext send / add / accept / reject

local M = {}

---The data of `User ClaudeContextSendComplete`: what was sent (`kind`) and its details.
---@class claude_context.SendComplete
---@field kind "mention"|"text"|"terminal"|"file"
---@field path string? The file (mention, file)
---@field line1 integer? The first line mentioned
---@field line2 integer? The last
---@field bytes integer? The text's size (text)
---@field submitted boolean? Enter was pressed after it (text)
---@field what string? What file context it was (file)

local notify = require("claude_context.ide.util").notify

local function report(ok, msg, data)
  notify(msg, ok and vim.log.levels.INFO or vim.log.levels.ERROR)
  if ok then
    M.send_complete(vim.tbl_extend("force", { kind = "mention" }, data or {}))
  end
end

---Fires `User ClaudeContextSendComplete` (after each mention or text sent to Claude).
---@param data claude_context.SendComplete
function M.send_complete(data)
  pcall(vim.api.nvim_exec_autocmds, "User", { pattern = "ClaudeContextSendComplete", modeline = false, data = data })
end

---`:[range]ClaudeContext send`: the range (or the Visual selection it came from) of the current
---file; without a range, the whole file.
function M.send(o)
  local util = require("claude_context.ide.util")
  local buf = vim.api.nvim_get_current_buf()
  if not util.is_file_buf(buf) then
    return notify("send: the current buffer is not a file", vim.log.levels.ERROR)
  end
  local path = vim.api.nvim_buf_get_name(buf)
  if o.range and o.range > 0 then
    local ok, msg = require("claude_context.ide.mentions").mention(path, o.line1 - 1, o.line2 - 1)
    report(ok, msg, { path = path, line1 = o.line1, line2 = o.line2 })
  else
    local ok, msg = require("claude_context.ide.mentions").mention(path)
    report(ok, msg, { path = path })
  end
end

---`:[range]ClaudeContext add` in a file explorer: the node under the cursor, or the nodes of
---the range (Visual selection). See claude_context.explorers.
---@param o claude_context.CommandOpts
function M.add_from_explorer(o)
  local explorers = require("claude_context.explorers")
  local buf = vim.api.nvim_get_current_buf()
  local l1, l2
  if o.range and o.range > 0 then
    l1, l2 = o.line1, o.line2
  end
  local paths, e = explorers.paths(buf, l1, l2)
  if not paths then
    return notify("add: " .. e, vim.log.levels.ERROR)
  end
  local mentions = require("claude_context.ide.mentions")
  local sent, last = 0, nil
  for _, p in ipairs(paths) do
    local ok, msg = mentions.mention(p)
    if ok then
      sent = sent + 1
      M.send_complete({ kind = "mention", path = p })
    end
    last = msg
  end
  if #paths == 1 then
    report(sent == 1, last)
  else
    notify(
      ("add: %d of %d paths sent to Claude"):format(sent, #paths),
      sent == #paths and vim.log.levels.INFO or vim.log.levels.WARN
    )
  end
end

---`:ClaudeContext add {path} [start] [end]` (1-based lines); in a file explorer without a path,
---the node(s) there.
function M.add(o, args)
  if not args[1] and require("claude_context.explorers").of(vim.api.nvim_get_current_buf()) then
    return M.add_from_explorer(o or {})
  end
  if not args[1] then
    return notify(
      "add: usage: :ClaudeContext add {path} [start-line] [end-line] (or, without a path, in a file explorer: the node under the cursor)",
      vim.log.levels.ERROR
    )
  end
  local path = vim.fn.fnamemodify(vim.fn.expand(args[1]), ":p")
  local st = (vim.uv or vim.loop).fs_stat(path)
  if not st then
    return notify(("add: %s does not exist"):format(path), vim.log.levels.ERROR)
  end
  if st.type == "directory" then
    path = path:gsub("/$", "")
  end
  local function num(s, what)
    local n = tonumber(s)
    if not n or n < 1 or n ~= math.floor(n) then
      error(("add: %s must be a line number (1 or more), got %q"):format(what, s), 0)
    end
    return n
  end
  local ok, s, e = pcall(function()
    local s = args[2] and num(args[2], "start") or nil
    local e = args[3] and num(args[3], "end") or s
    return s, e
  end)
  if not ok then
    return notify(s, vim.log.levels.ERROR)
  end
  if s and st.type == "directory" then
    return notify("add: line numbers are for files, not directories", vim.log.levels.ERROR)
  end
  if s and e < s then
    return notify(("add: the end line (%d) is before the start line (%d)"):format(e, s), vim.log.levels.ERROR)
  end
  local okm, msg = require("claude_context.ide.mentions").mention(path, s and s - 1, e and e - 1)
  report(okm, msg, { path = path, line1 = s, line2 = e })
end

local function decide(how)
  return function(o)
    local diff = require("claude_context.ide.diff")
    local v, err = diff.current()
    if not v then
      return notify(how .. ": " .. err, vim.log.levels.ERROR)
    end
    if how == "accept" and o and o.range and o.range > 0 then
      -- :[range]ClaudeContext accept: only the hunks the range touches.
      local buf = vim.api.nvim_get_current_buf()
      local side = buf == v.prop_buf and "b" or buf == v.orig_buf and "a" or nil
      if not side then
        return notify(
          "accept: with a range, run it in the diff's windows (the range picks hunks there)",
          vim.log.levels.ERROR
        )
      end
      local taken, total = diff.accept_range(v, o.line1, o.line2, side)
      if taken == nil then
        return notify("accept: this diff was already decided", vim.log.levels.WARN)
      elseif taken == 0 then
        return notify(
          ("accept: lines %d-%d touch none of the %d changes; nothing decided"):format(o.line1, o.line2, total),
          vim.log.levels.WARN
        )
      end
      return notify(("accepted %d of %d changes"):format(taken, total))
    end
    if not diff[how](v) then
      return notify(how .. ": this diff was already decided", vim.log.levels.WARN)
    end
  end
end

---Registers the subcommands into claude_context.commands.
---@param commands claude_context.Commands
function M.register(commands)
  commands.register("send", {
    desc = "@-mention the range (or Visual selection, or the whole file) to Claude",
    run = M.send,
  })
  commands.register("add", {
    desc = "@-mention {path} [start] [end] to Claude",
    run = M.add,
    complete = function(arglead, args)
      if #args <= 2 then
        return vim.fn.getcompletion(arglead, "file")
      end
      return {}
    end,
  })
  commands.register(
    "accept",
    { desc = "accept Claude's proposed diff ([range]: only the changes it touches)", run = decide("accept") }
  )
  commands.register("reject", { desc = "reject Claude's proposed diff", run = decide("reject") })
  commands.register("diff", {
    desc = "go to the diff waiting for a decision",
    run = function()
      local ok, e = require("claude_context.ide.diff").focus()
      if not ok then
        notify("diff: " .. e, vim.log.levels.ERROR)
      end
    end,
  })
end

return M
