---@mod claude_context.config.terminal Options of Claude's terminal (`setup{terminal = …}`)
---
--- Defaults, checks and the LuaCATS class side by side; read through `options()`.

local M = {}

---@class claude_context.TerminalConfig
---@field args string[] Extra arguments after the plugin's own
---@field side "right"|"left"|"top"|"bottom"|"float" Where the window opens (default "right")
---@field size number Columns/lines, or a fraction of the editor when < 1 (default 0.4)
---@field float {width:number, height:number, border:string|string[]} For side = "float"
---@field env table<string,string> Extra environment variables for the job
---@field mcp_config boolean Pass --mcp-config registering the bridge (default true)
---@field permission_mode string|false `--permission-mode` for the CLI (default "default": edits ask, and the diff opens in Neovim); false passes none
---@field auto_insert boolean Enter Terminal-mode when the window is shown (default true)
---@field reload boolean :checktime on focus, buffer enter and terminal output (default true)
---@field context_lines integer Lines `:ClaudeContext add-terminal` sends (default 200)
---@field per_tab boolean Each tab page its own Claude session (default false)
---@field provider "native"|"auto"|"snacks"|"external"|"none"|claude_context.TerminalProvider
---@field external_cmd string[]? For provider = "external": the launcher's argv; "{cmd}" is
---replaced by the shell command line that starts claude with the IDE environment

---What setup() takes for claude_context.TerminalConfig: every field optional (the defaults fill the rest).
---@class claude_context.TerminalConfig.Partial
---@field args? string[] Extra arguments after the plugin's own
---@field side? "right"|"left"|"top"|"bottom"|"float" Where the window opens (default "right")
---@field size? number Columns/lines, or a fraction of the editor when < 1 (default 0.4)
---@field float? {width:number?, height:number?, border:(string|string[])?} For side = "float"
---@field env? table<string,string> Extra environment variables for the job
---@field mcp_config? boolean Pass --mcp-config registering the bridge (default true)
---@field permission_mode? string|false `--permission-mode` for the CLI (default "default": edits ask, and the diff opens in Neovim); false passes none
---@field auto_insert? boolean Enter Terminal-mode when the window is shown (default true)
---@field reload? boolean :checktime on focus, buffer enter and terminal output (default true)
---@field context_lines? integer Lines `:ClaudeContext add-terminal` sends (default 200)
---@field per_tab? boolean Each tab page its own Claude session (default false)
---@field provider? "native"|"auto"|"snacks"|"external"|"none"|claude_context.TerminalProvider
---@field external_cmd? string[] For provider = "external": the launcher's argv; "{cmd}" is
---replaced by the shell command line that starts claude with the IDE environment
M.defaults = {
  args = {},
  side = "right",
  size = 0.4,
  float = { width = 0.8, height = 0.8, border = "rounded" },
  env = {},
  mcp_config = true,
  -- A newer Claude Code starts in "auto" mode, where edits are applied without asking, so the
  -- Neovim diff never opens. "default" asks for every edit (through the diff in Neovim).
  permission_mode = "default",
  auto_insert = true,
  reload = true,
  context_lines = 200,
  provider = "native",
  external_cmd = nil,
  per_tab = false,
}

local PROVIDERS = { native = true, auto = true, snacks = true, external = true, none = true }

local SIDES = { right = true, left = true, top = true, bottom = true, float = true }

---The modes `--permission-mode` takes, as the native library knows them (crates/core/src/config.rs:
---PERMISSION_MODES); nil while the library is missing (then the CLI itself checks the mode).
---@return string[]?
function M.permission_modes()
  local native = require("claude_context.native").get()
  return native and native.permission_modes() or nil
end

local function strings(v)
  if type(v) ~= "table" then
    return false
  end
  for _, x in ipairs(v) do
    if type(x) ~= "string" then
      return false
    end
  end
  return #v == vim.tbl_count(v)
end

---Validates `setup{terminal = …}` and merges it over the defaults.
---@param user claude_context.TerminalConfig.Partial?
---@return claude_context.TerminalConfig
function M.resolve(user)
  user = user or {}
  if type(user) ~= "table" then
    error(("claude-context: option terminal must be a table, got %s"):format(type(user)), 0)
  end
  if user.cmd ~= nil then
    error(
      "claude-context: unknown option terminal.cmd: set claude.cmd (the Claude Code CLI) and terminal.args (its arguments); see :help claude-context-cli",
      0
    )
  end
  for k in pairs(user) do
    if M.defaults[k] == nil and k ~= "external_cmd" then
      error(("claude-context: unknown option terminal.%s (see :help claude-context-terminal)"):format(tostring(k)), 0)
    end
  end
  local t = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), user)
  -- Lists replace, never merge element-wise.
  if user.args then
    t.args = user.args
  end
  if type(user.provider) == "table" then
    t.provider = user.provider -- kept as given (functions)
  end
  local function check(name, ok, want)
    if not ok then
      error(("claude-context: option terminal.%s must be %s"):format(name, want), 0)
    end
  end
  check("args", strings(t.args), "a list of strings")
  check("side", SIDES[t.side] == true, "one of right, left, top, bottom, float")
  check("size", type(t.size) == "number" and t.size > 0, "a number > 0 (a fraction when < 1)")
  check("float", type(t.float) == "table", "a table {width, height, border}")
  check("float.width", type(t.float.width) == "number" and t.float.width > 0, "a number > 0")
  check("float.height", type(t.float.height) == "number" and t.float.height > 0, "a number > 0")
  check("env", type(t.env) == "table", "a table of strings")
  for k, v in pairs(t.env) do
    check("env", type(k) == "string" and (type(v) == "string" or type(v) == "number"), "a table of strings")
  end
  local modes = M.permission_modes()
  check(
    "permission_mode",
    t.permission_mode == false
      or (
        type(t.permission_mode) == "string"
        and t.permission_mode ~= ""
        and (not modes or vim.tbl_contains(modes, t.permission_mode))
      ),
    "false or one of " .. table.concat(modes or { "the modes of claude --help" }, ", ")
  )
  check("context_lines", type(t.context_lines) == "number" and t.context_lines >= 1, "a number >= 1")
  check(
    "provider",
    PROVIDERS[t.provider] == true or (type(t.provider) == "table" and type(t.provider.open) == "function"),
    "native, auto, snacks, external, none, or a table with an open function"
  )
  if t.provider == "external" then
    check(
      "external_cmd",
      strings(t.external_cmd) and #t.external_cmd > 0 and vim.tbl_contains(t.external_cmd, "{cmd}"),
      'a list of strings with a "{cmd}" element'
    )
  end
  for _, k in ipairs({ "mcp_config", "auto_insert", "reload", "per_tab" }) do
    check(k, type(t[k]) == "boolean", "a boolean")
  end
  return t
end

---The effective terminal options.
---@return claude_context.TerminalConfig
function M.options()
  return M.resolve(require("claude_context.config").options.terminal)
end

return M
