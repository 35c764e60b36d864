---@mod claude_context.agents.commands :ClaudeContext new / agents / attach / land / discard
---
--- The picker (`:ClaudeContext agents`) is snacks.nvim's, telescope's, fzf-lua's or
--- |vim.ui.select()| (claude_context.agents.pickers, `sessions.picker`); while it is open the
--- list is read again every few seconds, and snacks' and telescope's show it when it changed.

local M = {}

local notify = require("claude_context.util.notify")

local function agents()
  return require("claude_context.agents")
end

---The sessions' list (claude_context.agents.list), the feature loaded (claude_context.agents:
---it tells of the sessions that ended).
local function agents_list()
  agents()
  return require("claude_context.agents.list")
end

---A land (claude_context.agents.land).
local function land(name)
  return require("claude_context.agents.land").land(name)
end

---How often the picker's list is read again (ms).
M.REFRESH_MS = 3000

---One line of the picker for entry `e`.
---@param e claude_context.Agent
---@return string
function M.format(e)
  local prompt = (e.prompt or ""):gsub("[%c]", " ")
  if #prompt > 60 then
    prompt = prompt:sub(1, 57) .. "..."
  end
  return ("%-10s %-20s %-8s %s%s"):format(
    e.kind,
    (e.name or e.id or "?"):gsub("[%c]", " "),
    e.state or "?",
    (e.files_changed or 0) > 0 and ("[%d file%s] "):format(e.files_changed, e.files_changed == 1 and "" or "s") or "",
    prompt
  )
end

---The actions the picker offers for entry `e`.
---@param e claude_context.Agent
---@return string[]
function M.actions_for(e)
  if e.state == "ended" and e.worktree then
    -- Nothing runs: its work is still there.
    return { "review", "land", "discard" }
  end
  if e.kind == "background" then
    local out = { "attach", "review", "stop" }
    if e.worktree then
      vim.list_extend(out, { "land", "discard" })
    end
    return out
  end
  if e.worktree then
    return { "review", "land", "discard" }
  end
  return { "review" }
end

---Runs `action` on entry `e`.
---@param action string
---@param e claude_context.Agent
function M.act(action, e)
  if action == "attach" then
    agents().attach(e.name)
  elseif action == "stop" then
    agents().stop(e.name, function(err)
      if not err then
        notify(("claude-context: stopped %s"):format(e.name))
      end
    end)
  elseif action == "land" then
    land(e.name)
  elseif action == "discard" then
    M.confirm_discard(e.name)
  elseif action == "review" then
    if e.worktree then
      -- The worktree's whole change, in the worktree (the main checkout untouched).
      require("claude_context.agents.land").review(e.name)
    else
      require("claude_context.review").show(1)
    end
  end
end

---Asks, then discards.
---@param name string
function M.confirm_discard(name)
  vim.ui.select({ "Discard", "Cancel" }, {
    prompt = ("Stop %s and remove its worktree? (its work stays on branch worktree-%s)"):format(name, name),
  }, function(choice)
    if choice == "Discard" then
      require("claude_context.agents.discard").discard(name)
    end
  end)
end

---The actions menu of entry `e` (|vim.ui.select()|).
---@param e claude_context.Agent
function M.menu(e)
  vim.ui.select(M.actions_for(e), { prompt = ("%s: "):format(e.name) }, function(a)
    if a then
      M.act(a, e)
    end
  end)
end

local function lines(list)
  return table.concat(vim.tbl_map(M.format, list), "\n")
end

---Shows the sessions' list again in an open picker when it changed (`view.update`, given by a
---picker that can; dropped, with a warning, when it fails).
---@param view {update: fun(list: claude_context.Agent[])?, shown: string}
local function show_changed(view)
  local list = agents_list().list()
  local now = lines(list)
  if now == view.shown then
    return
  end
  view.shown = now
  local ok, err = pcall(view.update, list)
  if not ok then
    view.update = nil
    notify(("claude-context: the picker could not show the new list: %s"):format(tostring(err)), vim.log.levels.WARN)
  end
end

---Reads the list again every M.REFRESH_MS while the picker is open. Returns `closed()`, which
---stops it.
---@param view {update: fun(list: claude_context.Agent[])?, shown: string}
---@return fun() closed
local function refresh_while_open(view)
  local timer = vim.uv.new_timer()
  local open = true
  timer:start(M.REFRESH_MS, M.REFRESH_MS, function()
    vim.schedule(function()
      if open then
        require("claude_context.agents.cli").refresh(function()
          if open and view.update then
            show_changed(view)
          end
        end)
      end
    end)
  end)
  return function()
    open = false
    if not timer:is_closing() then
      timer:stop()
      timer:close()
    end
  end
end

---An action the picker asked for, run when it is one of the entry's.
---@param action string
---@param e claude_context.Agent
local function act_checked(action, e)
  if not vim.tbl_contains(M.actions_for(e), action) then
    return notify(
      ("claude-context: %s is not an action of %s (a %s session): %s"):format(
        action,
        e.name or e.id or "?",
        e.kind or "?",
        table.concat(M.actions_for(e), ", ")
      ),
      vim.log.levels.WARN
    )
  end
  M.act(action, e)
end

---The picker: sessions, then an action (claude_context.agents.pickers: `sessions.picker`).
function M.pick()
  local list = agents_list().list()
  if #list == 0 then
    -- The cache may be empty only because it was never read: read it, then say.
    agents_list().refresh(function(l, err)
      if #l == 0 then
        notify(
          "claude-context: no Claude session in this project"
            .. (err and (" (" .. err .. ")") or "")
            .. " (:ClaudeContext new NAME to start one)"
        )
      else
        M.pick()
      end
    end)
    return
  end
  local view = { shown = lines(list) }
  local closed = refresh_while_open(view)
  local pickers = require("claude_context.agents.pickers")
  local adapter, name, why = pickers.resolve(require("claude_context.config.sessions").options().picker)
  if why then
    notify("claude-context: " .. why, vim.log.levels.WARN)
  end
  local ok, err = pcall(adapter.pick, {
    entries = list,
    prompt = "Claude sessions",
    format = M.format,
    keys = pickers.KEYS,
    default = M.menu,
    action = act_checked,
    closed = closed,
  })
  if not ok then
    closed()
    notify.error(("claude-context: the %s picker failed: %s"):format(name, tostring(err)))
  elseif type(err) == "function" then
    view.update = err
  end
end

local function complete_names(arglead)
  local out = {}
  for _, e in ipairs(agents_list().list()) do
    if e.worktree and vim.startswith(e.name, arglead) then
      out[#out + 1] = e.name
    end
  end
  return out
end

---Adds the subcommands to :ClaudeContext.
---@param commands claude_context.Commands
function M.register(commands)
  commands.register("new", {
    desc = "start a background Claude session in a new git worktree: new {name} [prompt]",
    run = function(_, args)
      local name = args[1]
      local prompt = #args > 1 and table.concat(args, " ", 2) or nil
      agents().new(name, prompt)
    end,
  })
  commands.register("agents", {
    desc = "the project's Claude sessions (terminals, background, external): attach, review, land, discard, stop",
    run = function()
      M.pick()
    end,
  })
  commands.register("permissions", {
    desc = "the permission requests background sessions wait for: allow or deny each",
    run = function()
      require("claude_context.sessions.permissions").pick()
    end,
  })
  commands.register("attach", {
    desc = "open a background session in a terminal: attach {name}",
    run = function(_, args)
      agents().attach(args[1])
    end,
    complete = complete_names,
  })
  commands.register("land", {
    desc = "bring a worktree's work into the main checkout, reviewed hunk by hunk: land {name}",
    run = function(_, args)
      land(args[1])
    end,
    complete = complete_names,
  })
  commands.register("discard", {
    desc = "stop a background session and remove its worktree (asks first; the branch stays): discard {name}",
    run = function(_, args)
      if not args[1] then
        return notify.error("claude-context: discard {name}")
      end
      M.confirm_discard(args[1])
    end,
    complete = complete_names,
  })
end

return M
