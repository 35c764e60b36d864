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

---The directory the loader searches (`lib/`, `target/…`) : the plugin checkout, unless a test
---points it elsewhere.
---@type string?
M.root = nil

---@return string[] the paths the loader tries, in order
function M.candidates()
  local root = M.root or M.plugin_root()
  local e = ext()
  -- cargo names the library without the `lib` prefix on Windows.
  local built = (e == "dll" and "" or "lib") .. "claude_context_native." .. e
  local list = {}
  if vim.env.CLAUDE_CONTEXT_NATIVE and vim.env.CLAUDE_CONTEXT_NATIVE ~= "" then
    table.insert(list, vim.env.CLAUDE_CONTEXT_NATIVE)
  end
  vim.list_extend(list, {
    root .. "/lib/claude_context_native." .. e,
    root .. "/target/release/" .. built,
    root .. "/target/debug/" .. built,
  })
  return list
end

---The paths where the relay binary `claude-context-mcp` (built beside the library) may be, in
---order: the terminal's `:ClaudeContext mcp-command`, the hooks' binary.
---@return string[]
function M.relay_candidates()
  local root = M.plugin_root()
  local exe = vim.fn.has("win32") == 1 and ".exe" or ""
  return {
    root .. "/lib/claude-context-mcp" .. exe,
    root .. "/target/release/claude-context-mcp" .. exe,
    root .. "/target/debug/claude-context-mcp" .. exe,
  }
end

---The directory the --mcp-config file goes into (0700, made by the native side); the files
---sent to Claude (claude_context.context_files) go below it too.
---@return string
function M.mcp_config_dir()
  local ok, run = pcall(vim.fn.stdpath, "run")
  if not ok or type(run) ~= "string" or run == "" then
    run = vim.fn.stdpath("state")
  end
  return run .. "/claude-context"
end

---How to build the library, the same words everywhere.
M.HOW_TO_BUILD = ":Lazy build claude-context.nvim, :ClaudeContext build, or `make` in the plugin directory"

---The one message every command gives while the library cannot be loaded: what was tried, and
---how to build it. One line (no traceback, no hit-enter prompt).
---@param tried {path:string, reason:string}[]?
---@return string
function M.missing_message(tried)
  tried = tried or M.info.tried or {}
  local root = M.root or M.plugin_root()
  local parts = {}
  for _, t in ipairs(tried) do
    local p = require("claude_context.util.paths").relative(t.path, root)
    table.insert(parts, t.reason == "not found" and p or (p .. ": " .. t.reason))
  end
  return ("claude-context: the native library is not built (tried %s in %s; none loaded). Build it: %s."):format(
    #parts > 0 and table.concat(parts, ", ") or "nothing",
    root,
    M.HOW_TO_BUILD
  )
end

---The Rust library's API table (src/api.rs `create` lists every name; the families in
---src/api_*.rs). The bridge's functions are declared here; the others are reached by name.
---@class claude_context.NativeApi
---@field version string
---@field start fun(config_json: string, state_json: string): string The status JSON
---@field stop fun(): boolean Whether a bridge was running
---@field status fun(): string? The status JSON, nil when stopped
---@field token fun(): string?
---@field set_log fun(file: string?, level: string)
---@field turns fun(session: string?): string? JSON of claude_context.Turn[]
---@field session_seen fun(id: string): string? JSON of claude_context.SessionChange
---@field update_state fun(state_json: string)
---@field call_tool fun(name: string, args_json: string, cb: fun(err: string?, json: string?, code: integer?))
---@field broadcast fun(method: string, params_json: string, ide_only: boolean?): integer The clients it went to
---@field permission_modes fun(): string[]
---@field hook_tool {server: string, tool: string} The bridge's hook tool, as an MCP server's tool
---@field conversations fun(request_json: string, cb: fun(err: string?, json: string?))?
---@field transcript_read fun(request_json: string, cb: fun(err: string?, answer: string))?
---@field fs table<string, function> The review's file layer (src/api_fs.rs)
---@field worktree table<string, function> What git printed for a worktree, read (src/api_worktree.rs)
---@field [string] any

---The loaded API, or nil and the message of |M.missing_message()|.
---@return claude_context.NativeApi? api, string? message
function M.get()
  local ok, res = pcall(M.load)
  if ok then
    return res
  end
  return nil, M.message(res)
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
---@return claude_context.NativeApi api
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
  M.info = { tried = tried }
  M.info.error = M.missing_message(tried)
  error(M.info.error, 0)
end

---@return boolean loaded, string? error
function M.try_load()
  local ok, err = pcall(M.load)
  return ok, (not ok) and err or nil
end

return M
