-- Not a module: run as `nvim --clean --headless -l check_native.lua <library>` by the installer
-- (lua/claude_context/install/verify.lua) to check a library before it is installed, in a child
-- Neovim so that a broken one cannot crash the editor that asked. Prints `version <v>` and exits 0 when
-- the library loads, reports its version and initialises; otherwise prints why and exits 1.
local path = _G.arg and _G.arg[1]
local function fail(msg)
  io.stdout:write("error " .. msg .. "\n")
  os.exit(1)
end
if not path then
  fail("no library given")
end
---The library's C function `symbol`; fails with `why` and the loader's error when it is missing.
local function entry(symbol, why)
  local f, err = package.loadlib(path, symbol)
  if not f then
    fail(why .. tostring(err))
  end
  return f
end
local ok, ver = pcall(entry("claude_context_native_version", "cannot load it: "))
if not ok or type(ver) ~= "string" then
  fail("it does not report its version: " .. tostring(ver))
end
local ok2, res = pcall(entry("luaopen_claude_context_native", "it has no Lua entry point: "))
if not ok2 or type(package.loaded["claude_context._native"]) ~= "table" then
  fail("its initialisation failed: " .. tostring(res))
end
io.stdout:write("version " .. ver .. "\n")
os.exit(0)
