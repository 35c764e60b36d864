---@mod claude_context.checkpoints :ClaudeContext checkpoints / rewind, and the bridge's checkpoint messages
---
--- The bridge checkpoints a project at every prompt of a Claude Code session whose hooks reach
--- it, and again when the turn ends (see |claude-context-checkpoints|). This module lists those
--- turns, previews one's change set (through claude_context.review when installed), rewinds the
--- project's files to before a turn and undoes a rewind.

local M = {}

---`name` as the review and the rewind reports show it: every control character (a newline, ESC, C1 controls) and
---every byte that is not UTF-8 escaped (`\n`, `\t`, `\x1b`, `\u{9b}`), so no name can break a
---line of the view or reach the terminal raw.
---@param name string?
---@return string
function M.shown(name)
  if name == nil then
    return ""
  end
  if not name:find("[^\32-\126]") then
    -- Printable ASCII only (most names): shown as it is.
    return name
  end
  local out, i, n = {}, 1, #name
  local named = { [9] = "\\t", [10] = "\\n", [13] = "\\r" }
  while i <= n do
    local b = name:byte(i)
    local len = b < 0x80 and 1
      or (b >= 0xC2 and b <= 0xDF) and 2
      or (b >= 0xE0 and b <= 0xEF) and 3
      or (b >= 0xF0 and b <= 0xF4) and 4
      or 0
    local ch = len > 0 and name:sub(i, i + len - 1) or nil
    -- vim.str_utfindex(ch) alone (the form every Neovim takes) raises on invalid UTF-8.
    ---@diagnostic disable-next-line: missing-parameter
    if ch and len > 1 and (#ch < len or not ch:sub(2):match("^[\128-\191]+$") or not pcall(vim.str_utfindex, ch)) then
      ch = nil
    end
    if not ch then
      out[#out + 1] = ("\\x%02x"):format(b)
      i = i + 1
    elseif len == 1 and (b < 0x20 or b == 0x7f) then
      out[#out + 1] = named[b] or ("\\x%02x"):format(b)
      i = i + 1
    elseif len == 2 and b == 0xC2 and ch:byte(2) < 0xA0 then
      out[#out + 1] = ("\\u{%x}"):format(ch:byte(2))
      i = i + 2
    else
      out[#out + 1] = ch
      i = i + len
    end
  end
  return table.concat(out)
end
local shown = M.shown

local notify = require("claude_context.util.notify")
local source = require("claude_context.review.source")

---Reloads the loaded, unmodified buffers of `paths`; returns the modified ones (left alone).
---@param paths string[]
---@return string[] kept
function M.reload(paths)
  local kept = {}
  for _, p in ipairs(paths) do
    local buf = vim.fn.bufnr(p)
    if buf > 0 and vim.api.nvim_buf_is_loaded(buf) then
      if vim.bo[buf].modified then
        table.insert(kept, p)
      elseif vim.uv.fs_lstat(p) then
        vim.api.nvim_buf_call(buf, function()
          vim.cmd("silent! edit!")
        end)
      end
    end
  end
  return kept
end

local relative = require("claude_context.util.paths").relative

---Says what a rewind (or its undo) did; reloads the buffers it changed.
---@param what string
---@param r claude_context.RewindReport
---@param bang_hint string? how to overwrite the kept files
function M.report(what, r, bang_hint)
  local changed = vim.list_extend(vim.list_extend({}, r.written or {}), r.removed or {})
  local unsaved = M.reload(changed)
  local lines = { ("%s: %d written, %d removed in %s"):format(what, #(r.written or {}), #(r.removed or {}), r.root) }
  for _, p in ipairs(r.written or {}) do
    table.insert(lines, "  restored " .. shown(relative(p, r.root)))
  end
  for _, p in ipairs(r.removed or {}) do
    table.insert(lines, "  removed  " .. shown(relative(p, r.root)))
  end
  if #(r.conflicts or {}) > 0 then
    table.insert(lines, "Kept (you changed them after Claude)" .. (bang_hint and ("; " .. bang_hint) or "") .. ":")
    for _, c in ipairs(r.conflicts) do
      table.insert(lines, "  " .. shown(relative(c.path, r.root)))
    end
  end
  if #(r.others or {}) > 0 then
    table.insert(lines, "Kept (another session's overlapping turn edited them too):")
    for _, c in ipairs(r.others) do
      table.insert(lines, "  " .. shown(relative(c.path, r.root)))
    end
  end
  for _, c in ipairs(r.failed or {}) do
    table.insert(lines, ("  failed   %s: %s"):format(shown(relative(c.path, r.root)), c.why))
  end
  if #unsaved > 0 then
    table.insert(lines, "Buffers with unsaved edits, not reloaded (:e! to see the restored file):")
    for _, p in ipairs(unsaved) do
      table.insert(lines, "  " .. shown(relative(p, r.root)))
    end
  end
  require("claude_context.util.output").show(lines, { title = "claude-context " .. what })
  vim.api.nvim_exec_autocmds("User", { pattern = "ClaudeContextRewind", modeline = false, data = r })
end

---Rewinds the project's files to before the `n`-th last turn (see |:ClaudeContext-rewind|).
---@param opts {n?:integer, session?:string, root?:string, overwrite?:boolean}
---@param cb fun(err?:string, report?:claude_context.RewindReport)?
function M.rewind(opts, cb)
  source.rewind(opts, function(err, r)
    if cb then
      return cb(err, r)
    end
    if err then
      return notify.error("claude-context: rewind: " .. err)
    end
    M.report("rewind", r, (":ClaudeContext! rewind %d to overwrite them"):format(opts.n or 1))
  end)
end

---Undoes the last rewind.
---@param opts {root?:string, overwrite?:boolean}
---@param cb fun(err?:string, report?:claude_context.RewindReport)?
function M.undo(opts, cb)
  source.rewind_undo(opts, function(err, r)
    if cb then
      return cb(err, r)
    end
    if err then
      return notify.error("claude-context: rewind undo: " .. err)
    end
    M.report("rewind undo", r, ":ClaudeContext! rewind undo to overwrite them")
  end)
end

---Shows change set `cs`: in the review view when claude_context.review is there, else its file
---list in a floating window.
---@param cs claude_context.ChangeSet
function M.preview(cs)
  local ok, review = pcall(require, "claude_context.review")
  if ok and type(review) == "table" and review.open then
    return review.open(cs)
  end
  local lines = {}
  for _, t in ipairs(cs.turns) do
    table.insert(lines, ("%s  %s"):format(os.date("%Y-%m-%d %H:%M:%S", math.floor(t.started_ms / 1000)), t.prompt))
  end
  for _, p in ipairs(cs.turns[#cs.turns] and cs.turns[#cs.turns].not_kept or {}) do
    table.insert(lines, "  not kept  " .. shown(p) .. " (over the size cap before Claude's edit)")
  end
  for _, f in ipairs(cs.files) do
    table.insert(
      lines,
      ("  %-9s %s%s"):format(f.status, shown(f.path), f.old_path and (" (from " .. shown(f.old_path) .. ")") or "")
    )
  end
  if #cs.files == 0 then
    table.insert(lines, "  (no file changed)")
  end
  require("claude_context.util.output").show(lines, { title = "claude-context checkpoint", float = true })
end

---One line of the turn list.
---@param t claude_context.ReviewTurn
---@return string
function M.format_turn(t)
  local n = #(t.files or {})
  return ("%s  %s  (%d file%s)"):format(
    os.date("%m-%d %H:%M", math.floor(t.started_ms / 1000)),
    t.prompt ~= "" and shown(t.prompt) or "(no prompt)",
    n,
    n == 1 and "" or "s"
  )
end

---Lists the project's turns (newest first); the one chosen is previewed.
---@param opts {session?:string, root?:string}?
function M.pick(opts)
  opts = opts or {}
  source.turns(opts, function(err, r)
    if err then
      return notify.error("claude-context: checkpoints: " .. err)
    end
    local turns = {}
    for i = #r.turns, 1, -1 do
      table.insert(turns, r.turns[i])
    end
    if #turns == 0 then
      return notify.notify("claude-context: no turn with checkpoints in " .. r.root)
    end
    vim.ui.select(turns, { prompt = "Claude's turns (newest first)", format_item = M.format_turn }, function(t)
      if not t then
        return
      end
      source.changeset({ root = opts.root or r.root, turn = t.id }, function(e2, cs)
        if e2 then
          return notify.error("claude-context: checkpoints: " .. e2)
        end
        M.preview(cs)
      end)
    end)
  end)
end

---Registers `:ClaudeContext checkpoints` and `rewind`.
---@param commands claude_context.Commands
function M.register(commands)
  commands.register("checkpoints", {
    desc = "list Claude's turns with checkpoints; the one chosen shows its change set",
    run = function()
      M.pick()
    end,
  })
  commands.register("rewind", {
    desc = "rewind {n} | undo: restore the files to before the n-th last turn (! overwrites your later changes)",
    complete = require("claude_context.complete").args(
      require("claude_context.complete").any(require("claude_context.complete").turns, { "undo" })
    ),
    run = function(o, args)
      local a = args[1] or "1"
      if a == "undo" then
        return M.undo({ overwrite = o.bang })
      end
      local n = tonumber(a)
      if not n or n < 1 or n ~= math.floor(n) then
        return notify.error("claude-context: rewind takes a turn count (1 = the last turn) or undo")
      end
      M.rewind({ n = n, overwrite = o.bang })
    end,
  })
end

---The text shown while a project's first checkpoint (a walk of every file) runs, and once done.
---@param p {root:string, files:integer, dirs:integer, done:boolean}
---@return string
function M.progress_text(p)
  local root = vim.fn.strtrans(vim.fn.fnamemodify(tostring(p.root or "?"), ":~"))
  local files = tonumber(p.files) or 0
  if p.done then
    return ("claude-context: checkpoint of %s taken (%d files); later ones look only at what changed"):format(
      root,
      files
    )
  end
  return ("claude-context: first checkpoint of %s: %d files so far (the prompt is not held)"):format(root, files)
end

---Shows a `checkpoint_progress` message: on the message line while running (not kept in
---|:messages|), as a notification once done; then the `User ClaudeContextCheckpointProgress`
---autocommand with the message's fields as its data.
---@param p {root:string, files:integer, dirs:integer, done:boolean}
function M.progress(p)
  local text = M.progress_text(p)
  if p.done then
    notify.notify(text, vim.log.levels.INFO)
  else
    vim.api.nvim_echo({ { text } }, false, {})
  end
  vim.api.nvim_exec_autocmds("User", { pattern = "ClaudeContextCheckpointProgress", modeline = false, data = p })
end

---The bridge's `checkpoint_error` (claude_context.rpc's table of methods routes the three here).
---@param params table
---@param respond fun(result: any, err: string?)
function M.on_error(params, respond)
  notify.notify("claude-context: " .. tostring(params.message), vim.log.levels.WARN)
  respond({})
end

---The bridge's `checkpoint_progress`.
---@param params table
---@param respond fun(result: any, err: string?)
function M.on_progress(params, respond)
  respond({})
  M.progress(params)
end

---The bridge's `turn_checkpointed`.
---@param params table
---@param respond fun(result: any, err: string?)
function M.on_checkpointed(params, respond)
  respond({})
  vim.api.nvim_exec_autocmds("User", { pattern = "ClaudeContextTurnCheckpointed", modeline = false, data = params })
end

return M
