---@mod claude_context.edit.prompt What Claude is asked, and how its answer is read
---
--- The prompt carries the range's text, the file's path and language, lines around it, the
--- diagnostics in the range and the project's CLAUDE.md, and asks for the whole new text of the
--- range in one fenced code block. The answer is read as it streams (`parser()`): the lines of the
--- first fenced block, each given once complete; an answer without a block is "no change".

local M = {}

---The most bytes of CLAUDE.md sent along.
M.MAX_INSTRUCTIONS = 16 * 1024

---A fence longer than any run of backticks in `lines` (at least three).
---@param lines string[]
---@return string
function M.fence(lines)
  local longest = 2
  for _, l in ipairs(lines) do
    for run in l:gmatch("`+") do
      longest = math.max(longest, #run)
    end
  end
  return string.rep("`", longest + 1)
end

---@param lines string[]
---@param first integer the first line's number
local function numbered(lines, first)
  local out = {}
  for i, l in ipairs(lines) do
    out[i] = ("%d: %s"):format(first + i - 1, l)
  end
  return table.concat(out, "\n")
end

---The diagnostics of `buf` on rows [s, e) (0-based), one line each.
local function diagnostics(buf, s, e)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.lnum >= s and d.lnum < e then
      local sev = vim.diagnostic.severity[d.severity] or "?"
      out[#out + 1] = ("line %d: %s: %s"):format(d.lnum + 1, sev, (d.message or ""):gsub("\n", " "))
    end
  end
  return out
end

---The project's CLAUDE.md (at most MAX_INSTRUCTIONS bytes), or nil.
---@param root string
---@return string?
function M.instructions(root)
  local text = require("claude_context.util.small_file").read(root .. "/CLAUDE.md", M.MAX_INSTRUCTIONS, true)
  return text and text ~= "" and text or nil
end

---The prompt for rewriting rows [s, e) of `buf` (0-based, end exclusive) as `instruction` says.
---@param e {buf: integer, s: integer, e: integer, instruction: string, root: string, context: integer}
---@return string prompt, string fence
function M.build(e)
  local buf = e.buf
  local lines = vim.api.nvim_buf_get_lines(buf, e.s, e.e, false)
  local fence = M.fence(lines)
  local name = vim.api.nvim_buf_get_name(buf)
  local path = name ~= "" and require("claude_context.util.paths").relative(name, e.root) or "[No Name]"
  local lang = vim.bo[buf].filetype ~= "" and vim.bo[buf].filetype or "text"
  local before_s = math.max(0, e.s - e.context)
  local before = vim.api.nvim_buf_get_lines(buf, before_s, e.s, false)
  local after = vim.api.nvim_buf_get_lines(buf, e.e, e.e + e.context, false)
  local parts = {
    "You are editing part of a file open in the person's editor. Rewrite the lines below as the instruction says.",
    "",
    ("File: %s (language: %s)"):format(vim.fn.strtrans(path), lang),
    ("Instruction: %s"):format(e.instruction),
    "",
    ("Lines %d to %d, the text to rewrite:"):format(e.s + 1, e.e),
    fence .. lang,
    table.concat(lines, "\n"),
    fence,
  }
  if #before > 0 then
    vim.list_extend(parts, { "", "Lines just above it (context only, not to repeat):", numbered(before, before_s + 1) })
  end
  if #after > 0 then
    vim.list_extend(parts, { "", "Lines just below it (context only, not to repeat):", numbered(after, e.e + 1) })
  end
  local diags = diagnostics(buf, e.s, e.e)
  if #diags > 0 then
    vim.list_extend(parts, { "", "Diagnostics in these lines:", table.concat(diags, "\n") })
  end
  local instr = M.instructions(e.root)
  if instr then
    vim.list_extend(parts, { "", "The project's instructions (CLAUDE.md):", instr })
  end
  vim.list_extend(parts, {
    "",
    ("You may read the project to understand the code; do not change any file. Answer with the whole new text of lines %d to %d in exactly one fenced code block opened with %s and closed with %s (the lines only: no line numbers, nothing from around them). If nothing should change, answer without a code block."):format(
      e.s + 1,
      e.e,
      fence,
      fence
    ),
  })
  return table.concat(parts, "\n"), fence
end

---A reader of the answer as it streams: `feed(text)` returns the fenced block's lines that
---became complete; `finish()` the last one (a block not closed ends with the answer) and
---whether there was a block at all.
---@class claude_context.EditParser
---@field feed fun(text: string): string[]
---@field finish fun(): string[]
---@field found fun(): boolean

---@return claude_context.EditParser
function M.parser()
  local state, pending, opened = "before", "", nil
  local function line(l, out)
    if state == "before" then
      local ticks = l:match("^%s*(```+)")
      if ticks then
        state, opened = "inside", #ticks
      end
    elseif state == "inside" then
      local ticks = l:match("^%s*(`+)%s*$")
      if ticks and #ticks >= opened then
        state = "after"
      else
        out[#out + 1] = l
      end
    end
  end
  return {
    feed = function(text)
      local out = {}
      pending = pending .. text
      local start = 1
      while true do
        local nl = pending:find("\n", start, true)
        if not nl then
          break
        end
        line((pending:sub(start, nl - 1):gsub("\r$", "")), out)
        start = nl + 1
      end
      pending = pending:sub(start)
      return out
    end,
    finish = function()
      local out = {}
      if pending ~= "" then
        line(pending, out)
        pending = ""
      end
      return out
    end,
    found = function()
      return state ~= "before"
    end,
  }
end

return M
