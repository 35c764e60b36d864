---@mod claude_context.terminal.providers.external Claude in a launcher outside Neovim
---
--- `terminal.external_cmd` (tmux, zellij, another terminal emulator) runs detached, its "{cmd}"
--- element replaced by the shell command line that starts claude with the IDE environment.

local M = {}

---The shell command line that runs `cmd` with `env` set (for launchers that start a new shell).
---@param cmd string[]
---@param env table<string,string>
---@return string
local function shell_line(cmd, env)
  local parts = { "env" }
  local keys = vim.tbl_keys(env)
  table.sort(keys)
  for _, k in ipairs(keys) do
    table.insert(parts, vim.fn.shellescape(k .. "=" .. env[k]))
  end
  for _, a in ipairs(cmd) do
    table.insert(parts, vim.fn.shellescape(a))
  end
  return table.concat(parts, " ")
end

---@param opts claude_context.TerminalConfig
---@return claude_context.TerminalProvider
function M.new(opts)
  return {
    detached = true,
    open = function(cmd, env, cwd)
      local line = shell_line(cmd, env)
      local argv = vim.tbl_map(function(a)
        return a == "{cmd}" and line or a
      end, opts.external_cmd)
      local ok, job = pcall(vim.fn.jobstart, argv, { env = env, cwd = cwd, detach = true })
      if not ok or job <= 0 then
        error(("cannot run %s: %s"):format(argv[1], ok and ("jobstart returned " .. job) or tostring(job)), 0)
      end
      require("claude_context.util.notify")(("started claude with %s"):format(argv[1]))
    end,
  }
end

return M
