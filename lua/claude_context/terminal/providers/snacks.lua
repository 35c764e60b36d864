---@mod claude_context.terminal.providers.snacks Claude in snacks.nvim's terminal
---
--- Over snacks.nvim's documented terminal API: `Snacks.terminal.open(cmd, opts)` returns a
--- terminal object with `buf`, `win`, `:show()` and `:hide()`; the job id is in
--- `b:terminal_job_id`.

local M = {}

---The snacks.nvim terminal module, when snacks.nvim is set up (its own types are snacks.nvim's).
---@return {open: fun(cmd: string[]|string, opts: table<string, any>?): {buf: integer, win: integer?}}?
function M.available()
  local snacks = rawget(_G, "Snacks")
  return snacks and type(snacks.terminal) == "table" and snacks.terminal.open and snacks.terminal or nil
end

---@param opts claude_context.TerminalConfig
---@return claude_context.TerminalProvider
function M.new(opts)
  local objects = {}
  return require("claude_context.terminal.providers.custom").new({
    open = function(cmd, env, cwd)
      local st = M.available()
      if not st then
        error("snacks.nvim is not set up (no Snacks.terminal)", 0)
      end
      local position = opts.side == "float" and "float" or opts.side
      local t = st.open(cmd, {
        cwd = cwd,
        env = env,
        interactive = opts.auto_insert,
        win = { position = position, width = opts.size, height = opts.size },
      })
      local buf = t.buf
      objects[buf] = t
      return buf, vim.b[buf].terminal_job_id
    end,
    show = function(buf)
      if objects[buf] then
        objects[buf]:show()
      end
    end,
    hide = function(buf)
      if objects[buf] then
        objects[buf]:hide()
      end
    end,
  })
end

return M
