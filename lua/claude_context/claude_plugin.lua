---@mod claude_context.claude_plugin The Claude Code plugin for sessions started outside Neovim
---
--- `claude-plugin/` in this repository is a Claude Code plugin marketplace holding one plugin,
--- `claude-context`: the session hooks (turns, checkpoints, review and rewind in Neovim), the
--- `claude-context` MCP server through the relay, and the memory bank rules as a skill. It is
--- registered once with Claude Code's own commands; `:ClaudeContext claude-plugin` shows them and
--- `:checkhealth claude_context` says whether it is registered.

local M = {}

M.MARKETPLACE = "claude-context-nvim"
M.PLUGIN = "claude-context@claude-context-nvim"

---The marketplace directory shipped with the plugin.
---@return string
function M.dir()
  return require("claude_context.native").plugin_root() .. "/claude-plugin"
end

local function q(s)
  return s:match("^[%w%./_%-+=:@]+$") and s or vim.fn.shellescape(s)
end

---The shell lines that register the plugin (and the relay's path for its copy in Claude's cache).
---@return string[]
function M.commands()
  local lines = {
    ("claude plugin marketplace add %s"):format(q(M.dir())),
    ("claude plugin install %s"):format(M.PLUGIN),
  }
  local bin = require("claude_context.sessions.hooks").binary()
  if bin then
    table.insert(
      lines,
      ("export CLAUDE_CONTEXT_MCP=%s  # in your shell's profile: the relay the plugin runs"):format(q(bin))
    )
  end
  return lines
end

---Claude Code's configuration directory.
---@return string
function M.config_dir()
  local d = vim.env.CLAUDE_CONFIG_DIR
  if d and d ~= "" then
    return d
  end
  return vim.fs.joinpath(vim.uv.os_homedir() or "~", ".claude")
end

---Reads a small JSON file of Claude's config: opened first without waiting (a FIFO put there
---never holds the editor), then the open file checked (a regular file, at most 4 MiB) and read.
local function read_json(path)
  local text = require("claude_context.util.small_file").read(path, 4 * 1024 * 1024)
  if not text then
    return nil
  end
  local ok, v = pcall(vim.json.decode, text, { luanil = { object = true, array = true } })
  return ok and type(v) == "table" and v or nil
end

---Whether Claude Code knows the marketplace and has the plugin installed.
---@return {marketplace: boolean, installed: boolean, path?: string}
function M.registered()
  local plugins = vim.fs.joinpath(M.config_dir(), "plugins")
  local known = read_json(vim.fs.joinpath(plugins, "known_marketplaces.json")) or {}
  local m = known[M.MARKETPLACE]
  local path = type(m) == "table" and type(m.source) == "table" and m.source.path or nil
  local installed = read_json(vim.fs.joinpath(plugins, "installed_plugins.json")) or {}
  local list = type(installed.plugins) == "table" and installed.plugins[M.PLUGIN]
  return { marketplace = m ~= nil, installed = type(list) == "table" and #list > 0, path = path }
end

---`:ClaudeContext claude-plugin`: the commands, in a window (meant to be copied).
function M.show()
  local lines = M.commands()
  local r = M.registered()
  table.insert(lines, "")
  table.insert(
    lines,
    ("# now: marketplace %s, plugin %s (in %s)"):format(
      r.marketplace and "added" or "not added",
      r.installed and "installed" or "not installed",
      M.config_dir()
    )
  )
  if vim.fn.has("clipboard") == 1 then
    pcall(vim.fn.setreg, "+", table.concat(M.commands(), "\n") .. "\n")
    table.insert(lines, "# (copied to the + register)")
  end
  require("claude_context.util.output").show(lines, { title = "Claude Code plugin", float = true, filetype = "sh" })
end

---Registers `:ClaudeContext claude-plugin`.
---@param commands claude_context.Commands
function M.register(commands)
  commands.register("claude-plugin", {
    desc = "show the commands that register the Claude Code plugin for sessions started outside Neovim",
    run = function()
      M.show()
    end,
  })
end

return M
