---@mod claude_context.usage What each session cost, as Claude Code wrote it
---
--- `usage()` returns one entry for every session the plugin knows (its terminals' and the
--- background sessions the hooks reported): `{ session, name, cost_usd, lines_added,
--- lines_removed, api_ms, context_pct }`. The figures are Claude Code's own: the last
--- `cost-state` record of the session's conversation file (crates/core/src/transcript/), read
--- off the main thread — only the bytes added since the last read — whenever a session's state
--- changes. A session whose CLI wrote none yet has nil figures. `context_pct`: how full the
--- context window was at the last answer (its input tokens, the cache's included, over the
--- model's window: 200,000 tokens, 1,000,000 for a `[1m]` model).
---
--- `statusline()`: "$0.12 · all $0.40" (the current session's and the total); "" when nothing
--- cost anything yet. `lualine()`: the same as a lualine component.

local M = {}

---A session's figures, as Claude Code wrote them.
---@class claude_context.UsageFigures
---@field cost_usd number?
---@field api_ms integer?
---@field lines_added integer?
---@field lines_removed integer?
---@field context_pct number?

---What `require("claude_context").usage()` lists for one session.
---@class claude_context.Usage: claude_context.UsageFigures
---@field session string Claude's session id
---@field name string

---What was read of one session's conversation file.
---@class claude_context.UsageRead
---@field offset integer
---@field path string?
---@field reading boolean?
---@field usage claude_context.UsageFigures?

---What was read, by session id: `{ offset, usage = { cost_usd, api_ms, lines_added,
---lines_removed, context_pct }?, reading, path }`.
---@type table<string, claude_context.UsageRead>
M.known = {}

local function cwds_of(s)
  local out = { vim.fn.getcwd() }
  if s.cwd then
    out[#out + 1] = s.cwd
  end
  return out
end

---Reads what session `s`'s conversation file added since the last read (its cost records);
---`done()` afterwards.
---@param s claude_context.Session
---@param done fun()?
function M.refresh_one(s, done)
  local k = M.known[s.id] or { offset = 0 }
  M.known[s.id] = k
  local native = require("claude_context.native").get()
  if k.reading or not native or not native.transcript_read then
    if done then
      done()
    end
    return
  end
  k.reading = true
  local q = { id = not k.path and s.id or nil, path = k.path, cwds = cwds_of(s), offset = k.offset, usage_only = true }
  native.transcript_read(vim.json.encode(q), function(err, answer)
    k.reading = false
    if not err then
      local nl = answer:find("\n", 1, true) or (#answer + 1)
      local ok, h = pcall(vim.json.decode, answer:sub(1, nl - 1), { luanil = { object = true } })
      if ok then
        k.path, k.offset = h.path, h.offset
        -- What the new bytes said over what the earlier ones did (a piece may hold an answer's
        -- token counts and no cost record).
        local before = not h.reset and k.usage or nil
        k.usage = h.usage and vim.tbl_extend("force", before or {}, h.usage) or before
      end
    end
    if not k.usage and s.state == "ended" then
      k.usage = M.saved(s)
    end
    if done then
      done()
    end
    pcall(vim.cmd.redrawstatus)
  end)
end

---Claude Code's config file (`$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`).
local function config_file()
  local d = vim.env.CLAUDE_CONFIG_DIR
  if d and d ~= "" then
    return d .. "/.claude.json"
  end
  return (vim.env.HOME or "") .. "/.claude.json"
end

---What the CLI saved of session `s` when it ended (its project's `lastCost`, … when its
---`lastSessionId` is `s.id`), or nil.
---@param s claude_context.Session
---@return claude_context.UsageFigures?
function M.saved(s)
  local text = require("claude_context.util.small_file").read(config_file(), 4 * 1024 * 1024)
  local ok, cfg = pcall(vim.json.decode, text or "", { luanil = { object = true } })
  if not ok or type(cfg) ~= "table" or type(cfg.projects) ~= "table" then
    return nil
  end
  for _, p in pairs(cfg.projects) do
    if type(p) == "table" and p.lastSessionId == s.id and type(p.lastCost) == "number" then
      return {
        cost_usd = p.lastCost,
        api_ms = p.lastAPIDuration,
        lines_added = p.lastLinesAdded,
        lines_removed = p.lastLinesRemoved,
      }
    end
  end
  return nil
end

local function sessions()
  return require("claude_context.sessions.state").list()
end

---Reads every known session's new cost records; `done()` once all are read.
---@param done fun()?
function M.refresh(done)
  local list = sessions()
  local one = require("claude_context.util.join").countdown(#list, done or function() end)
  for _, s in ipairs(list) do
    M.refresh_one(s, one)
  end
end

---One entry for every session the plugin knows.
---@return claude_context.Usage[]
function M.usage()
  local out = {}
  for _, s in ipairs(sessions()) do
    local u = (M.known[s.id] or {}).usage or {}
    out[#out + 1] = {
      session = s.id,
      name = s.name,
      cost_usd = u.cost_usd,
      lines_added = u.lines_added,
      lines_removed = u.lines_removed,
      api_ms = u.api_ms,
      context_pct = u.context_pct,
    }
  end
  return out
end

---"$0.12 · all $0.40": the current session's cost and every session's; "" when none cost
---anything yet.
---@return string
function M.statusline()
  local total, any = 0, false
  for _, e in ipairs(M.usage()) do
    if e.cost_usd then
      total, any = total + e.cost_usd, true
    end
  end
  if not any then
    return ""
  end
  local cur = require("claude_context.follow.trail").current()
  local mine = cur and (M.known[cur.id] or {}).usage
  local head = mine and mine.cost_usd and ("$%.2f · "):format(mine.cost_usd) or ""
  return ("%sall $%.2f"):format(head, total)
end

---A lualine component with the costs: `lualine_x = { require("claude_context.usage").lualine() }`.
---@return claude_context.LualineComponent
function M.lualine()
  M.start()
  return {
    function()
      return M.statusline()
    end,
  }
end

local group

---Reads the cost records again whenever a session's state changes (a turn ended: Claude Code
---wrote its cost); idempotent.
function M.start()
  group = group
    or require("claude_context.util.autocmds").group("ClaudeContextUsage", {
      {
        "User",
        function(ev)
          local s = type(ev.data) == "table" and ev.data.session
          if type(s) == "table" and s.id then
            M.refresh_one(s)
          end
        end,
        pattern = "ClaudeContextSessionState",
      },
    })
end

return M
