---@mod claude_context.review Review what Claude changed: keep or reject any hunk
---
--- A change set (claude_context.review.source: the files of the last turns, before and after)
--- is reviewed in a view of its own (claude_context.review.view) and in the ordinary buffers of
--- its files (signs, `:[range]ClaudeContext review keep|reject`). One review is active at a
--- time: the last one opened, or the last turn's when a turn ends (for the signs).

local M = {}

---What a keep or a reject acts on, and how (|act|).
---@class claude_context.ReviewActOpts
---@field targets claude_context.ReviewTarget[]? These hunks (else: the buffer's lines)
---@field buf integer?
---@field line1 integer?
---@field line2 integer?
---@field reason string? Why it was rejected (told to Claude)
---@field loaded boolean? The last turn's change set was loaded for it
---@field on_done fun(out: claude_context.ReviewOutcome)? With more than |SYNC_FILES| files

local model = require("claude_context.review.model")
local actions = require("claude_context.review.actions")
local view = require("claude_context.review.view")
local keys = require("claude_context.review.keys")
local signs = require("claude_context.review.signs")
local comments = require("claude_context.review.comments")
local notify = require("claude_context.util.notify")
local slices = require("claude_context.ide.slices")

---The active review (nil: none).
---@type claude_context.Review?
M.review = nil

local function opts()
  return require("claude_context.config.review").options()
end

---Makes `review` the active one (its signs shown; the undo steps of the previous one go).
---@param review claude_context.Review?
function M.set_active(review)
  M.review = review
  actions.reset()
  signs.attach(review)
end

---The active review.
---@return claude_context.Review?
function M.active()
  return M.review
end

---Opens the view of `review` (claude_context.review.view), its keys mapped to this module's
---actions (claude_context.review.keys).
---@param review claude_context.Review
---@param o {on_ready?: fun(v: claude_context.ReviewView)}?
---@return claude_context.ReviewView
function M.open_view(review, o)
  local v = view.open(review, o)
  keys.map(v, M)
  return v
end

---Opens the review view of change set `cs` and makes it the active review. `o.on_ready` runs
---once the whole view is built (it is built in slices).
---@param cs claude_context.ChangeSet
---@param o {on_ready?: fun(v: claude_context.ReviewView)}?
---@return claude_context.ReviewView
function M.open(cs, o)
  local review = model.new(cs)
  M.set_active(review)
  return M.open_view(review, o)
end

---Waits (at most `ms`, default 5000) until the files rejects and undos wrote are on disk (the
---reads and writes run on the native library's file thread; tests and scripts that read the
---files call this).
---@param ms integer?
function M.flush(ms)
  require("claude_context.review.fs").flush(nil, ms)
end

---Closes the review view (the review stays active: signs, keep/reject in buffers).
function M.close()
  view.close()
end

---Asks claude_context.review.source for a change set; `cb(err, cs)` on the main thread.
---@param o {n?:integer, session?:string, root?:string, turn?:string}
---@param cb fun(err?:string, cs?:claude_context.ChangeSet)
function M.load(o, cb)
  local ok, source = pcall(require, "claude_context.review.source")
  if not ok and not tostring(source):find("module 'claude_context.review.source' not found", 1, true) then
    cb("the turns' source failed to load: " .. tostring(source))
    return
  end
  if not ok or type(source) ~= "table" or not source.changeset then
    cb("no turn was recorded: this version of the plugin records no turns to review")
    return
  end
  local done = false
  local function once(err, cs)
    if not done then
      done = true
      cb(err, cs)
    end
  end
  local called, err = pcall(source.changeset, o, once)
  if not called then
    if done then
      notify.error("review: " .. tostring(err))
    else
      once(tostring(err))
    end
  end
end

---`:ClaudeContext review [N]`: the last N turns' change set (default 1), in the view.
---@param n integer?
---@param o {on_ready?: fun(v: claude_context.ReviewView)}?
function M.show(n, o)
  M.load({ n = n or 1 }, function(err, cs)
    if err or not cs then
      return notify.error("review: " .. (err or "no change set"))
    end
    if #cs.files == 0 then
      return notify(("review: the last %s changed no files"):format(n and n > 1 and (n .. " turns") or "turn"))
    end
    M.open(cs, o)
  end)
end

---The pending hunks lines l1..l2 of ordinary buffer `buf` touch (its file in the review).
---@param review claude_context.Review
---@param buf integer
---@param l1 integer
---@param l2 integer
---@return {f:claude_context.ReviewFileState, hi:integer}[]
function M.targets_in_buf(review, buf, l1, l2)
  local f = model.find(review, vim.api.nvim_buf_get_name(buf))
  if not f then
    return {}
  end
  model.refresh(f)
  return model.pending_of(f, function(h)
    local s = h.cur or (f.proposal and h.a or h.b)
    local n = model.span(f, h)
    local e = s + math.max(n, 1) - 1
    if n == 0 then
      s = s - 1 -- a deletion belongs to the line above it too
    end
    return h.opaque or f.kind ~= "text" or (s <= l2 and e >= l1)
  end)
end

---Redraws the view's sections and the signs of the files of `targets`.
local function after_action(review, targets)
  local seen = {}
  for _, t in ipairs(targets) do
    if not seen[t.f] then
      seen[t.f] = true
      signs.update_file(t.f)
      if view.current and view.current.review == review then
        view.redraw_file(view.current, model.index_of(review, t.f))
      end
    end
  end
end

---No review is active: the last turn's change set becomes the active review, then `action`
---runs again on the lines `o` names (in `buf`).
local function load_then_act(action, o, buf)
  local again = vim.tbl_extend("force", o, {
    buf = buf,
    line1 = o.line1 or vim.fn.line("."),
    line2 = o.line2 or o.line1 or vim.fn.line("."),
    loaded = true,
  })
  M.load({ n = 1 }, function(err, cs)
    if err or not cs then
      return notify.error("review: " .. (err or "no change set"))
    end
    if not M.review then
      M.set_active(model.new(cs))
    end
    -- Once the change set's files are read.
    require("claude_context.review.fs").when_idle(function()
      M.act(action, again)
    end)
  end)
end

---Tells of the refused hunks of outcome `out`, then runs `o.on_done`.
local function report_outcome(action, o, out)
  if #out.refused > 0 then
    local lines = {}
    for _, r in ipairs(out.refused) do
      lines[#lines + 1] = ("%s:%d: %s"):format(r.path, r.line, r.why)
    end
    notify.error(
      ("review: %d hunk%s not %s:\n%s"):format(
        #out.refused,
        #out.refused == 1 and "" or "s",
        action == "keep" and "kept" or "rejected",
        table.concat(lines, "\n")
      )
    )
  end
  if o.on_done then
    o.on_done(out)
  end
end

---Many files (a whole change set): `action` on a few files of `groups` per slice, one undo step
---for all.
local function act_in_slices(review, groups, action, o)
  local step = { review = review, items = {} }
  local total = { done = 0, refused = {} }
  slices.each(groups, M.SLICE_MS, function(group)
    local out = actions.apply(review, group, action, o.reason, step)
    after_action(review, group)
    total.done = total.done + out.done
    vim.list_extend(total.refused, out.refused)
  end, function()
    actions.push(step)
    report_outcome(action, o, total)
  end)
end

---Keeps or rejects hunks of the active review: `o.targets`, or the hunks lines
---`o.line1`..`o.line2` of buffer `o.buf` touch (the view or a file's buffer; default: the
---current buffer, cursor line). `o.reason`: why (a reject's, sent with `send`).
---@param action "keep"|"reject"
---When no review is active, the last turn's change set is loaded first (asynchronously: the
---result is nil then).
---More than |SYNC_FILES| files are done in slices: nil is returned, `o.on_done(outcome)` runs
---at the end.
---@param o claude_context.ReviewActOpts?
---@return claude_context.ReviewOutcome?
function M.act(action, o)
  o = o or {}
  local buf = o.buf or vim.api.nvim_get_current_buf()
  local in_view = view.current and view.current.buf == buf
  -- The view acts on the review it shows (a turn that ended meanwhile may be the active one).
  local review = in_view and view.current.review or M.review
  if not review then
    if o.targets or o.loaded then
      notify.error("review: no review is active (:ClaudeContext review)")
      return nil
    end
    -- None yet: the last turn's change set becomes the active review, then the action runs.
    load_then_act(action, o, buf)
    return nil
  end
  local targets = o.targets
  if not targets then
    local l1 = o.line1 or vim.fn.line(".")
    local l2 = o.line2 or l1
    if in_view then
      targets = view.targets(view.current, l1, l2)
    else
      targets = M.targets_in_buf(review, buf, l1, l2)
    end
  end
  local asked = #targets
  targets = actions.explicit_keeps(action, targets)
  if #targets == 0 then
    if asked == 0 then
      notify("review: no pending hunk there")
    end
    return { done = 0, refused = {} }
  end
  local groups, per = {}, {}
  for _, t in ipairs(targets) do
    if not per[t.f] then
      per[t.f] = {}
      groups[#groups + 1] = per[t.f]
    end
    table.insert(per[t.f], t)
  end
  if #groups <= M.SYNC_FILES then
    local out = actions.apply(review, targets, action, o.reason)
    after_action(review, targets)
    report_outcome(action, o, out)
    return out
  end
  act_in_slices(review, groups, action, o)
  return nil
end

---Keep/reject acting on more files than this runs in slices (`o.on_done` gets the outcome).
M.SYNC_FILES = 8
---Milliseconds of work per slice of a keep/reject over many files.
M.SLICE_MS = 6

---Keeps hunks (see |act|).
---@param o claude_context.ReviewActOpts?
function M.keep(o)
  return M.act("keep", o)
end

---Rejects hunks (see |act|).
---@param o claude_context.ReviewActOpts?
function M.reject(o)
  return M.act("reject", o)
end

---Undoes the last keep or reject (over more than |SYNC_FILES| files in slices; `on_done` runs
---at the end). Returns whether there was one.
---@param on_done fun()?
---@return boolean
function M.undo(on_done)
  local step = actions.pop()
  if not step then
    notify("review: nothing to undo")
    return false
  end
  local groups, per = {}, {}
  for _, it in ipairs(step.items) do
    if not per[it.f] then
      per[it.f] = {}
      groups[#groups + 1] = per[it.f]
    end
    table.insert(per[it.f], it)
  end
  local refused = {}
  local function finish()
    if #refused > 0 then
      local lines = {}
      for _, r in ipairs(refused) do
        lines[#lines + 1] = ("%s:%d: %s"):format(r.path, r.line, r.why)
      end
      notify.error("review: not undone:\n" .. table.concat(lines, "\n"))
    end
    if on_done then
      on_done()
    end
  end
  -- A few files at once (math.huge: one slice), more in slices.
  slices.each(groups, #groups <= M.SYNC_FILES and math.huge or M.SLICE_MS, function(group)
    vim.list_extend(refused, actions.undo_items(group))
    after_action(step.review, group)
  end, finish)
  return true
end

---Comments lines line1..line2 of buffer `o.buf` (default: the current buffer, cursor line): in
---the view, the file line the row shows.
---@param text string
---@param o {buf?:integer, line1?:integer, line2?:integer}?
---@return claude_context.ReviewComment?
function M.comment(text, o)
  o = o or {}
  if not text or text == "" then
    notify.error("review: usage: :[range]ClaudeContext review comment {text}")
    return nil
  end
  local buf = o.buf or vim.api.nvim_get_current_buf()
  local l1 = o.line1 or vim.fn.line(".")
  local l2 = o.line2 or l1
  local root = M.review and M.review.cs.root or vim.fn.getcwd()
  if view.current and view.current.buf == buf then
    local f, a = view.file_line(view.current, l1)
    local _, b = view.file_line(view.current, l2)
    if not f then
      notify.error("review: put the cursor on a file's hunk to comment it")
      return nil
    end
    return comments.add({
      absolute = f.absolute,
      root = root,
      line1 = a,
      line2 = math.max(b or a, a),
      text = text,
      buf = buf,
      row = l1,
    })
  end
  local name = vim.api.nvim_buf_get_name(buf)
  if name == "" then
    notify.error("review: this buffer has no file to comment")
    return nil
  end
  return comments.add({
    absolute = vim.fn.fnamemodify(name, ":p"),
    root = root,
    line1 = l1,
    line2 = l2,
    text = text,
    buf = buf,
    row = l1,
  })
end

---The prompt `send` would type now (nil: nothing to send).
---@return string?
function M.prompt()
  return comments.prompt(M.review)
end

---Sends the comments and the reasons of rejected hunks to the Claude session of the active
---review's last turn (its terminal), as one prompt.
---@return boolean ok
function M.send()
  local review = M.review
  local terminal
  if review and review.cs.land then
    -- A land's comments are for its background session, not for a terminal of this editor.
    local text = M.prompt()
    if text then
      vim.fn.setreg('"', text)
    end
    notify.error(
      ("review: the comments are for the background session %s; the prompt is in the unnamed register (paste it after :ClaudeContext attach %s)"):format(
        review.cs.land,
        review.cs.land
      )
    )
    return false
  end
  if review then
    local last = review.cs.turns[#review.cs.turns]
    terminal = last and last.terminal
    if last and not terminal then
      local text = M.prompt()
      if text then
        vim.fn.setreg('"', text)
      end
      notify.error(
        "review: that turn's Claude runs outside Neovim; the prompt is in the unnamed register (paste it there)"
      )
      return false
    end
  end
  local ok, err = comments.send(review, terminal, opts().submit)
  if not ok then
    notify.error("review: " .. err)
    return false
  end
  notify("review: sent to Claude")
  return true
end

---`:ClaudeContext review quickfix [N]`: the quickfix list of the active review's pending hunks,
---or (N given, or no review active) of the last N turns' change set, which becomes the active
---review (unless the view shows another).
---@param n integer?
---@param done fun(count: integer)?
function M.quickfix(n, done)
  local qf = require("claude_context.review.quickfix")
  local function fill(review, title)
    local count = qf.fill(review, title)
    notify(("review: %d hunk%s in the quickfix list"):format(count, count == 1 and "" or "s"))
    if done then
      done(count)
    end
  end
  if M.review and not n then
    return fill(M.review, "Claude's changes")
  end
  M.load({ n = n or 1 }, function(err, cs)
    if err or not cs then
      return notify.error("review: " .. (err or "no change set"))
    end
    local review = model.new(cs)
    if not view.current then
      -- The hunks listed are the ones keep and reject act on.
      M.set_active(review)
    end
    fill(review, ("Claude's changes (last %d turn%s)"):format(n or 1, (n or 1) == 1 and "" or "s"))
  end)
end

return M
