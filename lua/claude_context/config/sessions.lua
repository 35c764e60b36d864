---@mod claude_context.config.sessions Options of the session states (`setup{sessions = …}`)
---
--- The hooks `:ClaudeContext open` adds (claude_context.hooks) and how a session that waits or
--- finishes is told (claude_context.sessions_state). Defaults, checks and the LuaCATS class side
--- by side; nothing goes to the native side.

local M = {}

---@class claude_context.SessionsConfig
---@field hooks boolean Add the hooks to the sessions :ClaudeContext open starts (default true)
---@field notify {waiting:boolean, done:boolean} vim.notify when a session you are not looking at waits or finishes (setup also takes one boolean for both)
---@field bell boolean Also ring the terminal bell (default false)
---@field desktop false|"osc9"|"osc777" Also a desktop notification through the terminal (default false)
M.defaults = {
  hooks = true,
  notify = { waiting = true, done = true },
  bell = false,
  desktop = false,
}

local DESKTOP = { osc9 = true, osc777 = true }

---Checks `setup{sessions = …}` and merges it over the defaults.
---@param user table?
---@return claude_context.SessionsConfig
function M.resolve(user)
  local function fail(name, want)
    error(("claude-context: option sessions.%s must be %s"):format(name, want), 0)
  end
  if user ~= nil and type(user) ~= "table" then
    error(("claude-context: option sessions must be a table, got %s"):format(type(user)), 0)
  end
  user = user or {}
  for k in pairs(user) do
    if M.defaults[k] == nil then
      error(("claude-context: unknown option sessions.%s (see :help claude-context-sessions)"):format(tostring(k)), 0)
    end
  end
  local t = vim.deepcopy(M.defaults)
  if user.notify ~= nil then
    if type(user.notify) == "boolean" then
      t.notify = { waiting = user.notify, done = user.notify }
    elseif type(user.notify) == "table" then
      for k, v in pairs(user.notify) do
        if k ~= "waiting" and k ~= "done" then
          fail("notify", "a boolean or a table {waiting = boolean, done = boolean}")
        end
        if type(v) ~= "boolean" then
          fail("notify." .. tostring(k), "a boolean")
        end
        t.notify[k] = v
      end
    else
      fail("notify", "a boolean or a table {waiting = boolean, done = boolean}")
    end
  end
  for _, k in ipairs({ "hooks", "bell" }) do
    if user[k] ~= nil then
      if type(user[k]) ~= "boolean" then
        fail(k, "a boolean")
      end
      t[k] = user[k]
    end
  end
  if user.desktop ~= nil then
    if not (user.desktop == false or DESKTOP[user.desktop]) then
      fail("desktop", 'false, "osc9" or "osc777"')
    end
    t.desktop = user.desktop
  end
  return t
end

---The effective options.
---@return claude_context.SessionsConfig
function M.options()
  return require("claude_context.config").options.sessions or vim.deepcopy(M.defaults)
end

return M
