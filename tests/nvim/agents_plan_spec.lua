-- What a land does with one file (agents/plan.lua's plan_file): each case of base, ours (the
-- main checkout) and theirs (the worktree), with the reason a whole-file conflict gives.
local h = require("helpers")
local eq = h.eq

local NUL = "a\0b"

return {
  {
    "plan_file: every case of a file missing, equal, added or changed on either side",
    function()
      local plan = require("claude_context.agents.plan")
      local cases = {
        -- { base, ours, theirs, action, whole-file conflict reason }
        { "x\n", NUL, "y\n", "binary" },
        { "x\n", NUL, NUL, "same" },
        { "x\n", nil, nil, "same" },
        { "x\n", "y\n", "y\n", "same" },
        { "x\n", "x\n", nil, "remove" },
        { "x\n", "y\n", nil, "conflict", "deleted in the worktree, changed here" },
        { nil, "y\n", nil, "conflict", "deleted in the worktree, changed here" },
        { nil, nil, "y\n", "create" },
        { "x\n", nil, "y\n", "conflict", "changed in the worktree, deleted here" },
        { nil, "a\n", "b\n", "conflict", "added on both sides" },
        { "1\n2\n3\n", "1\n2\n3\n", "1\nTWO\n3\n", "write" },
        { "1\n2\n3\n", "1\nmine\n3\n", "1\nTWO\n3\n", "conflict" },
        { "1\n2\n3\n", "1\nTWO\n3\n", "1\nTWO\n3\n\n", "write" },
      }
      for n, c in ipairs(cases) do
        local f = plan.plan_file("p.txt", c[1], c[2], c[3])
        if f.action == "merge" then
          -- Left to the merge off the main thread.
          local done
          plan.merge_pending({ f }, function(err)
            done = { err = err }
          end)
          h.wait_for(function()
            return done
          end, 5000, "the merge")
          eq(nil, done.err)
        end
        eq(c[4], f.action, "case " .. n)
        if c[5] then
          eq({ { line = 1, count = 0, why = c[5] } }, f.conflicts, "case " .. n)
        end
      end
      local created = plan.plan_file("p.txt", false, nil, "new\n")
      eq({ "create", "new\n", 1 }, { created.action, created.after, created.applied })
    end,
  },
}
