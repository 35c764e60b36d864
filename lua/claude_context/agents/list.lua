---@mod claude_context.agents.list The sessions |claude_context.agents.list| answers with
---
--- The service's background sessions (`claude agents --json`, cached by
--- claude_context.agents.cli) joined with the sessions the hooks report, the sessions started
--- here and not listed yet, and the worktrees no session works in any more. Rebuilt only when
--- something it is made of changed.

local M = {}

---A session of the project, as `require("claude_context").agents()` lists it.
---@class claude_context.Agent
---@field id string The service's id (a worktree's name for an ended worktree)
---@field session_id string? Claude's session id
---@field name string The worktree's name for a worktree session
---@field kind "terminal"|"background"|"external"|"worktree"
---@field state claude_context.SessionState|"starting"|"unknown"|string From the hooks, else the service's
---@field cwd string?
---@field worktree string? The worktree's folder
---@field branch string?
---@field prompt string?
---@field files_changed integer
---@field started_ms integer? Epoch ms (nil: not known)
---@field pid integer?
---@field hook_session_id string? The session id its hooks give, when not the service's

local names = require("claude_context.agents.names")
local cli = require("claude_context.agents.cli")

local shared = require("claude_context.agents.shared")

local function hook_sessions()
  local ok, list = pcall(require("claude_context.sessions.state").list)
  return ok and list or {}
end

---The state of a session the hooks did not report, from the service's own fields.
local function service_state(e)
  if e.status == "busy" then
    return "working"
  elseif e.status == "idle" then
    return "idle"
  end
  return e.state or "unknown"
end

---Every Claude Code session of the project: the plugin's terminals, background sessions and
---sessions started elsewhere whose hooks reach this editor. Answers from the cache at once (it
---asks for a fresh `claude agents --json` in the background when the cache is older than
---|STALE_MS|).
---@return claude_context.Agent[] `{ id, name, kind, state, cwd, worktree, branch, prompt, files_changed, started_ms, session_id }`
function M.list()
  shared.watch()
  local c = cli.cache
  if not c.running and (not c.at or vim.uv.now() - c.at > shared.STALE_MS) then
    cli.refresh()
  end
  return vim.list_extend({}, M.memoized())
end

---|build|'s answer, built again only when something it is made of changed (the service's list,
---a hook event, a session started here, the current directory). Runs nothing.
---@return claude_context.Agent[] (not to be changed)
function M.memoized()
  local c = cli.cache
  local cwd = vim.fn.getcwd()
  local m = M.memo
  if m and m.at == c.at and m.cwd == cwd and m.gen == shared.generation then
    return m.list
  end
  local out = M.build()
  M.memo = { at = c.at, cwd = cwd, gen = shared.generation, list = out }
  return out
end

---What the statusline counts of the background sessions (claude_context.sessions.state's
---`sources`), from what is cached (it never runs the CLI): `{ { session_id?, state } }`, the
---background sessions (one started here and not listed yet counts as working when it was given
---a prompt) and the sessions the hooks reported that have gone from the service (`ended`).
---@return claude_context.SessionCount[]
function M.counted()
  shared.watch()
  if not cli.cache.at and next(shared.started) == nil then
    return {}
  end
  local out = {}
  for _, e in ipairs(M.memoized()) do
    if e.kind == "background" then
      local st = e.state
      if st == "starting" then
        st = (e.prompt and e.prompt ~= "") and "working" or "idle"
      end
      out[#out + 1] = { session_id = e.hook_session_id or e.session_id, state = st }
    elseif e.session_id and e.state == "ended" then
      out[#out + 1] = { session_id = e.session_id, state = "ended" }
    end
  end
  return out
end

require("claude_context.sessions.state").sources.agents = M.counted

---The |list| entry of the service's background session `e` whose directory `cwd` is inside
---the project `root`.
local function background_entry(root, e, cwd, hooks)
  local wname = names.of_cwd(root, cwd)
  local h = e.sessionId and hooks[e.sessionId]
  local mine = wname and shared.started[wname]
  if not wname and mine == nil then
    -- Claude Code 2.1.197 lists the project at first, the worktree once it is made.
    for n, s in pairs(shared.started) do
      if s.id == e.id then
        wname, mine = n, s
      end
    end
  end
  local entry = {
    id = e.id,
    session_id = e.sessionId,
    name = wname or e.name or e.id,
    kind = "background",
    state = h and h.state or service_state(e),
    cwd = cwd,
    worktree = wname and names.worktree(root, wname) or nil,
    branch = wname and names.branch(wname) or nil,
    prompt = (h and h.prompt) or (mine and mine.prompt) or e.name,
    files_changed = h and h.files_changed or 0,
    started_ms = e.startedAt,
    pid = e.pid,
    hook_session_id = h and h.id or nil,
  }
  return entry
end

---Claude's session ids of background sessions the service listed, then no more: they ended
---(a hook-known one is listed as an ended worktree, not as still running).
---@type table<string, boolean>
M.gone_sessions = {}

---Adds to `out` the sessions the hooks know that the service does not list (`seen`). A hook
---session in the worktree of a background session whose hooks were not matched by id (`by_name`:
---the service's or a just-started entry; Claude Code may list another session id than its hooks
---give) is that session: its state, prompt and files go to that entry (`hook_session_id`).
local function add_hook_entries(out, root, hooks, seen, by_name)
  for _, h in pairs(hooks) do
    local cwd = h.cwd
    local wname = root and names.of_cwd(root, cwd)
    local bg = not seen[h.id] and wname and by_name[wname]
    if bg and not bg.hook_session_id and not M.gone_sessions[h.id] then
      seen[h.id] = true
      bg.hook_session_id = h.id
      -- The service may list a session before it has its Claude session id: the hooks' is it.
      bg.session_id = bg.session_id or h.id
      bg.state = h.state
      bg.prompt = h.prompt or bg.prompt
      bg.files_changed = h.files_changed or 0
    end
    if not seen[h.id] then
      local gone = M.gone_sessions[h.id] and wname
      out[#out + 1] = {
        id = gone and wname or h.id,
        session_id = h.id,
        -- (Another session in a background session's worktree: not named as that one.)
        name = gone and wname or (by_name[wname or ""] and h.id:sub(1, 8)) or h.name or h.id,
        kind = gone and "worktree" or h.terminal and "terminal" or "external",
        state = gone and "ended" or h.state,
        cwd = cwd,
        worktree = wname and names.worktree(root, wname) or nil,
        branch = wname and names.branch(wname) or nil,
        prompt = h.prompt,
        files_changed = h.files_changed or 0,
        started_ms = h.started_ms,
      }
    end
  end
end

---The last scan of a worktrees folder: `{ dir, mtime, names }`.
local scanned = nil

---The worktrees' names in `dir` (valid names of folders), scanned again only when the folder
---changed (its mtime: one `stat` where a rebuild after each hook event listed it). A folder
---changed in the last two seconds is scanned every time (a file system with coarse times could
---hide a second change in the same second).
---@param dir string
---@return string[]
function M.worktree_dirs(dir)
  local st = vim.uv.fs_stat(dir)
  if not st then
    return {}
  end
  local mtime = st.mtime.sec * 1e9 + (st.mtime.nsec or 0)
  if scanned and scanned.dir == dir and scanned.mtime == mtime then
    return scanned.names
  end
  local found = {}
  local handle = vim.uv.fs_scandir(dir)
  while handle do
    local n, t = vim.uv.fs_scandir_next(handle)
    if not n then
      break
    end
    if t == "directory" and not names.invalid(n) then
      found[#found + 1] = n
    end
  end
  table.sort(found)
  scanned = os.time() - st.mtime.sec >= 2 and { dir = dir, mtime = mtime, names = found } or nil
  return found
end

---Adds to `out` the worktrees under `root` no session in `out` works in: sessions that ended
---(stopped outside Neovim, the service gone): kind "worktree", state "ended", their work still
---there to land or discard.
local function add_ended_worktrees(out, root)
  local taken = {}
  for _, e in ipairs(out) do
    if e.worktree then
      taken[e.worktree] = true
    end
  end
  local dir = root .. "/" .. names.DIR
  for _, n in ipairs(M.worktree_dirs(dir)) do
    local wt = dir .. "/" .. n
    if not taken[wt] then
      out[#out + 1] = {
        id = n,
        name = n,
        kind = "worktree",
        state = "ended",
        cwd = wt,
        worktree = wt,
        branch = names.branch(n),
        files_changed = 0,
        -- (No start known: listed after the sessions that run.)
        started_ms = nil,
      }
    end
  end
end

---Builds |list|'s answer.
---@return claude_context.Agent[]
function M.build()
  local c = cli.cache
  local root = shared.root()
  local hooks = {}
  for _, s in ipairs(hook_sessions()) do
    hooks[s.id] = s
  end
  local out, seen = {}, {}
  local by_name = {}
  for _, e in ipairs(c.list or {}) do
    local cwd = e.cwd
    local inside = root and type(cwd) == "string" and (cwd == root or vim.startswith(cwd, root .. "/"))
    if inside and e.kind == "background" then
      local entry = background_entry(root, e, cwd, hooks)
      seen[e.sessionId or ""] = true
      by_name[entry.name] = entry
      out[#out + 1] = entry
    end
  end
  -- Started here, not listed yet by the service (it takes a moment); once listed and gone from
  -- the list it ended.
  for n, s in pairs(shared.started) do
    if by_name[n] then
      s.listed = true
    elseif s.root == root and not s.listed then
      by_name[n] = {
        id = s.id,
        name = n,
        kind = "background",
        state = "starting",
        cwd = s.worktree,
        worktree = s.worktree,
        branch = s.branch,
        prompt = s.prompt,
        files_changed = 0,
        started_ms = s.started_ms,
      }
      out[#out + 1] = by_name[n]
    end
  end
  add_hook_entries(out, root, hooks, seen, by_name)
  if root and c.at and not c.err then
    -- (Only once the service has answered: until then nothing is known to have ended.)
    add_ended_worktrees(out, root)
  end
  table.sort(out, function(a, b)
    return (a.started_ms or 0) > (b.started_ms or 0)
  end)
  return out
end

---Refreshes the cache; `cb(list)` with |list|'s answer once it is in.
---@param cb fun(list:claude_context.Agent[], err?:string)?
function M.refresh(cb)
  cli.refresh(function(_, err)
    if cb then
      cb(M.list(), err)
    end
  end)
end

---The session named `name` (a worktree name, the service's id or Claude's session id).
---@param name string
---@return claude_context.Agent?
function M.find(name)
  for _, e in ipairs(M.list()) do
    if e.name == name or e.id == name or e.session_id == name then
      return e
    end
  end
  return nil
end

return M
