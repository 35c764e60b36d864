---@mod claude_context.review.signs Signs on Claude's changed lines in ordinary buffers
---
--- Each loaded buffer of a file in the active review shows a sign on the lines of Claude's
--- pending hunks (added, changed, a deletion under the line above it, a conflict) until the hunk
--- is kept or rejected. Option `review.signs`. Updated when such a buffer is read, written,
--- entered or changed (once per change burst), and after every action.

local M = {}

local model = require("claude_context.review.model")

M.ns = vim.api.nvim_create_namespace("claude_context_review_signs")

local group
local queued = {}

---The review the signs show (nil: none).
---@type claude_context.Review?
M.review = nil

local function enabled()
  return require("claude_context.config.review").options().signs
end

---Places the signs of file `f` in buffer `buf` (cleared first).
---@param buf integer
---@param f claude_context.ReviewFileState
function M.place(buf, f)
  vim.api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
  if not enabled() or f.kind == "opaque" or f.kind == "conflict" then
    return
  end
  model.refresh(f)
  local prio = require("claude_context.config.review").options().sign_priority
  local count = vim.api.nvim_buf_line_count(buf)
  local function sign(lnum, text, hl)
    if lnum >= 1 and lnum <= count then
      pcall(
        vim.api.nvim_buf_set_extmark,
        buf,
        M.ns,
        lnum - 1,
        0,
        { sign_text = text, sign_hl_group = hl, priority = prio }
      )
    end
  end
  for _, h in ipairs(f.hunks) do
    if h.state == "pending" then
      if h.conflict then
        -- Where the hunk was (its lines were edited since): a warning sign on its first line.
        sign(f.proposal and h.a or h.b, "!", "DiagnosticWarn")
      elseif model.span(f, h) == 0 then
        sign(math.max(h.cur - 1, 1), h.cur > 1 and "▁" or "▔", "Removed")
      else
        local hl = h.ac == 0 and "Added" or "Changed"
        for l = h.cur, h.cur + model.span(f, h) - 1 do
          sign(l, "┃", hl)
        end
      end
    end
  end
end

---Updates buffer `buf` (its file in the review, else its signs go).
---@param buf integer
function M.update_buf(buf)
  if not vim.api.nvim_buf_is_loaded(buf) then
    return
  end
  local f = M.review and model.find(M.review, vim.api.nvim_buf_get_name(buf))
  if f then
    M.place(buf, f)
  else
    vim.api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
  end
end

---Updates the loaded buffers of file `f`.
---@param f claude_context.ReviewFileState
function M.update_file(f)
  local buf = model.loaded_buf(f.absolute)
  if buf then
    M.place(buf, f)
  end
end

---Shows the signs of `review` (nil: removes them all) and follows its buffers.
---@param review claude_context.Review?
function M.attach(review)
  M.review = review
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == "" then
      if review then
        M.update_buf(b)
      else
        vim.api.nvim_buf_clear_namespace(b, M.ns, 0, -1)
      end
    end
  end
  if group then
    pcall(vim.api.nvim_del_augroup_by_id, group)
    group = nil
  end
  if not review then
    return
  end
  group = vim.api.nvim_create_augroup("ClaudeContextReviewSigns", { clear = true })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufWritePost", "BufEnter", "TextChanged", "InsertLeave" }, {
    group = group,
    callback = function(ev)
      if queued[ev.buf] or vim.bo[ev.buf].buftype ~= "" then
        return
      end
      queued[ev.buf] = true
      vim.schedule(function()
        queued[ev.buf] = nil
        if M.review == review then
          M.update_buf(ev.buf)
        end
      end)
    end,
    desc = "claude-context: signs on Claude's changed lines",
  })
end

return M
