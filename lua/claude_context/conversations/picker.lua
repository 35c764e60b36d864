---@mod claude_context.conversations.picker :ClaudeContext conversations
---
--- The project's conversations in the picker the sessions picker uses (`sessions.picker`:
--- snacks, telescope, fzf-lua or vim.ui.select; claude_context.agents.pickers), newest first,
--- with a preview (snacks, telescope) and a key per action; <CR> (and vim.ui.select's choice)
--- opens the actions menu.

local M = {}

local conversations = require("claude_context.conversations")
local notify = require("claude_context.util.notify")

---Each action's key, in the order the hint shows them (claude_context.agents.pickers.keys_hint).
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

---The list line's columns before the title, each as wide on every line: the time, ● while it
---runs, the worktree (or branch), the prompts and the cost, 45 columns in all, so that they
---show in a narrow list (snacks' default layout gives it 58 in a 120-column editor; under 120
---it puts the preview below a list of 80); the title last, at most TITLE_MAX.
M.TAG_WIDTH = 12
M.TITLE_MAX = 80

---`s` cut to `width` columns ("…" its last when cut), padded to `width` when `pad`.
---@param s string
---@param width integer
---@param pad boolean?
---@return string
local function fit(s, width, pad)
  local n = vim.api.nvim_strwidth(s)
  if n > width then
    s = vim.fn.strcharpart(s, 0, width - 1) .. "…"
    n = vim.api.nvim_strwidth(s)
  end
  return pad and s .. (" "):rep(width - n) or s
end

---A time as the list line shows it, 11 columns: "11-29 08:51" this year, else "2025-11-29 ".
---@param ms integer?
---@return string
local function short_when(ms)
  local t = ms and math.floor(ms / 1000)
  if not t then
    return ("%-11s"):format("?")
  end
  return os.date("%Y", t) == os.date("%Y") and os.date("%m-%d %H:%M", t) or os.date("%Y-%m-%d ", t)
end

---"1 prompt", "2 prompts".
---@param n integer?
---@return string
local function prompts(n)
  n = n or 0
  return ("%d prompt%s"):format(n, n == 1 and "" or "s")
end

---One conversation's line: its time, ● while it runs, its worktree ("wt:NAME", else its
---branch), prompts and cost, then its title.
---@param c claude_context.Conversation
---@return string
function M.format(c)
  local tag = c.worktree and ("wt:" .. clean(c.worktree)) or clean(c.branch)
  local cost = c.cost_usd and c.cost_usd > 0 and ("$%.2f"):format(c.cost_usd) or ""
  return ("%s %s %s %10s %6s %s"):format(
    short_when(c.updated_ms),
    c.running and "●" or " ",
    fit(tag, M.TAG_WIDTH, true),
    prompts(c.prompts),
    cost,
    fit(clean(c.title), M.TITLE_MAX)
  )
end

---A file's size in few digits: "512 B", "704 KiB", "3.2 MiB".
---@param n integer?
---@return string
local function size(n)
  n = n or 0
  if n < 1024 then
    return ("%d B"):format(n)
  elseif n < 1024 * 1024 then
    return ("%d KiB"):format(math.floor(n / 1024 + 0.5))
  end
  return ("%.1f MiB"):format(n / (1024 * 1024))
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
    ("- %s, %s%s"):format(prompts(c.prompts), size(c.bytes), c.partial and ", partly read" or ""),
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
  -- Each on a turn of its own: the listing's answer, the slices of formatting, the picker (its
  -- first use loads its modules).
  vim.defer_fn(function()
    require("claude_context.ide.slices").each(list, M.SLICE_MS, function(c)
      lines[c] = M.format(c)
    end, function()
      vim.defer_fn(function()
        M.show_formatted(list, title, function(c)
          return lines[c] or M.format(c)
        end)
      end, 0)
    end)
  end, 0)
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
    prompt = title,
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
