---@mod claude_context.config.sessions Options of the session states (`setup{sessions = …}`)
---
--- The hooks `:ClaudeContext open` adds (claude_context.sessions.hooks) and how a session that waits or
--- finishes is told (claude_context.sessions.state). Defaults, checks and the LuaCATS class side
--- by side; nothing goes to the native side.

local M = {}

---@class claude_context.SessionsConfig
---@field hooks boolean Add the hooks to the sessions :ClaudeContext open starts (default true)
---@field bash_edits boolean Name Bash edits by their command: Claude Code's report of what a Bash call changed (bashEditDiffEnabled, 2.1.269+) in those sessions' settings, and a hook after Bash (default true)
---@field notify {waiting:boolean, done:boolean} vim.notify when a session you are not looking at waits or finishes (setup also takes one boolean for both)
---@field bell boolean Also ring the terminal bell (default false)
---@field desktop false|"osc9"|"osc777" Also a desktop notification through the terminal (default false)
---@field plan_review boolean Open Claude's plan (ExitPlanMode) in a Markdown buffer to approve, edit or decline (default true)
---@field questions boolean Answer Claude's AskUserQuestion with vim.ui.select (default true)
---@field plan_timeout integer Seconds Claude waits for a plan review or an answer before asking in the terminal (default 3600)
---@field plan_window "tab"|"split"|"vsplit" Where the plan opens (default "tab")
---@field mark boolean A winbar with the session's state on Claude terminal windows (default true)
---@field route boolean Send the selection and @-mentions only to the Claude session you work with (default true)
---@field picker "auto"|"select"|"snacks"|"telescope"|"fzf-lua" The :ClaudeContext agents picker (default "auto": snacks, telescope, fzf-lua, else vim.ui.select)

---What setup() takes for claude_context.SessionsConfig: every field optional (the defaults fill the rest).
---@class claude_context.SessionsConfig.Partial
---@field hooks? boolean Add the hooks to the sessions :ClaudeContext open starts (default true)
---@field bash_edits? boolean Name Bash edits by their command: Claude Code's report of what a Bash call changed (bashEditDiffEnabled, 2.1.269+) in those sessions' settings, and a hook after Bash (default true)
---@field notify? boolean|{waiting:boolean?, done:boolean?} vim.notify when a session you are not looking at waits or finishes (setup also takes one boolean for both)
---@field bell? boolean Also ring the terminal bell (default false)
---@field desktop? false|"osc9"|"osc777" Also a desktop notification through the terminal (default false)
---@field plan_review? boolean Open Claude's plan (ExitPlanMode) in a Markdown buffer to approve, edit or decline (default true)
---@field questions? boolean Answer Claude's AskUserQuestion with vim.ui.select (default true)
---@field plan_timeout? integer Seconds Claude waits for a plan review or an answer before asking in the terminal (default 3600)
---@field plan_window? "tab"|"split"|"vsplit" Where the plan opens (default "tab")
---@field mark? boolean A winbar with the session's state on Claude terminal windows (default true)
---@field route? boolean Send the selection and @-mentions only to the Claude session you work with (default true)
---@field picker? "auto"|"select"|"snacks"|"telescope"|"fzf-lua" The :ClaudeContext agents picker (default "auto": snacks, telescope, fzf-lua, else vim.ui.select)
M.defaults = {
  hooks = true,
  bash_edits = true,
  notify = { waiting = true, done = true },
  bell = false,
  desktop = false,
  plan_review = true,
  questions = true,
  plan_timeout = 3600,
  plan_window = "tab",
  route = true,
  mark = true,
  picker = "auto",
}

local WINDOWS = { tab = true, split = true, vsplit = true }

local DESKTOP = { osc9 = true, osc777 = true }

---The pickers `picker` names (claude_context.agents.pickers).
M.PICKERS = { auto = true, select = true, snacks = true, telescope = true, ["fzf-lua"] = true }

---Checks `setup{sessions = …}` and merges it over the defaults.
---@param user claude_context.SessionsConfig.Partial?
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
  for _, k in ipairs({ "hooks", "bash_edits", "bell", "plan_review", "questions", "route", "mark" }) do
    if user[k] ~= nil then
      if type(user[k]) ~= "boolean" then
        fail(k, "a boolean")
      end
      t[k] = user[k]
    end
  end
  if user.plan_timeout ~= nil then
    local n = user.plan_timeout
    if type(n) ~= "number" or n ~= math.floor(n) or n < 1 or n > 604800 then
      fail("plan_timeout", "a whole number of seconds from 1 to 604800")
    end
    t.plan_timeout = n
  end
  if user.plan_window ~= nil then
    if not WINDOWS[user.plan_window] then
      fail("plan_window", '"tab", "split" or "vsplit"')
    end
    t.plan_window = user.plan_window
  end
  if user.picker ~= nil then
    if type(user.picker) ~= "string" or not M.PICKERS[user.picker] then
      fail("picker", '"auto", "select", "snacks", "telescope" or "fzf-lua"')
    end
    t.picker = user.picker
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
