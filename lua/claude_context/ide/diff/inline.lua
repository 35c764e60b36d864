---@mod claude_context.ide.diff.inline The hunks, and the inline layout's marks

local M = {}

local slices = require("claude_context.ide.slices")
local cfg = require("claude_context.ide.diff.config")

---The proposal's hunks against the file on disk: `{a_start, a_count, b_start, b_count}` (1-based,
---as |vim.diff()| gives them with result_type = "indices").
---@param v claude_context.DiffView
---@return integer[][] hunks, string[] old_lines, string[] new_lines
function M.hunks(v)
  local old_lines = vim.api.nvim_buf_get_lines(v.orig_buf, 0, -1, false)
  local new_lines = vim.api.nvim_buf_get_lines(v.prop_buf, 0, -1, false)
  if v.is_new then
    old_lines = {}
  end
  local a = #old_lines > 0 and (table.concat(old_lines, "\n") .. "\n") or ""
  local b = #new_lines > 0 and (table.concat(new_lines, "\n") .. "\n") or ""
  local hunks = vim.diff(a, b, { result_type = "indices" }) --[[@as integer[][] ]]
  return hunks, old_lines, new_lines
end

local inline_ns = vim.api.nvim_create_namespace("claude_context_diff_inline")

---The inline layout: the proposal in one buffer, added and changed lines highlighted
---(DiffAdd / DiffChange), the file's removed lines shown above them as virtual lines (DiffDelete;
---at most `cfg.max_virt_lines` per change, the rest counted). The marks are placed a slice of
---`cfg.slice_ms` at a time: a big diff's go on over the next event-loop turns.
---@param v claude_context.DiffView
---@param hunks integer[][]? default: the prepared hunks, or computed (|vim.diff()|)
function M.render(v, hunks)
  hunks = hunks or v.hunks or M.hunks(v)
  v.render = (v.render or 0) + 1
  local gen = v.render
  vim.api.nvim_buf_clear_namespace(v.prop_buf, inline_ns, 0, -1)
  local nlines = vim.api.nvim_buf_line_count(v.prop_buf)
  local function mark(h)
    local a_start, a_count, b_start, b_count = h[1], h[2], h[3], h[4]
    if b_count > cfg.chunk_lines then
      -- One range for a big block (a mark per line would be a mark per line of the file).
      vim.api.nvim_buf_set_extmark(v.prop_buf, inline_ns, b_start - 1, 0, {
        end_row = b_start - 1 + b_count,
        end_col = 0,
        hl_group = a_count > 0 and "DiffChange" or "DiffAdd",
        hl_eol = true,
        sign_text = "+",
        sign_hl_group = "DiffAdd",
      })
    else
      for i = b_start, b_start + b_count - 1 do
        vim.api.nvim_buf_set_extmark(v.prop_buf, inline_ns, i - 1, 0, {
          line_hl_group = a_count > 0 and "DiffChange" or "DiffAdd",
          sign_text = "+",
          sign_hl_group = "DiffAdd",
        })
      end
    end
    if a_count > 0 then
      local shown = math.min(a_count, cfg.max_virt_lines)
      local virt = {}
      for _, l in ipairs(vim.api.nvim_buf_get_lines(v.orig_buf, a_start - 1, a_start - 1 + shown, false)) do
        virt[#virt + 1] = { { "- " .. l, "DiffDelete" } }
      end
      if a_count > shown then
        virt[#virt + 1] = { { ("- … %d more removed lines"):format(a_count - shown), "DiffDelete" } }
      end
      -- Above the hunk's first line; a deletion (after line b_start) above the line after it,
      -- or below the last line when it was at the end.
      local row = b_count > 0 and b_start - 1 or b_start
      local above = true
      if row >= nlines then
        row, above = math.max(0, nlines - 1), false
      end
      vim.api.nvim_buf_set_extmark(v.prop_buf, inline_ns, row, 0, { virt_lines = virt, virt_lines_above = above })
    end
  end
  local i = 1
  slices.sliced(cfg.slice_ms, function()
    if i > #hunks then
      return false
    end
    mark(hunks[i])
    i = i + 1
    return i <= #hunks
  end, function()
    return not v.closed and v.render == gen and vim.api.nvim_buf_is_valid(v.prop_buf)
  end)
end

return M
