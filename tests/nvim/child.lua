-- A second, embedded Neovim driven over RPC, for what a -l script cannot do itself: be in Insert
-- or Terminal-Job mode while events arrive (keys sent with nvim_input are handled by the child's
-- own main loop, as typed keys are). It loads this checkout (tests/minimal_init.lua) and shares
-- the spec's environment (stdpath dirs, CLAUDE_CONFIG_DIR).
local M = {}

local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h")

---@class ChildNvim
---@field ch integer
local Child = {}
Child.__index = Child

---Starts a child Neovim in `cwd`.
---@param cwd string?
---@return ChildNvim
function M.start(cwd)
  local ch = vim.fn.jobstart(
    { vim.v.progpath, "--embed", "--headless", "--clean", "-u", root .. "/tests/minimal_init.lua" },
    {
      rpc = true,
      cwd = cwd,
    }
  )
  assert(ch > 0, "cannot start a child Neovim")
  local self = setmetatable({ ch = ch }, Child)
  -- Messages are recorded, not shown (an error message would wait for a key).
  self:lua([[
    _G.messages = {}
    vim.notify = function(msg, level) table.insert(_G.messages, { msg = msg, level = level }) end
  ]])
  return self
end

---Runs Lua in the child; `...` are its arguments; returns its result.
function Child:lua(code, ...)
  return vim.rpcrequest(self.ch, "nvim_exec_lua", code, { ... })
end

---Types keys (|nvim_input()| notation) into the child.
function Child:input(keys)
  return vim.rpcrequest(self.ch, "nvim_input", keys)
end

---The child's mode (|nvim_get_mode()|).
function Child:mode()
  return vim.rpcrequest(self.ch, "nvim_get_mode").mode
end

---Waits until `code` (Lua run in the child) returns a truthy value; returns it.
function Child:wait(code, what, timeout)
  local v
  local ok = vim.wait(timeout or 5000, function()
    v = self:lua(code)
    return v ~= nil and v ~= false and v ~= vim.NIL
  end, 20)
  if not ok then
    error("timed out waiting (child) for " .. (what or code), 2)
  end
  return v
end

function Child:stop()
  pcall(vim.rpcrequest, self.ch, "nvim_command", "qa!")
  pcall(vim.fn.jobstop, self.ch)
end

return M
