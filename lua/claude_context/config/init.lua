---@mod claude_context.config Options and their defaults
---
--- The bridge's own options are here; every other section has a module of its own under
--- claude_context.config (its defaults, its checks and its LuaCATS class side by side), listed
--- once in `SECTIONS`. A section module has `resolve(user)` (checks, raises a message naming the
--- option; returns the value kept in `options`) and may have `native(cfg, t)` (adds its fields
--- to the native configuration).

local M = {}

---The options after setup(): every field present (the defaults filled in). The sections kept as
---given (terminal, diff, claude, memory_bank, install, review, edit) are read through their
---modules' `options()`, which merge them over their defaults. What setup() takes is
---claude_context.UserConfig.
---@class claude_context.Config
---@field auto_start boolean Start the bridge in setup() (default true)
---@field port_range {min:integer, max:integer}? Ports to listen on (127.0.0.1 only)
---@field project_root string? Explicit project root (fs-get-project-info source "config")
---@field log_level "off"|"error"|"warn"|"info"|"debug"|"trace"
---@field log_file string? Log file (default stdpath("log")/claude-context.log)
---@field max_message_size integer? Largest WebSocket message accepted, in bytes
---@field handshake_timeout_ms integer? A client must finish the handshake within this time
---@field client_request_timeout_ms integer? How long a tool waits for the client to answer elicitation/sampling
---@field max_inflight_per_client integer? Requests of one client answered at once (then reading pauses)
---@field max_inflight_bytes_per_client integer? Bytes of one client's requests in flight (then reading pauses)
---@field stats_time_budget_ms integer? Time budget of fs-get-project-info {stats=true}
---@field editor_wait_ms integer? A tool needing the main thread waits this long for it, then answers "busy"
---@field ide claude_context.IdeConfig Claude Code IDE integration
---@field security claude_context.SecurityConfig What tools may do beyond the safe defaults
---@field workspace claude_context.WorkspaceConfig What the model (`/mcp`) may reach besides the project root
---@field sessions claude_context.SessionsConfig The session states from Claude Code's hooks
---@field terminal claude_context.TerminalConfig.Partial? Claude's terminal (as given; see config.terminal)
---@field diff claude_context.DiffConfig.Partial? The diff views (as given; see config.diff)
---@field claude claude_context.ClaudeConfig.Partial? Claude runs (as given; see config.claude)
---@field memory_bank claude_context.MemoryBankConfig? The memory bank (as given; see config.memory_bank)
---@field install claude_context.InstallConfig? The installer (as given; see config.install)
---@field review claude_context.ReviewConfig.Partial? The review of Claude's changes (as given; see config.review)
---@field claudecode claude_context.ClaudecodeConfig For people coming from claudecode.nvim (see config.claudecode)
---@field edit claude_context.EditConfig.Partial? Edit in place (as given; see config.edit)

---What setup() takes: every field optional (claude_context.Config says what each means). Also
---claudecode.nvim's own options, translated (claude_context.config.claudecode).
---@class claude_context.UserConfig: claude_context.ClaudecodeOptions
---@field auto_start? boolean Start the bridge in setup() (default true)
---@field port_range? {min:integer, max:integer} Ports to listen on (127.0.0.1 only)
---@field project_root? string Explicit project root
---@field log_level? "off"|"error"|"warn"|"info"|"debug"|"trace"
---@field log_file? string Log file (default stdpath("log")/claude-context.log)
---@field max_message_size? integer Largest WebSocket message accepted, in bytes
---@field handshake_timeout_ms? integer A client must finish the handshake within this time
---@field client_request_timeout_ms? integer How long a tool waits for the client to answer elicitation/sampling
---@field max_inflight_per_client? integer Requests of one client answered at once
---@field max_inflight_bytes_per_client? integer Bytes of one client's requests in flight
---@field stats_time_budget_ms? integer Time budget of fs-get-project-info {stats=true}
---@field editor_wait_ms? integer A tool needing the main thread waits this long for it, then answers "busy"
---@field ide? claude_context.IdeConfig.Partial Claude Code IDE integration
---@field security? claude_context.SecurityConfig.Partial What tools may do beyond the safe defaults
---@field workspace? claude_context.WorkspaceConfig.Partial What the model (`/mcp`) may reach besides the project root
---@field sessions? claude_context.SessionsConfig.Partial The session states from Claude Code's hooks
---@field terminal? claude_context.TerminalConfig.Partial Claude's terminal
---@field diff? claude_context.DiffConfig.Partial The diff views
---@field claude? claude_context.ClaudeConfig.Partial Claude runs
---@field memory_bank? claude_context.MemoryBankConfig The memory bank
---@field install? claude_context.InstallConfig The installer
---@field review? claude_context.ReviewConfig.Partial The review of Claude's changes
---@field claudecode? claude_context.ClaudecodeConfig.Partial For people coming from claudecode.nvim
---@field edit? claude_context.EditConfig.Partial Edit in place
M.defaults = {
  auto_start = true,
  project_root = nil,
  log_level = "info",
  log_file = nil,
}

---The bridge's options whose default is nil.
local OPTIONAL = { project_root = true, log_file = true }

---The bridge's options the native side takes as they are: `port_range` ({min, max}) and these
---numbers. Their defaults are the native side's (crates/core/src/config.rs: Config::default): a
---key not given is not sent.
local NATIVE_NUMBERS = {
  "max_message_size",
  "handshake_timeout_ms",
  "max_inflight_per_client",
  "max_inflight_bytes_per_client",
  "stats_time_budget_ms",
  "editor_wait_ms",
  "client_request_timeout_ms",
}
local NATIVE = vim.list_extend({ "port_range" }, NATIVE_NUMBERS)

---The sections: option key -> module. `merged` sections are kept merged over their defaults
---in `options`; the others as given (their modules read them when needed, so that setup()
---does not load a feature's code for options nobody gave).
local SECTIONS = {
  ide = { module = "claude_context.config.ide", merged = true },
  security = { module = "claude_context.config.security", merged = true },
  workspace = { module = "claude_context.config.workspace", merged = true },
  sessions = { module = "claude_context.config.sessions", merged = true },
  terminal = { module = "claude_context.config.terminal" },
  diff = { module = "claude_context.config.diff" },
  claude = { module = "claude_context.config.claude" },
  memory_bank = { module = "claude_context.config.memory_bank" },
  install = { module = "claude_context.config.install" },
  review = { module = "claude_context.config.review" },
  -- Arriving from claudecode.nvim: its commands, focus after a send, its models.
  claudecode = { module = "claude_context.config.claudecode", merged = true },
  edit = { module = "claude_context.config.edit" },
}

---The values `log_level` takes.
M.log_levels = { off = true, error = true, warn = true, info = true, debug = true, trace = true }

---@type claude_context.Config
M.options = vim.deepcopy(M.defaults)
for key, s in pairs(SECTIONS) do
  if s.merged then
    M.options[key] = require(s.module).resolve(nil)
  end
end

---Merges user options over the defaults and checks them (each section by its module).
---@param opts claude_context.UserConfig?
---@return claude_context.Config
function M.resolve(opts)
  opts = opts or {}
  vim.validate("opts", opts, "table")
  -- claudecode.nvim's options, as its README writes them, become this plugin's (then checked).
  opts = require("claude_context.config.claudecode").adopt(opts)
  for k in pairs(opts) do
    if M.defaults[k] == nil and not OPTIONAL[k] and not vim.tbl_contains(NATIVE, k) and not SECTIONS[k] then
      error(("claude-context: unknown option %q (see :help claude-context-config)"):format(k), 0)
    end
  end
  local cfg = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  vim.validate("auto_start", cfg.auto_start, "boolean")
  vim.validate("project_root", cfg.project_root, "string", true)
  vim.validate("log_level", cfg.log_level, function(v)
    return M.log_levels[v] ~= nil
  end, "one of off, error, warn, info, debug, trace")
  vim.validate("log_file", cfg.log_file, "string", true)
  -- Types here; ranges are checked by the native side (its message names the option and the
  -- bound).
  for _, k in ipairs(NATIVE_NUMBERS) do
    vim.validate(k, cfg[k], "number", true)
  end
  vim.validate("port_range", cfg.port_range, "table", true)
  if cfg.port_range then
    vim.validate("port_range.min", cfg.port_range.min, "number")
    vim.validate("port_range.max", cfg.port_range.max, "number")
  end
  for key, s in pairs(SECTIONS) do
    if s.merged then
      cfg[key] = require(s.module).resolve(opts[key])
    elseif opts[key] ~= nil then
      require(s.module).resolve(opts[key])
      cfg[key] = opts[key] -- as given (functions and lists kept)
    end
  end
  M.options = cfg
  return cfg
end

---The JSON the native server takes (crates/core/src/config.rs).
---@param cfg claude_context.Config
---@return string
function M.to_native(cfg)
  local t = {}
  for _, k in ipairs(NATIVE) do
    t[k] = cfg[k]
  end
  t.project_root = cfg.project_root and vim.fn.expand(cfg.project_root) or nil
  t.state_dir = vim.fn.stdpath("state") .. "/claude-context"
  t.ide_name = require("claude_context.config.ide").ide_name(cfg)
  for _, key in ipairs({ "security", "workspace", "claude", "memory_bank" }) do
    require(SECTIONS[key].module).native(cfg, t)
  end
  return vim.json.encode(t)
end

---@return string
function M.log_file()
  return M.options.log_file or (vim.fn.stdpath("log") .. "/claude-context.log")
end

return M
