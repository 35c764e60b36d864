---@mod claude_context.config.memory_bank Options of the memory bank (`setup{memory_bank = …}`)
---
--- The language defaults from the editor's (`v:lang`, else `$LANG`: `ja*` is Japanese, anything
--- else English); the bridge's memory bank tools use it when called without `language`, and
--- the views of claude_context.context speak it.

local M = {}

---@class claude_context.MemoryBankConfig
---@field root string? Bank root (default <project root>/docs; $MEMORY_BANK_ROOT wins over it)
---@field language "en"|"ja"|"zh"|nil Language of the memory bank tools' defaults and of these views (default: the editor's)

---@type claude_context.MemoryBankConfig
M.defaults = { root = nil, language = nil }

local KNOWN = { root = true, language = true }
local LANGUAGES = { en = true, ja = true, zh = true }

---The editor's language as the memory bank knows them: "ja" when `v:lang` (or, when that says
---nothing, `$LANG`) starts with "ja", else "en".
---@param v_lang string? default vim.v.lang
---@param env_lang string? default $LANG
---@return "en"|"ja"
function M.editor_language(v_lang, env_lang)
  v_lang = v_lang or vim.v.lang or ""
  env_lang = env_lang or vim.env.LANG or ""
  local l = v_lang
  if l == "" or l == "C" or l == "POSIX" or l:match("^C%.") then
    l = env_lang
  end
  return l:lower():match("^ja") and "ja" or "en"
end

---Checks `setup{memory_bank = …}`; raises a clear error on a typo or a wrong type.
---@param mb claude_context.MemoryBankConfig?
---@return claude_context.MemoryBankConfig? mb
function M.resolve(mb)
  if mb == nil then
    return nil
  end
  vim.validate("memory_bank", mb, "table")
  for k in pairs(mb) do
    if not KNOWN[k] then
      error(("claude-context: unknown option memory_bank.%s (see :help claude-context-memory-bank)"):format(k), 0)
    end
  end
  vim.validate("memory_bank.root", mb.root, "string", true)
  vim.validate("memory_bank.language", mb.language, function(v)
    return v == nil or LANGUAGES[v] == true
  end, '"en", "ja" or "zh"')
  return mb
end

---The effective memory bank options (the language filled in).
---@return claude_context.MemoryBankConfig
function M.options()
  local o = vim.tbl_extend("force", M.defaults, require("claude_context.config").options.memory_bank or {})
  o.language = o.language or M.editor_language()
  return o
end

---Adds `memory_bank_root` and `memory_bank_language` to `t` (crates/core/src/config.rs). The
---language is always sent, so the tools called without `language` speak the editor's.
---@param cfg claude_context.Config
---@param t table<string, any> the native configuration being built (crates/core/src/config.rs)
function M.native(cfg, t)
  local mb = cfg.memory_bank
  if type(mb) == "table" and type(mb.root) == "string" and mb.root ~= "" then
    t.memory_bank_root = vim.fn.expand(mb.root)
  end
  local lang = type(mb) == "table" and mb.language or nil
  t.memory_bank_language = LANGUAGES[lang] and lang or M.editor_language()
end

return M
