---@mod claude_context.agents.discard Ending a background session and removing its worktree
---
--- The session is stopped (`claude stop`, or its pid on an older CLI), what its worktree holds
--- uncommitted is committed on its branch, and the worktree is removed: the branch stays, so
--- nothing is lost. Git runs off the main thread (claude_context.agents.land's `git`).

local M = {}

local names = require("claude_context.agents.names")
local cli = require("claude_context.agents.cli")
local notify = require("claude_context.notify")

local fail = notify.fail

local function git(args, cb, stdin)
  return require("claude_context.agents.land").git(args, cb, stdin)
end

---Commits what the worktree `wt` of session `name` holds uncommitted on its branch, then
---`done()`; on failure `cb(err)` (nothing removed).
local function save_work(wt, name, cb, done)
  git({ "-C", wt, "add", "-A" }, function(ca, _, ea)
    if ca ~= 0 then
      return fail(cb, ("cannot save the worktree's work (git add): %s; nothing removed"):format(vim.trim(ea)))
    end
    local msg = "claude-context: work left in worktree " .. name .. " when it was discarded"
    git({ "-C", wt, "diff", "--cached", "--quiet" }, function(cq)
      if cq == 0 then
        return done()
      end
      git({ "-C", wt, "commit", "-q", "--no-verify", "-m", msg }, function(cc)
        if cc == 0 then
          return done()
        end
        -- No identity configured: commit as the plugin.
        git({ "-C", wt, "-c", "user.name=claude-context", "-c", "user.email=claude-context@localhost", "commit", "-q", "--no-verify", "-m", msg }, function(cc2, _, ec2)
          if cc2 ~= 0 then
            return fail(cb, ("cannot save the worktree's work (git commit): %s; nothing removed"):format(vim.trim(ec2)))
          end
          done()
        end)
      end)
    end)
  end)
end

---Removes the worktree `wt` of session `name` (its work saved on `branch` first); `cb(err, {branch})`.
local function remove_worktree(agents, root, wt, name, branch, cb)
  if not vim.uv.fs_stat(wt) then
    git({ "-C", root, "worktree", "prune" }, function()
      agents.started[name] = nil
      agents.generation = agents.generation + 1
      if cb then
        cb(nil, { branch = branch })
      end
    end)
    return
  end
  -- Nothing lost: what the worktree holds uncommitted goes on its branch first.
  save_work(wt, name, cb, function()
    git({ "-C", root, "worktree", "remove", "--force", "--force", wt }, function(cr, _, er)
      if cr ~= 0 then
        return fail(cb, ("git worktree remove failed: %s"):format(vim.trim(er)))
      end
      agents.started[name] = nil
      agents.generation = agents.generation + 1
      require("claude_context.agents.cli").refresh()
      notify(("claude-context: discarded %s; its work stays on branch %s"):format(name, branch))
      if cb then
        cb(nil, { branch = branch })
      end
    end)
  end)
end

---Stops session `name` (when it runs) and removes its worktree; uncommitted work is committed on
---its branch first, and the branch stays. `cb(err, {branch, commit})`.
---@param name string
---@param cb fun(err?:string, info?:table)?
function M.discard(name, cb)
  local why = names.invalid(name)
  if why then
    return fail(cb, why)
  end
  local agents = require("claude_context.agents")
  local root, rerr = agents.root()
  if not root then
    return fail(cb, rerr)
  end
  local wt = names.worktree(root, name)
  local branch = names.branch(name)
  local function remove()
    remove_worktree(agents, root, wt, name, branch, cb)
  end
  local e = agents.find(name)
  if not (e and e.kind == "background") then
    return remove()
  end
  local exe = cli.exe()
  if not exe then
    return remove()
  end
  cli.features(exe, function(f)
    if not f.stop then
      -- An older CLI: end the session's process itself (by its pid, when the service gave one).
      if e.pid then
        agents.stopping[e.id] = true
        pcall(vim.uv.kill, e.pid, "sigterm")
      end
      return remove()
    end
    agents.stopping[e.id] = true
    cli.run({ exe, "stop", e.id }, { env = cli.env() }, function()
      remove()
    end)
  end)
end

return M
