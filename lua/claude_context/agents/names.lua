---@mod claude_context.agents.names Worktree names of background sessions
---
--- `claude --bg --worktree NAME` makes the worktree `.claude/worktrees/NAME` on the branch
--- `worktree-NAME`. A name is one component of a git reference name (git-check-ref-format):
--- no slash, no space or control character, none of `~ ^ : ? * [ \`, no `..` or `@{`, not
--- starting with `-` or `.`, not ending with `.` or `.lock`, at most 100 bytes. (No requires: the
--- base layer, so that the entry module and the session states use it without loading agents.)

local M = {}

---The directory of the worktrees, under the project root.
M.DIR = ".claude/worktrees"

---The project whose worktrees a session in `dir` works in: the git work tree holding `dir`, or
---the checkout that holds it when that is one of the worktrees (the outermost: a `.git` the
---model made inside a worktree does not make a project of its own); nil outside git.
---@param dir string
---@return string?
function M.project_of(dir)
  local outer = dir:match("^(.-)/%.claude/worktrees/[^/]+")
  if outer and outer ~= "" and vim.uv.fs_stat(outer .. "/.git") then
    return outer
  end
  local root = vim.fs.root(dir, ".git")
  return root and (root:match("^(.*)/%.claude/worktrees/[^/]+$") or root)
end

---The worktree's name when `cwd` is in one of any project's background-session worktrees
---(`…/.claude/worktrees/NAME[/…]`), else nil.
---@param cwd string?
---@return string?
function M.of_any(cwd)
  if type(cwd) ~= "string" then
    return nil
  end
  return cwd:match(".*/%.claude/worktrees/([^/]+)")
end

---The most bytes a name may have.
M.MAX = 100

---Why `name` cannot be a worktree name, or nil when it can.
---@param name any
---@return string? why
function M.invalid(name)
  if type(name) ~= "string" or name == "" then
    return "a worktree name is needed"
  end
  if not M.utf8(name) then
    local escaped = name:gsub("[^\32-\126]", function(c)
      return ("\\x%02x"):format(c:byte())
    end)
    return ('the name "%s" is not UTF-8: a worktree name is text'):format(escaped)
  end
  local shown = vim.inspect(name)
  if #name > M.MAX then
    return ("%s is longer than %d bytes"):format(shown, M.MAX)
  end
  if name:find("[%c%s~%^:%?%*%[\\/\127]") then
    return ("%s is not a valid name: no spaces, slashes or any of ~ ^ : ? * [ \\"):format(shown)
  end
  if name:find("..", 1, true) or name:find("@{", 1, true) or name == "@" then
    return ("%s is not a valid name: no '..' or '@{'"):format(shown)
  end
  if name:find("^[%-%.]") or name:find("%.$") or name:find("%.lock$") then
    return ("%s is not a valid name: it may not start with '-' or '.', nor end with '.' or '.lock'"):format(shown)
  end
  return nil
end

---Whether `s` is valid UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF).
---@param s string
---@return boolean
function M.utf8(s)
  local i, n = 1, #s
  while i <= n do
    local c = s:byte(i)
    local len, min
    if c < 0x80 then
      len = 1
    elseif c >= 0xC2 and c <= 0xDF then
      len, min = 2, 0x80
    elseif c >= 0xE0 and c <= 0xEF then
      len, min = 3, 0x800
    elseif c >= 0xF0 and c <= 0xF4 then
      len, min = 4, 0x10000
    else
      return false
    end
    if len > 1 then
      local cp = c % (2 ^ (7 - len))
      for k = 1, len - 1 do
        local b = s:byte(i + k)
        if not b or b < 0x80 or b > 0xBF then
          return false
        end
        cp = cp * 64 + b % 64
      end
      if cp < min or cp > 0x10FFFF or (cp >= 0xD800 and cp <= 0xDFFF) then
        return false
      end
    end
    i = i + len
  end
  return true
end

---The most bytes a name Claude Code takes for a new worktree may have.
M.CLI_MAX = 64

---Why Claude Code (2.1.332) would refuse `name` for a new worktree (`claude --bg --worktree`
---prints an id, then the session fails), or nil: only letters, digits, `.`, `_` and `-`, at most
---|CLI_MAX| bytes. Checked by `new` before anything runs, beside |invalid|.
---@param name string
---@return string? why
function M.refused(name)
  if not name:find("^[A-Za-z0-9%._%-]+$") then
    return ("%s is not a name Claude Code takes for a new worktree: only letters, digits, '.', '_' and '-'"):format(
      vim.inspect(name)
    )
  end
  if #name > M.CLI_MAX then
    return ("%s is not a name Claude Code takes for a new worktree: at most %d characters"):format(
      vim.inspect(name),
      M.CLI_MAX
    )
  end
  return nil
end

---The branch Claude Code makes for worktree `name`.
---@param name string
---@return string
function M.branch(name)
  return "worktree-" .. name
end

---The worktree of `name` under project `root`.
---@param root string
---@param name string
---@return string
function M.worktree(root, name)
  return root .. "/" .. M.DIR .. "/" .. name
end

---The worktree name a session directory `cwd` is in (under project `root`), or nil.
---@param root string
---@param cwd string?
---@return string?
function M.of_cwd(root, cwd)
  if type(cwd) ~= "string" then
    return nil
  end
  local prefix = root .. "/" .. M.DIR .. "/"
  if cwd:sub(1, #prefix) ~= prefix then
    return nil
  end
  return cwd:sub(#prefix + 1):match("^[^/]+")
end

return M
