-- The checks of setup()'s options that the native side's options pass through: an unknown key is
-- refused, a wrong type names the key, and only the native side's keys reach its JSON.
local h = require("helpers")
local eq, ok, contains = h.eq, h.ok, h.contains

return {
  {
    "the bridge's options: the native ones are type-checked and sent, an unknown one is refused",
    function()
      local config = require("claude_context.config")
      local okk, e = pcall(config.resolve, { max_mesage_size = 1 })
      eq(false, okk)
      eq('claude-context: unknown option "max_mesage_size" (see :help claude-context-config)', e)
      for _, bad in ipairs({ { max_message_size = "big" }, { editor_wait_ms = {} }, { port_range = 9000 } }) do
        okk, e = pcall(config.resolve, bad)
        eq(false, okk)
        contains(e, next(bad))
      end
      okk, e = pcall(config.resolve, { port_range = { min = 9000 } })
      contains(e, "port_range.max")
      local cfg = config.resolve({
        port_range = { min = 9000, max = 9010 },
        client_request_timeout_ms = 500,
        log_level = "debug",
      })
      local native = vim.json.decode(config.to_native(cfg))
      eq({ min = 9000, max = 9010 }, native.port_range)
      eq(500, native.client_request_timeout_ms)
      eq(nil, native.max_message_size, "a key not given is not sent")
      eq(nil, native.log_level, "the editor's own option is not sent")
      ok(native.state_dir)
      config.resolve({})
    end,
  },
  {
    "claude options: an unknown one is refused naming the known ones; the native side gets its keys only",
    function()
      local claude = require("claude_context.config.claude")
      local okk, e = pcall(claude.resolve, { colour = "red" })
      eq(false, okk)
      eq(
        "claude-context: unknown option claude.colour (known: cmd, args, env, max_context_bytes, allowed_tools, permission_mode, setting_sources, add_dirs, timeout, progress)",
        e
      )
      okk, e = pcall(claude.resolve, { timeout = "soon" })
      eq("claude-context: option claude.timeout must be a number, got string", e)
      local t = {}
      claude.native(
        { claude = { args = { "--verbose" }, max_context_bytes = 1000, timeout = 5, progress = "none" } },
        t
      )
      eq({ args = { "--verbose" }, max_context_bytes = 1000 }, t.claude)
    end,
  },
}
