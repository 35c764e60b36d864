---@mod claude_context.agents.pickers.fzf_lua The sessions picker in fzf-lua
---
--- Over fzf-lua's documented `fzf_exec(contents, opts)`: the lines, each prefixed with its index
--- and a tab (hidden: `--with-nth=2..`), and `actions` keyed by fzf's key names ("default",
--- "alt-a", …), each given the selected lines; `winopts.on_close` when it closes.

-- The picker plugin is optional (this module loads only when it is installed): the type checker
-- has not got it.
---@diagnostic disable: unresolved-require

local M = {}

---Whether fzf-lua is installed.
---@return boolean
function M.available()
  return (pcall(require, "fzf-lua"))
end

---fzf's name of a key written as Neovim writes it: "<M-a>" is "alt-a", "<C-x>" "ctrl-x".
---@param key string
---@return string
function M.fzf_key(key)
  local mod, k = key:match("^<([MmAaCc])%-(.+)>$")
  if not mod then
    return key
  end
  return ((mod == "C" or mod == "c") and "ctrl-" or "alt-") .. k:lower()
end

---@param p claude_context.AgentsPick
function M.pick(p)
  local fzf = require("fzf-lua")
  local lines = {}
  for i, e in ipairs(p.entries) do
    lines[i] = ("%d\t%s"):format(i, p.format(e))
  end
  local function entry(selected)
    local i = selected and selected[1] and tonumber(selected[1]:match("^(%d+)\t"))
    return i and p.entries[i]
  end
  local actions = {
    ["default"] = function(selected)
      p.closed()
      local e = entry(selected)
      if e then
        p.default(e)
      end
    end,
  }
  for _, k in ipairs(p.keys) do
    actions[M.fzf_key(k.key)] = function(selected)
      p.closed()
      local e = entry(selected)
      if e then
        p.action(k.action, e)
      end
    end
  end
  fzf.fzf_exec(lines, {
    prompt = p.prompt .. "> ",
    fzf_opts = {
      ["--delimiter"] = "\t",
      ["--with-nth"] = "2..",
      ["--no-multi"] = true,
      -- The keys above the list (the prompt stays short).
      ["--header"] = require("claude_context.agents.pickers").keys_hint(p.keys),
    },
    actions = actions,
    winopts = {
      on_close = function()
        p.closed()
      end,
    },
  })
end

return M
