---@mod claude_context.bridges Another bridge serving this project (claudecode.nvim, another editor)
---
--- Claude Code's `/ide` connects by itself only when exactly one lock file serves the folder it
--- runs in. With claudecode.nvim installed too, or another editor open on the project, there are
--- two: `find()` says which (claudecode.nvim loaded or on the runtimepath, and every other live
--- lock file whose `workspaceFolders` hold the project). A terminal this plugin starts is not
--- affected: it names the bridge's port (`CLAUDE_CODE_SSE_PORT`).
---
--- The lock files are read as the native side reads other editors' (crates/core/src/discovery.rs):
--- regular files of this user, never through a symlink, a few KiB at most, and only to look.

local M = {}

local uv = vim.uv or vim.loop

---The most lock files looked at, and the most bytes read of one.
local MAX_FILES, MAX_BYTES = 200, 64 * 1024

---`$CLAUDE_CONFIG_DIR/ide`, else `~/.claude/ide` (where Claude Code looks).
---@return string
function M.lock_dir()
  local dir = vim.env.CLAUDE_CONFIG_DIR
  if dir and dir ~= "" then
    return vim.fs.normalize(dir) .. "/ide"
  end
  return vim.fs.normalize("~/.claude") .. "/ide"
end

---Whether the process `pid` runs (a process of another user counts as running).
---@param pid integer
---@return boolean
local function alive(pid)
  local ok, err = uv.kill(pid, 0)
  return ok == 0 or (type(err) == "string" and err:find("EPERM", 1, true) ~= nil)
end

---`path` resolved (symlinks, `..`) when it exists, else normalized; no trailing slash.
local function real(path)
  local r = uv.fs_realpath(path)
  return (vim.fs.normalize(r or path):gsub("(.)/$", "%1"))
end

---The folder of `folders` that holds `dir` (the deepest), or nil.
---@param folders any the lock file's workspaceFolders
---@param dir string resolved
---@return string?
local function holding(folders, dir)
  local best
  for _, f in ipairs(type(folders) == "table" and folders or {}) do
    if type(f) == "string" and f:sub(1, 1) == "/" then
      local rf = real(f)
      local inside = dir == rf or vim.startswith(dir, rf == "/" and "/" or (rf .. "/"))
      if inside and (not best or #rf > #best) then
        best = rf
      end
    end
  end
  return best
end

---`s` (a path, a name another program wrote) as a message shows it: control characters and
---bytes that are not UTF-8 made printable (|strtrans()|), so none reaches the screen raw.
---@param s string
---@return string
function M.shown(s)
  return vim.fn.strtrans(s)
end

---A lock file of the lock directory read as JSON, or nil (not a regular file of this user, a
---symlink, too large, not JSON).
---@param path string
---@return table<string, any>? lock the lock file's JSON (untrusted: each field checked where used)
local function read_lock(path)
  local text, _, st = require("claude_context.util.small_file").read(path, MAX_BYTES, false, true)
  if not text or (st and st.uid and uv.getuid and st.uid ~= uv.getuid()) then
    return nil
  end
  local ok, t = pcall(vim.json.decode, text, { luanil = { object = true, array = true } })
  return ok and type(t) == "table" and t or nil
end

---@class claude_context.OtherLock
---@field path string the lock file
---@field port integer
---@field pid integer its editor's process
---@field ide string its `ideName`
---@field ours boolean written by this plugin (in another Neovim: `ideKind` "Neovim")
---@field this_nvim boolean its pid is this Neovim's (another plugin in this editor)
---@field folder string the workspace folder that holds the project

---The live lock files of other bridges whose workspace folders hold `dir`; `own` (this
---bridge's lock file) is left out.
---@param dir string the project (or the current directory)
---@param own string? this bridge's lock file
---@return claude_context.OtherLock[]
function M.other_locks(dir, own)
  local lock_dir = M.lock_dir()
  local handle = uv.fs_scandir(lock_dir)
  local out = {}
  if not handle then
    return out
  end
  dir = real(dir)
  own = own and real(own) or nil
  local me = vim.fn.getpid()
  for _ = 1, MAX_FILES do
    local name = uv.fs_scandir_next(handle)
    if not name then
      break
    end
    local port = tonumber(name:match("^(%d+)%.lock$") or "")
    local path = lock_dir .. "/" .. name
    if port and real(path) ~= own then
      local t = read_lock(path)
      local pid = t and type(t.pid) == "number" and t.pid == math.floor(t.pid) and t.pid or nil
      local folder = pid and pid > 0 and holding(t.workspaceFolders, dir)
      if folder and alive(pid) then
        table.insert(out, {
          path = path,
          port = port,
          pid = pid,
          ide = type(t.ideName) == "string" and M.shown(t.ideName:sub(1, 200)) or "?",
          ours = t.ideKind == "Neovim",
          this_nvim = pid == me,
          folder = folder,
        })
      end
    end
  end
  table.sort(out, function(a, b)
    return a.port < b.port
  end)
  return out
end

---Where claudecode.nvim is: `loaded` (require("claudecode") ran) and `path` (its
---lua/claudecode/init.lua on the runtimepath), or nil when neither.
---@return {loaded:boolean, path:string?}?
function M.claudecode()
  local loaded = package.loaded["claudecode"] ~= nil
  local path = vim.api.nvim_get_runtime_file("lua/claudecode/init.lua", false)[1]
  if loaded or path then
    return { loaded = loaded, path = path }
  end
  return nil
end

---@class claude_context.OtherBridges
---@field claudecode {loaded:boolean, path:string?}?
---@field locks claude_context.OtherLock[]
---@field dir string the project looked for

---What else serves the project: the bridge's first workspace folder (`st`, its status), else
---the current directory; its own lock file left out.
---@param st claude_context.Status? the bridge's status (claude_context.status()), nil when it is not running
---@return claude_context.OtherBridges
function M.find(st)
  local folders = st and st.workspace_folders
  local dir = type(folders) == "table" and folders[1] or vim.fn.getcwd()
  return { claudecode = M.claudecode(), locks = M.other_locks(dir, st and st.lock_file or nil), dir = dir }
end

---Whether `found` is an accident worth a warning at setup: claudecode.nvim installed, or a lock
---file another plugin wrote (another Neovim running this plugin on the project is no accident).
---@param found claude_context.OtherBridges
---@return boolean
function M.accident(found)
  if found.claudecode then
    return true
  end
  for _, l in ipairs(found.locks) do
    if not l.ours then
      return true
    end
  end
  return false
end

---What to do about it, in one sentence.
M.ADVICE = "Claude Code's /ide connects by itself only when one editor serves the folder: remove "
  .. "coder/claudecode.nvim from your plugins (its options and, with claudecode.commands, its commands work here: "
  .. ":help claude-context-from-claudecode); :ClaudeContext open still connects to this Neovim"

---The one-line warning for `found` (see accident()).
---@param found claude_context.OtherBridges
---@return string
function M.message(found)
  local what = {}
  if found.claudecode then
    table.insert(
      what,
      found.claudecode.loaded and "claudecode.nvim is loaded"
        or ("claudecode.nvim is on the runtimepath (%s)"):format(M.shown(found.claudecode.path))
    )
  end
  for _, l in ipairs(found.locks) do
    if not l.ours then
      table.insert(
        what,
        ("%s (%s, pid %d%s) serves %s too"):format(
          M.shown(vim.fn.fnamemodify(l.path, ":t")),
          l.ide,
          l.pid,
          l.this_nvim and ", this Neovim" or "",
          M.shown(l.folder)
        )
      )
    end
  end
  return ("claude-context: two bridges for this project: %s. %s."):format(table.concat(what, "; "), M.ADVICE)
end

return M
