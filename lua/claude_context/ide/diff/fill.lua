---@mod claude_context.ide.diff.fill Filling a diff view's buffers
---
--- The two scratch buffers of a view are filled a slice per event-loop turn: from the bridge's
--- prepared proposal (its lines go straight into the buffer), or from memory for a direct call
--- without the bridge. The prepared hunks are loaded the same way.

local M = {}

local slices = require("claude_context.ide.slices")
local cfg = require("claude_context.ide.diff.config")

---An empty scratch buffer of ours (filled a slice at a time by `build`).
local function scratch(name)
  local b = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(b, require("claude_context.util.windows").unused_buffer_name(name, "%s [%d]"))
  vim.bo[b].bufhidden = "wipe"
  vim.bo[b].swapfile = false
  vim.bo[b].undolevels = -1 -- filling it is not an edit to undo (set back once filled)
  return b
end

---How each side is filled: `fill(buf, from)` puts the next chunk of lines at line `from`
---(0-based) and returns how many it put (0: done), or nil when the proposal is gone. From the
---bridge the lines go straight into the buffer (no Lua string per line); from memory (a direct
---call without the bridge) `cfg.chunk_lines` at a time.
---@param v claude_context.DiffView
---@return fun(buf: integer, from: integer): integer? old, fun(buf: integer, from: integer): integer? new
local function sources(v)
  if v.prep then
    local native = require("claude_context.native").get()
    local function side(name)
      return function(buf, from)
        return native.proposal_fill(v.prep.id, name, buf, from, cfg.chunk_bytes)
      end
    end
    return side("old"), side("new")
  end
  local function slicer(lines)
    return function(buf, from)
      if from >= #lines then
        return 0
      end
      local chunk = vim.list_slice(lines, from + 1, math.min(#lines, from + cfg.chunk_lines))
      vim.api.nvim_buf_set_lines(buf, from == 0 and 0 or from, from == 0 and -1 or from, false, chunk)
      return #chunk
    end
  end
  return slicer(v.mem_old), slicer(v.mem_new)
end

---Fills the view's buffers (and, prepared, loads the hunks) a slice per event-loop turn, then
---calls `done(err)`. Stops quietly when the view is closed or cancelled meanwhile.
---@param v claude_context.DiffView
---@param done fun(err: string?)
function M.build(v, done)
  v.orig_buf = scratch(("claude-context://%s (%s)"):format(v.name, v.is_new and "new file" or "original"))
  v.prop_buf = scratch(("claude-context://%s (proposed)"):format(v.name))
  local old_src, new_src = sources(v)
  ---@type {buf: integer, src: fun(buf: integer, from: integer): integer?, n: integer, skip: boolean?}[]
  local fills = {
    { buf = v.orig_buf, src = old_src, n = 0, skip = v.is_new },
    { buf = v.prop_buf, src = new_src, n = 0 },
  }
  local hunk_from = v.prep and v.prep.hunks > 0 and 0 or nil
  if v.prep then
    v.hunks = {}
  end
  local native = v.prep and require("claude_context.native").get()

  ---One piece of work; false when everything is done.
  local function piece()
    for _, f in ipairs(fills) do
      if not f.skip then
        local put = f.src(f.buf, f.n) -- the first chunk replaces the buffer's one empty line
        if put == nil then
          error("the proposal is gone (the call ended)", 0)
        end
        if put == 0 then
          f.skip = true
        end
        f.n = f.n + put
        return true
      end
    end
    if hunk_from then
      local flat = native.proposal_hunks(v.prep.id, hunk_from, 4096)
      if flat == nil then
        error("the proposal is gone (the call ended)", 0)
      end
      for i = 1, #flat, 4 do
        v.hunks[#v.hunks + 1] = { flat[i], flat[i + 1], flat[i + 2], flat[i + 3] }
      end
      hunk_from = hunk_from + #flat / 4
      if #flat == 0 or hunk_from >= v.prep.hunks then
        hunk_from = nil
      end
      return true
    end
    return false
  end

  -- From the next event-loop turn: making the two buffers was this turn's work.
  local function run()
    slices.sliced(cfg.slice_ms, function()
      local ok, more = pcall(piece)
      if not ok then
        done(tostring(more))
        return false
      end
      if not more then
        for _, b in ipairs({ v.orig_buf, v.prop_buf }) do
          vim.bo[b].undolevels = -123456 -- the global value again
        end
        done(nil)
      end
      return more
    end, function()
      return not v.closed and not v.cancelled
    end)
  end
  vim.schedule(run)
end

return M
