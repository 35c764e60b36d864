-- The land's three-way merge (crates/core/src/merge.rs, through claude_context.agents.merge on a
-- thread of its own), for three shapes of a land: F files of N lines, H hunks of the worktree's
-- and one edit of the person's in each. Prints for each the time the call holds the main thread
-- (the texts handed over) and the time until its answer; with the path of the old Lua merge
-- (`git show 28f3979:lua/claude_context/agents/merge.lua > /tmp/old_merge.lua`), also that one's
-- time on the main thread (one file is one block: it cannot be cut into slices) and that both
-- give the same texts.
--
--   .deps/venv/bin/nvim --headless --clean -u tests/minimal_init.lua -l bench/land_merge.lua [old_merge.lua]
local uv = vim.uv
local old = _G.arg[1] and dofile(_G.arg[1])
local merge = require("claude_context.agents.merge")

---@return claude_context.MergeTexts[]
local function land(F, N, H)
  local lines = {}
  for l = 1, N do
    lines[l] = ("line %d: the quick brown fox jumps over the lazy dog"):format(l)
  end
  local files = {}
  for i = 1, F do
    local theirs, mine = vim.deepcopy(lines), vim.deepcopy(lines)
    for k = 1, H do
      theirs[math.floor(k * (N - 10) / (H + 1))] = ("changed %d by the session"):format(k)
    end
    mine[N - 1] = "the person's own edit"
    files[i] = {
      base = table.concat(lines, "\n") .. "\n",
      ours = table.concat(mine, "\n") .. "\n",
      theirs = table.concat(theirs, "\n") .. "\n",
    }
  end
  return files
end

for _, shape in ipairs({ { 200, 100, 5 }, { 20, 5000, 200 }, { 1, 100000, 2000 } }) do
  local F, N, H = unpack(shape)
  local files = land(F, N, H)
  local got
  local t0 = uv.hrtime()
  merge.merge_all(files, function(err, r)
    assert(not err, err)
    got = r
  end)
  local call_ms = (uv.hrtime() - t0) / 1e6
  vim.wait(120000, function()
    return got ~= nil
  end, 0)
  local answer_ms = (uv.hrtime() - t0) / 1e6
  local line = ("%d file(s) x %d lines, %d hunks each: the call holds the main thread %.1f ms, answered after %.1f ms"):format(
    F,
    N,
    H,
    call_ms,
    answer_ms
  )
  if old then
    t0 = uv.hrtime()
    for i, f in ipairs(files) do
      local o = old.merge(f.base, f.ours, f.theirs)
      assert(o.text == got[i].text and o.applied == got[i].applied, "a different merge of file " .. i)
    end
    line = line .. ("; the old Lua merge: %.1f ms on the main thread (the same texts)"):format((uv.hrtime() - t0) / 1e6)
  end
  print(line)
end
vim.cmd("qa!")
