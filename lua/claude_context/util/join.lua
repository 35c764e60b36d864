---@mod claude_context.util.join Waiting for several callbacks at once
---
--- The countdown the asynchronous file work shares (the land's writes, the review's reads, the
--- stale temporary files' listing): `done()` runs once every piece has called back.

local M = {}

---A countdown of `n` pieces: returns `one()`, which each piece calls when it is done (the last
---runs `done()`, once), and `add()`, which counts one more piece. `done()` runs at once when `n`
---is 0.
---@param n integer
---@param done fun()
---@return fun() one
---@return fun() add
function M.countdown(n, done)
  local left, fired = n, false
  local function one()
    left = left - 1
    if left <= 0 and not fired then
      fired = true
      done()
    end
  end
  local function add()
    left = left + 1
  end
  if n <= 0 then
    left = 1
    one()
  end
  return one, add
end

return M
