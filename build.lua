-- The build step. lazy.nvim runs this file after installing or updating the plugin (no `build`
-- key needed; inside its coroutine, progress shows in the :Lazy window). Other plugin managers:
--   nvim -l build.lua        (from the plugin directory, or with its path)
-- It installs the native library into lib/: this platform's prebuilt release asset for this
-- version, accepted only when it matches the checksum the plugin pins (pins/v<version>.sha256),
-- then load-checked; or, when there is no pin, no asset, no network or no match, a
-- `cargo build --release`. See :help claude-context-install.
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
local install = package.loaded["claude_context.install"] or dofile(root .. "/lua/claude_context/install/init.lua")

local in_lazy = coroutine.running() ~= nil and package.loaded["lazy.async"] ~= nil
local res = install.run({
  root = root,
  progress = (not in_lazy) and function(msg)
    io.stdout:write(msg .. "\n")
  end or nil,
})
if in_lazy then
  if not res.ok then
    error(res.message, 0)
  end
  coroutine.yield(res.message)
elseif #vim.api.nvim_list_uis() == 0 then
  -- nvim -l build.lua
  io.stdout:write(res.message .. "\n")
  os.exit(res.ok and 0 or 1)
else
  vim.notify(res.message, res.ok and vim.log.levels.INFO or vim.log.levels.ERROR, { title = "claude-context" })
end
