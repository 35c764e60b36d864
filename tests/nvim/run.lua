-- Runs every tests/nvim/*_spec.lua in its own headless Neovim (isolation: each file gets a
-- fresh editor, a fresh CLAUDE_CONFIG_DIR and fresh stdpath dirs), then prints the totals as
-- "neovim-<version>: N passed, N failed". Usage:
--   nvim --headless --clean -u tests/minimal_init.lua -l tests/nvim/run.lua [pattern]
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h")
local pattern = _G.arg and _G.arg[1] or nil
local files = vim.fn.glob(root .. "/tests/nvim/*_spec.lua", false, true)
table.sort(files)
local nvim = vim.v.progpath
-- A spec file's time limit: it is killed after this (and the test under way is named).
local LIMIT_MS = tonumber(os.getenv("CLAUDE_CONTEXT_SPEC_LIMIT_MS") or "") or 300000
local passed, failed, broken = 0, 0, {}
for _, f in ipairs(files) do
  if not pattern or f:find(pattern, 1, true) then
    local tmp = vim.fn.tempname()
    vim.fn.mkdir(tmp, "p")
    local env = {
      CLAUDE_CONFIG_DIR = tmp .. "/claude",
      XDG_STATE_HOME = tmp .. "/state",
      XDG_DATA_HOME = tmp .. "/data",
      XDG_CONFIG_HOME = tmp .. "/config",
      XDG_CACHE_HOME = tmp .. "/cache",
      CLAUDE_CONTEXT_TEST_TMP = tmp,
      MCP_PROJECT_ROOT = "",
    }
    local proc = vim.system(
      { nvim, "--headless", "--clean", "-u", root .. "/tests/minimal_init.lua", "-l", root .. "/tests/nvim/one.lua", f },
      {
        env = env,
        cwd = tmp,
        text = true,
      }
    )
    local res = proc:wait(LIMIT_MS)
    if res.code == 124 then
      -- wait() sent SIGTERM, which a Neovim stuck in a loop never reads: SIGKILL it, or it spins
      -- on through the rest of the run.
      pcall(vim.uv.kill, proc.pid, "sigkill")
    end
    local out = (res.stdout or "") .. (res.stderr or "")
    if out ~= "" and out:sub(-1) ~= "\n" then
      out = out .. "\n"
    end
    io.stdout:write(out)
    local p, fl
    for a, b in out:gmatch("(%d+) passed, (%d+) failed") do
      p, fl = a, b
    end
    if p then
      passed, failed = passed + tonumber(p), failed + tonumber(fl)
    end
    -- A Neovim killed by a signal (a crash: SIGSEGV, SIGABRT) ends with code 0 and the signal set.
    local signal = res.signal and res.signal ~= 0 and res.code ~= 124
    if not p or res.code ~= 0 or signal then
      local cf = io.open(tmp .. "/.current-test", "r")
      local current = cf and cf:read("*a") or "?"
      if cf then
        cf:close()
      end
      local spec = vim.fn.fnamemodify(f, ":t:r")
      if res.code == 124 then
        io.stdout:write(("  TIMEOUT %s: %s (killed after %d s)\n"):format(spec, current, LIMIT_MS / 1000))
      elseif signal or not p then
        io.stdout:write(
          ("  FAIL %s: ended during %q (exit %d, signal %d)\n"):format(spec, current, res.code, res.signal or 0)
        )
      end
      local how = signal and ("signal %d"):format(res.signal) or ("exit %s"):format(tostring(res.code))
      table.insert(broken, ("%s (%s)"):format(vim.fn.fnamemodify(f, ":t"), how))
      if not p then
        failed = failed + 1
      end
    end
    vim.fn.delete(tmp, "rf")
  end
end
if #broken > 0 then
  io.stdout:write("\nfailing files: " .. table.concat(broken, ", ") .. "\n")
end
-- Named after the Neovim that ran them (`make test-nvim` runs the specs on two).
local version = vim.fn.execute("version"):match("NVIM v(%S+)") or tostring(vim.version())
io.stdout:write(("\nneovim %s (%s)\n"):format(version, nvim))
io.stdout:write(("neovim-%s: %d passed, %d failed\n"):format(version, passed, failed))
os.exit((failed == 0 and #broken == 0) and 0 or 1)
