---@mod claude_context.edit.range Which lines an edit rewrites when no range is given
---
--- The function around the cursor (tree-sitter, when the buffer has a parser), else the
--- paragraph around it (lines between blank lines), else the cursor's line.

local M = {}

---Node types that are a function or a method in the usual grammars.
local FUNCTION = {
  "function",
  "method",
  "procedure",
  "lambda",
  "closure",
  "arrow_function",
  "func_literal",
  "constructor",
}

local function is_function(t)
  for _, f in ipairs(FUNCTION) do
    if t:find(f, 1, true) and not t:find("call", 1, true) and not t:find("name", 1, true) then
      return true
    end
  end
  return false
end

---The rows [s, e) of the function around row `row` of `buf`, by tree-sitter, or nil.
---@param buf integer
---@param row integer 0-based
---@return integer? s, integer? e
function M.function_at(buf, row)
  local ok, parser = pcall(vim.treesitter.get_parser, buf, nil, { error = false })
  if not ok or not parser then
    return nil
  end
  local line = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ""
  local col = #line:match("^%s*")
  pcall(function()
    parser:parse({ row, row + 1 })
  end)
  local got, node = pcall(vim.treesitter.get_node, { bufnr = buf, pos = { row, col }, ignore_injections = false })
  if not got then
    return nil
  end
  while node do
    if is_function(node:type()) then
      local s, _, e, ecol = node:range()
      return s, (ecol == 0 and e or e + 1)
    end
    node = node:parent()
  end
  return nil
end

---How far a paragraph reaches from the cursor, each way (a file without blank lines is not read
---whole on the main thread).
M.MAX_PARAGRAPH = 1000

---The rows [s, e) of the paragraph around row `row` (the line alone when it is blank; at most
---MAX_PARAGRAPH lines each way).
---@param buf integer
---@param row integer 0-based
---@return integer s, integer e
function M.paragraph_at(buf, row)
  local n = vim.api.nvim_buf_line_count(buf)
  local function blank(r)
    return (vim.api.nvim_buf_get_lines(buf, r, r + 1, false)[1] or ""):match("^%s*$") ~= nil
  end
  if blank(row) then
    return row, row + 1
  end
  local s, e = row, row + 1
  while s > 0 and row - s < M.MAX_PARAGRAPH and not blank(s - 1) do
    s = s - 1
  end
  while e < n and e - row < M.MAX_PARAGRAPH and not blank(e) do
    e = e + 1
  end
  return s, e
end

---The rows [s, e) an edit without a range rewrites: the function around the cursor, else its
---paragraph.
---@param buf integer
---@param row integer 0-based (the cursor's)
---@return integer s, integer e, string what "function" or "paragraph"
function M.around(buf, row)
  local s, e = M.function_at(buf, row)
  if s then
    return s, e, "function"
  end
  s, e = M.paragraph_at(buf, row)
  return s, e, "paragraph"
end

return M
