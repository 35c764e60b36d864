-- The memory bank tools called without `language` speak the editor's language when setup()
-- says nothing about the memory bank (the bug: an English editor got the Japanese rules, because
-- the language reached the bridge only once the memory bank's Lua module had been loaded). Each
-- case starts the bridge in this fresh Neovim with the editor's language set through $LANG.
local h = require("helpers")
local eq, ok, contains = h.eq, h.ok, h.contains
local cc = h.cc

local JA = "メモリバンクのルール"

---The rules read_rules answers when called without `language`, with the editor in `lang`.
local function rules_in(lang)
  cc().stop({ silent = true })
  vim.env.LANG = lang
  cc().setup({})
  ok(cc().status(), "the bridge runs")
  return h.call("read_rules", {}).structuredContent.rules.content
end

return {
  {
    "an English editor gets English rules; setup() names no memory bank option",
    function()
      ok(not package.loaded["claude_context.context"], "the memory bank's commands are not loaded")
      local text = rules_in("en_US.UTF-8")
      ok(not text:find(JA, 1, true), "English rules, got: " .. text:sub(1, 80))
      eq(
        "en",
        vim.json.decode(require("claude_context.config").to_native(require("claude_context.config").options)).memory_bank_language
      )
    end,
  },
  {
    "a Japanese editor gets Japanese rules",
    function()
      contains(rules_in("ja_JP.UTF-8"), JA)
      cc().stop({ silent = true })
    end,
  },
}
