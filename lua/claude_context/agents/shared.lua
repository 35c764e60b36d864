---@mod claude_context.agents.shared What the background sessions' parts share
---
--- The sessions this editor started, the ids it is stopping, the list's generation and how old
--- its cache may be, the project root, and the watch that refreshes the cache on hook events:
--- claude_context.agents and its parts (list, discard, land) read and change them here, below
--- them all.

local M = {}

local names = require("claude_context.agents.names")
local cli = require("claude_context.agents.cli")

---A background session this editor started (`new`'s `cb(err, started)`).
---@class claude_context.Started
---@field id string The service's id
---@field name string The worktree's name
---@field prompt string?
---@field started_ms integer Epoch ms
---@field root string The project
---@field worktree string The worktree's folder
---@field branch string
---@field listed boolean? The service has listed it

---@class claude_context.NewAgentOpts
---@field permission_mode string|false|nil Overrides `terminal.permission_mode`
---@field cb fun(err: string?, started: claude_context.Started?)? Once it started (or failed)
---@field on_failed fun(err: string)? The service then lists it as failed, or never lists it

---Sessions this editor started, by name.
---@type table<string, claude_context.Started>
M.started = {}

---How old the cache may be before |list| asks for a fresh one (ms).
M.STALE_MS = 2000

---The project root: the git work tree of Neovim's current directory, or nil and why not.
---@return string? root, string? err
function M.root()
  local cwd = vim.fn.getcwd()
  local root = names.project_of(cwd)
  if not root then
    return nil, ("%s is not in a git repository: background sessions work in git worktrees"):format(cwd)
  end
  return root
end

---Bumped when what the list (claude_context.agents.list) is made of changes outside the
---service's list.
M.generation = 0

---Ids the plugin itself is stopping (no "ended outside Neovim" message for them).
---@type table<string, boolean>
M.stopping = {}

local watching = false

---Refreshes the cache when a hook event arrives (a session started, finished, ended).
function M.watch()
  if watching then
    return
  end
  watching = true
  local pending = false
  vim.api.nvim_create_autocmd("User", {
    group = vim.api.nvim_create_augroup("ClaudeContextAgents", { clear = true }),
    pattern = "ClaudeContextSessionState",
    callback = function()
      M.generation = M.generation + 1
      if pending then
        return
      end
      pending = true
      vim.defer_fn(function()
        pending = false
        cli.refresh()
      end, 200)
    end,
    desc = "claude-context: refresh the background sessions' list",
  })
end

return M
