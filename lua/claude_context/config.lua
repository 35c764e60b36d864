---@mod claude_context.config Options and their defaults

local M = {}

---@class claude_context.Config
---@field auto_start boolean Start the bridge in setup() (default true)
---@field port_range {min:integer, max:integer} Ports to listen on (127.0.0.1 only)
---@field project_root string? Explicit project root (fs-get-project-info source "config")
---@field log_level "off"|"error"|"warn"|"info"|"debug"|"trace"
---@field log_file string? Log file (default stdpath("log")/claude-context.log)
---@field max_message_size integer Largest WebSocket message accepted, in bytes
---@field handshake_timeout_ms integer A client must finish the handshake within this time
---@field client_request_timeout_ms integer How long a tool waits for the client to answer elicitation/sampling
---@field max_inflight_per_client integer Requests of one client answered at once (then reading pauses)
---@field max_inflight_bytes_per_client integer Bytes of one client's requests in flight (then reading pauses)
---@field stats_time_budget_ms integer Time budget of fs-get-project-info {stats=true}
---@field editor_wait_ms integer A tool needing the main thread waits this long for it, then answers "busy"
---@field ide claude_context.IdeConfig Claude Code IDE integration
---@field security claude_context.SecurityConfig What tools may do beyond the safe defaults
---@field workspace claude_context.WorkspaceConfig What the model (`/mcp`) may reach besides the project root

---@class claude_context.SecurityConfig
---@field allow_write string[] Protected files (|claude-context-security|) tools may write anyway: globs relative to the project root

---@class claude_context.WorkspaceConfig
---@field extra_roots string[] More directories the model may reach (|claude-context-security-roots|)
---@field allow_lsp_roots boolean Language servers' workspace folders count as roots too (default false)

---@class claude_context.IdeConfig
---@field track_selection boolean Send selection_changed as the cursor/selection moves
---@field selection_debounce_ms integer Wait this long after the last move before sending
---@field mention_queue_ms integer Keep @-mentions made while no Claude Code is connected
---@field name string The lock file's `ideName`, what Claude Code's /ide shows: `{project}` (the project directory's name), `{pid}` and `{servername}` are filled in
M.defaults = {
  auto_start = true,
  port_range = { min = 10000, max = 65535 },
  project_root = nil,
  log_level = "info",
  log_file = nil,
  max_message_size = 64 * 1024 * 1024,
  handshake_timeout_ms = 5000,
  max_inflight_per_client = 64,
  max_inflight_bytes_per_client = 256 * 1024 * 1024,
  stats_time_budget_ms = 2000,
  editor_wait_ms = 3000,
  client_request_timeout_ms = 120000,
  ide = {
    track_selection = true,
    selection_debounce_ms = 100,
    mention_queue_ms = 30000,
    name = "Neovim ({project}, pid {pid})",
  },
  security = {
    allow_write = {},
  },
  workspace = {
    extra_roots = {},
    allow_lsp_roots = false,
  },
}

---@type claude_context.Config
M.options = vim.deepcopy(M.defaults)

---Merges user options over the defaults and checks their types.
---@param opts table?
---@return claude_context.Config
function M.resolve(opts)
  opts = opts or {}
  vim.validate("opts", opts, "table")
  for k in pairs(opts) do
    if M.defaults[k] == nil and not M.optional_keys[k] and not M.extra_keys[k] then
      error(("claude-context: unknown option %q (see :help claude-context-config)"):format(k), 0)
    end
  end
  local cfg = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  vim.validate("auto_start", cfg.auto_start, "boolean")
  vim.validate("port_range", cfg.port_range, "table")
  vim.validate("port_range.min", cfg.port_range.min, "number")
  vim.validate("port_range.max", cfg.port_range.max, "number")
  vim.validate("project_root", cfg.project_root, "string", true)
  vim.validate("log_level", cfg.log_level, function(v)
    return M.log_levels[v] ~= nil
  end, "one of off, error, warn, info, debug, trace")
  vim.validate("log_file", cfg.log_file, "string", true)
  -- Ranges are checked by the native side (its message names the option and the bound).
  for _, k in ipairs({
    "max_message_size",
    "handshake_timeout_ms",
    "max_inflight_per_client",
    "max_inflight_bytes_per_client",
    "stats_time_budget_ms",
    "editor_wait_ms",
    "client_request_timeout_ms",
  }) do
    vim.validate(k, cfg[k], "number")
  end
  vim.validate("ide", cfg.ide, "table")
  vim.validate("ide.track_selection", cfg.ide.track_selection, "boolean")
  vim.validate("ide.selection_debounce_ms", cfg.ide.selection_debounce_ms, "number")
  vim.validate("ide.mention_queue_ms", cfg.ide.mention_queue_ms, "number")
  vim.validate("security", cfg.security, "table")
  vim.validate("security.allow_write", cfg.security.allow_write, function(v)
    if type(v) ~= "table" then
      return false
    end
    for _, p in ipairs(v) do
      if type(p) ~= "string" then
        return false
      end
    end
    return true
  end, "a list of glob strings")
  vim.validate("workspace", cfg.workspace, "table")
  vim.validate("workspace.extra_roots", cfg.workspace.extra_roots, function(v)
    if type(v) ~= "table" then
      return false
    end
    for _, p in ipairs(v) do
      local full = type(p) == "string" and vim.fn.expand(p) or ""
      if not (vim.startswith(full, "/") or full:match("^%a:[/\\]")) then
        return false
      end
    end
    return true
  end, "a list of absolute directory paths (~ expands)")
  vim.validate("workspace.allow_lsp_roots", cfg.workspace.allow_lsp_roots, "boolean")
  vim.validate("ide.name", cfg.ide.name, function(v)
    return type(v) == "string" and vim.trim(v) ~= ""
  end, "a non-empty string")
  M.options = cfg
  return cfg
end

---The values `log_level` takes.
M.log_levels = { off = true, error = true, warn = true, info = true, debug = true, trace = true }

---Options whose default is nil.
M.optional_keys = { project_root = true, log_file = true }

---Options other modules add (memory_bank, claude, terminal, …): key -> true.
M.extra_keys = {}

---The lock file's `ideName`: `ide.name` with `{project}` (the name of the project root, else of
---the current directory), `{pid}` and `{servername}` filled in. Two Neovims in one project
---differ by pid.
---@param cfg claude_context.Config
---@return string
function M.ide_name(cfg)
  local root = cfg.project_root and vim.fn.expand(cfg.project_root) or vim.fn.getcwd()
  local project = vim.fn.fnamemodify(vim.fs.normalize(root), ":t")
  if project == "" then
    project = root
  end
  local values = { project = project, pid = tostring(vim.fn.getpid()), servername = vim.v.servername or "" }
  local name = (cfg.ide and cfg.ide.name or M.defaults.ide.name):gsub("{(%w+)}", function(k)
    return values[k]
  end)
  -- One line, and no longer than the native side takes.
  name = name:gsub("%c", " ")
  return vim.fn.strcharpart(name, 0, 200)
end

---The JSON the native server takes (crates/core/src/config.rs).
---@param cfg claude_context.Config
---@return string
function M.to_native(cfg)
  local t = {
    port_range = cfg.port_range,
    project_root = cfg.project_root and vim.fn.expand(cfg.project_root) or nil,
    max_message_size = cfg.max_message_size,
    handshake_timeout_ms = cfg.handshake_timeout_ms,
    max_inflight_per_client = cfg.max_inflight_per_client,
    max_inflight_bytes_per_client = cfg.max_inflight_bytes_per_client,
    stats_time_budget_ms = cfg.stats_time_budget_ms,
    editor_wait_ms = cfg.editor_wait_ms,
    client_request_timeout_ms = cfg.client_request_timeout_ms,
    state_dir = vim.fn.stdpath("state") .. "/claude-context",
    ide_name = M.ide_name(cfg),
  }
  -- An empty Lua table would encode as a JSON object: only a non-empty list is sent.
  if #cfg.security.allow_write > 0 then
    t.security = { allow_write = cfg.security.allow_write }
  end
  -- Only what differs from the defaults is sent (an empty list would encode as an object).
  if #cfg.workspace.extra_roots > 0 or cfg.workspace.allow_lsp_roots then
    t.workspace = {
      extra_roots = vim.tbl_map(function(p)
        return vim.fs.normalize(vim.fn.expand(p))
      end, cfg.workspace.extra_roots),
      allow_lsp_roots = cfg.workspace.allow_lsp_roots,
    }
    if #t.workspace.extra_roots == 0 then
      t.workspace.extra_roots = nil
    end
  end
  for _, f in ipairs(M.native_hooks) do
    f(cfg, t)
  end
  return vim.json.encode(t)
end

---Functions `(cfg, native_table)` other modules register to add their native fields.
M.native_hooks = {}

---@return string
function M.log_file()
  return M.options.log_file or (vim.fn.stdpath("log") .. "/claude-context.log")
end

return M
