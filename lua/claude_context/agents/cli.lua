---@mod claude_context.agents.cli Claude Code's background service, asked without waiting
---
--- Every run of the CLI here goes through claude_context.util.proc with a callback: the editor
--- never waits for it. `claude agents --json` is read into a cache that `agents()` answers from.

local M = {}

---What a CLI's `--help` says it offers.
---@class claude_context.CliFeatures
---@field bg boolean `--bg`
---@field agents boolean `agents`
---@field attach boolean
---@field stop boolean
---@field rm boolean
---@field logs boolean

---One entry of `claude agents --json` (the service's; untrusted, checked where used).
---@class claude_context.ServiceEntry
---@field id string
---@field kind string? "background" for a background session
---@field sessionId string? Claude's session id
---@field name string?
---@field cwd string?
---@field status string? "busy", "idle", …
---@field state string?
---@field startedAt integer? Epoch ms
---@field pid integer?

---What a CLI offers, by its path.
---@type table<string, claude_context.CliFeatures>
M.features_cache = {}

---The CLI's path, or nil and why not.
---@return string? path, string? err
function M.exe()
  local ok, path, why = pcall(require("claude_context.cli").find, nil, true)
  if not ok then
    return nil, tostring(path)
  end
  if not path then
    return nil, why
  end
  return path
end

---The environment of a CLI run: Neovim's without what would name this editor or its terminal
---(`CLAUDE_CODE_SSE_PORT`, `CLAUDE_CONTEXT_SESSION`: a background session outlives the editor),
---plus `extra`.
---@param extra table<string,string>?
---@return table<string,string>
function M.env(extra)
  local env = vim.fn.environ()
  env.CLAUDE_CODE_SSE_PORT = nil
  env.CLAUDE_CONTEXT_SESSION = nil
  env.ENABLE_IDE_INTEGRATION = nil
  for k, v in pairs(extra or {}) do
    env[k] = tostring(v)
  end
  return env
end

---Runs `argv`; `cb(result)` on the main thread with `{ code, stdout, stderr }` (code -1 and the
---reason in stderr when it could not start). Never waits.
---@param argv string[]
---@param opts {cwd?:string, env?:table<string,string>, timeout?:integer}?
---@param cb fun(r:{code:integer, stdout:string, stderr:string})
function M.run(argv, opts, cb)
  opts = opts or {}
  require("claude_context.util.proc").run(argv, { cwd = opts.cwd, env = opts.env, timeout = opts.timeout or 60000 }, cb)
end

---What `help` (`claude --help`'s output) says the CLI offers.
---@param help string
---@return claude_context.CliFeatures
function M.parse_features(help)
  return {
    bg = help:find("%-%-bg[,%s]") ~= nil,
    agents = help:find("\n%s+agents ") ~= nil,
    attach = help:find("\n%s+attach <") ~= nil,
    stop = help:find("\n%s+stop[|%s]") ~= nil,
    rm = help:find("\n%s+rm <") ~= nil,
    logs = help:find("\n%s+logs <") ~= nil,
  }
end

---`cb(features)` for CLI `exe` (asked once; `claude --help` runs off the main thread).
---@param exe string
---@param cb fun(f:claude_context.CliFeatures)
function M.features(exe, cb)
  local f = M.features_cache[exe]
  if f then
    return cb(f)
  end
  M.run({ exe, "--help" }, { timeout = 30000 }, function(r)
    local got = M.parse_features((r.stdout or "") .. "\n" .. (r.stderr or ""))
    if r.code == 0 then
      M.features_cache[exe] = got
    end
    cb(got)
  end)
end

---The message for a CLI that lacks `what` ("bg" or "manage"); the versions are the Rust side's
---facts (claude_context.cli.versions).
---@param what "bg"|"manage"
---@return string
function M.too_old(what)
  local need = require("claude_context.cli").versions() or { bg = "?", manage = "?" }
  if what == "bg" then
    return ("background sessions need Claude Code %s or newer (`claude --bg`, `claude agents --json`): update it with `claude update`"):format(
      need.bg
    )
  end
  return ("this needs Claude Code %s or newer (`claude attach`, `stop`, `rm`): update it with `claude update`"):format(
    need.manage
  )
end

---The id `claude --bg` printed ("backgrounded · 6e6570a0"), or nil.
---@param out string
---@return string?
function M.parse_started(out)
  return out:match("backgrounded%s*[^%w%s]*%s*(%x+)") or out:match("[Bb]ackground[%w%s]-[^%w%s]%s*(%x%x%x%x%x%x+)")
end

---The entries of `claude agents --json` (a JSON array), or nil and why not.
---@param text string
---@return claude_context.ServiceEntry[]? list, string? err
function M.parse_agents(text)
  local ok, v = pcall(vim.json.decode, text, { luanil = { object = true, array = true } })
  if not ok or type(v) ~= "table" then
    return nil, "claude agents --json printed no JSON list"
  end
  local out = {}
  for _, e in ipairs(v) do
    if type(e) == "table" and type(e.id) == "string" then
      out[#out + 1] = e
    end
  end
  return out
end

---Tells claude_context.agents (when loaded) of the background sessions of list `old` that
---list `new` no longer has.
function M.tell_gone(old, new)
  local now = {}
  for _, e in ipairs(new) do
    now[e.id] = true
  end
  local gone = {}
  for _, e in ipairs(old or {}) do
    if e.kind == "background" and not now[e.id] then
      gone[#gone + 1] = e
    end
  end
  local agents = package.loaded["claude_context.agents"]
  if #gone > 0 and agents and agents.on_gone then
    pcall(agents.on_gone, gone)
  end
end

---The cache of `claude agents --json`: `{ list, at, err, running, waiters }`.
M.cache = { list = {}, at = nil, err = nil, running = false, waiters = {} }

---Reads `claude agents --json` again (one run at a time; callers meanwhile wait for it);
---`cb(list, err)` on the main thread.
---@param cb fun(list:claude_context.ServiceEntry[], err?:string)?
function M.refresh(cb)
  local c = M.cache
  if cb then
    table.insert(c.waiters, cb)
  end
  if c.running then
    return
  end
  local exe, why = M.exe()
  local function finish(list, err)
    c.running = false
    if list then
      M.tell_gone(c.list, list)
      c.list = list
    end
    c.err = err
    c.at = vim.uv.now()
    local ws = c.waiters
    c.waiters = {}
    for _, w in ipairs(ws) do
      pcall(w, c.list, err)
    end
    pcall(vim.api.nvim_exec_autocmds, "User", { pattern = "ClaudeContextAgents", modeline = false })
    -- The sessions' statusline counts the background sessions too.
    pcall(vim.cmd.redrawstatus)
  end
  if not exe then
    return finish(nil, why)
  end
  c.running = true
  M.run({ exe, "agents", "--json" }, { env = M.env(), timeout = 30000 }, function(r)
    if r.code ~= 0 then
      local msg = vim.trim(r.stderr ~= "" and r.stderr or r.stdout)
      if msg:find("unknown option") or msg:find("unknown command") then
        return finish({}, M.too_old("bg"))
      end
      return finish(nil, ("claude agents --json failed (exit %s): %s"):format(r.code, msg:sub(1, 300)))
    end
    local list, err = M.parse_agents(r.stdout)
    finish(list, err)
  end)
end

return M
