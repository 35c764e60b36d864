---@mod claude_context.conversations.picker :ClaudeContext conversations
---
--- The project's conversations in the picker the sessions picker uses (`sessions.picker`:
--- snacks, telescope, fzf-lua or vim.ui.select; claude_context.agents.pickers), newest first,
--- with a preview (snacks, telescope) and a key per action; <CR> (and vim.ui.select's choice)
--- opens the actions menu.

local M = {}

local conversations = require("claude_context.conversations")
local notify = require("claude_context.util.notify")

---Each action's key, in the order the title shows them.
M.KEYS = {
  { action = "transcript", key = "<M-t>" },
  { action = "resume", key = "<M-r>" },
  { action = "background", key = "<M-b>" },
  { action = "fork", key = "<M-f>" },
  { action = "copy id", key = "<M-y>" },
}

---The actions, as the menu names them.
M.ACTIONS = { "transcript", "resume", "background", "fork", "copy id" }

---A time as the picker shows it.
local function when(ms)
  return ms and os.date("%Y-%m-%d %H:%M", math.floor(ms / 1000)) or "?"
end

---Text from the files on one line, without control characters.
local function clean(s)
  return (tostring(s or ""):gsub("[%c]", " "))
end

---One conversation's line.
---@param c claude_context.Conversation
---@return string
function M.format(c)
  local tags = {}
  if c.running then
    tags[#tags + 1] = "running"
  end
  if c.worktree then
    tags[#tags + 1] = "wt:" .. clean(c.worktree)
  end
  local cost = c.cost_usd and c.cost_usd > 0 and ("$%.2f"):format(c.cost_usd) or ""
  return ("%s  %-60s  %3d prompts %s%s"):format(
    when(c.updated_ms),
    clean(c.title):sub(1, 60),
    c.prompts or 0,
    cost,
    #tags > 0 and ("  [" .. table.concat(tags, ", ") .. "]") or ""
  )
end

---One conversation's preview (Markdown lines).
---@param c claude_context.Conversation
---@return string[]
function M.preview(c)
  local out = {
    "# " .. clean(c.title),
    "",
    "- id: `" .. clean(c.id) .. "`",
    "- started: " .. when(c.started_ms) .. ", last: " .. when(c.updated_ms),
    ("- %d prompts, %d bytes%s"):format(
      c.prompts or 0,
      c.bytes or 0,
      c.partial and " (a large file: read in part)" or ""
    ),
  }
  if c.cwd then
    out[#out + 1] = "- in: "
      .. clean(vim.fn.fnamemodify(c.cwd, ":~"))
      .. (c.branch and (" (" .. clean(c.branch) .. ")") or "")
  end
  if c.cost_usd then
    out[#out + 1] = ("- cost: $%.4f"):format(c.cost_usd)
  end
  if c.running then
    out[#out + 1] = "- running now"
  end
  for _, k in ipairs({ "first_prompt", "last_prompt" }) do
    if c[k] then
      vim.list_extend(out, { "", "## " .. (k == "first_prompt" and "First prompt" or "Last prompt"), "", clean(c[k]) })
    end
  end
  if c.matches and #c.matches > 0 then
    vim.list_extend(out, { "", "## Matches", "" })
    for _, m in ipairs(c.matches) do
      out[#out + 1] = ("- %s %s: %s"):format(when(m.ts), clean(m.role), clean(m.text))
    end
  end
  return out
end

---Runs action `a` on conversation `c`.
---@param a string
---@param c claude_context.Conversation
function M.act(a, c)
  local ok, err = true, nil
  if a == "transcript" then
    ok, err = conversations.open_transcript(c.id)
  elseif a == "resume" then
    ok, err = conversations.resume(c.id)
  elseif a == "fork" then
    ok, err = conversations.resume(c.id, true)
  elseif a == "background" then
    conversations.resume_background(c)
  elseif a == "copy id" then
    conversations.copy_id(c.id)
  end
  if not ok then
    notify.error("claude-context: " .. tostring(err))
  end
end

---The actions menu of conversation `c`.
---@param c claude_context.Conversation
function M.menu(c)
  vim.ui.select(M.ACTIONS, { prompt = ("%s: "):format(clean(c.title):sub(1, 40)) }, function(a)
    if a then
      M.act(a, c)
    end
  end)
end

---How long formatting the lines may hold the main thread per event-loop turn (ms): a thousand
---conversations are formatted over a few turns, then handed to the picker.
M.SLICE_MS = 4

---Shows `list` in the picker, its lines formatted first in slices (every picker formats every
---entry at once otherwise).
---@param list claude_context.Conversation[]
---@param title string
function M.show(list, title)
  local lines = {}
  require("claude_context.ide.slices").each(list, M.SLICE_MS, function(c)
    lines[c] = M.format(c)
  end, function()
    M.show_formatted(list, title, function(c)
      return lines[c] or M.format(c)
    end)
  end)
end

---Shows `list` in the picker, `format` giving each line.
---@param list claude_context.Conversation[]
---@param title string
---@param format fun(c: claude_context.Conversation): string
function M.show_formatted(list, title, format)
  local pickers = require("claude_context.agents.pickers")
  local adapter, name, why = pickers.resolve(require("claude_context.config.sessions").options().picker)
  if why then
    notify("claude-context: " .. why, vim.log.levels.WARN)
  end
  local ok, err = pcall(adapter.pick, {
    entries = list,
    source = "conversations",
    prompt = name == "select" and title or ("%s  (<CR> actions  %s)"):format(title, pickers.keys_hint(M.KEYS)),
    format = format,
    preview = M.preview,
    keys = M.KEYS,
    default = M.menu,
    action = M.act,
    closed = function() end,
  })
  if not ok then
    notify.error(("claude-context: the %s picker failed: %s"):format(name, tostring(err)))
  end
end

---`:ClaudeContext conversations [text]`: the project's conversations (those whose messages
---contain `query` when given) in the picker.
---@param opts {query?:string, all?:boolean}?
function M.pick(opts)
  opts = opts or {}
  conversations.list(opts, function(list, err)
    if err then
      return notify.error(err)
    end
    if #list == 0 then
      return notify(
        opts.query and ("claude-context: no conversation of this project mentions %q"):format(opts.query)
          or "claude-context: no Claude conversation in this project yet"
      )
    end
    M.show(list, opts.query and ("Claude conversations with %q"):format(opts.query) or "Claude conversations")
  end)
end

return M
