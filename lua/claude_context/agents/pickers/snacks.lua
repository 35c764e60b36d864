---@mod claude_context.agents.pickers.snacks The sessions picker in snacks.nvim's picker
---
--- Over snacks.nvim's picker API: `Snacks.picker.pick(opts)` with a `finder` giving the items
--- (each with its `text`, matched and shown by `format`), `confirm(picker, item)`, named
--- `actions` and their keys in `win.input.keys`, and `on_close(picker)`; a new list while it is
--- open: the picker's `find()` runs the finder again.

local M = {}

local function api()
  local snacks = rawget(_G, "Snacks")
  local picker = type(snacks) == "table" and snacks.picker
  if type(picker) == "table" or type(picker) == "function" then
    local ok, pick = pcall(function()
      return picker.pick
    end)
    if ok and type(pick) == "function" then
      return pick
    end
  end
end

---Whether snacks.nvim's picker is set up.
---@return boolean
function M.available()
  return api() ~= nil
end

---@param p claude_context.AgentsPick
function M.pick(p)
  local pick = assert(api(), "snacks.nvim's picker is not set up")
  local items
  local function set(entries)
    items = {}
    for i, e in ipairs(entries) do
      items[i] = { idx = i, text = p.format(e), entry = e }
    end
  end
  set(p.entries)
  local actions, keys = {}, {}
  for _, k in ipairs(p.keys) do
    local name = "claude_context_" .. k.action
    actions[name] = function(picker, item)
      if item then
        picker:close()
        p.action(k.action, item.entry)
      end
    end
    keys[k.key] = { name, mode = { "n", "i" }, desc = k.action }
  end
  -- The keys beside the list, as many as fit (the title stays short; `?` lists them all).
  local hint = require("claude_context.agents.pickers").keys_hint
  -- No preview (the sessions): snacks' compact "select" layout, as its own vim.ui.select has (the
  -- default one is a screen-high box for a few lines), as wide as the default (a session's line
  -- is longer than the select's 100 columns), the keys in its footer.
  local width = math.min(160, math.floor(vim.o.columns * 0.8))
  ---@type string|fun(ctx: any)
  local preview = "none"
  ---@type {preset: string, layout: {width: number, max_width: integer, footer: string, footer_pos: string}}?
  local layout = {
    preset = "select",
    layout = { width = 0.8, max_width = 160, footer = " " .. hint(p.keys, width - 6) .. " ", footer_pos = "center" },
  }
  if p.preview then
    -- An entry's preview (the conversations picker): its lines, as Markdown, the keys its title.
    preview = function(ctx)
      ctx.preview:reset()
      ctx.preview:set_lines(p.preview(ctx.item.entry))
      ctx.preview:highlight({ ft = "markdown" })
      -- Long prompts wrap between words.
      ctx.preview:wo({ linebreak = true })
      local win = ctx.win
      ctx.preview:set_title(
        hint(p.keys, win and vim.api.nvim_win_is_valid(win) and vim.api.nvim_win_get_width(win) - 2 or nil)
      )
    end
    layout = nil
  end
  local picker = pick({
    source = p.source or "claude_context_agents",
    title = p.prompt,
    -- A finder (not fixed `items`): a refresh while open runs it again (`picker:find()`).
    finder = function()
      return items
    end,
    format = function(item)
      return { { item.text } }
    end,
    preview = preview,
    layout = layout,
    confirm = function(picker, item)
      picker:close()
      if item then
        p.default(item.entry)
      end
    end,
    actions = actions,
    win = { input = { keys = keys }, list = { keys = keys } },
    on_close = function()
      p.closed()
    end,
  })
  return function(entries)
    set(entries)
    if type(picker) == "table" and not picker.closed and type(picker.find) == "function" then
      picker:find()
    end
  end
end

return M
