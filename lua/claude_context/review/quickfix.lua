---@mod claude_context.review.quickfix One quickfix entry per pending hunk of a change set

local M = {}

local model = require("claude_context.review.model")

---The first changed line of hunk `h` (Claude's first line, else the first removed one).
local function first_line(h)
  local l = h.new[1] or h.old[1] or ""
  return (l:gsub("\r$", ""):gsub("^%s+", ""))
end

---The quickfix items of `review`'s pending hunks: file, the hunk's first line now, and
---"+a −r <first changed line>".
---@param review claude_context.Review
---@return vim.quickfix.entry[]
function M.items(review)
  local out = {}
  for i = 1, #review.cs.files do
    local f = model.file(review, i)
    model.refresh(f)
    for _, h in ipairs(f.hunks) do
      if h.state == "pending" then
        local text
        if h.opaque then
          text = f.file.status == "binary" and "binary file changed"
            or f.file.status == "odd_name" and "changed (its name is not UTF-8)"
            or "file too large to show changed"
        elseif f.kind == "deleted" then
          text = ("deleted (−%d)"):format(h.ac)
        else
          text = ("+%d −%d %s"):format(h.bc, h.ac, first_line(h))
          if f.kind == "added" then
            text = "new file: " .. text
          end
        end
        if h.conflict then
          text = text .. " [conflict]"
        end
        if f.file.shared then
          text = text .. " [changed while another session was working]"
        end
        text = text .. require("claude_context.review.text").command_label(model.commands_of(f, h))
        local lnum = f.kind == "deleted" and 1 or math.max(h.cur or h.b, 1)
        out[#out + 1] = { filename = f.absolute, lnum = lnum, col = 1, text = text }
      end
    end
  end
  return out
end

---Fills the quickfix list with `review`'s hunks (and opens it when there are any).
---@param review claude_context.Review
---@param title string
---@return integer count
function M.fill(review, title)
  local items = M.items(review)
  vim.fn.setqflist({}, " ", { title = title, items = items })
  return #items
end

return M
