-- The native library never runs a full garbage collection of Neovim's Lua heap behind the
-- editor's back. (mlua collects the whole heap when a handle made by `Lua::init_from_ptr` is
-- dropped; `nvim_oxi::mlua::lua()` makes such handles. With a large config that is tens of
-- milliseconds on the main thread — at start-up, and at every hop to the main thread.)
--
-- Probe: an unreachable userdata with a __gc finalizer, with the incremental collector stopped,
-- so that only a full collection can finalize it.
local h = require("helpers")
local eq, ok = h.eq, h.ok

local function probe()
  local seen = { finalized = false }
  local p = newproxy(true)
  getmetatable(p).__gc = function()
    seen.finalized = true
  end
  p = nil -- luacheck: ignore (unreachable from here on)
  return seen
end

---Runs fn with the incremental collector stopped; returns whether a full collection ran.
local function full_gc_during(fn)
  collectgarbage("collect")
  collectgarbage("stop")
  local seen = probe()
  local ok_, err = pcall(fn)
  local collected = seen.finalized
  collectgarbage("restart")
  ok(ok_, err)
  -- The probe itself works: a full collection does finalize it.
  collectgarbage("collect")
  ok(seen.finalized, "the probe was not finalized by collectgarbage('collect')")
  return collected
end

return {
  {
    "loading the library and starting the bridge collect nothing",
    function()
      eq(
        false,
        full_gc_during(function()
          require("claude_context").setup({})
        end),
        "a full collection ran during setup()"
      )
      ok(require("claude_context").status(), "the bridge runs")
    end,
  },
  {
    "hops to the main thread collect nothing",
    function()
      require("claude_context").setup({})
      eq(
        false,
        full_gc_during(function()
          -- getCurrentSelection is answered by a Lua handler on the main thread, and the
          -- answer comes back to call_tool's callback through the main-thread queue too.
          for _ = 1, 5 do
            local r, err = require("claude_context").call_tool_sync("getCurrentSelection", {}, 10000)
            ok(r, err)
            ok(r.structuredContent, vim.inspect(r))
          end
        end),
        "a full collection ran during main-thread hops"
      )
    end,
  },
}
