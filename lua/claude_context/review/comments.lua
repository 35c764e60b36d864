---@mod claude_context.review.comments Review comments, and the one prompt that sends them
---
--- `:ClaudeContext review comment {text}` notes a comment on the cursor line (or range), shown
--- as virtual text at the end of that line. `:ClaudeContext review send` types one prompt into
--- the terminal of the turn's session: every comment with an `@path#Lx-y` reference, then the
--- hunks rejected since the last send with the reasons given. Then the comments are cleared.

local M = {}

local model = require("claude_context.review.model")

M.ns = vim.api.nvim_create_namespace("claude_context_review_comments")

---@class claude_context.ReviewComment
---@field path string project-relative (else absolute)
---@field line1 integer
---@field line2 integer
---@field text string
---@field buf integer where it was made
---@field mark integer? its virtual text

---@type claude_context.ReviewComment[]
M.items = {}

---An `@path#Lx-y` reference.
---@param path string
---@param l1 integer?
---@param l2 integer?
---@return string
function M.ref(path, l1, l2)
  if not l1 then
    return "@" .. path
  end
  if not l2 or l2 <= l1 then
    return ("@%s#L%d"):format(path, l1)
  end
  return ("@%s#L%d-%d"):format(path, l1, l2)
end

---Adds a comment on lines l1..l2 of file `absolute`, its virtual text in `buf` at `row`.
---@param o {absolute:string, root?:string, line1:integer, line2:integer, text:string, buf:integer, row:integer}
---@return claude_context.ReviewComment
function M.add(o)
  local c = {
    path = require("claude_context.util.paths").relative(o.absolute, o.root),
    line1 = o.line1,
    line2 = o.line2,
    text = o.text,
    buf = o.buf,
  }
  if vim.api.nvim_buf_is_valid(o.buf) then
    c.mark = vim.api.nvim_buf_set_extmark(o.buf, M.ns, o.row - 1, 0, {
      virt_text = { { "  💬 " .. o.text, "Comment" } },
      virt_text_pos = "eol",
    })
  end
  M.items[#M.items + 1] = c
  return c
end

---Removes every comment and its virtual text.
function M.clear()
  for _, c in ipairs(M.items) do
    if c.mark and vim.api.nvim_buf_is_valid(c.buf) then
      pcall(vim.api.nvim_buf_del_extmark, c.buf, M.ns, c.mark)
    end
  end
  M.items = {}
end

---The rejected hunks of `review` not sent yet: `{ f, h }`.
---@param review claude_context.Review?
---@return {f:claude_context.ReviewFileState, h:claude_context.ReviewHunk}[]
function M.rejected(review)
  local out = {}
  for _, f in pairs(review and review.files or {}) do
    for _, h in ipairs(f.hunks) do
      if h.state == "rejected" and not h.sent then
        out[#out + 1] = { f = f, h = h }
      end
    end
  end
  table.sort(out, function(x, y)
    if x.f.path ~= y.f.path then
      return x.f.path < y.f.path
    end
    return x.h.b < y.h.b
  end)
  return out
end

---The prompt `send` types: comments, then rejected hunks (nil when there is nothing to say).
---@param review claude_context.Review?
---@return string?
function M.prompt(review)
  local lines = {}
  if #M.items > 0 then
    lines[#lines + 1] = "Review comments on your changes:"
    for _, c in ipairs(M.items) do
      lines[#lines + 1] = ("- %s %s"):format(M.ref(c.path, c.line1, c.line2), c.text)
    end
  end
  local rejected = M.rejected(review)
  if #rejected > 0 then
    if #lines > 0 then
      lines[#lines + 1] = ""
    end
    lines[#lines + 1] = "I rejected these changes of yours (the lines are back to what they were before):"
    for _, r in ipairs(rejected) do
      local f, h = r.f, r.h
      local ref
      if f.kind == "added" then
        ref = M.ref(f.path) .. " (the new file, removed)"
      elseif f.kind == "deleted" then
        ref = M.ref(f.path) .. " (restored)"
      else
        model.refresh(f)
        local s = h.cur or h.a
        ref = h.ac > 0 and M.ref(f.path, s, s + h.ac - 1)
          or (M.ref(f.path, math.max(s - 1, 1)) .. " (your added lines removed below it)")
      end
      lines[#lines + 1] = ("- %s%s"):format(ref, h.reason and (": " .. h.reason) or "")
    end
  end
  return #lines > 0 and table.concat(lines, "\n") or nil
end

---Sends the prompt to the terminal `terminal` (nil: the current one); clears the comments and
---marks the rejections sent.
---@param review claude_context.Review?
---@param terminal string?
---@param submit boolean
---@return boolean ok, string? err
function M.send(review, terminal, submit)
  local text = M.prompt(review)
  if not text then
    return false, "nothing to send: no comments and no rejected hunks"
  end
  local ok, err = M.sender(text, submit, terminal)
  if ok then
    for _, r in ipairs(M.rejected(review)) do
      r.h.sent = true
    end
    M.clear()
  end
  return ok, err
end

---Types text into a Claude terminal: claude_context.terminal.input's send_text (replaceable
---in tests).
---@param text string
---@param submit boolean
---@param terminal string?
---@return boolean ok, string? err
function M.sender(text, submit, terminal)
  return require("claude_context.terminal.input").send_text(text, submit, terminal)
end

return M
