-- Deliberately wrong: `make lint-types` must reject this file (tests/types/check.sh), so a type
-- checker that checks nothing fails the target. Each statement is one kind of error it must see.

---@class broken.Options
---@field name string
---@field size integer

local M = {}

---@param n integer
---@return integer
function M.twice(n)
  return n * 2
end

-- param-type-mismatch: a string where an integer goes.
M.twice("two")

-- missing-fields: `size` is required.
---@type broken.Options
local opts = { name = "x" }

-- undefined-field: no such function in the module.
M.no_such_function(opts)

return M
