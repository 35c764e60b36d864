---@mod claude_context.complete What :ClaudeContext <Tab> offers
---
--- Sources of completion words (git branches, worktrees, Claude terminal sessions, turn numbers)
--- and `args()`, which makes a subcommand's `complete` from one source per argument:
--- >lua
---   commands.register("land", {
---     desc = "…", run = …,
---     complete = require("claude_context.complete").args(require("claude_context.complete").worktrees),
---   })
--- <
--- Completion runs while the person types: the sources read small files (git's refs, a
--- directory listing) and never start a process or wait. Names from the repository are not
--- trusted: a name with a control character or a space is left out.

local M = {}

local uv = vim.uv or vim.loop
local small_file = require("claude_context.util.small_file")

---The words of `list` that start with `arglead`, sorted, without duplicates.
---@param list string[]
---@param arglead string
---@return string[]
function M.matching(list, arglead)
  local seen, out = {}, {}
  for _, w in ipairs(list) do
    if type(w) == "string" and not seen[w] and vim.startswith(w, arglead) then
      seen[w] = true
      out[#out + 1] = w
    end
  end
  table.sort(out)
  return out
end

---Whether `name` can be offered: printable, no blank, not empty.
local function offerable(name)
  return type(name) == "string" and name ~= "" and not name:find("[%c%s]")
end

---The first line of the small file at `path` (a FIFO or a device there is never waited on), or
---nil.
local function first_line(path)
  local data = small_file.read(path, 64 * 1024)
  return data and data:match("^([^\r\n]*)") or nil
end

---The entries of directory `dir` as { name = type }.
local function entries(dir)
  local out = {}
  local h = uv.fs_scandir(dir)
  if not h then
    return out
  end
  while true do
    local name, typ = uv.fs_scandir_next(h)
    if not name then
      break
    end
    out[name] = typ
  end
  return out
end

---`rel` resolved against directory `base` (absolute stays absolute).
local function resolve(base, rel)
  if rel:sub(1, 1) == "/" or rel:match("^%a:[/\\]") then
    return rel
  end
  return vim.fs.normalize(base .. "/" .. rel)
end

---The git directory and the common directory (where refs and worktrees live) of the repository
---holding `dir` (default: the current directory), read from `.git` without running git.
---@param dir string?
---@return string? gitdir, string? commondir
function M.git_dirs(dir)
  local dotgit = vim.fs.find(".git", { upward = true, path = dir or vim.fn.getcwd(), limit = 1 })[1]
  if not dotgit then
    return nil
  end
  local gitdir = dotgit
  local st = uv.fs_stat(dotgit)
  if st and st.type == "file" then
    local line = first_line(dotgit)
    local rel = line and line:match("^gitdir:%s*(.-)%s*$")
    if not rel then
      return nil
    end
    gitdir = resolve(vim.fs.dirname(dotgit), rel)
  end
  local common = first_line(gitdir .. "/commondir")
  return gitdir, common and resolve(gitdir, vim.trim(common)) or gitdir
end

---The local branches of the repository holding `dir` (refs/heads and packed-refs).
---@param dir string?
---@return string[]
function M.branches(dir)
  local _, common = M.git_dirs(dir)
  if not common then
    return {}
  end
  local out, budget = {}, 2000
  local function walk(path, prefix, depth)
    for name, typ in pairs(entries(path)) do
      budget = budget - 1
      if budget < 0 or depth > 8 then
        return
      end
      if typ == "directory" then
        walk(path .. "/" .. name, prefix .. name .. "/", depth + 1)
      elseif typ == "file" then
        out[#out + 1] = prefix .. name
      end
    end
  end
  walk(common .. "/refs/heads", "", 0)
  local packed = small_file.read(common .. "/packed-refs", 1024 * 1024, true) or ""
  for ref in packed:gmatch("%x+ refs/heads/([^\r\n]+)") do
    out[#out + 1] = ref
  end
  return M.matching(vim.tbl_filter(offerable, out), "")
end

---The worktrees of the repository holding `dir`: the names under `.claude/worktrees/` (where
---Claude Code's `--worktree` puts them) and the last path component of every linked worktree
---git lists (`<common>/worktrees/*/gitdir`).
---@param dir string?
---@return string[]
function M.worktrees(dir)
  local _, common = M.git_dirs(dir)
  local out = {}
  local roots = { dir or vim.fn.getcwd() }
  if common then
    if vim.fs.basename(common) == ".git" then
      roots[#roots + 1] = vim.fs.dirname(common)
    end
    for name, typ in pairs(entries(common .. "/worktrees")) do
      if typ == "directory" then
        local line = first_line(common .. "/worktrees/" .. name .. "/gitdir")
        -- gitdir holds the path of the worktree's `.git` file.
        out[#out + 1] = line and vim.fs.basename(vim.fs.dirname(vim.trim(line))) or name
      end
    end
  end
  for _, root in ipairs(roots) do
    for name, typ in pairs(entries(root .. "/.claude/worktrees")) do
      if typ == "directory" then
        out[#out + 1] = name
      end
    end
  end
  return M.matching(vim.tbl_filter(offerable, out), "")
end

---The names of the Claude terminal sessions (|:ClaudeContext-sessions|), when the terminal was
---used (looking loads nothing).
---@return string[]
function M.sessions()
  local term = package.loaded["claude_context.terminal.sessions"]
  if not term then
    return {}
  end
  local ok, list = pcall(term.list)
  if not ok then
    return {}
  end
  return vim.tbl_filter(
    offerable,
    vim.tbl_map(function(it)
      return it.name
    end, list)
  )
end

---The ids of the Claude Code sessions the hooks reported, newest first (looking loads nothing).
---@return string[]
function M.session_ids()
  local ss = package.loaded["claude_context.sessions.state"]
  if not (ss and package.loaded["claude_context._native"]) then
    return {}
  end
  local ok, list = pcall(ss.list)
  local out = {}
  for _, s in ipairs(ok and list or {}) do
    if type(s.id) == "string" and s.id:match("^[%w%-_]+$") then
      out[#out + 1] = s.id
    end
  end
  return out
end

---The ids of the project's conversations the last listing found (claude_context.conversations
---keeps them; looking loads nothing and reads no file).
---@return string[]
function M.conversations()
  local c = package.loaded["claude_context.conversations"]
  if not (c and type(c.ids) == "table") then
    return {}
  end
  return vim.tbl_filter(offerable, c.ids)
end

---Turn numbers counted from the last (1 = the last turn): as many as the bridge knows of turns,
---at least 1 and at most 20.
---@return string[]
function M.turns()
  local n = 0
  local ss = package.loaded["claude_context.sessions.state"]
  if ss and package.loaded["claude_context._native"] then
    local ok, turns = pcall(ss.turns)
    n = ok and type(turns) == "table" and #turns or 0
  end
  local out = {}
  for i = 1, math.min(math.max(n, 1), 20) do
    out[i] = tostring(i)
  end
  return out
end

---A source of several: the words of each (a function returning words, or a list), each word
---once (a running session's id is also a conversation's).
---@param ... (fun(): string[])|string[]
---@return fun(): string[]
function M.any(...)
  local sources = { ... }
  return function()
    local out, seen = {}, {}
    for _, s in ipairs(sources) do
      for _, w in ipairs(type(s) == "function" and s() or s) do
        if not seen[w] then
          seen[w] = true
          out[#out + 1] = w
        end
      end
    end
    return out
  end
end

---A subcommand's `complete`: the n-th argument after the subcommand completes from the n-th
---source (a function returning words, or a list); past the last source nothing is offered.
---@param ... (fun(): string[])|string[]
---@return fun(arglead: string, args: string[]): string[]
function M.args(...)
  local sources = { ... }
  return function(arglead, args)
    -- args[1] is the subcommand; the word being completed is new (arglead "") or the last one.
    local pos = #args - 1 + (arglead == "" and 1 or 0)
    local s = sources[pos]
    if not s then
      return {}
    end
    return M.matching(type(s) == "function" and s() or s, arglead)
  end
end

---The instructions `:ClaudeContext edit` was given, newest first (claude_context.edit's history,
---when that feature is loaded).
---@return string[]
function M.edit_instructions()
  local e = package.loaded["claude_context.edit"]
  local out = {}
  for i = #(e and e.history or {}), 1, -1 do
    out[#out + 1] = e.history[i]
  end
  return out
end

return M
