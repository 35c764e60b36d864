---@mod claude_context.agents.pickers The sessions picker: vim.ui.select, snacks, telescope or fzf-lua
---
--- Every adapter has the same shape (|claude_context.AgentsPicker|): it shows the entries, each
--- as the line `format` gives, and runs `default(e)` for the one chosen (the actions menu) or
--- `action(name, e)` for an action's key. `sessions.picker` chooses one ("auto": snacks.nvim's
--- picker when it is set up, else telescope, else fzf-lua, else |vim.ui.select()|); one asked
--- for but not installed falls back to vim.ui.select, with a message.

local M = {}

---What an adapter is given.
---@class claude_context.AgentsPick
---@field entries claude_context.Agent[] the sessions (claude_context.agents entries)
---@field prompt string the picker's title (short: the adapters show the keys, |keys_hint()|, apart)
---@field format fun(e: claude_context.Agent): string one entry's line
---@field keys {action:string, key:string}[] each action's key, in the order shown
---@field default fun(e: claude_context.Agent) the entry chosen (<CR>): the actions menu
---@field action fun(name: string, e: claude_context.Agent) an action's key pressed on an entry
---@field closed fun() the picker closed (called once, however often)
---@field preview (fun(e: claude_context.Agent): string[])? an entry's preview lines (Markdown; snacks and telescope show it)
---@field source string? the picker's source name (snacks)

---@class claude_context.AgentsPicker
---@field available fun(): boolean installed (and set up, for snacks)
---@field pick fun(p: claude_context.AgentsPick): fun(entries: claude_context.Agent[])? shows the picker; returns, when the picker can show a new list while open (snacks, telescope), the function that shows `entries` instead

---The adapters, in the order "auto" tries them.
M.ORDER = { "snacks", "telescope", "fzf-lua", "select" }

local MODULES = {
  snacks = "claude_context.agents.pickers.snacks",
  telescope = "claude_context.agents.pickers.telescope",
  ["fzf-lua"] = "claude_context.agents.pickers.fzf_lua",
  select = "claude_context.agents.pickers.select",
}

---Each action's key in the pickers that take keys (snacks, telescope, fzf-lua), in the order
---the hint shows them (|keys_hint()|).
M.KEYS = {
  { action = "attach", key = "<M-a>" },
  { action = "review", key = "<M-r>" },
  { action = "land", key = "<M-l>" },
  { action = "discard", key = "<M-d>" },
  { action = "stop", key = "<M-s>" },
}

---The adapter `name` names ("auto": the first one available) and its name; a named one not
---available gives vim.ui.select's and a message.
---@param name string?
---@return claude_context.AgentsPicker adapter, string name, string? why
function M.resolve(name)
  name = name or "auto"
  if name == "auto" then
    for _, n in ipairs(M.ORDER) do
      local a = require(MODULES[n])
      if a.available() then
        return a, n
      end
    end
  end
  local a = MODULES[name] and require(MODULES[name])
  if a and a.available() then
    return a, name
  end
  return require(MODULES.select),
    "select",
    ("sessions.picker = %q is not installed (or not set up): vim.ui.select instead"):format(tostring(name))
end

---The keys as the pickers show them beside the list (snacks: the preview's title, else the
---box's footer; telescope: the results' title; fzf-lua: its header): "<CR> actions", then each
---action's key (`keys`, default the sessions picker's), as many as fit in `width` columns (all
---without it), "…" closing a list cut short (snacks' `?` lists them all).
---@param keys {action:string, key:string}[]?
---@param width integer?
---@return string
function M.keys_hint(keys, width)
  keys = keys or M.KEYS
  local out = "<CR> actions"
  for i, k in ipairs(keys) do
    local part = ("  %s %s"):format(k.key, k.action)
    if width and #out + #part + (i < #keys and 3 or 0) > width then
      return out .. "  …"
    end
    out = out .. part
  end
  return out
end

return M
