-- claude_context.util.join: the countdown the asynchronous file work shares.
local h = require("helpers")
local eq = h.eq

local join = require("claude_context.util.join")

return {
  {
    "countdown: done once the n-th piece calls back, once; at once for none; add counts one more",
    function()
      local fired = 0
      local one = join.countdown(2, function()
        fired = fired + 1
      end)
      one()
      eq(0, fired, "one of two")
      one()
      eq(1, fired, "two of two")
      one()
      eq(1, fired, "never twice")

      local none = 0
      join.countdown(0, function()
        none = none + 1
      end)
      eq(1, none, "no piece: at once")

      local added = 0
      local one2, add = join.countdown(1, function()
        added = added + 1
      end)
      add()
      one2()
      eq(0, added, "one more counted")
      one2()
      eq(1, added)
    end,
  },
}
