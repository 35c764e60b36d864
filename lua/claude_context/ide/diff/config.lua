---@mod claude_context.ide.diff.config How the diff views pace their work, and when they take the cursor
---
--- Building a view never holds the editor for long: the bridge prepared the lines and the hunks
--- off the main thread (crates/core/src/proposal.rs); they are pulled a chunk at a time and put
--- into the buffers, each slice at most `slice_ms` of work, with a timer between slices so keys
--- and other requests get their turn. The tests lower these numbers to run the same paths on
--- small files.

local M = {}

---Work per event-loop turn while building a view (milliseconds).
M.slice_ms = 2
---Bytes of lines pulled from the bridge per chunk; lines put from memory per chunk.
M.chunk_bytes = 64 * 1024
M.chunk_lines = 2000
---Removed lines shown per hunk in the inline view (the rest are counted).
M.max_virt_lines = 200

---The `diff` options (claude_context.config.diff).
---@return claude_context.DiffConfig
function M.options()
  return require("claude_context.config.diff").options()
end

-- "Typing" is more than a mode: a key pressed a moment ago in Normal mode counts too.
local typing = require("claude_context.util.typing")
typing.install()

---Why the diff must not take the cursor now, or nil when it may: the person is in a mode other
---than Normal (Insert, Replace, Visual, Select, Command-line, Terminal-Job, an operator
---pending), or pressed a key within `typing_ms`.
---@param o claude_context.DiffConfig
---@return string? reason
function M.busy_reason(o)
  if o.focus == "always" then
    return nil
  elseif o.focus == "never" then
    return "diff.focus = never"
  end
  local mode = vim.api.nvim_get_mode()
  local m = mode.mode
  if mode.blocking then
    return "Neovim is waiting for a key"
  elseif m == "t" then
    return "you are typing in a terminal"
  elseif m:sub(1, 1) == "i" or m:sub(1, 1) == "R" then
    return "you are in Insert mode"
  elseif m:match("^[vVsS\22\19]") then
    return "you are in Visual or Select mode"
  elseif m:sub(1, 1) == "c" or m:sub(1, 1) == "r" then
    return "you are on the command line"
  elseif m:sub(1, 2) == "no" then
    return "an operator is pending"
  elseif o.typing_ms > 0 and typing.since() < o.typing_ms then
    return "you are typing"
  end
  return nil
end

return M
