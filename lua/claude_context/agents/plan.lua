---@mod claude_context.agents.plan What a land would do: the worktree's change, merged file by file
---
--- The worktree's whole change — its commits and its uncommitted and untracked files — against
--- the merge-base of its HEAD and the main checkout's HEAD, each file merged into the main
--- checkout as it is now (claude_context.agents.merge). Git runs off the main thread; the files
--- are read through the review's native file layer (claude_context.review.fs); the merges run
--- on a thread of their own. Nothing is written here (claude_context.agents.land writes).

local M = {}

local merge = require("claude_context.agents.merge")
local worktree = require("claude_context.agents.worktree")
---How long one slice of the plan (reading the texts, planning each file) may hold the main
---thread (ns).
M.SLICE_NS = 8e6

---Runs git on worktree `w` (claude_context.agents.worktree: its registered git dir, nothing
---of the worktree choosing what runs).
local function wgit(w, args, cb, stdin)
  return worktree.git(w, args, cb, stdin)
end

---The changed paths of `out` (`git diff --name-status -z`): `{ {status, path} }` (a rename's
---old path as `D`, its new as `A`); raises when git's output is cut short or unknown.
---@param out string
---@return {status:string, path:string}[]
function M.parse_name_status(out)
  return worktree.native().name_status(out)
end

---The blobs of `git cat-file --batch` output, in order: a string, or false when missing.
---@param out string
---@param n integer
---@return (string|false)[]
function M.parse_batch(out, n)
  return worktree.native().batch(out, n)
end

local function is_binary(t)
  return type(t) == "string" and t:find("\0", 1, true) ~= nil
end

---Marks `f` a conflict of the whole file (a line-by-line merge cannot apply), with `why`.
local function whole_file_conflict(f, why)
  f.action = "conflict"
  f.conflicts = { { line = 1, count = 0, why = why } }
end

---A land's plan: every file the worktree changed, merged.
---@class claude_context.LandPlan
---@field root string The main checkout
---@field worktree string
---@field base string The merge-base
---@field files claude_context.LandFile[]

---@class claude_context.LandFile
---@field path string relative to the project
---@field absolute? string its path in the main checkout
---@field action "write"|"create"|"remove"|"conflict"|"same"|"binary"|"unreadable"|"merge" ("merge": not merged yet)
---@field base? string the merge-base's text
---@field before? string the main checkout's text
---@field theirs? string the worktree's text
---@field after? string what a land writes
---@field conflicts {line:integer, count:integer, why?:string}[]
---@field applied integer
---@field why? string

---The plan of one file of a land. `action` "merge" when the texts need a line-by-line merge:
---|M.merge_pending| does it off the main thread.
---@param rel string
---@param base string|false|nil the merge-base's text (false/nil: not there)
---@param ours string|nil the main checkout's text (nil: missing)
---@param theirs string|nil the worktree's text (nil: deleted)
---@return claude_context.LandFile
function M.plan_file(rel, base, ours, theirs)
  base = base or nil
  local f = { path = rel, base = base, before = ours, theirs = theirs, conflicts = {}, applied = 0 }
  if is_binary(base) or is_binary(ours) or is_binary(theirs) then
    f.action = (ours == theirs) and "same" or "binary"
  elseif ours == theirs then
    f.action = "same"
  elseif theirs == nil and base ~= nil and ours == base then
    -- Deleted in the worktree, unchanged here.
    f.action, f.after, f.applied = "remove", nil, 1
  elseif theirs == nil then
    whole_file_conflict(f, "deleted in the worktree, changed here")
  elseif ours == nil and base == nil then
    f.action, f.after, f.applied = "create", theirs, 1
  elseif ours == nil then
    whole_file_conflict(f, "changed in the worktree, deleted here")
  elseif base == nil then
    -- Added on both sides, differently.
    whole_file_conflict(f, "added on both sides")
  else
    f.action = "merge"
  end
  return f
end

---Merges the files of `files` that |M.plan_file| left to merge, all at once off the main
---thread (claude_context.agents.merge); `cb(nil)` once each has its action, or `cb(err)`.
---@param files claude_context.LandFile[]
---@param cb fun(err?:string)
function M.merge_pending(files, cb)
  local pending, texts = {}, {}
  for _, f in ipairs(files) do
    if f.action == "merge" then
      pending[#pending + 1] = f
      texts[#texts + 1] = { base = f.base, ours = f.before, theirs = f.theirs }
    end
  end
  merge.merge_all(texts, function(err, results)
    if err then
      return cb("cannot merge the worktree's files: " .. err)
    end
    for i, f in ipairs(pending) do
      local m = results[i]
      f.after, f.applied, f.conflicts = m.text, m.applied, m.conflicts
      if m.applied > 0 and m.text ~= f.before then
        f.action = "write"
      else
        f.action = #m.conflicts > 0 and "conflict" or "same"
      end
    end
    cb(nil)
  end)
end

---The files the worktree changed since `base` (git's `--name-status -z` output `diff`) and its
---untracked files (`others`, `ls-files -z`), sorted by path. Git's own files and the sessions'
---worktrees are left out; a path land may not write (not a plain relative path, a line break
---in its name) is listed with why (`unreadable`), never read or written.
local function changed_files(diff, others)
  local W = worktree.native()
  local files, seen = {}, {}
  local function add(path, status)
    if seen[path] then
      return
    end
    seen[path] = true
    local why = W.landable(path)
    if why == nil then
      files[#files + 1] = { path = path, status = status }
    elseif why ~= "git's own files" and why ~= "a session's worktree" then
      files[#files + 1] = { path = path, status = status, why = why }
    end
  end
  for _, e in ipairs(M.parse_name_status(diff)) do
    add(e.path, e.status)
  end
  for _, p in ipairs(W.z_list(others)) do
    add(p, "A")
  end
  table.sort(files, function(a, b)
    return a.path < b.path
  end)
  return files
end

---Plans each of `files` into `plan.files` (their base texts `based`, our and their paths
---loaded), in slices so the editor is never held long, then merges them off the main thread;
---`cb(nil, plan)` at the end, or `cb(err)`.
local function plan_in_slices(plan, files, based, ours_paths, theirs_paths, cb)
  local fs = require("claude_context.review.fs")
  require("claude_context.ide.slices").each(files, M.SLICE_NS / 1e6, function(f, i)
    local ours, oerr = fs.read(ours_paths[i])
    local theirs, terr = fs.read(theirs_paths[i])
    if (oerr and oerr ~= "missing") or (terr and terr ~= "missing") then
      plan.files[#plan.files + 1] =
        { path = f.path, action = "unreadable", why = oerr ~= "missing" and oerr or terr, conflicts = {} }
    else
      local p = M.plan_file(f.path, based[i], ours, theirs)
      p.absolute = ours_paths[i]
      plan.files[#plan.files + 1] = p
    end
  end, function()
    M.merge_pending(plan.files, function(err)
      if err then
        return cb(err)
      end
      cb(nil, plan)
    end)
  end)
end

---Reads the base texts of `files` (at `base`) and both sides, then plans them; `cb(err, plan)`.
local function plan_files(root, w, base, all, cb)
  local wt = w.path
  -- The paths land may not write are listed with why, never read.
  local files, refused = {}, {}
  for _, f in ipairs(all) do
    if f.why then
      refused[#refused + 1] = { path = f.path, action = "unreadable", why = f.why, conflicts = {} }
    else
      files[#files + 1] = f
    end
  end
  if #files == 0 then
    return cb(nil, { root = root, worktree = wt, base = base, files = refused })
  end
  local q = {}
  for _, f in ipairs(files) do
    q[#q + 1] = base .. ":" .. f.path
  end
  wgit(w, { "cat-file", "--batch" }, function(c5, blobs, e5)
    if c5 ~= 0 then
      return cb("git cat-file failed: " .. vim.trim(e5))
    end
    local based = M.parse_batch(blobs, #files)
    local fs = require("claude_context.review.fs")
    local ours_paths, theirs_paths = {}, {}
    for _, f in ipairs(files) do
      ours_paths[#ours_paths + 1] = root .. "/" .. f.path
      theirs_paths[#theirs_paths + 1] = wt .. "/" .. f.path
    end
    fs.load(root, ours_paths, function()
      fs.load(wt, theirs_paths, function()
        local plan = { root = root, worktree = wt, base = base, files = refused }
        -- The texts in slices, so the editor is never held long; the merges off the main thread.
        plan_in_slices(plan, files, based, ours_paths, theirs_paths, cb)
      end)
    end)
  end, table.concat(q, "\n") .. "\n")
end

---Reads what a land needs; `cb(err, plan)` on the main thread.
---@param root string the main checkout
---@param w claude_context.Worktree the worktree, as claude_context.agents.worktree's `open` found it registered
---@param cb fun(err?:string, plan?:claude_context.LandPlan)
function M.prepare(root, w, cb)
  local wt = w.path
  worktree.run(worktree.project_args(root, { "rev-parse", "--verify", "HEAD" }), function(c1, head, e1)
    if c1 ~= 0 then
      return cb("the main checkout has no commit: " .. vim.trim(e1))
    end
    head = vim.trim(head)
    wgit(w, { "merge-base", "HEAD", head }, function(c2, base, e2)
      if c2 ~= 0 then
        return cb("no merge-base between the worktree and the main checkout: " .. vim.trim(e2))
      end
      base = vim.trim(base)
      wgit(w, {
        "diff",
        "--name-status",
        "-z",
        "--no-renames",
        "--no-ext-diff",
        "--no-textconv",
        "--ignore-submodules=all",
        base,
        "--",
      }, function(c3, diff, e3)
        if c3 ~= 0 then
          return cb("git diff failed in the worktree: " .. vim.trim(e3))
        end
        wgit(w, { "ls-files", "-z", "--others", "--exclude-standard" }, function(c4, others, e4)
          if c4 ~= 0 then
            return cb("git ls-files failed in the worktree: " .. vim.trim(e4))
          end
          local okf, files = pcall(changed_files, diff, others)
          if not okf then
            return cb("cannot read what git printed for the worktree: " .. tostring(files))
          end
          plan_files(root, w, base, files, cb)
        end)
      end)
    end)
  end)
end

return M
