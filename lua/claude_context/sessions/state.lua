---@mod claude_context.sessions.state What every Claude session is doing (from Claude Code's hooks)
---
--- The bridge keeps a registry of the Claude Code sessions whose hooks reach it (the plugin adds
--- them to the sessions `:ClaudeContext open` starts, see claude_context.sessions.hooks): states
--- `working`, `waiting`, `done` (unseen), `idle`, `ended`, with the last prompt's first line,
--- the elapsed time, the files the turn changed and the model.
---
--- * `status().sessions` of the entry module (claude_context): `{ id, name, state, prompt, elapsed_ms,
---   state_ms, files_changed, files, model, cwd, terminal, turn, waiting_for, … }`.
--- * `turns([session])` of the entry module: `{ id, session, name, prompt, start_ms,
---   end_ms, files }`.
--- * `User ClaudeContextSessionState` (`data = { id, name, state, previous, event, session }`).
--- * A session the person is not looking at that waits or finishes: `vim.notify`, optionally a
---   terminal bell and a desktop notification through the terminal (OSC 9 / OSC 777).
--- * `done` becomes `idle` when the person enters the session's terminal.

local M = {}

---@alias claude_context.SessionState "working"|"waiting"|"done"|"idle"|"ended"

---A session as `status().sessions` lists it (crates/core/src/turns/mod.rs: SessionView).
---@class claude_context.Session
---@field id string Claude's session id
---@field name string The terminal's name, the worktree's name, else the id's first 8 characters
---@field terminal string? The plugin's terminal it runs in (nil for a session started elsewhere)
---@field state claude_context.SessionState
---@field prompt string The last prompt's first line ("" before the first)
---@field elapsed_ms integer The last turn's running time (until now while it runs)
---@field state_ms integer Time in the current state
---@field files_changed integer How many files the last turn changed
---@field files string[] The files the last turn touched
---@field model string?
---@field cwd string?
---@field permission_mode string?
---@field turn integer? The last turn's id
---@field waiting_for string? What Claude waits for
---@field started_ms integer Epoch ms when the session was first heard of

---One turn of a session (crates/core/src/turns/mod.rs: Turn).
---@class claude_context.Turn
---@field id integer Increasing over the bridge's life
---@field session string Claude's session id
---@field name string? The terminal's name
---@field prompt string
---@field start_ms integer Epoch ms
---@field end_ms integer? Epoch ms; nil while the turn runs
---@field files string[] The files the turn changed

---What a hook event changed (the bridge's `session_state` request).
---@class claude_context.SessionChange
---@field event string The hook, or "seen"
---@field previous claude_context.SessionState? nil for a session first heard of
---@field session claude_context.Session

---The data of `User ClaudeContextSessionState`.
---@class claude_context.SessionStateEvent
---@field id string
---@field name string
---@field state claude_context.SessionState
---@field previous claude_context.SessionState?
---@field event string
---@field session claude_context.Session

---A session another source counts (|sources|).
---@class claude_context.SessionCount
---@field session_id string?
---@field state claude_context.SessionState?

local notify = require("claude_context.util.notify")

---The effective `setup{sessions = …}` options (claude_context.config.sessions).
---@return claude_context.SessionsConfig
function M.options()
  return require("claude_context.config.sessions").options()
end

local function nonnil(x)
  if x == vim.NIL then
    return nil
  end
  return x
end

local worktree_name = require("claude_context.agents.names").of_any

---A session or change table from JSON with `vim.NIL` turned into nil (in place). A session
---without a terminal of the plugin that works in a worktree is named after it.
---@generic T: claude_context.Session|claude_context.SessionChange
---@param t T
---@return T
function M.clean(t)
  for k, v in pairs(t) do
    if v == vim.NIL then
      t[k] = nil
    elseif type(v) == "table" and k == "session" then
      M.clean(v)
    end
  end
  if t.id and t.terminal == nil then
    t.name = worktree_name(t.cwd) or t.name
  end
  return t
end

---The sessions (`status().sessions`), most recently started first.
---@return claude_context.Session[]
function M.list()
  local native = require("claude_context.native").get()
  local s = native and native.status()
  if not s then
    return {}
  end
  local st = vim.json.decode(s)
  return vim.tbl_map(M.clean, st.sessions or {})
end

---The turns, oldest first (of one session when given).
---@param session string?
---@return claude_context.Turn[]
function M.turns(session)
  local native = require("claude_context.native").get()
  local s = native and native.turns(session)
  if not s then
    return {}
  end
  return vim.json.decode(s, { luanil = { object = true, array = true } })
end

---The terminal buffer of session view `s` (a terminal the plugin started), if any.
---@param s claude_context.Session
---@return integer?
function M.buffer_of(s)
  -- The terminal's sessions, when the terminal was used (looking loads nothing).
  local term = package.loaded["claude_context.terminal.sessions"]
  local name = nonnil(s.terminal)
  if not (term and name) then
    return nil
  end
  local st = term.by_name[name]
  local buf = st and st.buf
  if buf and vim.api.nvim_buf_is_valid(buf) then
    return buf
  end
  return nil
end

---Whether Neovim has the focus (FocusLost/FocusGained; true until told otherwise).
M.focused = true

---The buffer of the `claude attach` terminal of background session `s` (by its worktree's
---name), if one is open (looking loads nothing).
---@param s claude_context.Session
---@return integer?
function M.attach_buffer_of(s)
  local agents = package.loaded["claude_context.agents"]
  local buf = agents and s.name and agents.attached and agents.attached[s.name]
  if buf and vim.api.nvim_buf_is_valid(buf) then
    return buf
  end
  return nil
end

---Whether the person is looking at session `s`: its terminal (or the `claude attach` terminal
---of a background session) is the current window's buffer and Neovim has the focus.
---@param s claude_context.Session
---@return boolean
function M.looking_at(s)
  if not M.focused then
    return false
  end
  local cur = vim.api.nvim_get_current_buf()
  return M.buffer_of(s) == cur or M.attach_buffer_of(s) == cur
end

---Removes control characters (a notification's text goes to the terminal in OSC sequences): the
---C0 ones and DEL, and the C1 ones U+0080–U+009F (ST, U+009C, ends an OSC in terminals that
---read C1 controls; CSI, U+009B, starts a sequence).
local function printable(s)
  return (tostring(s or ""):gsub("[%c\127]", " "):gsub("\194[\128-\159]", " "))
end

local function duration(ms)
  local sec = math.floor((ms or 0) / 1000)
  if sec < 60 then
    return sec .. " s"
  end
  return ("%d min %d s"):format(math.floor(sec / 60), sec % 60)
end

---The notification's text for session `s` in its new state.
---@param s claude_context.Session
---@return string
function M.message(s)
  local who = ("Claude [%s]"):format(s.name or "?")
  if s.state == "waiting" then
    local why = s.waiting_for and vim.fn.strcharpart(s.waiting_for, 0, 200)
    return ("%s needs you%s"):format(who, why and (": " .. why) or "")
  end
  local files = s.files_changed or 0
  return ("%s finished%s (%s%s)"):format(
    who,
    (s.prompt and s.prompt ~= "") and (": " .. s.prompt) or "",
    duration(s.elapsed_ms),
    files > 0 and (", %d file%s changed"):format(files, files == 1 and "" or "s") or ""
  )
end

---Sends `seq` to the terminal Neovim runs in (bell, OSC 9/777); nothing without a UI.
---@param seq string
function M.send_to_terminal(seq)
  if #vim.api.nvim_list_uis() == 0 then
    return
  end
  if vim.api.nvim_ui_send then
    pcall(vim.api.nvim_ui_send, seq)
  else
    pcall(vim.fn.chansend, vim.v.stderr, seq)
  end
end

---Notifications sent (for tests and `:messages`-less setups): `{ session, state, message }`.
M.notified = {}

---Tells the person that session `s` waits or finished, as the options say.
---@param s claude_context.Session
function M.notify(s)
  local o = M.options()
  if not o.notify[s.state] then
    return
  end
  local msg = M.message(s)
  table.insert(M.notified, { session = s.id, state = s.state, message = msg })
  if #M.notified > 50 then
    table.remove(M.notified, 1)
  end
  notify(msg, s.state == "waiting" and vim.log.levels.WARN or vim.log.levels.INFO)
  if o.bell then
    M.send_to_terminal("\a")
  end
  if o.desktop == "osc9" then
    M.send_to_terminal("\27]9;" .. printable(msg) .. "\a")
  elseif o.desktop == "osc777" then
    M.send_to_terminal("\27]777;notify;Claude Code;" .. printable(msg) .. "\a")
  end
end

local function fire(change)
  local s = change.session
  vim.api.nvim_exec_autocmds("User", {
    pattern = "ClaudeContextSessionState",
    modeline = false,
    data = {
      id = s.id,
      name = s.name,
      state = s.state,
      previous = change.previous,
      event = change.event,
      session = s,
    },
  })
end

---Marks session `id` seen (`done` becomes `idle`); fires the event. Returns whether it changed.
---@param id string
---@return boolean
function M.seen(id)
  local native = require("claude_context.native").get()
  local json = native and native.session_seen(id)
  if not json then
    return false
  end
  local change = M.clean(vim.json.decode(json))
  fire(change)
  pcall(vim.cmd.redrawstatus)
  return true
end

---How long a terminal-less session's `PermissionRequest` waits for its ask to reach the
---permission queue (which tells the person, with the tool's input) before it is told here (ms).
M.ASK_GRACE_MS = 1000

---When each session's permission request reached the queue (claude_context.sessions.permissions
---notes it), while the session waits: `{ [session id] = uv.now() }`; forgotten when it moves on.
---@type table<string, integer>
M.asked = {}

---A change from the bridge (`session_state`): the event, then a notification when the person
---is not looking at that session. A permission request of a session without a terminal of the
---plugin (a background session) is told once: by the permission queue when the ask reaches it.
---@param change claude_context.SessionChange
function M.on_change(change)
  M.clean(change)
  local s = change.session
  if not s then
    return
  end
  fire(change)
  if s.state ~= "waiting" then
    M.asked[s.id] = nil
  end
  if s.state ~= change.previous and (s.state == "waiting" or s.state == "done") then
    if M.looking_at(s) then
      if s.state == "done" then
        M.seen(s.id)
      end
    elseif s.state == "waiting" and change.event == "PermissionRequest" and s.terminal == nil then
      -- Its ask may reach the queue a loop turn before this change or within the grace after.
      vim.defer_fn(function()
        if not M.asked[s.id] and not M.looking_at(s) then
          M.notify(s)
        end
      end, M.ASK_GRACE_MS)
    else
      M.notify(s)
    end
  end
  pcall(vim.cmd.redrawstatus)
end

---The person entered buffer `buf`: the sessions of that terminal (or of that `claude attach`
---terminal) that were done are seen.
---@param buf integer
function M.entered(buf)
  if not (vim.b[buf].claude_context_terminal or vim.b[buf].claude_context_attach) then
    return
  end
  for _, s in ipairs(M.list()) do
    if s.state == "done" and (M.buffer_of(s) == buf or M.attach_buffer_of(s) == buf) then
      M.seen(s.id)
    end
  end
end

local group

---The bridge's `session_state` (claude_context.rpc's table of methods routes it here).
---@param params table
---@param respond fun(result: any, err: string?)
function M.handle(params, respond)
  local ok, err = pcall(M.on_change, params)
  respond(nil, not ok and tostring(err) or nil)
end

---Installs the autocmds (idempotent).
function M.start()
  group = group
    or require("claude_context.util.autocmds").group("ClaudeContextSessions", {
      {
        { "BufEnter", "WinEnter", "TermEnter" },
        function(ev)
          M.entered(ev.buf)
        end,
        desc = "claude-context: a finished session is seen when you enter its terminal",
      },
      {
        "FocusLost",
        function()
          M.focused = false
        end,
      },
      {
        "FocusGained",
        function()
          M.focused = true
          M.entered(vim.api.nvim_get_current_buf())
        end,
      },
    })
end

---Other sessions to count, by source: a function returning `{ { session_id?, state } }` from
---what it already has (never running anything). claude_context.agents adds the background
---sessions Claude Code's service lists: those the hooks have not reported (a session still
---running from before this Neovim started, one just started), and the state of those that are
---gone from the service (`ended`).
---@type table<string, fun(): claude_context.SessionCount[]>
M.sources = {}

---Counts by state: `{ working = n, waiting = n, done = n, idle = n, ended = n }`, of the
---sessions the hooks reported and those of |sources|.
---@return table<string, integer>
function M.counts()
  local c = { working = 0, waiting = 0, done = 0, idle = 0, ended = 0 }
  local others, by_id = {}, {}
  for _, src in pairs(M.sources) do
    local ok, list = pcall(src)
    for _, e in ipairs(ok and type(list) == "table" and list or {}) do
      others[#others + 1] = e
      if e.session_id then
        by_id[e.session_id] = e
      end
    end
  end
  local known = {}
  for _, s in ipairs(M.list()) do
    known[s.id] = true
    local o = by_id[s.id]
    local st = (o and o.state == "ended") and "ended" or s.state
    c[st] = (c[st] or 0) + 1
  end
  for _, e in ipairs(others) do
    if not (e.session_id and known[e.session_id]) and e.state then
      c[e.state] = (c[e.state] or 0) + 1
    end
  end
  return c
end

---The statusline text: the counts of the states in `opts.states` (default waiting, working,
---done), each with its label (`opts.labels`); "" when there are none.
---@class claude_context.StatuslineOpts
---@field states string[]? The states counted (default waiting, working, done)
---@field labels table<string,string>? Each state's label
---@field separator string?

---A lualine component: the function it calls, and when it shows.
---@class claude_context.LualineComponent
---@field [1] fun(): string
---@field cond (fun(): boolean)?

---@param opts claude_context.StatuslineOpts?
---@return string
function M.statusline(opts)
  opts = opts or {}
  local labels = vim.tbl_extend(
    "force",
    { working = "working", waiting = "waiting", done = "done", idle = "idle", ended = "ended" },
    opts.labels or {}
  )
  local c = M.counts()
  local parts = {}
  for _, st in ipairs(opts.states or { "waiting", "working", "done" }) do
    if (c[st] or 0) > 0 then
      table.insert(parts, ("%d %s"):format(c[st], labels[st] or st))
    end
  end
  return table.concat(parts, opts.separator or " · ")
end

---A lualine component with the counts: `lualine_x = { require("claude_context.sessions.state").lualine() }`.
---@param opts claude_context.StatuslineOpts? as for statusline()
---@return claude_context.LualineComponent
function M.lualine(opts)
  return {
    function()
      return M.statusline(opts)
    end,
    cond = function()
      -- The bridge runs (asked of the library directly: this module sits below the API).
      local native = require("claude_context.native").get()
      return native ~= nil and native.status() ~= nil
    end,
  }
end

---What the terminal named `name` does, for the `:ClaudeContext sessions` picker: "state, project,
---elapsed, prompt" of its latest session (nil when no hook has reported one).
---@param name string
---@return string?
function M.describe(name)
  for _, s in ipairs(M.list()) do
    if s.terminal == name then
      local project = s.cwd and vim.fn.fnamemodify(s.cwd, ":t") or ""
      local parts = { s.state, project, duration(s.elapsed_ms) }
      if s.prompt and s.prompt ~= "" then
        table.insert(parts, s.prompt)
      end
      return table.concat(parts, " · ")
    end
  end
  return nil
end

return M
