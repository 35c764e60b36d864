---@mod claude_context.conversations Every conversation of the project, listed, searched, resumed
---
--- Claude Code keeps each conversation in `$CLAUDE_CONFIG_DIR/projects/<folder>/<id>.jsonl`
--- (default `~/.claude`). The native library lists and searches them off the main thread
--- (`native.conversations`, crates/core/src/conversations/): the project's own and its
--- worktrees' (background sessions), newest first. Here: the Lua API, what "running" means to
--- the plugin, and the actions (resume in the terminal or in the background, fork).
---
--- `list(opts, on_done)`: `on_done(list, err)` with `{ id, title, cwd, branch, worktree,
--- started_ms, updated_ms, prompts, first_prompt, last_prompt, cost_usd, running, bytes,
--- matches? }`; `opts.all`: every project; `opts.query`: only conversations whose messages
--- contain the text, each with `matches` (`{ ts, role, text }`). The last list of a listing is
--- kept here with its generation: the library answers "unchanged", the entries that changed,
--- or the whole list, and each caller gets a copy of its own.

local M = {}

---A message of a conversation that matches a query.
---@class claude_context.ConversationMatch
---@field ts string?
---@field role string
---@field text string

---A conversation (crates/core/src/conversations/mod.rs: Conversation).
---@class claude_context.Conversation
---@field id string
---@field title string
---@field cwd string?
---@field branch string?
---@field worktree string? The background session's worktree it ran in
---@field started_ms integer?
---@field updated_ms integer
---@field prompts integer
---@field first_prompt string?
---@field last_prompt string?
---@field cost_usd number?
---@field running boolean A live Claude Code process has it open
---@field bytes integer
---@field folder string The folder under `projects/` it is in
---@field partial boolean Only part of the file was read
---@field matches claude_context.ConversationMatch[]? With `opts.query`

---@class claude_context.ConversationsOpts
---@field all boolean? Every project's
---@field query string? Only those whose messages contain the text
---@field root string? The project (default: this one)

local notify = require("claude_context.util.notify")

---The project whose conversations are listed: the worktree's project when Neovim runs in one of
---its background-session worktrees, else the git work tree, else the current directory.
---@return string
function M.root()
  local cwd = vim.fn.getcwd()
  return require("claude_context.agents.names").project_of(cwd) or cwd
end

---Session ids the plugin knows are live: its terminals' and background sessions' (from the hooks
---and Claude Code's own list), not ended.
---@return table<string, boolean>
function M.known_running()
  local out = {}
  local ok, list = pcall(require("claude_context.sessions.state").list)
  for _, s in ipairs(ok and list or {}) do
    if s.id and s.state ~= "ended" then
      out[s.id] = true
    end
  end
  local agents = package.loaded["claude_context.agents.list"]
  if agents then
    local aok, alist = pcall(agents.list)
    for _, e in ipairs(aok and alist or {}) do
      local sid = e.hook_session_id or e.session_id
      if sid and e.kind == "background" and e.state ~= "ended" then
        out[sid] = true
      end
    end
  end
  return out
end

---The ids the last listing of the project found (newest first), for completion.
---@type string[]
M.ids = {}

---The last list of a listing as the library gave it, and its generation (the library answers
---what changed since: nothing, a few entries, or the whole list).
---@class claude_context.KeptConversations
---@field generation integer
---@field list claude_context.Conversation[]

---The last list of each listing (by project, or every project's), kept here and never handed
---out: each answer is a copy, so a caller's edits cannot change a later one.
---@type table<string, claude_context.KeptConversations>
local kept = {}

---What the library answers a caller that keeps a list (`since`).
---@class claude_context.ConversationsReply
---@field generation integer?
---@field list claude_context.Conversation[]?
---@field unchanged boolean?
---@field base integer?
---@field changed claude_context.Conversation[]?
---@field removed string[]?

---Newest first, then by id (the library's order).
---@param a claude_context.Conversation
---@param b claude_context.Conversation
---@return boolean
local function newer(a, b)
  if a.updated_ms ~= b.updated_ms then
    return a.updated_ms > b.updated_ms
  end
  return a.id < b.id
end

---`k`'s list with `changed` put in (by id) and the ids of `removed` taken out, sorted again.
---@param k claude_context.KeptConversations
---@param changed claude_context.Conversation[]
---@param removed string[]
local function patch(k, changed, removed)
  local drop = {}
  for _, id in ipairs(removed) do
    drop[id] = true
  end
  for _, c in ipairs(changed) do
    drop[c.id] = true
  end
  local list = {}
  for _, c in ipairs(k.list) do
    if not drop[c.id] then
      list[#list + 1] = c
    end
  end
  for _, c in ipairs(changed) do
    list[#list + 1] = c
  end
  table.sort(list, newer)
  k.list = list
end

---The list that listing `key`'s answer `ans` stands for, kept for the next call; nil when it
---speaks of a generation not kept here (then the whole list is asked for).
---@param key string
---@param ans claude_context.ConversationsReply|claude_context.Conversation[]
---@return claude_context.Conversation[]?
local function take(key, ans)
  if ans.generation == nil then
    -- A library that does not keep lists: a plain list, the caller's own.
    kept[key] = nil
    return ans --[[@as claude_context.Conversation[] ]]
  end
  local k = kept[key]
  if ans.list then
    k = { generation = ans.generation, list = ans.list }
  elseif ans.unchanged and k and k.generation == ans.generation then
    return k.list
  elseif ans.changed and k and k.generation == ans.base then
    patch(k, ans.changed, ans.removed or {})
    k.generation = ans.generation
  else
    kept[key] = nil
    return nil
  end
  kept[key] = k
  return k.list
end

---A copy of `list` (each entry too) for the caller: what it changes is not the kept list.
---@param list claude_context.Conversation[]
---@return claude_context.Conversation[]
local function handed_out(list)
  local out = {}
  for i, c in ipairs(list) do
    local e = {}
    for k, v in pairs(c) do
      e[k] = v
    end
    out[i] = e
  end
  return out
end

---The list the library answered (`ans`) as the caller gets it: the kept list's copy for a
---listing (`key`), `running` set for the sessions running now; nil when the answer speaks of a
---generation not kept here (ask again for the whole list).
---@param key string?
---@param ans claude_context.ConversationsReply|claude_context.Conversation[]|string
---@param mine boolean whether the list is this project's listing (`M.ids` then)
---@return claude_context.Conversation[]?
local function answered(key, ans, mine)
  -- A table built by the library (an older one answered JSON text).
  if type(ans) == "string" then
    ans = vim.json.decode(ans, { luanil = { object = true, array = true } })
  end
  local list = ans --[[@as claude_context.Conversation[] ]]
  if key then
    local whole = take(key, ans --[[@as claude_context.ConversationsReply]])
    if not whole then
      return nil
    end
    list = handed_out(whole)
  end
  local live, ids = M.known_running(), {}
  for _, c in ipairs(list) do
    c.running = c.running or live[c.id] == true
    ids[#ids + 1] = c.id
  end
  if mine then
    M.ids = ids
  end
  return list
end

---Lists the conversations (see the module's doc); `on_done(list, err)` on the main thread later.
---@param opts claude_context.ConversationsOpts?
---@param on_done fun(list: claude_context.Conversation[], err: string?)
function M.list(opts, on_done)
  opts = opts or {}
  vim.validate("on_done", on_done, "function")
  local native, missing = require("claude_context.native").get()
  if not native or not native.conversations then
    vim.schedule(function()
      on_done(
        {},
        missing or "claude-context: this native library has no conversations(): rebuild it (:ClaudeContext build)"
      )
    end)
    return
  end
  local cache = vim.fn.stdpath("cache")
  if vim.fn.isdirectory(cache) == 0 then
    pcall(vim.fn.mkdir, cache, "p")
  end
  local req = {
    root = not opts.all and (opts.root or M.root()) or nil,
    all = opts.all == true,
    query = (type(opts.query) == "string" and opts.query ~= "") and opts.query or nil,
    -- The listing's cache is kept there between editor sessions.
    cache_dir = cache,
  }
  -- A listing (not a query's) is kept here: the library answers what changed since.
  local key = not req.query and (req.all and "\0all" or req.root) or nil
  if key then
    req.since = kept[key] and kept[key].generation or 0
  end
  native.conversations(vim.json.encode(req), function(err, ans)
    if err then
      return on_done({}, err)
    end
    local list = answered(key, ans, not req.all and not req.query)
    if not list then
      return M.list(opts, on_done)
    end
    on_done(list)
  end)
end

---`on_done(c)` with the conversation `id` of the project (nil when there is none).
---@param id string
---@param on_done fun(c: claude_context.Conversation?, err: string?)
function M.find(id, on_done)
  M.list({}, function(list, err)
    for _, c in ipairs(list) do
      if c.id == id then
        return on_done(c)
      end
    end
    on_done(nil, err or ("no conversation %s in this project"):format(id))
  end)
end

---Whether `id` looks like a session id (nothing else is passed to the CLI).
---@param id any
---@return boolean
function M.valid_id(id)
  return type(id) == "string" and #id <= 200 and id:match("^[%w_][%w_%-]*$") ~= nil
end

---A terminal session's name for resuming `id` (the current one when it runs nothing).
local function session_name(id)
  return "resume " .. id:sub(1, 8)
end

---Resumes conversation `id` in Claude's terminal (`claude --resume ID`, `--fork-session` with
---`fork`): in the current terminal session when it runs nothing, else in a new one of its own.
---@param id string
---@param fork boolean?
---@return boolean ok, string? err
function M.resume(id, fork)
  if not M.valid_id(id) then
    return false, ("not a session id: %s"):format(vim.inspect(id))
  end
  local extra = { "--resume", id }
  if fork then
    extra[#extra + 1] = "--fork-session"
  end
  local terminal = require("claude_context.terminal")
  local sessions = require("claude_context.terminal.sessions")
  sessions.sync_tab()
  if sessions.job_running() then
    if #sessions.windows() > 0 then
      terminal.hide()
    end
    sessions.select(session_name(id) .. (fork and " fork" or ""))
    if sessions.job_running() then
      return terminal.show()
    end
  end
  return terminal.show(extra)
end

---Resumes conversation `c` as a background session (`claude --bg --resume ID`, with the
---plugin's MCP server and hooks), in the directory it ran in when that still exists.
---@param c claude_context.Conversation
---@param cb fun(err: string?)?
function M.resume_background(c, cb)
  local done = cb or function(err)
    if err then
      notify.error("claude-context: " .. err)
    end
  end
  if not M.valid_id(c.id) then
    return done(("not a session id: %s"):format(vim.inspect(c.id)))
  end
  local cli = require("claude_context.agents.cli")
  local launch = require("claude_context.agents.launch")
  local exe, why = cli.exe()
  if not exe then
    return done(why)
  end
  local relay = require("claude_context.sessions.hooks").binary()
  if not relay then
    return done("claude-context-mcp is not built (run `make` in the plugin's directory)")
  end
  cli.features(exe, function(f)
    if not f.bg then
      return done(cli.too_old("bg"))
    end
    local argv = { exe, "--bg", "--resume", c.id, "--mcp-config=" .. launch.mcp_config(relay) }
    local topts = require("claude_context.config.terminal").options()
    local settings = launch.settings(relay, topts.env)
    if settings then
      argv[#argv + 1] = "--settings=" .. settings
    end
    local cwd = (c.cwd and vim.fn.isdirectory(c.cwd) == 1) and c.cwd or M.root()
    cli.run(argv, { cwd = cwd, env = cli.env() }, function(r)
      local id = cli.parse_started((r.stdout or "") .. "\n" .. (r.stderr or ""))
      if r.code ~= 0 then
        local msg = vim.trim((r.stderr ~= "" and r.stderr) or r.stdout or "")
        return done(("claude --bg --resume failed (exit %s): %s"):format(r.code, msg:sub(1, 400)))
      end
      cli.refresh()
      notify(
        ("claude-context: conversation %s resumed in the background%s"):format(c.id, id and (" (" .. id .. ")") or "")
      )
      done(nil)
    end)
  end)
end

---Copies `id` to the unnamed register and the clipboard registers.
---@param id string
function M.copy_id(id)
  vim.fn.setreg('"', id)
  if vim.fn.has("clipboard") == 1 then
    pcall(vim.fn.setreg, "+", id)
  end
  notify("claude-context: copied " .. id)
end

---Opens conversation `id`'s transcript (claude_context.transcript, `require("claude_context").transcript`).
---@param id string
---@return boolean ok, string? err
function M.open_transcript(id)
  local opened, err = pcall(function()
    return require("claude_context.transcript").transcript(id)
  end)
  if not opened then
    return false, tostring(err)
  end
  return true
end

return M
