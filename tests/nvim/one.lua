-- Runs one spec file: it returns a list of { name, fn } (or a table name -> fn). Prints each
-- result and "N passed, N failed" last; exits non-zero when anything failed.
local file = _G.arg[1]
-- Line-buffered: a Neovim that crashes mid-file still shows the results written before it.
io.stdout:setvbuf("line")
-- The specs' helpers (tests/nvim/helpers.lua) load with require("helpers").
package.path = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/?.lua;" .. package.path
local ok, spec = pcall(dofile, file)
if not ok then
  io.stdout:write(("ERROR loading %s: %s\n0 passed, 1 failed\n"):format(file, spec))
  os.exit(1)
end
local cases = {}
if spec[1] then
  cases = spec
else
  for name, fn in pairs(spec) do
    table.insert(cases, { name, fn })
  end
  table.sort(cases, function(a, b)
    return a[1] < b[1]
  end)
end
local name = vim.fn.fnamemodify(file, ":t:r")
local passed, failed = 0, 0
-- The test under way, for run.lua to name when it has to kill this Neovim at its time limit.
local progress = os.getenv("CLAUDE_CONTEXT_TEST_TMP")
progress = progress and (progress .. "/.current-test") or nil
for _, c in ipairs(cases) do
  if progress then
    local f = io.open(progress, "w")
    if f then
      f:write(c[1])
      f:close()
    end
  end
  local ok2, err = xpcall(c[2], debug.traceback)
  if ok2 then
    passed = passed + 1
    io.stdout:write(("  ok   %s: %s\n"):format(name, c[1]))
  else
    failed = failed + 1
    io.stdout:write(("  FAIL %s: %s\n%s\n"):format(name, c[1], err))
  end
end
io.stdout:write(("%d passed, %d failed\n"):format(passed, failed))
-- Leave through :qa so VimLeavePre runs (the bridge removes its lock file).
if failed > 0 then
  vim.cmd("cquit 1")
end
vim.cmd("qa!")
