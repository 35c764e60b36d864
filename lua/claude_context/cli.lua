---@mod claude_context.cli Where the Claude Code CLI is: one setting for everything
---
--- `setup{claude = {cmd = …}}` names the CLI for the terminal (`:ClaudeContext open`), the
--- sub-agent (`execute_claude`, `:ClaudeContext ask`) and `:checkhealth` alike. When it is not
--- set, the native library looks for the CLI (crates/core/src/claude/discovery.rs: `claude` in PATH, the
--- official installer's `~/.local/bin/claude`, `~/.claude/local/claude`, the system and
--- package-manager places, then `$CLAUDE_PATH`), the same search the sub-agent's runs make.
--- Only while the library is missing does a small search here stand in (the configured command,
--- then `claude` in PATH).

local M = {}

local uv = vim.uv

---The native library, when it loads.
local function native()
  return require("claude_context.native").get()
end

---How to install the CLI: the official installer first, npm second (the native side's words,
---or these while the library is missing).
---@return {official: string, npm: string}
function M.install()
  local n = native()
  return n and n.claude_install
    or { official = "curl -fsSL https://claude.ai/install.sh | bash", npm = "npm install -g @anthropic-ai/claude-code" }
end

---One line saying how to get the CLI.
---@return string
function M.install_hint()
  return ("install Claude Code with the official installer (%s) or with npm (%s), or set setup{claude = {cmd = …}}"):format(
    M.install().official,
    M.install().npm
  )
end

---The configured CLI: `claude.cmd` (a program name or path), nil when not set.
---@param options claude_context.Config? the resolved plugin options (default: the current ones)
---@return string? cmd
function M.configured(options)
  options = options or require("claude_context.config").options
  local c = type(options.claude) == "table" and options.claude.cmd or nil
  if type(c) == "string" and c ~= "" then
    return c
  end
  return nil
end

local function executable_file(p)
  local st = uv.fs_stat(p)
  return st ~= nil and st.type == "file" and vim.fn.executable(p) == 1
end

---A program name or path as the native side reads `claude.cmd`: `~` expands; a name without a
---slash is looked up in PATH.
---@param prog string
---@return string? path
local function resolve(prog)
  if prog:find("/", 1, true) or prog:sub(1, 1) == "~" then
    local p = vim.fn.fnamemodify(vim.fn.expand(prog), ":p")
    return executable_file(p) and p or nil
  end
  local p = vim.fn.exepath(prog)
  return p ~= "" and p or nil
end

---Finds the CLI. With `strict`, a configured command that is not there is an error; otherwise
---the search goes on (the native library's search; while it is missing, `claude` in PATH).
---@param options claude_context.Config? the resolved plugin options (default: the current ones)
---@param strict boolean?
---@return string? path, string source_or_err "config", "PATH", "common location", "CLAUDE_PATH", or why not
function M.find(options, strict)
  local prog = M.configured(options)
  local n = native()
  local path, source
  if n then
    path, source = n.find_claude(prog)
  else
    path = prog and resolve(prog) or nil
    source = path and "config" or nil
    if not path and vim.fn.exepath("claude") ~= "" then
      path, source = vim.fn.exepath("claude"), "PATH"
    end
    source = source
      or ("Claude CLI not found (no `claude` in PATH; the native library, which looks in more places, is not built): %s"):format(
        M.install_hint()
      )
  end
  if strict and prog and source ~= "config" then
    return nil, ("claude.cmd = %q is not executable: %s"):format(prog, M.install_hint())
  end
  return path, source
end

---The Claude Code versions the features need, as the Rust side knows them
---(crates/core/src/claude/discovery.rs): `hooks` (the session hooks' exec form), `bg`
---(`claude --bg --worktree`, `claude agents --json`), `manage` (`claude attach`, `stop`, `rm`);
---nil while the native library is missing.
---@return {hooks: string, bg: string, manage: string}?
function M.versions()
  local n = native()
  return n and vim.deepcopy(n.cli_versions) or nil
end

---@class claude_context.Launch
---@field head string[] the CLI and what comes before the plugin's options (`--bg --worktree NAME`)
---@field mcp_config string? `--mcp-config=<value>`
---@field permission_mode string? the configured mode: added unless `args` choose one
---@field mode_wins boolean? the mode was chosen for this launch: added even when `args` choose one
---@field args string[]? the person's arguments (`terminal.args`)
---@field settings string? `--settings=<json>`
---@field tail string[]? what follows (`:ClaudeContext open`'s arguments, a prompt)

---The argv of a Claude Code command line the editor starts, put together by the Rust side
---(crates/core/src/claude/args.rs, `Launch`): head, `--mcp-config=`, `--settings=`,
---`--permission-mode=` (unless the args choose one), args, tail. Raises when the library is
---missing.
---@param launch claude_context.Launch
---@return string[]
function M.argv(launch)
  local spec = {}
  for k, v in pairs(launch) do
    -- An empty list would go out as a JSON object: left out, it is empty on the Rust side too.
    if type(v) ~= "table" or #v > 0 then
      spec[k] = v
    end
  end
  return require("claude_context.native").load().claude_argv(vim.json.encode(spec))
end

return M
