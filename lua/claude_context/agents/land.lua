---@mod claude_context.agents.land Bringing a worktree's work into the main checkout
---
--- The worktree's whole change — its commits and its uncommitted and untracked files — against
--- the merge-base of its HEAD and the main checkout's HEAD is merged, file by file, into the
--- main checkout as it is now (claude_context.agents.plan, claude_context.agents.merge): a hunk
--- touching a region the person changed there is a conflict, left out and listed, never written
--- over. Files are read and written through the review's native file layer
--- (claude_context.review.fs): confined to the project, atomic, and only when the file still
--- holds what was read. Git runs off the main thread; the editor never waits.
---
--- `land(name, {all = true})` applies every hunk that merges; without `all` nothing is written
--- at first: the review view opens on the land as a proposal (claude_context.review.model's
--- `shows_new`; before: the main checkout now, after: what landing would write), and each hunk
--- kept there is written into the main checkout (atomic, confined, refused as a conflict when the
--- person changed its lines since); a rejected one never touches it. The changes that touch
--- the person's edits are listed in the view and the quickfix list, never written.
---
--- Files that run code by themselves (git hooks managers' files, CI workflows, `.envrc`,
--- `.claude/settings.json`, `.nvim.lua`, `.vscode/tasks.json`, …: the core's one list,
--- claude_context.review.fs's `runs_code`) land only when the person keeps them in the view:
--- `{all}` skips them and names them, and the view marks them. A land `{all}` is one batch
--- of the review's kept writes: `:ClaudeContext rewind undo` takes all of it back, in a project
--- where no turn ran too, never over a change the person made since.

local M = {}

local names = require("claude_context.agents.names")
local notify = require("claude_context.util.notify")
-- (Loaded here: the stale files' listing counts down inside libuv's callbacks.)
local countdown = require("claude_context.util.join").countdown

local plan_mod = require("claude_context.agents.plan")

local fail = notify.fail

---A file of a land's report and why.
---@class claude_context.LandReportFile
---@field path string
---@field why string?

---A file with hunks left out.
---@class claude_context.LandConflict
---@field path string
---@field hunks {line: integer, count: integer, why: string?}[]

---What a land did (`opts.all`), or would do (its view: `view`).
---@class claude_context.LandReport
---@field written string[]
---@field conflicts claude_context.LandConflict[]
---@field skipped claude_context.LandReportFile[]
---@field failed claude_context.LandReportFile[]
---@field runs_code claude_context.LandReportFile[] Files that run code by themselves, kept for the view
---@field view claude_context.ReviewView? The land's view (without `all`)

---@class claude_context.LandOpts
---@field all boolean? Land every hunk without the view
---@field cb fun(err: string?, report: claude_context.LandReport?)?
---@field on_ready fun(view: claude_context.ReviewView)? Once the view is built
---@field on_cleaned fun(removed: string[])? Once stale temporary files were removed

---Whether land `{all}` writes plan file `f`: a file that runs code by itself is the person's
---to keep in the view. Returns nil, or why not.
---@param f claude_context.LandFile
---@return string? why
function M.needs_keep(f)
  if f.action == "write" or f.action == "create" or f.action == "remove" then
    return require("claude_context.review.fs").runs_code(f.path)
  end
end

---Writes the plan's files; `cb(report)` once all are on disk or refused. The writes are one
---batch (`opts.group`): one `rewind undo` takes them back.
---@param plan claude_context.LandPlan
---@param cb fun(report: claude_context.LandReport)
---@param opts {group?:string}?
function M.apply(plan, cb, opts)
  local fs = require("claude_context.review.fs")
  local group = opts and opts.group
  local report = { written = {}, conflicts = {}, skipped = {}, failed = {}, runs_code = {} }
  -- (One for the slices that start the writes, one more for each write started.)
  local one, add = countdown(1, function()
    cb(report)
  end)
  -- The files with unsaved edits in a loaded buffer (by the buffer's exact name).
  local unsaved = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].modified then
      unsaved[vim.api.nvim_buf_get_name(b)] = true
    end
  end
  local function one_file(f)
    if #(f.conflicts or {}) > 0 then
      report.conflicts[#report.conflicts + 1] = { path = f.path, hunks = f.conflicts }
    end
    local started, err
    if (f.action == "write" or f.action == "remove") and unsaved[f.absolute] then
      -- Unsaved edits in its buffer: the merge did not see them; nothing is written over them.
      report.skipped[#report.skipped + 1] =
        { path = f.path, why = "unsaved changes in its buffer: save it, then land again" }
      return
    end
    local why = M.needs_keep(f)
    if why then
      -- It runs code by itself: landed only when the person keeps it in the land's view.
      report.runs_code[#report.runs_code + 1] = { path = f.path, why = why }
      return
    end
    local function done(ok, werr)
      if ok then
        report.written[#report.written + 1] = f.path
      else
        report.failed[#report.failed + 1] = { path = f.path, why = werr }
      end
      one()
    end
    if f.action == "write" then
      add()
      started, err = fs.write_async(f.absolute, f.after, { root = plan.root, group = group }, done)
    elseif f.action == "create" then
      add()
      started, err = fs.create_async(f.absolute, f.after, { root = plan.root, group = group }, done)
    elseif f.action == "remove" then
      add()
      started, err = fs.remove_async(f.absolute, { root = plan.root, group = group }, done)
    else
      started = true
      if f.action == "binary" or f.action == "unreadable" then
        report.skipped[#report.skipped + 1] = { path = f.path, why = f.why or "a binary file: copy it by hand" }
      end
    end
    if not started then
      report.failed[#report.failed + 1] = { path = f.path, why = err }
      one()
    end
  end
  -- The writes are started in slices, so the editor is never held long.
  require("claude_context.ide.slices").each(plan.files, plan_mod.SLICE_NS / 1e6, one_file, one)
end

---Lines summing up a land's report.
---@param name string
---@param report claude_context.LandReport
---@return string msg, integer level
function M.summary(name, report)
  local parts = { ("landed %s: %d file(s) written"):format(name, #report.written) }
  local level = vim.log.levels.INFO
  if #report.conflicts > 0 then
    level = vim.log.levels.WARN
    local c = {}
    for _, x in ipairs(report.conflicts) do
      c[#c + 1] = ("%s (%d hunk(s))"):format(x.path, #x.hunks)
    end
    parts[#parts + 1] = "conflicts left out (your edits there are untouched): " .. table.concat(c, ", ")
  end
  if #report.skipped > 0 then
    local c = {}
    for _, x in ipairs(report.skipped) do
      c[#c + 1] = ("%s (%s)"):format(x.path, x.why)
    end
    parts[#parts + 1] = "skipped: " .. table.concat(c, ", ")
  end
  if #report.failed > 0 then
    level = vim.log.levels.WARN
    local c = {}
    for _, x in ipairs(report.failed) do
      c[#c + 1] = ("%s (%s)"):format(x.path, tostring(x.why))
    end
    parts[#parts + 1] = "not written: " .. table.concat(c, ", ")
  end
  if #(report.runs_code or {}) > 0 then
    level = vim.log.levels.WARN
    local c = {}
    for _, x in ipairs(report.runs_code) do
      c[#c + 1] = require("claude_context.review.model").shown(x.path)
    end
    parts[#parts + 1] = ("not landed, they run code by themselves (keep each in the land's view: :ClaudeContext land %s): %s"):format(
      name,
      table.concat(c, ", ")
    )
  end
  if #report.written > 0 then
    parts[#parts + 1] = ":ClaudeContext rewind undo takes this land back"
  end
  return table.concat(parts, "; "), level
end

---The conflicts as quickfix items.
local function quickfix(plan, report)
  local items = {}
  for _, x in ipairs(report.conflicts) do
    for _, h in ipairs(x.hunks) do
      items[#items + 1] = {
        filename = plan.root .. "/" .. x.path,
        lnum = math.max(h.line, 1),
        text = h.why or ("the worktree's change of %d line(s) here touches your edit: not landed"):format(h.count),
      }
    end
  end
  if #items > 0 then
    vim.fn.setqflist({}, " ", { title = "claude-context: land conflicts", items = items })
  end
end

---Plans the land of worktree `name` (claude_context.agents.plan's `prepare`), then `go(plan, wt)`; else `cb(err)`.
local function prepared(name, cb, go)
  local why = names.invalid(name)
  if why then
    return fail(cb, why)
  end
  local root, rerr = require("claude_context.agents.shared").root()
  if not root then
    return fail(cb, rerr)
  end
  -- Only a worktree the project's git registers, run on with its registered git dir.
  require("claude_context.agents.worktree").open(root, name, function(werr, w)
    if werr and not (w and w.unregistered) then
      return fail(cb, werr)
    end
    if w.missing or w.unregistered then
      local how = w.unregistered and ", or the project's git does not register it: nothing run" or ""
      return fail(
        cb,
        ("the worktree %s is gone (removed by hand?)%s; its commits stay on branch %s"):format(
          vim.inspect(w.path),
          how,
          names.branch(name)
        )
      )
    end
    plan_mod.prepare(root, w, function(err, plan)
      if err then
        return fail(cb, err)
      end
      go(plan, w.path)
    end)
  end)
end

---The change set of a land's view: the plan's files as proposals (before: the main checkout
---now; after: what landing writes), the conflict-only files with their conflicts, and the
---skipped files named in the header.
---@param name string
---@param plan claude_context.LandPlan
---@return claude_context.ChangeSet cs, claude_context.LandReport report
function M.proposal(name, plan)
  local files, report = {}, { written = {}, conflicts = {}, skipped = {}, failed = {}, runs_code = {} }
  for _, f in ipairs(plan.files) do
    if #(f.conflicts or {}) > 0 then
      report.conflicts[#report.conflicts + 1] = { path = f.path, hunks = f.conflicts }
    end
    local status = f.action == "create" and "added"
      or f.action == "remove" and "deleted"
      or f.action == "write" and "modified"
      or f.action == "conflict" and "conflict"
    if status then
      local runs_code = M.needs_keep(f)
      report.runs_code[#report.runs_code + 1] = runs_code and { path = f.path, why = runs_code } or nil
      files[#files + 1] = {
        path = f.path,
        absolute = f.absolute,
        status = status,
        before = status ~= "conflict" and f.before or nil,
        after = status ~= "conflict" and f.after or nil,
        conflicts = #(f.conflicts or {}) > 0 and f.conflicts or nil,
        runs_code = runs_code,
      }
    elseif f.action == "binary" or f.action == "unreadable" then
      report.skipped[#report.skipped + 1] = { path = f.path, why = f.why or "a binary file: copy it by hand" }
    end
  end
  local notes = {}
  if #report.conflicts > 0 then
    notes[#notes + 1] = ("%d file(s) with changes that touch your edits: marked ! below, never written (also in the quickfix list)"):format(
      #report.conflicts
    )
  end
  if #report.skipped > 0 then
    local c = {}
    for _, x in ipairs(report.skipped) do
      c[#c + 1] = ("%s (%s)"):format(require("claude_context.review.model").shown(x.path), x.why)
    end
    notes[#notes + 1] = "Not landed: " .. table.concat(c, ", ")
  end
  if #report.runs_code > 0 then
    notes[#notes + 1] = ("%d file(s) that run code by themselves (marked %s below): land {all} leaves them out; keep each here only after reading it"):format(
      #report.runs_code,
      require("claude_context.review.text").RUNS_CODE_MARK
    )
  end
  local cs = {
    root = plan.root,
    turns = {},
    files = files,
    proposal = true,
    land = name,
    title = ("Landing worktree %s into the main checkout: %d file(s). Keep lands a hunk; reject leaves it out; nothing is written until kept"):format(
      name,
      #files
    ),
    notes = notes,
  }
  return cs, report
end

---How long before a land started a temporary file of the plugin's writes must have last
---changed to be taken for one that a Neovim killed in the middle of a write left (seconds): a
---write under way (another Neovim's land) changes its file until it renames it into place.
M.STALE_TMP_S = 10

---The name of a temporary file of the plugin's atomic writes (claude-context-core's capfs):
---`.NAME.claude-context-<12 hex digits>.tmp`, beside the file NAME it was to replace.
M.TMP_PATTERN = "^%..+%.claude%-context%-" .. ("%x"):rep(12) .. "%.tmp$"

---Adds to `found` the paths of |TMP_PATTERN| in directory `d` (its scandir `handle`) that are
---regular files last changed |STALE_TMP_S| or more before `since`; then `done()`. Their ages
---are asked without blocking (this runs in a libuv callback).
local function stale_in(d, handle, since, found, done)
  local names = {}
  while handle do
    local name, t = vim.uv.fs_scandir_next(handle)
    if not name then
      break
    end
    if (t == "file" or t == nil) and name:match(M.TMP_PATTERN) then
      names[#names + 1] = d .. "/" .. name
    end
  end
  local one = countdown(#names, done)
  for _, path in ipairs(names) do
    vim.uv.fs_lstat(path, function(_, st)
      if st and st.type == "file" and st.mtime.sec <= since - M.STALE_TMP_S then
        found[#found + 1] = path
      end
      one()
    end)
  end
end

---Removes the stale temporary files `found` through the review's file layer; `cb(removed)`.
local function remove_stale(plan, found, cb)
  cb = cb or function() end
  if #found == 0 then
    return cb({})
  end
  local fs = require("claude_context.review.fs")
  fs.load(plan.root, found, function()
    local removed = {}
    local one = countdown(#found, function()
      table.sort(removed)
      cb(removed)
    end)
    for _, path in ipairs(found) do
      local started = fs.remove_async(path, { root = plan.root }, function(ok)
        removed[#removed + 1] = ok and path or nil
        one()
      end)
      if not started then
        one()
      end
    end
  end)
end

---Removes the temporary files of the plugin's writes that a Neovim killed in the middle of a
---write left in the directories of the plan's files: only names of |TMP_PATTERN|, only regular
---files last changed |STALE_TMP_S| or more before `since` (seconds), each through the review's
---file layer (confined to the project; read, then removed only while it holds what was read,
---never a link; what it held is kept in the checkpoint store). The directories are listed off
---the main thread. `cb(removed)` with the paths removed.
---@param plan claude_context.LandPlan
---@param since integer os.time() when the land started
---@param cb fun(removed:string[])?
function M.clean_stale_temps(plan, since, cb)
  local dirs, seen = {}, {}
  for _, f in ipairs(plan.files) do
    local d = f.absolute and vim.fs.dirname(f.absolute)
    if d and not seen[d] then
      seen[d] = true
      dirs[#dirs + 1] = d
    end
  end
  local found = {}
  local listed = countdown(#dirs, function()
    vim.schedule(function()
      remove_stale(plan, found, cb)
    end)
  end)
  for _, d in ipairs(dirs) do
    local ok = pcall(vim.uv.fs_scandir, d, function(err, handle)
      stale_in(d, not err and handle or nil, since, found, listed)
    end)
    if not ok then
      listed()
    end
  end
end

---Lands worktree `name` (see the module's text). Returns at once; `opts.cb(err, report)` later.
---With `all`, every hunk that merges is written (`report.written`); without, the review view
---opens on the land as a proposal (`report.view`; nothing written until a hunk is kept).
---@param name string
---@param opts claude_context.LandOpts?
function M.land(name, opts)
  opts = opts or {}
  local cb = opts.cb
  local since = os.time()
  return prepared(name, cb, function(plan)
    M.clean_stale_temps(plan, since, function(removed)
      if #removed > 0 then
        local shown = vim.tbl_map(function(p)
          return require("claude_context.review.model").shown(
            require("claude_context.util.paths").relative(p, plan.root)
          )
        end, removed)
        notify(
          ("claude-context: removed %d temporary file(s) an interrupted write had left: %s"):format(
            #removed,
            table.concat(shown, ", ")
          )
        )
      end
      if opts.on_cleaned then
        opts.on_cleaned(removed)
      end
    end)
    if not opts.all then
      local cs, report = M.proposal(name, plan)
      quickfix(plan, report)
      if #cs.files == 0 then
        notify(("claude-context: %s has nothing to land"):format(name))
      else
        local msg = ("claude-context: landing %s: %d file(s) to review (keep lands a hunk)"):format(name, #cs.files)
        if #report.conflicts > 0 then
          msg = msg
            .. ("; %d file(s) with conflicts, left out (your edits there are untouched)"):format(#report.conflicts)
        end
        notify(msg, #report.conflicts > 0 and vim.log.levels.WARN or vim.log.levels.INFO)
        report.view = require("claude_context.review").open(cs, { on_ready = opts.on_ready })
      end
      if cb then
        cb(nil, report)
      end
      return
    end
    M.apply(plan, function(report)
      quickfix(plan, report)
      local msg, level = M.summary(name, report)
      notify("claude-context: " .. msg, level)
      if cb then
        cb(nil, report)
      end
    end, { group = ("land %s %d"):format(name, vim.uv.hrtime()) })
  end)
end

---Opens the review view on worktree `name`'s whole change against the merge-base, in the
---worktree itself (a reject puts the base's text back there; the main checkout is not touched).
---@param name string
---@param cb fun(err?:string)?
function M.review(name, cb)
  return prepared(name, cb, function(plan, wt)
    local files = {}
    for _, f in ipairs(plan.files) do
      if f.action ~= "unreadable" and (f.base or nil) ~= f.theirs then
        local binary = f.action == "binary"
        files[#files + 1] = {
          path = f.path,
          absolute = wt .. "/" .. f.path,
          status = binary and "binary" or (f.base == nil and "added") or (f.theirs == nil and "deleted") or "modified",
          before = not binary and f.base or nil,
          after = not binary and f.theirs or nil,
        }
      end
    end
    if #files == 0 then
      notify(("claude-context: %s changed nothing yet"):format(name))
    else
      require("claude_context.review").open({ root = wt, turns = {}, files = files })
    end
    if cb then
      cb(nil)
    end
  end)
end

return M
