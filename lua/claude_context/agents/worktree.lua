---@mod claude_context.agents.worktree A session's worktree as the project's git registers it
---
--- A background session's worktree is written by the model: its `.git` file and whatever that
--- points at are untrusted. Git is run on a worktree only when the project's own git directory
--- registers it (`<common dir>/worktrees/<id>/gitdir` names this worktree's `.git`, at the place
--- the plugin made it, with no link on the way) and its `.git` file points back there; the git
--- directory is the project's registration, never read from the worktree. Every such git runs
--- with explicit `--git-dir` and `--work-tree`, no hooks, no fsmonitor, no external diff or
--- textconv, no submodule look-ups, and the attributes of the main checkout's HEAD (the
--- worktree's `.gitattributes` names no filter or driver): nothing in the worktree chooses what
--- runs.

local M = {}

---A session's worktree, checked (|open|).
---@class claude_context.Worktree
---@field name string?
---@field root string? The project
---@field path string Its folder
---@field git_dir string? Its registered git directory
---@field attr_source string? The attributes' source (a tree)
---@field missing boolean? The project registers it; its folder is gone
---@field unregistered boolean? The project does not register it

local names = require("claude_context.agents.names")
local uv = vim.uv

---Runs git with `args` off the main thread; `cb(code, stdout, stderr)` on the main thread.
---What git prints is taken as bytes, untouched (a blob's "\r\n" stays: `cat-file --batch`
---gives each blob's size in bytes), and in one piece rather than converted chunk by chunk.
function M.run(args, cb, stdin)
  local argv = vim.list_extend({ "git" }, args)
  require("claude_context.util.proc").run(argv, { stdin = stdin, timeout = 120000, text = false }, function(r)
    cb(r.code, r.stdout, r.stderr)
  end)
end

---The core's reading of what git printed for the worktree (crates/core/src/worktree.rs, through
---the native API's `worktree` table): bytes in, bytes out, every byte of it untrusted.
---@return table<string, function> api the native `worktree` table
function M.native()
  local api, err = require("claude_context.native").get()
  if not api or not api.worktree then
    error("claude-context: " .. (err or "the native library cannot read a worktree (rebuild it: make)"), 0)
  end
  return api.worktree
end

---Git's empty tree, by object format (the attributes' source when the project has no commit).
M.EMPTY_TREE = {
  sha1 = "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
  sha256 = "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
}

---What every git run on a worktree (or on the project for it) is given, before its command:
---nothing configured in the worktree, or by what it names, runs.
M.HARDEN = {
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "core.fsmonitor=false",
  "-c",
  "core.untrackedCache=false",
  "-c",
  "diff.external=",
  "-c",
  "diff.ignoreSubmodules=all",
  "-c",
  "submodule.recurse=false",
  "-c",
  "status.submoduleSummary=false",
  "-c",
  "core.sshCommand=",
  "-c",
  "gc.auto=0",
  "-c",
  "maintenance.auto=false",
  "--no-replace-objects",
}

---Runs git with `args` off the main thread; `cb(code, stdout, stderr)` on the main thread.
local function run(args, cb, stdin)
  return M.run(args, cb, stdin)
end

---`git` args of the project's own checkout `root` (the person's), hardened the same way.
---@param root string
---@param args string[]
---@return string[]
function M.project_args(root, args)
  local a = vim.list_extend({ "-C", root }, M.HARDEN)
  return vim.list_extend(a, args)
end

---`git` args on worktree `w` (a |open| answer): its registered git directory and work tree.
---@param w claude_context.Worktree
---@param args string[]
---@return string[]
function M.args(w, args)
  local a = { "--git-dir=" .. w.git_dir, "--work-tree=" .. w.path, "--attr-source=" .. w.attr_source }
  vim.list_extend(a, M.HARDEN)
  return vim.list_extend(a, args)
end

---Runs git `args` on worktree `w` (see |args|); `cb(code, stdout, stderr)` on the main thread.
---@param w claude_context.Worktree
---@param args string[]
---@param cb fun(code:integer, out:string, err:string)
---@param stdin string?
function M.git(w, args, cb, stdin)
  return run(M.args(w, args), cb, stdin)
end

---The path a git file's text names (`gitdir: X` in a `.git` file, `prefix` "gitdir"; `X` in a
---registration's `gitdir`, no prefix), absolute and cleaned, `X` taken relative to `base` when
---it is relative; nil when the text is not one path. (The core's check: crates/core/src/worktree.rs.)
---@param text string
---@param prefix string?
---@param base string
---@return string?
function M.named_path(text, prefix, base)
  return M.native().named_path(text, prefix, base)
end

---The registered worktree of `gitdirs` (`{ [admin dir] = its gitdir file's text }`) whose
---`.git` is `dotgit`: its admin dir, or nil and why not (none, or more than one).
---@param gitdirs table<string, string>
---@param dotgit string
---@return string? admin, string? err
function M.registered(gitdirs, dotgit)
  return M.native().registered(gitdirs, dotgit)
end

---The text of the small regular file `path` (never a link or a FIFO), or nil.
local function small(path)
  local st = uv.fs_lstat(path)
  if not st or st.type ~= "file" then
    return nil
  end
  return (require("claude_context.util.small_file").read(path, 64 * 1024))
end

---The registrations of the project's git `common` dir: `{ [admin dir] = gitdir's text }`.
local function registrations(common)
  local out = {}
  local dir = common .. "/worktrees"
  local handle = uv.fs_scandir(dir)
  while handle do
    local n, t = uv.fs_scandir_next(handle)
    if not n then
      break
    end
    if t == "directory" then
      out[dir .. "/" .. n] = small(dir .. "/" .. n .. "/gitdir")
    end
  end
  return out
end

---Why worktree `name` (real path `path`, of the project `root` whose git common dir is `common`)
---cannot be run git on, or nil; fills `w` (git_dir, path, missing).
local function check(w, common, name)
  local shown = vim.inspect(w.path)
  local admin, why = M.registered(registrations(common), w.path .. "/.git")
  if not admin then
    w.unregistered = true
    return ("%s is not a worktree the project's git registers (%s): nothing run in it"):format(shown, why)
  end
  w.git_dir = admin
  local st = uv.fs_lstat(w.path)
  if not st then
    w.missing = true
    return nil
  end
  if st.type ~= "directory" or uv.fs_realpath(w.path) ~= w.path then
    return ("%s is not the folder the plugin made (a link or another file is there): nothing run in it"):format(shown)
  end
  local text = small(w.path .. "/.git")
  if not text then
    return ("the worktree %s has no .git file (removed, or replaced): nothing run in it; its commits stay on branch %s"):format(
      shown,
      names.branch(name)
    )
  end
  local target = M.named_path(text, "gitdir", w.path)
  if not target or uv.fs_realpath(target) ~= uv.fs_realpath(admin) then
    return ("the .git file of worktree %s points elsewhere than the project's git (%s): nothing run in it"):format(
      shown,
      vim.inspect(text:sub(1, 200))
    )
  end
  return nil
end

---The worktree `name` of project `root`, checked (see the module's text); `cb(err, w)` on the
---main thread with `w = { name, root, path, git_dir, attr_source, missing }` (`missing`: the
---project registers it, its folder is gone). A worktree the project does not register at all is
---`cb(err, { unregistered = true, path })`.
---@param root string
---@param name string
---@param cb fun(err?:string, w?:claude_context.Worktree)
function M.open(root, name, cb)
  local why = names.invalid(name)
  if why then
    return vim.schedule(function()
      cb(why)
    end)
  end
  run(
    M.project_args(root, { "rev-parse", "--path-format=absolute", "--git-common-dir", "--show-object-format" }),
    function(c1, out, e1)
      local common, format = out:match("^(.-)\n(%w+)\n?$")
      if c1 ~= 0 or not common then
        return cb("cannot find the project's git directory: " .. vim.trim(e1))
      end
      run(M.project_args(root, { "rev-parse", "--verify", "--quiet", "HEAD^{tree}" }), function(c2, head)
        local real_root, real_common = uv.fs_realpath(root), uv.fs_realpath(common)
        if not real_root or not real_common then
          return cb("cannot find the project's git directory")
        end
        local w = {
          name = name,
          root = root,
          path = real_root .. "/" .. names.DIR .. "/" .. name,
          attr_source = c2 == 0 and vim.trim(head) or M.EMPTY_TREE[format] or M.EMPTY_TREE.sha1,
        }
        local okc, err = pcall(check, w, real_common, name)
        if not okc then
          return cb(tostring(err))
        elseif err then
          return cb(err, w.unregistered and w or nil)
        end
        cb(nil, w)
      end)
    end
  )
end

return M
