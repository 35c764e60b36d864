---@mod claude_context.native Loads the Rust library
---
--- Tries an explicit list of paths with `package.loadlib`, checks the library's version against
--- the Lua side's before running its initialisation, and when nothing fits says every path it
--- tried and why, and how to build it.

local M = {}

local uv = vim.uv or vim.loop
local expected = require("claude_context.version")

---@return string root of this plugin checkout
function M.plugin_root()
  local src = debug.getinfo(1, "S").source:sub(2)
  return vim.fn.fnamemodify(src, ":p:h:h:h")
end

local function ext()
  if vim.fn.has("mac") == 1 then
    return "dylib"
  elseif vim.fn.has("win32") == 1 then
    return "dll"
  end
  return "so"
end

---@return string[] the paths the loader tries, in order
function M.candidates()
  local root = M.plugin_root()
  local e = ext()
  local list = {}
  if vim.env.CLAUDE_CONTEXT_NATIVE and vim.env.CLAUDE_CONTEXT_NATIVE ~= "" then
    table.insert(list, vim.env.CLAUDE_CONTEXT_NATIVE)
  end
  vim.list_extend(list, {
    root .. "/lib/claude_context_native." .. e,
    root .. "/target/release/libclaude_context_native." .. e,
    root .. "/target/debug/libclaude_context_native." .. e,
  })
  return list
end

---@class claude_context.NativeInfo
---@field path string?
---@field version string?
---@field tried {path:string, reason:string}[]
---@field error string?
M.info = { tried = {} }

local api

---An error raised by the native library as one line for a message: without mlua's
---"runtime error: " prefix and its stack traceback.
---@param err any
---@return string
function M.message(err)
  local s = tostring(err):gsub("^runtime error: ", "")
  return (s:match("^(.-)\n%s*stack traceback:") or s)
end

---Loads the native library once; raises an error that lists every path tried.
---@return table api
function M.load()
  if api then
    return api
  end
  local tried = {}
  for _, path in ipairs(M.candidates()) do
    if not uv.fs_stat(path) then
      table.insert(tried, { path = path, reason = "not found" })
    else
      local ver_fn, err = package.loadlib(path, "claude_context_native_version")
      if not ver_fn then
        table.insert(tried, { path = path, reason = "cannot load: " .. tostring(err) })
      else
        local ok, ver = pcall(ver_fn)
        if not ok or ver ~= expected then
          table.insert(tried, {
            path = path,
            reason = ("built from version %s, but the Lua side is %s"):format(tostring(ver), expected),
          })
        else
          local init, err2 = package.loadlib(path, "luaopen_claude_context_native")
          local ok2, res = false, err2
          if init then
            ok2, res = pcall(init)
          end
          local t = package.loaded["claude_context._native"]
          if ok2 and type(t) == "table" then
            api = t
            M.info = { path = path, version = ver, tried = tried }
            return api
          end
          table.insert(tried, { path = path, reason = "initialisation failed: " .. tostring(res) })
        end
      end
    end
  end
  local lines = { "claude-context: cannot load the native library. Tried:" }
  for _, t in ipairs(tried) do
    table.insert(lines, ("  %s: %s"):format(t.path, t.reason))
  end
  table.insert(lines, ("Build it: run `make` in %s (lazy.nvim: `:Lazy build claude-context.nvim`)."):format(M.plugin_root()))
  M.info = { tried = tried, error = table.concat(lines, "\n") }
  error(M.info.error, 0)
end

---@return boolean loaded, string? error
function M.try_load()
  local ok, err = pcall(M.load)
  return ok, (not ok) and err or nil
end

return M
