---@mod claude_context.sessions.permissions Permission requests of sessions without a terminal here, answered in Neovim
---
--- A background session's `PermissionRequest` hook (see claude_context.agents) sends the tool
--- and its input to the bridge and waits; the bridge's `permission_request` request lands here
--- and is queued until the person decides with |decide| (or `:ClaudeContext permissions`).
--- Nothing is ever decided here by itself: Claude Code's own dialog stands meanwhile (whoever
--- attaches sees it), an ask the session no longer waits for (answered in the dialog, the hook's
--- time ran out) leaves the queue, and a timeout is no answer. The plugin's terminals answer in
--- the terminal: their asks are passed back at once.

local M = {}

local notify = require("claude_context.util.notify")

---An input the bridge sent cut: its start and its end (of its JSON), and what is between.
---@class claude_context.PermissionCut
---@field head string
---@field tail string
---@field omitted_bytes integer
---@field total_bytes integer

---A permission request waiting for the person (`require("claude_context").permissions()`).
---@class claude_context.PermissionRequest
---@field id string
---@field session string? Claude's session id
---@field name string The session's name
---@field tool string
---@field input any The tool's input (nil when cut)
---@field cut claude_context.PermissionCut? Set when the input was too long to send whole
---@field asked_ms integer Epoch ms
---@field cwd string?

---A queued ask: the request, and how to answer the hook.
---@class claude_context.PermissionAsk: claude_context.PermissionRequest
---@field respond fun(result: {decision: "allow"|"deny"|"pass", reason: string?})

---The bridge's `permission_request` params.
---@class claude_context.PermissionParams
---@field session_id string?
---@field terminal string? The plugin's terminal the session runs in
---@field cwd string?
---@field tool string
---@field input any
---@field cut claude_context.PermissionCut?

---The queue, oldest first: `{ id, session, name, tool, input, asked_ms, cwd, respond }`.
---@type claude_context.PermissionAsk[]
M.queue = {}

local next_id = 0

---How much of an ask's one line is shown: its start and its end, in characters.
M.SHOWN_HEAD, M.SHOWN_TAIL = 120, 100

---The text of an ask's input: the command, the file, else its JSON; for an ask the bridge sent
---cut (`cut`: longer than it sends), its start and its end with what is between them said.
---@param input any
---@param cut claude_context.PermissionCut?
---@return string
function M.text(input, cut)
  if type(cut) == "table" then
    return ("%s\n… [%d of its %d bytes not sent to the editor: it cannot be allowed here] …\n%s"):format(
      tostring(cut.head),
      cut.omitted_bytes or 0,
      cut.total_bytes or 0,
      tostring(cut.tail)
    )
  end
  if type(input) == "table" then
    local s = input.command or input.file_path or input.notebook_path or input.url or input.pattern
    if type(s) == "string" then
      return s
    end
    local ok, j = pcall(vim.json.encode, input)
    return ok and j or "?"
  end
  return tostring(input)
end

---`s` on one line (control characters as spaces), its first `head` and its last `tail`
---characters, and how many are between them (0: `s` whole, as the first).
local function ends(s, head, tail)
  s = tostring(s):gsub("%c", " ")
  local n = vim.fn.strchars(s)
  if n <= head + tail then
    return s, "", 0
  end
  return vim.fn.strcharpart(s, 0, head), vim.fn.strcharpart(s, n - tail), n - head - tail
end

---A one-line summary of an ask's input (see |M.text|): when longer than shown, its start and
---its end with a mark of how much is cut between them; `true` second when something is cut.
---@param input any
---@param cut claude_context.PermissionCut? the bridge's cut (see |M.text|)
---@return string line, boolean cut
function M.summary(input, cut)
  if type(cut) == "table" then
    local head, _, h_hidden = ends(cut.head, M.SHOWN_HEAD, 0)
    local t_head, tail, t_hidden = ends(cut.tail, 0, M.SHOWN_TAIL)
    tail = t_hidden == 0 and t_head or tail
    return ("%s …[%d bytes not sent to the editor and %d characters not shown: it cannot be allowed here]… %s"):format(
      head,
      cut.omitted_bytes or 0,
      h_hidden + t_hidden,
      tail
    ),
      true
  end
  local head, tail, hidden = ends(M.text(input), M.SHOWN_HEAD, M.SHOWN_TAIL)
  if hidden == 0 then
    return head, false
  end
  return ("%s …[%d characters not shown]… %s"):format(head, hidden, tail), true
end

---The session name of an ask: the worktree's name when the session runs in one.
local function name_of(params)
  local ok, agents = pcall(require, "claude_context.agents")
  if ok then
    local root = agents.root()
    local wname = root and require("claude_context.agents.names").of_cwd(root, params.cwd)
    if wname then
      return wname
    end
    for _, e in ipairs(require("claude_context.agents.list").list()) do
      if e.session_id == params.session_id then
        return e.name
      end
    end
  end
  return params.session_id
end

local function remove(ask)
  for i, a in ipairs(M.queue) do
    if a == ask then
      table.remove(M.queue, i)
      return true
    end
  end
  return false
end

local function fire()
  pcall(
    vim.api.nvim_exec_autocmds,
    "User",
    { pattern = "ClaudeContextPermissions", modeline = false, data = { count = #M.queue } }
  )
end

---The bridge's `permission_request` handler.
---@param params claude_context.PermissionParams
---@param respond fun(result:any, err?:string)
---@return fun()? cancel
function M.handle(params, respond)
  if params.terminal then
    -- A terminal of this editor: the person answers there.
    respond({ decision = "pass" })
    return
  end
  next_id = next_id + 1
  local ask = {
    id = tostring(next_id),
    session = params.session_id,
    name = name_of(params),
    tool = params.tool,
    input = params.input,
    cut = type(params.cut) == "table" and params.cut or nil,
    cwd = params.cwd,
    asked_ms = os.time() * 1000,
    respond = respond,
  }
  table.insert(M.queue, ask)
  fire()
  -- Told once, as any session that starts waiting (the sessions' options: notify, bell,
  -- desktop), with what it asks; not when its `claude attach` terminal is in view.
  local states = require("claude_context.sessions.state")
  if ask.session then
    states.asked[ask.session] = vim.uv.now()
  end
  local s = { id = ask.session, name = ask.name, state = "waiting", cwd = ask.cwd }
  if not states.looking_at(s) then
    s.waiting_for = ("permission to run %s (:ClaudeContext permissions): %s"):format(
      tostring(ask.tool),
      (M.summary(ask.input, ask.cut))
    )
    states.notify(s)
  end
  return function()
    -- The hook went away (Claude Code's dialog was answered, or its time ran out).
    if remove(ask) then
      fire()
    end
  end
end

---The asks waiting, oldest first: `{ { id, session, name, tool, input, cut, asked_ms } }`
---(`cut`: the input was too long to send whole, see |M.text|; such an ask cannot be allowed).
---@return claude_context.PermissionRequest[]
function M.list()
  local out = {}
  for _, a in ipairs(M.queue) do
    out[#out + 1] = {
      id = a.id,
      session = a.session,
      name = a.name,
      tool = a.tool,
      input = a.input,
      cut = a.cut,
      asked_ms = a.asked_ms,
      cwd = a.cwd,
    }
  end
  return out
end

---Answers ask `id`: "allow" or "deny" (with an optional reason Claude is told).
---@param id string|integer
---@param decision "allow"|"deny"
---@param reason string?
---@return boolean? ok, string? err
function M.decide(id, decision, reason)
  if decision ~= "allow" and decision ~= "deny" then
    return nil, ('decide: the decision is "allow" or "deny", not %s'):format(vim.inspect(decision))
  end
  id = tostring(id)
  for _, a in ipairs(M.queue) do
    if a.id == id and decision == "allow" and a.cut then
      return nil,
        ("permission request %s was too long to reach the editor whole (%d of %d bytes not sent): it cannot be allowed here; deny it, or answer in the session's own dialog (:ClaudeContext attach %s)"):format(
          id,
          a.cut.omitted_bytes or 0,
          a.cut.total_bytes or 0,
          tostring(a.name)
        )
    end
    if a.id == id then
      remove(a)
      a.respond({ decision = decision, reason = reason })
      fire()
      return true
    end
  end
  return nil, ("no permission request %s is waiting (answered already, or the session went on)"):format(id)
end

---Takes the asks of session `session` off the queue when it moves on without them (it works
---again, finished or ended: the person answered in Claude Code's dialog).
---@param data claude_context.SessionStateEvent the ClaudeContextSessionState data
function M.on_session_state(data)
  if type(data) ~= "table" or data.state == "waiting" then
    return
  end
  local changed = false
  for i = #M.queue, 1, -1 do
    local a = M.queue[i]
    if a.session == data.id then
      table.remove(M.queue, i)
      a.respond({ decision = "pass" })
      changed = true
    end
  end
  if changed then
    fire()
  end
end

---Opens ask `a`'s whole input in a scratch buffer (read-only, in a new tab).
---@param a claude_context.PermissionRequest
---@return integer buf
function M.open_in_full(a)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  local text = M.text(a.input, a.cut)
  if not a.cut and type(a.input) == "table" then
    local ok, j = pcall(vim.json.encode, a.input)
    text = text .. "\n\n" .. (ok and j or "")
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, "\n", { plain = true }))
  vim.bo[buf].modifiable = false
  vim.cmd("tabnew")
  vim.api.nvim_win_set_buf(0, buf)
  pcall(vim.api.nvim_buf_set_name, buf, ("claude-context://permission/%s"):format(a.id))
  return buf
end

---The choices for ask `a` (`seen`: its whole input was opened): "Allow" only for an ask shown
---whole, or seen in full; never for one the bridge sent cut.
---@return string[]
function M.choices(a, seen)
  local _, cut = M.summary(a.input, a.cut)
  local out = {}
  if cut and not seen then
    out[#out + 1] = "Open in full (before allowing)"
  end
  if not a.cut and (seen or not cut) then
    out[#out + 1] = "Allow"
  end
  vim.list_extend(out, { "Deny", "Deny, with a reason for Claude" })
  return out
end

local function answer(a, choice, ask_again)
  local ok, err
  if choice == "Allow" then
    ok, err = M.decide(a.id, "allow")
  elseif choice == "Deny" then
    ok, err = M.decide(a.id, "deny")
  elseif choice and choice:find("^Open in full") then
    M.open_in_full(a)
    return ask_again(true)
  elseif choice then
    vim.ui.input({ prompt = "Reason: " }, function(reason)
      local ok2, err2 = M.decide(a.id, "deny", reason)
      if not ok2 then
        notify.error("claude-context: " .. err2)
      end
    end)
    return
  else
    return
  end
  if not ok then
    notify.error("claude-context: " .. err)
  end
end

---Asks what to do with ask `a` (`seen`: its whole input was opened).
local function ask_about(a, seen)
  local line = M.summary(a.input, a.cut)
  vim.ui.select(
    M.choices(a, seen),
    { prompt = ("%s: %s"):format(a.tool, line), kind = "claude_context.permission" },
    function(choice)
      answer(a, choice, function(now_seen)
        ask_about(a, now_seen)
      end)
    end
  )
end

---`:ClaudeContext permissions`: the queue, then allow / deny / deny with a reason. An ask
---longer than what a line shows is shown by its start and its end with what is cut between them
---said, and is allowed only after "Open in full"; one the bridge sent cut is never allowed here.
function M.pick()
  local list = M.list()
  if #list == 0 then
    return notify("claude-context: no permission request is waiting")
  end
  vim.ui.select(list, {
    prompt = "Permission requests",
    kind = "claude_context.permissions",
    format_item = function(a)
      return ("%s: %s %s"):format(a.name, a.tool, (M.summary(a.input, a.cut)))
    end,
  }, function(a)
    if a then
      ask_about(a, false)
    end
  end)
end

vim.api.nvim_create_autocmd("User", {
  group = vim.api.nvim_create_augroup("ClaudeContextPermissions", { clear = true }),
  pattern = "ClaudeContextSessionState",
  callback = function(ev)
    M.on_session_state(ev.data)
  end,
  desc = "claude-context: drop permission requests a session no longer waits for",
})

return M
