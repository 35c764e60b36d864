---@mod claude_context.config.claudecode Arriving from claudecode.nvim: its options, translated
---
--- `setup()` takes claudecode.nvim's option table as its README writes it (`terminal_cmd`,
--- `terminal.split_side`, `diff_opts`, …), at the top level beside this plugin's own options:
--- `adopt(opts)` finds it by keys only claudecode.nvim has and rewrites each of them into this
--- plugin's option (then checked like any other). A key with no equivalent is dropped, with why.
--- `report` keeps what was done for :checkhealth; nothing is printed.
---
--- It also checks the `claudecode` section (this plugin's own options for people coming from
--- claudecode.nvim: its commands, focus after a send, the models of :ClaudeCodeSelectModel).

local M = {}

---Options under `claudecode` in setup() (see :help claude-context-from-claudecode).
---@class claude_context.ClaudecodeConfig
---@field commands boolean Define :ClaudeCode, :ClaudeCodeSend, … and fire User ClaudeCodeDiffOpened/Closed (default false)
---@field focus_after_send boolean The cursor goes to Claude's terminal after a send (default false)
---@field models {name:string, value:string}[] What :ClaudeCodeSelectModel offers (`value` goes to `claude --model`)
---@field warn boolean setup() warns once when another bridge serves this project (default true)

---What setup() takes for claude_context.ClaudecodeConfig: every field optional (the defaults fill the rest).
---@class claude_context.ClaudecodeConfig.Partial
---@field commands? boolean Define :ClaudeCode, :ClaudeCodeSend, … and fire User ClaudeCodeDiffOpened/Closed (default false)
---@field focus_after_send? boolean The cursor goes to Claude's terminal after a send (default false)
---@field models? {name:string, value:string}[] What :ClaudeCodeSelectModel offers (`value` goes to `claude --model`)
---@field warn? boolean setup() warns once when another bridge serves this project (default true)
M.defaults = {
  commands = false,
  focus_after_send = false,
  warn = true,
  models = {
    { name = "Opus", value = "opus" },
    { name = "Opus, 1M context", value = "opus[1m]" },
    { name = "Sonnet", value = "sonnet" },
    { name = "Sonnet, 1M context", value = "sonnet[1m]" },
    { name = "Haiku", value = "haiku" },
    { name = "Default (the account's)", value = "default" },
  },
}

---Checks `setup{claudecode = …}` and merges it over the defaults.
---@param user claude_context.ClaudecodeConfig.Partial?
---@return claude_context.ClaudecodeConfig
function M.resolve(user)
  vim.validate("claudecode", user, "table", true)
  user = user or {}
  for k in pairs(user) do
    if M.defaults[k] == nil then
      error(
        ("claude-context: unknown option claudecode.%s (see :help claude-context-from-claudecode)"):format(tostring(k)),
        0
      )
    end
  end
  local o = vim.tbl_extend("force", vim.deepcopy(M.defaults), user)
  for _, k in ipairs({ "commands", "focus_after_send", "warn" }) do
    vim.validate("claudecode." .. k, o[k], "boolean")
  end
  vim.validate("claudecode.models", o.models, function(v)
    if type(v) ~= "table" or #v == 0 then
      return false
    end
    for _, m in ipairs(v) do
      if
        type(m) ~= "table"
        or type(m.name) ~= "string"
        or m.name == ""
        or type(m.value) ~= "string"
        or m.value == ""
      then
        return false
      end
    end
    return true
  end, "a non-empty list of {name = string, value = string}")
  return o
end

-- Translation ---------------------------------------------------------------------------------

---claudecode.nvim's own top-level options, as its README writes them: setup() translates them
---(see :help claude-context-from-claudecode).
---@class claude_context.ClaudecodeOptions
---@field terminal_cmd? string
---@field env? table<string, string>
---@field track_selection? boolean
---@field focus_after_send? boolean
---@field visual_demotion_delay_ms? integer
---@field connection_wait_delay? integer
---@field connection_timeout? integer
---@field queue_timeout? integer
---@field diff_opts? table<string, any>
---@field models? {name:string, value:string}[]
---@field cwd? string
---@field git_repo_cwd? boolean
---@field cwd_provider? fun(ctx: table<string, any>): string?

local keys = require("claude_context.config.claudecode_keys")
local TOP, TERMINAL, SAME_TOP, SAME_TERMINAL = keys.TOP, keys.TERMINAL, keys.SAME_TOP, keys.SAME_TERMINAL
local WHY, THEIR_DEFAULTS = keys.WHY, keys.THEIR_DEFAULTS

---Whether `opts` holds claudecode.nvim's options (a key only it has).
---@param opts claude_context.UserConfig
---@return boolean
function M.detect(opts)
  for _, k in ipairs(TOP) do
    if opts[k] ~= nil then
      return true
    end
  end
  local t = opts.terminal
  if type(t) == "table" then
    for _, k in ipairs(TERMINAL) do
      if t[k] ~= nil then
        return true
      end
    end
    if type(t.provider) == "table" and t.provider.simple_toggle ~= nil then
      return true
    end
  end
  return false
end

---The report entries of the last adopt() (nil when setup() had none of claudecode.nvim's keys):
---`{ from = "terminal.split_side", to = "terminal.side", value = "left" }`, or `{ from, why }`
---for a key with no equivalent; `default = true` for claudecode.nvim's defaults applied.
---@type {from:string, to:string?, value:any, why:string?, default:boolean?}[]?
M.report = nil

-- A translation under way (`tr` below): `out` the options being built, `own` the keys the person
-- set in this plugin's own names (they win over a translated one), `report` the report.

---Sets option `path` ("terminal.side") to `value` unless the person set it in our own names.
---@param tr {out: claude_context.UserConfig, own: table<string, boolean>, report: {from:string, to:string?, value:any, why:string?, default:boolean?}[]} the translation under way
---@param from string claudecode.nvim's key
---@param path string
---@param value any
---@param default boolean? claudecode.nvim's default, not a key the person wrote
local function put(tr, from, path, value, default)
  local keys = vim.split(path, ".", { plain = true })
  if tr.own[path] then
    table.insert(tr.report, { from = from, to = path, value = value, kept = true, default = default })
    return
  end
  local t = tr.out
  for i = 1, #keys - 1 do
    t[keys[i]] = type(t[keys[i]]) == "table" and t[keys[i]] or {}
    t = t[keys[i]]
  end
  t[keys[#keys]] = value
  table.insert(tr.report, { from = from, to = path, value = value, default = default })
end

---Notes key `from` as having no equivalent.
local function drop(tr, from, why)
  table.insert(tr.report, { from = from, why = why })
end

---Notes each of `keys` that `t` has (named `prefix .. key`) as having no equivalent: why is
---`why`, else WHY[key].
local function drop_keys(tr, t, prefix, keys, why)
  for _, k in ipairs(keys) do
    if t[k] ~= nil then
      drop(tr, prefix .. k, why or WHY[k])
    end
  end
end

---`terminal_cmd` ("~/.claude/local/claude", "claude --verbose"): the CLI and its arguments.
local function terminal_cmd(tr, from, v)
  if type(v) ~= "string" or vim.trim(v) == "" then
    return drop(tr, from, "not a command")
  end
  local words = vim.split(vim.trim(v), "%s+")
  put(tr, from, "claude.cmd", vim.fn.expand(words[1]))
  if #words > 1 then
    put(tr, from, "terminal.args", vim.list_slice(words, 2))
  end
end

---`provider_opts.external_terminal_cmd` ("alacritty -e %s", "kitty --directory %s -e %s"):
---the launcher's words, its command's %s as "{cmd}" (a first one of two is the directory:
---the launcher runs in Neovim's, so ".").
local function external_cmd(tr, from, v)
  if type(v) == "function" then
    return drop(tr, from, WHY.external_fn)
  end
  if type(v) ~= "string" or v:find("['\"\\]") then
    return drop(tr, from, WHY.external_str)
  end
  local words = vim.split(vim.trim(v), "%s+")
  local holes = {}
  for i, w in ipairs(words) do
    if w == "%s" then
      table.insert(holes, i)
    elseif w:find("%", 1, true) then
      return drop(tr, from, WHY.external_str)
    end
  end
  if #holes == 0 or #holes > 2 then
    return drop(tr, from, WHY.external_str)
  end
  if #holes == 2 then
    words[holes[1]] = "."
  end
  words[holes[#holes]] = "{cmd}"
  put(tr, from, "terminal.external_cmd", words)
end

---`terminal.snacks_win_opts`: its position and size.
local function snacks_win(tr, v)
  local from = "terminal.snacks_win_opts"
  if type(v) ~= "table" then
    return drop(tr, from, "not a table")
  end
  local pos = v.position
  local sides = { float = true, left = true, right = true, top = true, bottom = true }
  if pos ~= nil and sides[pos] then
    put(tr, from .. ".position", "terminal.side", pos)
  end
  if pos == "float" then
    for _, k in ipairs({ "width", "height" }) do
      if type(v[k]) == "number" and v[k] > 0 then
        put(tr, from .. "." .. k, "terminal.float." .. k, v[k])
      end
    end
    if type(v.border) == "string" or type(v.border) == "table" then
      put(tr, from .. ".border", "terminal.float.border", v.border)
    end
  else
    local k = (pos == "top" or pos == "bottom") and "height" or "width"
    if type(v[k]) == "number" and v[k] > 0 then
      put(tr, from .. "." .. k, "terminal.size", v[k])
    end
  end
  for k in pairs(v) do
    if not ({ position = true, width = true, height = true, border = true })[k] then
      drop(tr, from .. "." .. tostring(k), WHY.snacks_other)
    end
  end
end

---claudecode.nvim's `terminal` table, key by key (its keys only; ours stay as they are).
local function terminal(tr, t)
  local function key(k)
    return "terminal." .. k
  end
  local function check(name, good, want)
    if t[name] ~= nil and not good then
      error(("claude-context: option terminal.%s (claudecode.nvim's) must be %s"):format(name, want), 0)
    end
  end
  check("split_side", t.split_side == "left" or t.split_side == "right", '"left" or "right"')
  local w = t.split_width_percentage
  check("split_width_percentage", type(w) == "number" and w > 0 and w < 1, "a number between 0 and 1")
  if t.split_side ~= nil then
    put(tr, key("split_side"), "terminal.side", t.split_side)
  end
  if w ~= nil then
    put(tr, key("split_width_percentage"), "terminal.size", w)
  end
  if type(t.provider) == "table" and t.provider.simple_toggle ~= nil then
    drop(tr, key("provider"), WHY.provider_table)
    tr.out.terminal.provider = nil
  end
  if type(t.provider_opts) == "table" and t.provider_opts.external_terminal_cmd ~= nil then
    external_cmd(tr, key("provider_opts.external_terminal_cmd"), t.provider_opts.external_terminal_cmd)
  end
  if t.terminal_cmd ~= nil then
    terminal_cmd(tr, key("terminal_cmd"), t.terminal_cmd)
  end
  if t.snacks_win_opts ~= nil then
    snacks_win(tr, t.snacks_win_opts)
  end
  drop_keys(tr, t, "terminal.", { "cwd", "git_repo_cwd", "cwd_provider" }, WHY.cwd)
  drop_keys(
    tr,
    t,
    "terminal.",
    { "diff_split_width_percentage", "auto_close", "show_native_term_exit_tip", "fix_streamed_paste" }
  )
  for _, k in ipairs(SAME_TERMINAL) do
    local theirs = k == "provider" and type(t.provider) == "table" and t.provider.simple_toggle ~= nil
    if t[k] ~= nil and not theirs then
      table.insert(tr.report, { from = key(k), to = key(k), value = t[k] })
    end
  end
end

---claudecode.nvim's `diff_opts`.
local function diff_opts(tr, d)
  local function key(k)
    return "diff_opts." .. k
  end
  if type(d) ~= "table" then
    return drop(tr, "diff_opts", "not a table")
  end
  local layouts = { vertical = "vertical", horizontal = "horizontal", unified = "inline" }
  if d.layout ~= nil then
    put(tr, key("layout"), "diff.layout", layouts[d.layout] or d.layout)
  end
  if type(d.vertical_split) == "boolean" then
    put(tr, key("vertical_split"), "diff.layout", d.vertical_split and "vertical" or "horizontal")
  end
  if d.open_in_new_tab ~= nil then
    put(tr, key("open_in_new_tab"), "diff.tab", d.open_in_new_tab == true and "new" or "current")
  end
  if type(d.open_in_current_tab) == "boolean" then
    put(tr, key("open_in_current_tab"), "diff.tab", d.open_in_current_tab and "current" or "new")
  end
  if d.keep_terminal_focus ~= nil then
    put(tr, key("keep_terminal_focus"), "diff.focus", d.keep_terminal_focus == true and "never" or "normal")
  end
  drop_keys(tr, d, "diff_opts.", { "hide_terminal_in_new_tab", "on_new_file_reject", "auto_resize_terminal" })
  drop_keys(tr, d, "diff_opts.", { "auto_close_on_accept", "show_diff_stats" }, WHY.legacy)
  local known = {
    layout = 1,
    vertical_split = 1,
    open_in_new_tab = 1,
    open_in_current_tab = 1,
    keep_terminal_focus = 1,
    hide_terminal_in_new_tab = 1,
  }
  known.on_new_file_reject, known.auto_resize_terminal, known.auto_close_on_accept, known.show_diff_stats = 1, 1, 1, 1
  for k in pairs(d) do
    if not known[k] then
      error(
        ("claude-context: unknown option diff_opts.%s (claudecode.nvim's diff_opts; see :help claude-context-from-claudecode)"):format(
          tostring(k)
        ),
        0
      )
    end
  end
end

---The top-level keys, one by one.
local function top(tr, opts)
  if opts.terminal_cmd ~= nil then
    terminal_cmd(tr, "terminal_cmd", opts.terminal_cmd)
  end
  local simple = {
    env = "terminal.env",
    track_selection = "ide.track_selection",
    focus_after_send = "claudecode.focus_after_send",
    queue_timeout = "ide.mention_queue_ms",
    models = "claudecode.models",
  }
  for from, to in pairs(simple) do
    if opts[from] ~= nil then
      put(tr, from, to, opts[from])
    end
  end
  drop_keys(tr, opts, "", { "cwd", "git_repo_cwd", "cwd_provider" }, WHY.cwd)
  drop_keys(tr, opts, "", { "visual_demotion_delay_ms", "connection_wait_delay", "connection_timeout" })
  if opts.diff_opts ~= nil then
    diff_opts(tr, opts.diff_opts)
  end
  for _, k in ipairs(SAME_TOP) do
    if opts[k] ~= nil then
      table.insert(tr.report, { from = k, to = k, value = opts[k] })
    end
  end
end

---The options of this plugin a person wrote in its own names (dotted paths of the sections
---claudecode.nvim's keys map into), so a translated key never overrides them.
local function own_paths(opts)
  local own = {}
  for _, section in ipairs({ "terminal", "diff", "claude", "ide", "claudecode" }) do
    if type(opts[section]) == "table" then
      for k, v in pairs(opts[section]) do
        own[section .. "." .. k] = true
        if type(v) == "table" and not vim.islist(v) then
          for k2 in pairs(v) do
            own[section .. "." .. k .. "." .. k2] = true
          end
        end
      end
    end
  end
  for _, k in ipairs(TERMINAL) do
    own["terminal." .. k] = nil
  end
  return own
end

---`opts` with claudecode.nvim's keys rewritten into this plugin's options (the same table when it
---has none); sets `M.report`. Raises on a key claudecode.nvim's diff_opts does not know.
---@param opts claude_context.UserConfig
---@return claude_context.UserConfig
function M.adopt(opts)
  if not M.detect(opts) then
    M.report = nil
    return opts
  end
  local out = vim.deepcopy(opts)
  for _, k in ipairs(TOP) do
    out[k] = nil
  end
  if type(out.terminal) == "table" then
    for _, k in ipairs(TERMINAL) do
      out.terminal[k] = nil
    end
  end
  local tr = { out = out, own = own_paths(opts), report = {} }
  out.terminal = out.terminal or {}
  top(tr, opts)
  if type(opts.terminal) == "table" then
    terminal(tr, opts.terminal)
  end
  local set = {}
  for _, e in ipairs(tr.report) do
    set[e.to or ""] = true
  end
  for _, d in ipairs(THEIR_DEFAULTS) do
    local path = vim.split(d[2], ".", { plain = true })
    if not set[d[2]] and not tr.own[d[2]] and (out[path[1]] or {})[path[2]] == nil then
      put(tr, d[1], d[2], d[3], true)
    end
  end
  if next(out.terminal) == nil then
    out.terminal = nil
  end
  M.report = tr.report
  return out
end

---The report as lines for :checkhealth: `{ ok = {…}, dropped = {…} }`.
---@return {ok:string[], dropped:string[]}?
function M.report_lines()
  if not M.report then
    return nil
  end
  local ok, dropped = {}, {}
  for _, e in ipairs(M.report) do
    if e.why then
      table.insert(dropped, ("%s: not carried over: %s"):format(e.from, e.why))
    else
      local v = type(e.value) == "table" and vim.inspect(e.value, { newline = " ", indent = "" }) or tostring(e.value)
      local line = e.from == e.to and ("%s (the same here) = %s"):format(e.from, v)
        or ("%s → %s = %s"):format(e.from, e.to, v)
      if e.default then
        line = line .. " (claudecode.nvim's default)"
      end
      if e.kept then
        line = ("%s → %s: your own %s is kept"):format(e.from, e.to, e.to)
      end
      table.insert(ok, line)
    end
  end
  return { ok = ok, dropped = dropped }
end

return M
