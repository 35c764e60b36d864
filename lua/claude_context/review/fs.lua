---@mod claude_context.review.fs The review's file reads and writes: native, confined, asynchronous
---
--- The review reads and writes the person's project files only through the native library's
--- capability layer (`require("claude_context.native").fs`, crates/core/src/capfs/project.rs):
--- every directory on the way is opened beneath the project root without following a symbolic
--- link, only regular files are read or written (a FIFO, socket or device is refused, never
--- opened), within a size cap, and a write is a temporary file beside the file, fsynced and
--- renamed over it, its mode kept. Nothing is checked by path here and opened later: a
--- directory swapped for a link after the review read the file is refused when it is written.
---
--- All of it runs on the library's file thread, in the order asked; callbacks run on the main
--- thread, so the editor never waits for the disk. The review keeps the text it last read or
--- wrote of each file (`read` answers from it at once); a write or removal goes through only when
--- the file still holds that text, so a change made meanwhile by someone else is never
--- overwritten (the text is read again, and the action can be retried).

local M = {}

---What the review knows of each file (absolute path): `{ root, text? , err? }`; `text` nil and
---no `err`: the file does not exist.
---@type table<string, {root:string, text?:string, err?:string}>
local known = {}
---Native operations under way, and what waits for none to be.
local pending = 0
local on_idle = {}

local function native()
  local api, err = require("claude_context.native").get()
  if not api or not api.fs then
    return nil, err or "the native library has no file access (rebuild it: make)"
  end
  return api.fs
end

---Counts an operation under way; returns the function that counts it done (once, however
---often it is called).
local function started()
  pending = pending + 1
  local done = false
  return function()
    if done then
      return
    end
    done = true
    pending = pending - 1
    if pending == 0 then
      local cbs = on_idle
      on_idle = {}
      for _, cb in ipairs(cbs) do
        cb()
      end
    end
  end
end

---Runs `cb` once no read or write is under way (at once when none is).
---@param cb fun()
function M.when_idle(cb)
  if pending == 0 then
    cb()
  else
    table.insert(on_idle, cb)
  end
end

local leave_installed = false
local function install()
  if leave_installed then
    return
  end
  leave_installed = true
  vim.api.nvim_create_autocmd("VimLeavePre", {
    callback = function()
      M.flush()
    end,
    desc = "claude-context: finish the review's file writes",
  })
end

---Reads `paths` (absolute, inside `root`) into what the review knows, natively; `cb()` once
---all are read (or refused: their message is kept and given by |M.read|).
---@param root string
---@param paths string[]
---@param cb fun()?
function M.load(root, paths, cb)
  install()
  local fs, err = native()
  local one_done = require("claude_context.util.join").countdown(#paths, cb or function() end)
  for _, path in ipairs(paths) do
    if not fs then
      known[path] = { root = root, err = err }
      one_done()
    else
      local finished = started()
      local ok, perr = pcall(fs.read, root, path, function(rerr, bytes)
        -- A write asked for meanwhile knows better (its text is what the disk will hold).
        if not (known[path] and known[path].writing) then
          known[path] = { root = root, text = bytes, err = rerr }
        end
        finished()
        one_done()
      end)
      if not ok then
        known[path] = { root = root, err = require("claude_context.native").message(perr) }
        finished()
        one_done()
      end
    end
  end
end

---The text of the file `path` as the review last read or wrote it: nil and "missing" when it
---does not exist, nil and a message when it was refused or is not read yet.
---@param path string
---@return string? bytes, string? err
function M.read(path)
  local k = known[path]
  if not k then
    return nil, ("%s is not read yet: try again in a moment"):format(path)
  end
  if k.err then
    -- Refused or failed: read again in the background (the next action sees the file anew).
    if not k.reading then
      k.reading = true
      M.load(k.root, { path })
    end
    return nil, k.err
  end
  if k.text == nil then
    return nil, "missing"
  end
  return k.text
end

---Starts native operation `op` (`fs[op](root, path, ...args, cb)`) changing `path` to `text`
---(nil: removed); `cb(ok, err)` on the main thread. What the review knows becomes `text` at
---once (later actions build on it); when the operation fails, the file is read again.
local function change(op, path, root, text, args, cb, group)
  install()
  local fs, err = native()
  if not fs then
    return false, err
  end
  local k = { root = root, text = text, writing = true }
  known[path] = k
  local finished = started()
  local function done(werr)
    if known[path] == k then
      k.writing = nil
    end
    -- (Counted done before `cb` runs: `cb` of the last write sees |M.idle()|.)
    if werr and known[path] == k then
      -- Read it again; the caller hears of the failure once the review knows the file anew.
      known[path] = nil
      M.load(root, { path }, function()
        cb(false, werr)
      end)
      finished()
    else
      finished()
      cb(not werr, werr)
    end
  end
  table.insert(args, done)
  -- (The batch a land's writes share: one `rewind undo` takes them back together.)
  args[#args + 1] = group
  local ok, perr = pcall(fs[op], root, path, unpack(args, 1, #args))
  if not ok then
    known[path] = nil
    finished()
    return false, require("claude_context.native").message(perr)
  end
  return true
end

---Replaces the regular file `path` with `text` (atomically, its mode kept), only when it still
---holds what |M.read| gives. Returns false and a message when it cannot start; else `cb(ok, err)`
---runs on the main thread once the file is in place (or refused).
---@param path string
---@param text string
---@param opts {root:string, group?:string} `group`: the batch (a land) one undo takes back whole
---@param cb fun(ok:boolean, err?:string)
---@return boolean ok, string? err
function M.write_async(path, text, opts, cb)
  local expect, rerr = M.read(path)
  if not expect then
    return false, rerr == "missing" and ("%s is gone"):format(path) or rerr
  end
  return change("replace", path, opts.root, text, { text, expect }, cb, opts.group)
end

---Creates `path` with `text` (refused when anything is there).
---@param path string
---@param text string
---@param opts {root:string, group?:string} `group`: the batch (a land) one undo takes back whole
---@param cb fun(ok:boolean, err?:string)
---@return boolean ok, string? err
function M.create_async(path, text, opts, cb)
  local _, rerr = M.read(path)
  if rerr ~= "missing" then
    return false, rerr or ("%s exists"):format(path)
  end
  return change("create", path, opts.root, text, { text }, cb, opts.group)
end

---Removes the regular file `path`, only when it still holds what |M.read| gives.
---@param path string
---@param opts {root:string, group?:string} `group`: the batch (a land) one undo takes back whole
---@param cb fun(ok:boolean, err?:string)
---@return boolean ok, string? err
function M.remove_async(path, opts, cb)
  local expect, rerr = M.read(path)
  if not expect then
    return false, rerr == "missing" and ("%s is gone"):format(path) or rerr
  end
  return change("remove", path, opts.root, nil, { expect }, cb, opts.group)
end

---Why `rel` (a path relative to the project root) is a file that runs code by itself (a git
---hook manager's, CI, `.envrc`, `.claude/settings.json`, …): the core's one list of protected
---files (|claude-context-security-protected|), or nil.
---@param rel string
---@return string? why
function M.runs_code(rel)
  local fs = native()
  return fs and fs.protected and fs.protected(rel) or nil
end

---Whether no read or write is under way.
---@return boolean
function M.idle()
  return pending == 0
end

---Waits (at most `ms`, default 5000) until the reads and writes under way are done.
---@param _ string? (any path: all are waited for)
---@param ms integer?
function M.flush(_, ms)
  if M.idle() then
    return
  end
  vim.wait(ms or 5000, M.idle, 5)
end

return M
