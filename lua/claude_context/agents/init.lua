---@mod claude_context.agents Background Claude Code sessions in git worktrees
---
--- Built on Claude Code's own background service (`claude --bg`, `claude agents --json`,
--- `claude attach`, `claude stop`): the plugin runs no daemon of its own.
---
--- * |new| starts `claude --bg --worktree NAME [prompt]` in the project with the plugin's MCP
---   tools (the relay binary `claude-context-mcp`, which finds the editor when the session
---   connects) and its hooks (the same binary, which finds the editor the same way): nothing in
---   the session's configuration names this editor's port or token, so it outlives the editor.
--- * |attach|, |stop| here. Each other piece is its module's, and callers require that module:
---   the list (`require("claude_context").agents()`: claude_context.agents.list, from a cache of
---   `claude agents --json` read off the main thread, refreshed on hook events and while the
---   picker is open, joined with the sessions the hooks report), the command line
---   (claude_context.agents.launch), land (claude_context.agents.land), discard
---   (claude_context.agents.discard), permission asks (claude_context.sessions.permissions).

local M = {}

local names = require("claude_context.agents.names")
local cli = require("claude_context.agents.cli")
local notify = require("claude_context.util.notify")
local shared = require("claude_context.agents.shared")

-- What the parts share (claude_context.agents.shared): the sessions this editor started, the
-- ids it is stopping, the project root, the watch that refreshes the list on hook events.
M.started, M.stopping, M.root, M.watch = shared.started, shared.stopping, shared.root, shared.watch

local fail = notify.fail

-- The command line of a new session (its MCP server, settings and hooks): agents/launch.lua.
local launch = require("claude_context.agents.launch")

---Starts a background session in worktree `name` (`claude --bg --worktree name [prompt]`).
---Returns at once: true, or nil and why not when the name is refused before anything runs;
---`cb(err, started)` later on the main thread (`started = { id, name, worktree, branch }`).
---Errors are also notified. A name Claude Code would refuse is refused here; a session the
---service then lists as failed, or never lists, is a failure told later (|confirm|).
---@param name string
---@param prompt string?
---@param opts claude_context.NewAgentOpts?
---@return boolean? ok, string? err
function M.new(name, prompt, opts)
  opts = opts or {}
  local cb = opts.cb
  local why = names.invalid(name) or names.refused(name)
  if why then
    fail(cb, why)
    return nil, why
  end
  local root, rerr = M.root()
  if not root then
    fail(cb, rerr)
    return nil, rerr
  end
  local wt = names.worktree(root, name)
  if vim.uv.fs_lstat(wt) then
    local msg = ("a worktree %q already exists (%s): pick another name, or :ClaudeContext discard %s"):format(
      name,
      wt,
      name
    )
    fail(cb, msg)
    return nil, msg
  end
  local exe, eerr = cli.exe()
  if not exe then
    fail(cb, eerr)
    return nil, eerr
  end
  local argv, aerr = launch.argv(exe, name, prompt, opts)
  if not argv then
    fail(cb, aerr)
    return nil, aerr
  end
  M.watch()
  local branch = names.branch(name)
  cli.features(exe, function(f)
    if not f.bg then
      return fail(cb, cli.too_old("bg"))
    end
    cli.run({ "git", "-C", root, "rev-parse", "--verify", "--quiet", "refs/heads/" .. branch }, {}, function(g)
      if g.code == 0 then
        return fail(
          cb,
          ("the branch %s already exists: pick another name (the branch is kept on purpose)"):format(branch)
        )
      end
      cli.run(argv, { cwd = root, env = cli.env() }, function(r)
        local id = cli.parse_started(r.stdout .. "\n" .. r.stderr)
        if r.code ~= 0 or not id then
          local msg = vim.trim(r.stderr ~= "" and r.stderr or r.stdout)
          return fail(cb, ("claude --bg failed (exit %s): %s"):format(r.code, msg:sub(1, 400)))
        end
        local s = {
          id = id,
          name = name,
          prompt = prompt,
          started_ms = os.time() * 1000,
          root = root,
          worktree = wt,
          branch = branch,
        }
        M.started[name] = s
        shared.generation = shared.generation + 1
        cli.refresh()
        notify(("claude-context: background session %s started (%s)"):format(name, id))
        M.confirm(exe, s, opts.on_failed)
        if cb then
          cb(nil, s)
        end
      end)
    end)
  end)
  return true
end

---How long the service may take to list a session |new| started before it is taken to have
---failed (ms), and how often it is asked meanwhile.
M.CONFIRM_MS, M.CONFIRM_EVERY_MS = 120000, 2000

---Watches session `s` that `claude --bg` said it started until the service lists it in its
---worktree: one the service lists as failed (Claude Code refused its name or could not make its
---worktree), or does not list there in |CONFIRM_MS|, is told of as a failure (`on_failed(err)`
---too) and forgotten, never shown working. Asks `claude agents --json --all` (a CLI without
---`--all`: the cache).
---@param exe string
---@param s claude_context.Started the session as |new| started it
---@param on_failed fun(err:string)?
function M.confirm(exe, s, on_failed)
  local deadline = vim.uv.now() + M.CONFIRM_MS
  local function failed(why)
    M.started[s.name] = nil
    shared.generation = shared.generation + 1
    cli.refresh()
    fail(on_failed, ("background session %s did not start: %s"):format(s.name, why))
  end
  local function ask()
    if M.started[s.name] ~= s then
      return
    end
    cli.run({ exe, "agents", "--json", "--all" }, { env = cli.env(), timeout = 30000 }, function(r)
      if M.started[s.name] ~= s then
        return
      end
      local list = r.code == 0 and cli.parse_agents(r.stdout) or cli.cache.list
      for _, e in ipairs(list or {}) do
        if e.id == s.id and (e.state == "failed" or e.status == "failed") then
          return failed(
            ("Claude Code's service lists it as failed (it refused the name, or could not make the worktree): claude logs %s may say why"):format(
              s.id
            )
          )
        elseif e.id == s.id and names.of_cwd(s.root, e.cwd) == s.name then
          -- In its worktree: started. (Claude Code 2.1.197 lists the project until it made it.)
          return
        end
      end
      if vim.uv.now() >= deadline then
        return failed(("Claude Code's service did not list it in its worktree in %d s"):format(M.CONFIRM_MS / 1000))
      end
      vim.defer_fn(ask, M.CONFIRM_EVERY_MS)
    end)
  end
  vim.defer_fn(ask, M.CONFIRM_EVERY_MS)
end

-- The list of sessions (the service's, the hooks', the ended worktrees): agents/list.lua.
local list = require("claude_context.agents.list")

---Finds background session `name` and a claude that has `feature`, then `go(e, exe)`; else
---`cb(err)` (`missing`: the format, given the name, when there is no such session).
local function with_background(name, missing, feature, cb, go)
  local e = list.find(name)
  if e and e.worktree and (e.state == "ended" or e.kind == "worktree") then
    return fail(cb, M.ended_message(e.name))
  end
  if not e or e.kind ~= "background" then
    return fail(cb, missing:format(tostring(name)))
  end
  local exe, why = cli.exe()
  if not exe then
    return fail(cb, why)
  end
  cli.features(exe, function(f)
    if not f[feature] then
      return fail(cb, cli.too_old("manage"))
    end
    go(e, exe)
  end)
end

---What is said of session `name` that no longer runs (its worktree stays).
---@param name string
---@return string
function M.ended_message(name)
  return ("%s is not running any more (it ended, or was stopped outside Neovim): its worktree stays; :ClaudeContext land %s or discard %s"):format(
    name,
    name,
    name
  )
end

---Called by claude_context.agents.cli when background sessions of the service's last list are
---gone from the new one: each of this project's that the plugin did not stop is told of once.
---@param gone claude_context.ServiceEntry[] the service's entries
function M.on_gone(gone)
  local root = M.root()
  if not root then
    return
  end
  for _, e in ipairs(gone) do
    if e.sessionId then
      list.gone_sessions[e.sessionId] = true
    end
    local wname = names.of_cwd(root, e.cwd)
    if wname and not M.stopping[e.id] then
      notify(
        "claude-context: " .. M.ended_message(names.invalid(wname) and vim.inspect(wname) or wname),
        vim.log.levels.WARN
      )
    end
    M.stopping[e.id] = nil
  end
end

---The attach terminals: `{ [name] = buf }`.
M.attached = {}

---Opens background session `name` in a terminal of this editor (`claude attach <id>`). Closing
---the terminal leaves the session running.
---@param name string
---@param cb fun(err?:string, buf?:integer)?
function M.attach(name, cb)
  local missing = "no background session %q in this project (:ClaudeContext agents lists them)"
  return with_background(name, missing, "attach", cb, function(e, exe)
    local old = M.attached[e.name]
    if old and vim.api.nvim_buf_is_valid(old) then
      local win = vim.fn.win_findbuf(old)[1]
      if win then
        vim.api.nvim_set_current_win(win)
      else
        vim.cmd("botright split")
        vim.api.nvim_win_set_buf(0, old)
      end
      return cb and cb(nil, old)
    end
    vim.cmd("botright split")
    local buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_win_set_buf(0, buf)
    local cwd = e.cwd and vim.uv.fs_stat(e.cwd) and e.cwd or M.root()
    local ok, job = pcall(
      vim.fn.jobstart,
      { exe, "attach", e.id },
      { term = true, cwd = cwd, env = cli.env(), clear_env = true }
    )
    if not ok or job <= 0 then
      pcall(vim.api.nvim_buf_delete, buf, { force = true })
      return fail(cb, "cannot start claude attach: " .. tostring(job))
    end
    pcall(vim.api.nvim_buf_set_name, buf, "claude-context://attach/" .. e.name)
    vim.b[buf].claude_context_attach = e.id
    vim.bo[buf].buflisted = false
    M.attached[e.name] = buf
    vim.api.nvim_create_autocmd("BufWipeout", {
      buffer = buf,
      once = true,
      callback = function()
        -- Only the `claude attach` client ends: the session goes on in the service.
        pcall(vim.fn.jobstop, job)
        M.attached[e.name] = nil
      end,
    })
    if cb then
      cb(nil, buf)
    end
  end)
end

---Stops background session `name` (`claude stop <id>`; its conversation is kept).
---@param name string
---@param cb fun(err?:string)?
function M.stop(name, cb)
  return with_background(name, "no running background session %q", "stop", cb, function(e, exe)
    M.stopping[e.id] = true
    cli.run({ exe, "stop", e.id }, { env = cli.env() }, function(r)
      if r.code ~= 0 then
        return fail(cb, ("claude stop %s failed: %s"):format(e.id, vim.trim(r.stderr .. r.stdout):sub(1, 300)))
      end
      M.started[e.name] = nil
      shared.generation = shared.generation + 1
      cli.refresh(function()
        if cb then
          cb(nil)
        end
      end)
    end)
  end)
end

---What background sessions need of the CLI: `{ bg = "2.1.197", manage = "2.1.330" }` (`bg`:
---`--bg` and `agents --json`; `manage`: attach, stop, rm), as the Rust side knows them
---(claude_context.cli.versions); nil while the native library is missing.
---@return {bg: string, manage: string}?
function M.requirements()
  local v = require("claude_context.cli").versions()
  return v and { bg = v.bg, manage = v.manage }
end

return M
