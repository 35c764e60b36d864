-- The bridge's calls of the editor: one table (claude_context.rpc's `methods`) routes each method
-- to its module, and it names exactly the methods the Rust side calls (their constants in
-- crates/core/src/editor.rs, `methods::ALL`, which the native module lists as `editor_methods`).
local h = require("helpers")
local eq, ok, contains = h.eq, h.ok, h.contains

local rpc = require("claude_context.rpc")
local messages = h.record_notify()

---`rpc.handle`'s answer to `method` with `params`: { ok_json, err }.
local function ask(method, params)
  local got
  rpc.handle(method, vim.json.encode(params or {}), function(json, err)
    got = { json, err }
  end)
  h.wait_for(function()
    return got ~= nil
  end, 5000, method .. " answered")
  return got
end

return {
  {
    "the table names the methods the Rust side calls, no more, no fewer",
    function()
      local native = require("claude_context.native").load()
      local rust = vim.deepcopy(native.editor_methods)
      local lua = vim.tbl_keys(rpc.methods)
      table.sort(rust)
      table.sort(lua)
      eq(rust, lua)
    end,
  },
  {
    "every method's module loads and has its handler",
    function()
      for method, where in pairs(rpc.methods) do
        local loaded, mod = pcall(require, where[1])
        ok(loaded, method .. ": " .. tostring(mod))
        local fn = where[2] and mod[where[2]] or mod
        eq("function", type(fn), method .. "'s handler (" .. where[1] .. ")")
      end
    end,
  },
  {
    "a method outside the table is refused with its name; the method reaches its handler",
    function()
      contains(ask("no_such_method")[2], '"no_such_method"')
      -- checkpoint_progress answers at once (its text waits for a project's first walk).
      local got = ask("checkpoint_progress", { root = "/nowhere", dirs = 1, files = 2, done = true })
      eq("string", type(got[1]), vim.inspect(got))
      eq(nil, got[2])
      h.wait_for(function()
        return #messages > 0
      end, 5000, "the progress shown")
      contains(messages[#messages].msg, "/nowhere")
    end,
  },
}
