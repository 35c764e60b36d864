---@mod claude_context.review.source Change sets of Claude's turns, from the bridge's checkpoints
---
--- A turn's files come from the checkpoints the bridge takes at Claude Code's hooks (the start
--- of the turn, right before each edit, its end), so what Bash or a formatter changed is in it
--- too. Every function here is asynchronous: the bridge reads the checkpoints on its own
--- threads and the callback runs later on the main thread.

---@class claude_context.ReviewTurn
---@field id string            turn id (stable)
---@field session string       Claude's session id
---@field terminal? string     the plugin's terminal name the session runs in (nil: started outside Neovim)
---@field prompt string        the prompt's first line
---@field started_ms integer   epoch ms
---@field ended_ms? integer    epoch ms (nil while the turn runs)
---@field files string[]       project-relative paths changed in the turn (edit tools AND Bash/formatters), less those another session's overlapping turn's edit tools claimed
---@field shared? string[]     of `files`: those marked shared (see claude_context.ReviewFile)
---@field not_kept? string[]   files over the size cap before Claude's edit (not checkpointed)

---@class claude_context.ReviewFile
---@field path string          project-relative path (its name after the change set)
---@field absolute string      absolute path
---@field old_path? string     project-relative path before, for a rename
---@field key? string        the path relative to the root in the journal's form: every byte, `\` as `\\`, a byte that is not UTF-8 as `\xNN` (for restore_file)
---@field status "modified"|"added"|"deleted"|"renamed"|"binary"|"too_large"|"odd_name"|"conflict"
---@field before? string       content before the change set's first turn (nil: did not exist, binary, too large)
---@field after? string        content when the change set's last turn ended: what Claude left (nil: deleted, binary, too large)
---@field shared? boolean      changed while another session's turn overlapped, by no edit tool of this turn's alone (Bash, a formatter, or both sessions' edit tools)
---@field commands? {command:string, hunks:{old_start:integer, old_lines:integer, new_start:integer, new_lines:integer}[]}[] the Bash calls of the turns that changed it, as Claude Code reported them (2.1.269+): the command (the model's text) and its hunks' lines as it left the file
---@field conflicts? {line:integer, count:integer, why?:string}[] a land's changes left out: they touch the person's edits (status "conflict": all of them)

---@class claude_context.ChangeSet
---@field root string          the project root (absolute)
---@field turns claude_context.ReviewTurn[]   oldest first
---@field files claude_context.ReviewFile[]   sorted by path
---@field checkpoints? {before:integer, after:integer} the checkpoints at the first turn's start and the last turn's end (a whole file's reject restores it from them)
---@field proposal? boolean    nothing of it is on disk yet: `before` is, a keep writes a hunk (a land)
---@field land? string         the worktree a land's proposal comes from (its comments are for that session)
---@field title? string        the view's first line (default: the turns' summary)
---@field notes? string[]      more lines for the view's header
---@field runs_code? {path:string, why:string}[] a land's files that run code by themselves (kept only one by one)

local M = {}

---A file a rewind or a restore kept, or could not write, and why.
---@class claude_context.RewindFile
---@field path string
---@field why string

---What a rewind, its undo or a file's restore did (the bridge's report).
---@class claude_context.RewindReport
---@field root string
---@field written string[]
---@field removed string[]
---@field conflicts claude_context.RewindFile[] Changed after Claude: kept
---@field failed claude_context.RewindFile[]
---@field others claude_context.RewindFile[]? Another session's overlapping turn edited them too
---@field checkpoints {before: integer, after: integer}? A restore checkpointed the project first

local function clean(v)
  if v == vim.NIL then
    return nil
  end
  if type(v) == "table" then
    for k, x in pairs(v) do
      v[k] = clean(x)
    end
  end
  return v
end

---Calls native function `name` with `opts`; `cb(err, value)` on the main thread.
---@param name string
---@param opts table<string, any> the function's arguments (JSON)
---@param cb fun(err?: string, value?: any)
function M.call(name, opts, cb)
  local native, missing = require("claude_context.native").get()
  if not native then
    vim.schedule(function()
      cb(missing or "the native library is not loaded")
    end)
    return
  end
  local o = vim.deepcopy(opts or {})
  if not o.root and o.session then
    -- A session's turns are recorded in its own project: a background session's worktree.
    o.root = M.session_dir(o.session)
  end
  if not o.root then
    o.root = vim.fn.getcwd()
  end
  local ok, err = pcall(native[name], vim.json.encode(o), function(e, json)
    if e then
      return cb(e)
    end
    local ok2, res = pcall(vim.json.decode, json)
    if not ok2 then
      cb("bad answer from the bridge: " .. tostring(res))
    else
      cb(nil, clean(res))
    end
  end)
  if not ok then
    vim.schedule(function()
      cb(require("claude_context.native").message(err))
    end)
  end
end

---The directory Claude session `id` works in (its hooks' `cwd`), while it exists; nil when the
---session is not known.
---@param id string
---@return string?
function M.session_dir(id)
  local ok, list = pcall(function()
    return require("claude_context.sessions.state").list()
  end)
  for _, s in ipairs(ok and list or {}) do
    if s.id == id and type(s.cwd) == "string" and vim.uv.fs_stat(s.cwd) then
      return s.cwd
    end
  end
end

---Asynchronous, never blocks the editor: cb runs later on the main thread.
---opts.n: the last n turns (default 1); opts.session: only that Claude session; opts.root: the project (default: the session's own, where it works, else the current one).
---@param opts {n?:integer, session?:string, root?:string}
---@param cb fun(err?:string, cs?:claude_context.ChangeSet)
function M.changeset(opts, cb)
  M.call("review_changeset", opts or {}, function(err, cs)
    if cs then
      cs.turns = cs.turns or {}
      cs.files = cs.files or {}
      for _, t in ipairs(cs.turns) do
        t.files = t.files or {}
      end
    end
    cb(err, cs)
  end)
end

---The project's turns with checkpoints, oldest first, and the rewind that can be undone.
---@param opts {session?:string, root?:string}
---@param cb fun(err?:string, r?:{root:string, turns:claude_context.ReviewTurn[], undo?:table<string, any>})
function M.turns(opts, cb)
  M.call("review_turns", opts or {}, cb)
end

---Restores the files the last `opts.n` turns changed to what they held before them. A file the
---person changed since the last turn is kept (listed in `conflicts`) unless `opts.overwrite`; a
---file another session's overlapping turn edited too is always kept (listed in `others`).
---@param opts {n?:integer, session?:string, root?:string, overwrite?:boolean}
---@param cb fun(err?:string, report?:claude_context.RewindReport)
function M.rewind(opts, cb)
  M.call("review_rewind", opts or {}, cb)
end

---Restores one file to what it held at checkpoint `opts.target`, only while it still holds what
---it held at `opts.expected` (else it is listed in `conflicts`); the project is checkpointed
---first (the report's `checkpoints`). `opts.path` is the change set file's `key` (its bytes).
---@param opts {root:string, path:string, target:integer, expected:integer}
---@param cb fun(err?:string, report?:claude_context.RewindReport)
function M.restore_file(opts, cb)
  M.call("review_restore_file", opts, cb)
end

---Undoes the last rewind (a file changed since is kept unless `opts.overwrite`).
---@param opts {root?:string, overwrite?:boolean}
---@param cb fun(err?:string, report?:claude_context.RewindReport)
function M.rewind_undo(opts, cb)
  M.call("review_rewind_undo", opts or {}, cb)
end

return M
