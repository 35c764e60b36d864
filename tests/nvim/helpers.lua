-- Assertions and utilities for tests/nvim specs, and the prologue they share. tests/nvim/one.lua
-- puts this directory on package.path, so a spec starts with
--   local h = require("helpers")
--   local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
--   local messages = h.record_notify() -- when it looks at (or silences) vim.notify
-- and reaches the plugin through h.cc(), h.diff() and h.term(); sibling files (child, wsclient,
-- assets) come from h.load(name).
local M = {}

---This directory (tests/nvim).
M.here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")

---Loads the sibling file `name` (child, wsclient, assets) fresh, with dofile.
---@param name string
function M.load(name)
  return dofile(M.here .. "/" .. name .. ".lua")
end

---The plugin's entry module (required when called: a spec may run before setup()).
function M.cc()
  return require("claude_context")
end

---The diff views' module.
function M.diff()
  return require("claude_context.ide.diff")
end

---Claude's terminal module.
function M.term()
  return require("claude_context.terminal")
end

---Replaces vim.notify with a recorder (an error message would abort a headless script): every
---message lands in the returned list as { msg = …, level = … }.
---@return { msg: string, level: integer? }[]
function M.record_notify()
  local messages = {}
  vim.notify = function(msg, level)
    table.insert(messages, { msg = msg, level = level })
  end
  return messages
end

---Empties the list `t` in place (the recorder of |record_notify| keeps adding to the same list).
function M.clear(t)
  for k in pairs(t) do
    t[k] = nil
  end
end

---Runs fn with vim.notify recorded; restores it and returns the messages fn sent.
---@return { msg: string, level: integer? }[]
function M.notified(fn)
  local orig = vim.notify
  local got = M.record_notify()
  local okk, e = pcall(fn)
  vim.notify = orig
  if not okk then
    error(e, 2)
  end
  return got
end

function M.eq(expected, actual, msg)
  if not vim.deep_equal(expected, actual) then
    error(("%sexpected %s, got %s"):format(msg and (msg .. ": ") or "", vim.inspect(expected), vim.inspect(actual)), 2)
  end
end

function M.ok(cond, msg)
  if not cond then
    error(msg or "assertion failed", 2)
  end
end

function M.contains(haystack, needle, msg)
  if type(haystack) ~= "string" or not haystack:find(needle, 1, true) then
    error(
      ("%sexpected %s to contain %s"):format(msg and (msg .. ": ") or "", vim.inspect(haystack), vim.inspect(needle)),
      2
    )
  end
end

---Waits for fn() to return a truthy value; returns it or raises.
function M.wait_for(fn, timeout, what)
  local v
  local ok = vim.wait(timeout or 5000, function()
    v = fn()
    return v
  end, 10)
  if not ok then
    error("timed out waiting for " .. (what or "condition"), 2)
  end
  return v
end

---The lines `fn` reports through vim.health, as "KIND message" (with `advice`, each line's advice
---after " | "), joined by newlines.
---@param fn fun()
---@param advice boolean?
---@return string
function M.health_lines(fn, advice)
  local lines = {}
  local orig = vim.health
  local function rec(kind)
    return function(m, adv)
      table.insert(lines, kind .. " " .. m .. ((advice and adv) and (" | " .. table.concat(adv, " | ")) or ""))
    end
  end
  vim.health = { start = rec("START"), ok = rec("OK"), warn = rec("WARN"), info = rec("INFO"), error = rec("ERROR") }
  local okk, err = pcall(fn)
  vim.health = orig
  assert(okk, err)
  return table.concat(lines, "\n")
end

---A fresh directory (resolved, no symlinks).
function M.tmpdir()
  local d = vim.fn.tempname()
  vim.fn.mkdir(d, "p")
  return vim.uv.fs_realpath(d)
end

---Runs shell command `cmd` in `cwd` (waiting up to `ms`, default 60 s); fails the test unless it
---succeeds; returns its output.
---@return string
function M.sh(cmd, cwd, ms)
  local r = vim.system({ "sh", "-c", cmd }, { cwd = cwd, text = true }):wait(ms or 60000)
  M.eq(0, r.code, cmd .. ": " .. (r.stderr or ""))
  return r.stdout
end

---A new git repository at `dir` (branch main, an author set).
---@return string dir
function M.git_repo(dir)
  vim.fn.mkdir(dir, "p")
  M.sh("git init -q -b main . && git config user.email t@t && git config user.name t", dir)
  return dir
end

---`land(name, {all = true})` of a background session's worktree, waited for with its writes:
---returns its error and report.
---@return string? err, table? report
function M.land_all(name)
  local done, err, report = false, nil, nil
  require("claude_context").land(name, {
    all = true,
    cb = function(e, r)
      done, err, report = true, e, r
    end,
  })
  M.wait_for(function()
    return done
  end, 20000, "the land of " .. name)
  require("claude_context.review.fs").flush(nil, 5000)
  return err, report
end

---Calls a tool and waits for its result table.
function M.call(name, args)
  local r, err = require("claude_context").call_tool_sync(name, args or {}, 10000)
  if not r then
    error(err, 2)
  end
  return r
end

---A file's bytes, or nil when it cannot be read (the plugin's own reader).
M.read = require("claude_context.install.files").read

---Runs `fn` with a FIFO at `fifo` that a stat of it calls a regular file (as a FIFO swapped in
---after a check of the path would be), and a writer that comes 2 s later: returns whether the
---FIFO was opened and waited on (a buffer of it got loaded), and `fn`'s results (pcall's).
---@param fifo string
---@param fn fun(): any
---@return boolean held, boolean ok, any result
function M.with_swapped_fifo(fifo, fn)
  vim.fn.delete(fifo)
  assert(vim.system({ "mkfifo", fifo }):wait().code == 0, "mkfifo")
  local writer = vim.system({ "sh", "-c", 'sleep 2; printf "held\\n" > "$1"', "sh", fifo })
  local real = vim.uv.fs_stat
  vim.uv.fs_stat = function(p, ...)
    if p == fifo then
      return { type = "file", size = 1 }
    end
    return real(p, ...)
  end
  local ok, result = pcall(fn)
  vim.uv.fs_stat = real
  local held = vim.fn.bufloaded(fifo) == 1
  writer:kill(9)
  vim.fn.delete(fifo)
  return held, ok, result
end

---Writes `text` to `path` exactly (binary), replacing it.
function M.write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

function M.read_json(path)
  local f = assert(io.open(path, "r"))
  local s = f:read("*a")
  f:close()
  return vim.json.decode(s)
end

function M.mode(path)
  local st = vim.uv.fs_stat(path)
  return st and bit.band(st.mode, 511) or nil
end

---Runs an Ex command and returns what it showed: the text of the output window it opened
---(claude_context.util.output; closed afterwards) followed by any messages it echoed.
---@param cmd string
---@return string
function M.shown(cmd)
  local out = require("claude_context.util.output")
  out.close()
  local echoed = vim.api.nvim_exec2(cmd, { output = true }).output
  local text = ""
  if out.win and vim.api.nvim_win_is_valid(out.win) then
    text = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(out.win), 0, -1, false), "\n")
    out.close()
  end
  return text .. "\n" .. echoed
end

---Starts openDiff of `path` through the bridge without waiting for the decision; the returned
---box gets `.result` (the tool's answer) when the person decides.
---@return table box
function M.request_diff(path, name, contents)
  local box = {}
  require("claude_context").call_tool("openDiff", {
    old_file_path = path,
    new_file_path = path,
    new_file_contents = contents,
    tab_name = name,
  }, function(r)
    box.result = r
  end)
  return box
end

---Waits for the person's decision on a diff started by |request_diff| (the box gets `.result`);
---returns the tool's answer.
function M.decided(box, timeout, what)
  return M.wait_for(function()
    return box.result
  end, timeout or 5000, what or "the decision")
end

---Waits for the diff view `name` to be on screen (it has its proposal window); returns it.
function M.diff_view(name, timeout)
  return M.wait_for(function()
    local v = require("claude_context.ide.diff").views[name]
    return v and v.prop_win and v
  end, timeout or 10000, "the view " .. name)
end

---Closes every diff view and tab page but the first.
function M.close_diffs()
  require("claude_context.ide.diff").close_all()
  vim.wait(100)
  vim.cmd("silent! only")
  vim.cmd("silent! tabonly")
end

---The `cmd` of an in-process language server (Neovim 0.11 accepts a function as `cmd`): it
---answers `initialize` with `opts.capabilities` (default none), `shutdown` with nil, and every
---other request with nil, or never when `opts.silent`; it records the methods asked in
---`opts.requests` and the ids `$/cancelRequest` names in `opts.cancelled` (lists, when given).
---@param opts {capabilities: table?, silent: boolean?, requests: string[]?, cancelled: integer[]?}?
---@return fun(dispatchers: table): table
function M.fake_lsp_cmd(opts)
  opts = opts or {}
  return function(dispatchers)
    local closing = false
    local id = 0
    local function exit()
      if not closing then
        closing = true
        vim.schedule(function()
          dispatchers.on_exit(0, 15)
        end)
      end
    end
    return {
      request = function(method, _, callback)
        id = id + 1
        if opts.requests then
          table.insert(opts.requests, method)
        end
        if method == "initialize" then
          callback(nil, { capabilities = opts.capabilities or {} })
        elseif method == "shutdown" or not opts.silent then
          callback(nil, nil)
        end
        return true, id
      end,
      notify = function(method, params)
        if method == "$/cancelRequest" and opts.cancelled then
          table.insert(opts.cancelled, params.id)
        elseif method == "exit" then
          exit()
        end
        return true
      end,
      is_closing = function()
        return closing
      end,
      terminate = exit,
    }
  end
end

---An in-process language server rooted at `root` (M.fake_lsp_cmd), attached to the current
---buffer: no capabilities, every request answered with nil; `extra_folders` are more workspace
---folders. Returns the client id.
---@param root string
---@param extra_folders string[]?
---@return integer?
function M.fake_lsp(root, extra_folders)
  local wf = { { uri = vim.uri_from_fname(root), name = root } }
  for _, f in ipairs(extra_folders or {}) do
    table.insert(wf, { uri = vim.uri_from_fname(f), name = f })
  end
  return vim.lsp.start({
    name = "fake-" .. vim.fn.fnamemodify(root, ":t"),
    root_dir = root,
    workspace_folders = wf,
    cmd = M.fake_lsp_cmd(),
  })
end

return M
