-- Panic containment in a real Neovim, with the native library built with the `test-tools`
-- feature (its `test_panic` tool panics on purpose):
--   make test-tools-lib
-- A panic on a runtime worker, on the blocking pool or on Neovim's main thread becomes an error
-- result and a log entry; Neovim and the bridge keep running.
local h = require("helpers")
local eq, ok, contains = h.eq, h.ok, h.contains

local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h")
local ext = vim.fn.has("mac") == 1 and "dylib" or "so"
local lib = vim.env.CLAUDE_CONTEXT_TEST_TOOLS_LIB or (root .. "/target/test-tools/libclaude_context_native." .. ext)
-- Must be set before the native library is loaded.
vim.env.CLAUDE_CONTEXT_NATIVE = lib

local function read(path)
  return h.read(path) or ""
end

local function call(args)
  local r, err = require("claude_context").call_tool_sync("test_panic", args, 10000)
  ok(r, "no result: " .. tostring(err))
  return r
end

return {
  {
    "the test-tools library is loaded",
    function()
      ok(vim.uv.fs_stat(lib), "build it first: make test-tools-lib (missing " .. lib .. ")")
      require("claude_context").setup({})
      eq(lib, require("claude_context.native").info.path)
      ok(vim.tbl_contains(require("claude_context").status().tools, "test_panic"), "test_panic is registered")
    end,
  },
  {
    "panics on a worker, on the blocking pool and on the main thread become error results",
    function()
      local r = call({})
      eq(true, r.isError)
      contains(r.content[1].text, "test_panic: deliberate panic")
      contains(r.content[1].text, "contained")
      r = call({ blocking = true })
      eq(true, r.isError)
      contains(r.content[1].text, "deliberate panic on the blocking pool")
      r = call({ main_thread = true })
      eq(true, r.isError)
      contains(r.content[1].text, "dropped the request")
      -- Again, many times: nothing wears out.
      for i = 1, 30 do
        local args = ({ {}, { blocking = true }, { main_thread = true } })[i % 3 + 1]
        eq(true, call(args).isError)
      end
    end,
  },
  {
    "Neovim and the bridge keep running",
    function()
      eq(2, vim.api.nvim_eval("1 + 1"))
      local st = require("claude_context").status()
      ok(st and st.running, "bridge running")
      local f = h.call("getWorkspaceFolders").structuredContent
      ok(f and #f.folders >= 1, vim.inspect(f))
      h.call("fs-read-file", { path = "." }) -- an ordinary tool error still works
    end,
  },
  {
    "each panic is in the log, not on the screen",
    function()
      local log = read(require("claude_context.config").log_file())
      contains(log, "tool panicked")
      contains(log, "tool work on the blocking pool panicked")
      contains(log, "panic contained in main-thread job")
      contains(log, "deliberate panic on Neovim's main thread")
      local msgs = vim.api.nvim_exec2("messages", { output = true }).output
      ok(not msgs:find("panicked", 1, true), "panic text on the screen:\n" .. msgs)
    end,
  },
}
