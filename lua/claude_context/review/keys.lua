---@mod claude_context.review.keys The review view's keys (option `review.keys`)
---
--- Buffer-local mappings of the view: move between hunks, keep or reject a hunk (or a Visual
--- selection's hunks), a file, everything; undo; open the file; close.

local M = {}

local view = require("claude_context.review.view")
local model = require("claude_context.review.model")

local function opts()
  return require("claude_context.config.review").options()
end

---What the keys call: claude_context.review's `act` and `undo`.
---@class claude_context.ReviewKeyActions
---@field act fun(action: "keep"|"reject", o: claude_context.ReviewActOpts)
---@field undo fun()

---Maps the keys of view `v` (buffer-local) to `review`'s actions.
---@param v claude_context.ReviewView
---@param review claude_context.ReviewKeyActions
function M.map(v, review)
  local keys = opts().keys
  local function range_call(fn)
    return function()
      local l1, l2 = vim.fn.line("."), vim.fn.line(".")
      local mode = vim.api.nvim_get_mode().mode
      if mode:match("^[vV\22]") then
        l1, l2 = vim.fn.line("v"), vim.fn.line(".")
        if l1 > l2 then
          l1, l2 = l2, l1
        end
        vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<Esc>", true, false, true), "nx", false)
      end
      fn(l1, l2)
    end
  end
  local function file_call(action)
    return function()
      local i = view.at(v, vim.fn.line("."))
      if i then
        review.act(action, { targets = view.targets(v, v.list_row + i, v.list_row + i) })
      end
    end
  end
  local all = function(action)
    return function()
      review.act(action, { targets = model.pending(v.review) })
    end
  end
  local maps = {
    next_hunk = function()
      view.jump(v, 1)
    end,
    prev_hunk = function()
      view.jump(v, -1)
    end,
    keep = range_call(function(l1, l2)
      review.act("keep", { buf = v.buf, line1 = l1, line2 = l2 })
    end),
    reject = range_call(function(l1, l2)
      review.act("reject", { buf = v.buf, line1 = l1, line2 = l2 })
    end),
    keep_file = file_call("keep"),
    reject_file = file_call("reject"),
    keep_all = all("keep"),
    reject_all = all("reject"),
    undo = function()
      review.undo()
    end,
    open = function()
      view.goto_file(v)
    end,
    close = function()
      view.close()
    end,
  }
  for name, fn in pairs(maps) do
    local lhs = keys[name]
    if lhs and lhs ~= "" then
      local modes = (name == "keep" or name == "reject") and { "n", "x" } or "n"
      vim.keymap.set(
        modes,
        lhs,
        fn,
        { buffer = v.buf, nowait = true, desc = "claude-context review: " .. name:gsub("_", " ") }
      )
    end
  end
end

return M
