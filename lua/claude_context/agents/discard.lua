---@mod claude_context.agents.discard Ending a background session and removing its worktree
---
--- The session is stopped (`claude stop`, or its pid on an older CLI), what its worktree holds
--- uncommitted is committed on its branch, and the worktree is removed: the branch stays, so
--- nothing is lost. Git runs off the main thread (claude_context.agents.worktree's `git`).

local M = {}

local names = require("claude_context.agents.names")
local cli = require("claude_context.agents.cli")
local notify = require("claude_context.util.notify")

local fail = notify.fail

local worktree = require("claude_context.agents.worktree")

local function git(w, args, cb)
  return worktree.git(w, args, cb)
end

---Commits what worktree `w` (claude_context.agents.worktree's, registered) of session `name`
---holds uncommitted on its branch, then `done(refused)` (`refused`: what git would not add, such
---as a path git calls invalid: its message, or nil); on failure `cb(err)` (nothing removed).
local function save_work(w, name, cb, done0)
  git(w, { "add", "-A", "--ignore-errors" }, function(ca, _, ea)
    local refused = ca ~= 0 and vim.trim(ea):sub(1, 400) or nil
    local function done()
      done0(refused)
    end
    if ca ~= 0 and not ea:find("unable to add", 1, true) then
      return fail(cb, ("cannot save the worktree's work (git add): %s; nothing removed"):format(vim.trim(ea)))
    end
    local msg = "claude-context: work left in worktree " .. name .. " when it was discarded"
    git(w, { "diff", "--cached", "--quiet", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all" }, function(cq)
      if cq == 0 then
        return done()
      end
      git(w, { "commit", "-q", "--no-verify", "-m", msg }, function(cc)
        if cc == 0 then
          return done()
        end
        -- No identity configured: commit as the plugin.
        git(w, {
          "-c",
          "user.name=claude-context",
          "-c",
          "user.email=claude-context@localhost",
          "commit",
          "-q",
          "--no-verify",
          "-m",
          msg,
        }, function(cc2, _, ec2)
          if cc2 ~= 0 then
            return fail(cb, ("cannot save the worktree's work (git commit): %s; nothing removed"):format(vim.trim(ec2)))
          end
          done()
        end)
      end)
    end)
  end)
end

---Forgets session `name` here; `cb(nil, {branch})`.
local function forget(agents, name, branch, cb)
  agents.started[name] = nil
  agents.generation = agents.generation + 1
  require("claude_context.agents.cli").refresh()
  if cb then
    cb(nil, { branch = branch })
  end
end

---Removes the registered worktree `w` of session `name` (its work saved on `branch` first;
---only this worktree: the project's others are left as they are); `cb(err, {branch})`.
local function remove_worktree(agents, root, w, name, branch, cb)
  local function remove(refused)
    local args = worktree.project_args(root, { "worktree", "remove", "--force", "--force", w.path })
    require("claude_context.agents.worktree").run(args, function(cr, _, er)
      if cr ~= 0 then
        return fail(cb, ("git worktree remove failed: %s"):format(vim.trim(er)))
      end
      local lost = refused and ("; not saved, git would not add it: " .. refused) or ""
      notify(
        ("claude-context: discarded %s; its work stays on branch %s%s"):format(name, branch, lost),
        refused and vim.log.levels.WARN or nil
      )
      forget(agents, name, branch, cb)
    end)
  end
  if w.missing then
    -- Its folder is gone: only its registration goes.
    return remove()
  end
  -- Nothing lost: what the worktree holds uncommitted goes on its branch first.
  save_work(w, name, cb, remove)
end

---Whether process `pid` is session `e`'s own (a claude process working in the session's
---worktree `path`), as /proc shows it; false and why not when it is not, or cannot be shown.
---@param pid any
---@param path string the worktree's real path
---@return boolean, string?
function M.is_session_process(pid, path)
  if type(pid) ~= "number" or pid ~= math.floor(pid) or pid < 2 or pid > 2 ^ 31 then
    return false, "not a process id"
  end
  local proc = "/proc/" .. pid
  local cwd = vim.uv.fs_readlink(proc .. "/cwd")
  if not cwd then
    return false, "its working directory cannot be read (no such process, or no /proc here)"
  end
  if cwd ~= path and cwd:sub(1, #path + 1) ~= path .. "/" then
    return false, "it does not work in the session's worktree"
  end
  local cmdline = require("claude_context.util.small_file").read(proc .. "/cmdline", 64 * 1024, true)
  if not cmdline or not cmdline:find("claude", 1, true) then
    return false, "it is not a claude process"
  end
  return true
end

---Ends session `e`'s process on a CLI without `claude stop`: its pid from the service's list
---is signalled only when it is shown to be that session's (|is_session_process|).
local function signal(agents, e, path)
  local yes, why = M.is_session_process(e.pid, path)
  if not yes then
    notify(
      ("claude-context: session %s not stopped: the service names process %s, and %s; stop it by hand"):format(
        e.name,
        vim.inspect(e.pid),
        why
      ),
      vim.log.levels.WARN
    )
    return
  end
  agents.stopping[e.id] = true
  pcall(vim.uv.kill, e.pid, "sigterm")
end

---Stops session `e` (when it runs: `claude stop`, or its checked pid on an older CLI), then `go()`.
local function stop_session(agents, e, path, go)
  local exe = e and e.kind == "background" and cli.exe()
  if not exe then
    return go()
  end
  cli.features(exe, function(f)
    if not f.stop then
      signal(agents, e, path)
      return go()
    end
    agents.stopping[e.id] = true
    cli.run({ exe, "stop", e.id }, { env = cli.env() }, function()
      go()
    end)
  end)
end

---Stops session `name` (when it runs) and removes its worktree (only when the project's git
---registers it and it points back there: claude_context.agents.worktree); uncommitted work is
---committed on its branch first, and the branch stays. A name with neither a session nor a
---worktree is an error. `cb(err, {branch})`.
---@param name string
---@param cb fun(err?:string, info?:{branch:string, commit?:string})?
function M.discard(name, cb)
  local why = names.invalid(name)
  if why then
    return fail(cb, why)
  end
  local agents = require("claude_context.agents.shared")
  local root, rerr = agents.root()
  if not root then
    return fail(cb, rerr)
  end
  local branch = names.branch(name)
  local e = require("claude_context.agents.list").find(name)
  local session = e and e.kind == "background" and e or nil
  worktree.open(root, name, function(werr, w)
    if werr and not (w and w.unregistered) then
      -- A worktree that is not what the project's git registers: nothing run, nothing stopped.
      return fail(cb, werr)
    end
    if werr then
      if not session then
        return fail(cb, ("no session or worktree %s in this project: nothing discarded"):format(vim.inspect(name)))
      end
      -- A session without a worktree (yet): only the session is stopped.
      return stop_session(agents, session, w.path, function()
        notify(("claude-context: stopped %s; it had no worktree"):format(name))
        forget(agents, name, branch, cb)
      end)
    end
    stop_session(agents, session, w.path, function()
      remove_worktree(agents, root, w, name, branch, cb)
    end)
  end)
end

return M
