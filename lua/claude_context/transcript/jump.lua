---@mod claude_context.transcript.jump Opening the file a transcript's tool call names
---
--- `<CR>` / `gf` on a tool call's line: the file opens in the current window at the line. The
--- path comes from what the model called a tool with, so it is never opened by Neovim's own
--- `:edit` (a stat, then a blocking open by path: a FIFO swapped in between would hold the
--- editor until a writer comes): claude_context.ide.files `open` shows the buffer that has it
--- loaded, or loads it from a non-blocking read judged on the open descriptor. A FIFO, device or
--- directory, or a file over the cap, is refused with a message; nothing waits.

local M = {}

---The largest file a jump opens (bytes).
M.MAX_BYTES = 64 * 1024 * 1024

---Opens `path` in the current window at line `lnum`: its buffer when one has it loaded, else the
---file read without waiting on what the path names. Returns whether it opened.
---@param path string
---@param lnum integer?
---@return boolean
function M.open(path, lnum)
  return require("claude_context.ide.files").open(path, { lnum = lnum, max = M.MAX_BYTES })
end

return M
