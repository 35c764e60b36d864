---@mod claude_context.config.claude Options of the Claude runs (`setup{claude = …}`)
---
--- The CLI the sub-agent, `:ClaudeContext ask` and the terminal run, and how. Most keys go to
--- the native side (it runs the CLI); `timeout` and `progress` are the editor's.

local M = {}

---@class claude_context.ClaudeConfig
---@field cmd string? The Claude Code CLI (default: found, see claude_context.cli)
---@field args string[]? Extra arguments of the sub-agent's runs
---@field env table<string,string>? Extra environment of the runs
---@field max_context_bytes number? Context sent along with a prompt, at most
---@field allowed_tools string[]? Tools the runs may use without asking ("Read", "Bash(git status)")
---@field permission_mode string? `--permission-mode` of the runs
---@field setting_sources string[]? `--setting-sources` of the runs
---@field add_dirs string[]? Folders the sub-agent may read besides the project (`--add-dir`)
---@field timeout number? Seconds a run may take (default: execute_claude's, set by the native side)
---@field progress "echo"|"notify"|"none" How a run under way shows (default "echo")

---What setup() takes for claude_context.ClaudeConfig: every field optional (the defaults fill the rest).
---@class claude_context.ClaudeConfig.Partial
---@field cmd? string The Claude Code CLI (default: found, see claude_context.cli)
---@field args? string[] Extra arguments of the sub-agent's runs
---@field env? table<string,string> Extra environment of the runs
---@field max_context_bytes? number Context sent along with a prompt, at most
---@field allowed_tools? string[] Tools the runs may use without asking ("Read", "Bash(git status)")
---@field permission_mode? string `--permission-mode` of the runs
---@field setting_sources? string[] `--setting-sources` of the runs
---@field add_dirs? string[] Folders the sub-agent may read besides the project (`--add-dir`)
---@field timeout? number Seconds a run may take (default: execute_claude's, set by the native side)
---@field progress? "echo"|"notify"|"none" How a run under way shows (default "echo")

---The editor's own keys. The others, and a run's timeout, have their defaults on the native side
---(crates/core/src/config.rs, crates/core/src/claude): a key not given is not sent.
M.defaults = { progress = "echo" }

---The keys with their types, in the order the error on an unknown key names them. `native`:
---the key goes to the native side; the others are used by the Lua side only.
local KEYS = {
  { "cmd", "string", native = true },
  { "args", "table", native = true },
  { "env", "table", native = true },
  { "max_context_bytes", "number", native = true },
  { "allowed_tools", "table", native = true },
  { "permission_mode", "string", native = true },
  { "setting_sources", "table", native = true },
  { "add_dirs", "table", native = true },
  { "timeout", "number" },
  { "progress", "string" },
}
---key -> its type
local TYPE_OF = {}
for _, k in ipairs(KEYS) do
  TYPE_OF[k[1]] = k[2]
end

---Checks `setup{claude = …}`; raises a clear error on a typo or a wrong type.
---@param c claude_context.ClaudeConfig.Partial?
---@return claude_context.ClaudeConfig.Partial c
function M.resolve(c)
  if c == nil then
    return {}
  end
  if type(c) ~= "table" then
    error(
      ("claude-context: option claude must be a table, got %s (see :help claude-context-session)"):format(type(c)),
      0
    )
  end
  for k, v in pairs(c) do
    local want = TYPE_OF[k]
    if not want then
      local known = vim.tbl_map(function(key)
        return key[1]
      end, KEYS)
      error(("claude-context: unknown option claude.%s (known: %s)"):format(tostring(k), table.concat(known, ", ")), 0)
    end
    if type(v) ~= want then
      error(("claude-context: option claude.%s must be a %s, got %s"):format(k, want, type(v)), 0)
    end
  end
  for _, a in ipairs(c.args or {}) do
    if type(a) ~= "string" then
      error("claude-context: option claude.args must be a list of strings", 0)
    end
  end
  for _, t in ipairs(c.allowed_tools or {}) do
    if type(t) ~= "string" then
      error(
        'claude-context: option claude.allowed_tools must be a list of tool names such as "Read" or "Bash(git status)"',
        0
      )
    end
  end
  for _, d in ipairs(c.add_dirs or {}) do
    if type(d) ~= "string" or d == "" then
      error("claude-context: option claude.add_dirs must be a list of folder paths", 0)
    end
  end
  for k, v in pairs(c.env or {}) do
    if type(k) ~= "string" or type(v) ~= "string" then
      error("claude-context: option claude.env must map variable names to strings", 0)
    end
  end
  if c.progress and not vim.tbl_contains({ "echo", "notify", "none" }, c.progress) then
    error(('claude-context: option claude.progress must be "echo", "notify" or "none", got %q'):format(c.progress), 0)
  end
  if c.timeout and c.timeout <= 0 then
    error("claude-context: option claude.timeout must be positive", 0)
  end
  return c
end

---The effective value of key `k` (`timeout`, `progress`); nil when the native side decides.
---@param k string
function M.get(k)
  local c = require("claude_context.config").options.claude
  if type(c) == "table" and c[k] ~= nil then
    return c[k]
  end
  return M.defaults[k]
end

---Adds the native side's `claude` fields to `t` (crates/core/src/config.rs: ClaudeConfig).
---@param cfg claude_context.Config
---@param t table<string, any> the native configuration being built (crates/core/src/config.rs)
function M.native(cfg, t)
  local c = M.resolve(cfg.claude)
  local out = {}
  -- claude.cmd: one CLI for everything.
  local cmd = require("claude_context.cli").configured(cfg)
  if cmd then
    out.cmd = vim.fn.expand(cmd)
  end
  for _, k in ipairs(KEYS) do
    if k.native and k[1] ~= "cmd" and c[k[1]] ~= nil then
      out[k[1]] = c[k[1]]
    end
  end
  if out.add_dirs then
    -- Absolute, `~` expanded: the sub-agent may read these folders besides the project.
    out.add_dirs = vim.tbl_map(function(d)
      return (vim.fn.fnamemodify(vim.fn.expand(d), ":p"):gsub("(.)/$", "%1"))
    end, out.add_dirs)
  end
  -- An empty Lua table would encode as a JSON object: an empty env is left out.
  if out.env and not next(out.env) then
    out.env = nil
  end
  if next(out) then
    t.claude = out
  end
end

return M
