---@mod claude_context.cli Where the Claude Code CLI is: one setting for everything
---
--- `setup{claude = {cmd = …}}` names the CLI for the terminal (`:ClaudeContext open`), the
--- sub-agent (`execute_claude`, `:ClaudeContext ask`) and `:checkhealth` alike. `terminal.cmd`
--- is its deprecated alias (still honoured, with a one-time warning). When neither is set the CLI
--- is looked for in the order of the native side (crates/core/src/claude/discovery.rs): `claude`
--- in PATH, the official installer's `~/.local/bin/claude`, `~/.claude/local/claude`, the
--- system and package-manager places, then `$CLAUDE_PATH`.

local M = {}

local uv = vim.uv or vim.loop

---How to install the CLI: the official installer first, npm second.
M.INSTALL_OFFICIAL = "curl -fsSL https://claude.ai/install.sh | bash"
M.INSTALL_NPM = "npm install -g @anthropic-ai/claude-code"

---The common install locations, in order (`*` is one directory level, newest version first).
M.LOCATIONS = {
  "~/.local/bin/claude",
  "~/.claude/local/claude",
  "/usr/local/bin/claude",
  "/usr/bin/claude",
  "~/.npm-global/bin/claude",
  "~/.yarn/bin/claude",
  "~/.volta/bin/claude",
  "~/.nvm/versions/node/*/bin/claude",
  "~/.asdf/installs/nodejs/*/bin/claude",
}

---One line saying how to get the CLI.
---@return string
function M.install_hint()
  return ("install Claude Code with the official installer (%s) or with npm (%s), or set setup{claude = {cmd = …}}"):format(
    M.INSTALL_OFFICIAL,
    M.INSTALL_NPM
  )
end

---The configured CLI: `claude.cmd`, else the deprecated `terminal.cmd` (a string or a list whose
---first item is the program).
---@param options table? the resolved plugin options (default: the current ones)
---@return string|string[]|nil cmd, string? key "claude.cmd" or "terminal.cmd"
function M.configured(options)
  options = options or require("claude_context.config").options
  local c = type(options.claude) == "table" and options.claude.cmd or nil
  if type(c) == "string" and c ~= "" then
    return c, "claude.cmd"
  end
  local t = type(options.terminal) == "table" and options.terminal.cmd or nil
  if (type(t) == "string" and t ~= "") or (type(t) == "table" and type(t[1]) == "string") then
    return t, "terminal.cmd"
  end
  return nil, nil
end

---Warns once that `terminal.cmd` is deprecated (when it is what configures the CLI).
---@param options table?
function M.warn_deprecated(options)
  local _, key = M.configured(options)
  if key == "terminal.cmd" then
    vim.notify_once(
      "claude-context: terminal.cmd is deprecated; set claude.cmd instead (it names the CLI for :ClaudeContext open, the sub-agent and :checkhealth)",
      vim.log.levels.WARN
    )
  end
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

---`v20.11.0` -> {20, 11, 0}: the numbers of a path's version directory (`…/<version>/bin/claude`).
---@param path string
---@return integer[]
local function version_key(path)
  local dir = path:match("([^/]+)/bin/claude$") or ""
  local key = {}
  for part in dir:gsub("^v", ""):gmatch("[^%.%-]+") do
    table.insert(key, tonumber(part) or 0)
  end
  return key
end

---@param a string
---@param b string
---@return boolean
local function newer_first(a, b)
  local ka, kb = version_key(a), version_key(b)
  for i = 1, math.max(#ka, #kb) do
    local x, y = ka[i] or 0, kb[i] or 0
    if x ~= y then
      return x > y
    end
  end
  return a < b
end

---Finds the CLI. With `strict`, a configured command that is not there is an error; otherwise
---the search goes on as the native side's does.
---@param options table? the resolved plugin options (default: the current ones)
---@param strict boolean?
---@return string? path, string source_or_err "config", "PATH", "common location", "CLAUDE_PATH", or why not
function M.find(options, strict)
  local cmd, key = M.configured(options)
  local searched = {}
  if cmd then
    local prog = type(cmd) == "string" and cmd or cmd[1]
    local p = resolve(prog)
    if p then
      return p, "config"
    end
    if strict then
      return nil, ("%s = %q is not executable: %s"):format(key, prog, M.install_hint())
    end
    table.insert(searched, ("%s = %q (not found or not executable)"):format(key, prog))
  end
  local p = vim.fn.exepath("claude")
  if p ~= "" then
    return p, "PATH"
  end
  table.insert(searched, "PATH (no `claude`)")
  for _, loc in ipairs(M.LOCATIONS) do
    local pattern = vim.fn.expand(loc)
    local hits = loc:find("*", 1, true) and vim.fn.glob(pattern, false, true) or { pattern }
    -- Newest version directory first, as the native side orders them.
    table.sort(hits, newer_first)
    for _, h in ipairs(hits) do
      if executable_file(h) then
        return h, "common location"
      end
    end
    table.insert(searched, pattern)
  end
  local cp = vim.env.CLAUDE_PATH
  if cp and cp ~= "" then
    local f = vim.fn.isdirectory(cp) == 1 and (cp .. "/claude") or cp
    if executable_file(f) then
      return f, "CLAUDE_PATH"
    end
    table.insert(searched, ("CLAUDE_PATH = %s (not executable)"):format(f))
  else
    table.insert(searched, "CLAUDE_PATH (not set)")
  end
  return nil, ("Claude CLI not found (looked in: %s): %s"):format(table.concat(searched, "; "), M.install_hint())
end

return M
