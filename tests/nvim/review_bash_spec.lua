-- Bash edits named by their command: the review shows the command Claude Code reported beside
-- the hunks it changed (escaped, shortened to its start and end), in the view and the quickfix
-- list; a file without a report (an older CLI) shows none. And the sessions the plugin starts
-- get the setting that turns the report on, and a hook after Bash that Claude waits for, in
-- their --settings only (sessions.bash_edits = false: as before).
local h = require("helpers")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
h.record_notify()

require("claude_context").setup({ auto_start = false })

local R = require("claude_context.review")

local SED = "sed -i 's/beta/BETA/' sedded.txt"
-- The model's text: a terminal escape (a clipboard write, a screen clear), a newline, a C1 byte.
local HOSTILE = "printf x > a.txt \27]52;c;aGk=\7\27[2J\nrm -rf ~ \194\155"
local LONG = "python3 -c 'import sys; " .. ("x = 1; "):rep(40) .. "' && echo THE-END"

local function one_hunk(start)
  return { { old_start = start, old_lines = 1, new_start = start, new_lines = 1 } }
end

local function changeset()
  local root = h.tmpdir()
  local files = {
    -- Two hunks: line 2 by sed, line 9 by an edit tool.
    {
      path = "sedded.txt",
      before = "alpha\nbeta\n3\n4\n5\n6\n7\n8\nnine\n",
      after = "alpha\nBETA\n3\n4\n5\n6\n7\n8\nNINE\n",
      commands = { { command = SED, hunks = one_hunk(2) } },
    },
    { path = "a.txt", before = "a\n", after = "x\n", commands = { { command = HOSTILE, hunks = {} } } },
    {
      path = "gen.txt",
      before = "g\n",
      after = "G\n",
      commands = { { command = LONG, hunks = one_hunk(1) }, { command = "make gen", hunks = one_hunk(1) } },
    },
    { path = "plain.txt", before = "p\n", after = "P\n" },
  }
  local cs = {
    root = root,
    turns = { { id = "t1", session = "s1", prompt = "p", started_ms = 1, ended_ms = 2, files = {} } },
    files = {},
  }
  for _, f in ipairs(files) do
    f.absolute = root .. "/" .. f.path
    f.status = "modified"
    h.write(f.absolute, f.after)
    table.insert(cs.files, f)
  end
  table.sort(cs.files, function(a, b)
    return a.path < b.path
  end)
  return cs
end

local function at_line(lines, prefix, from)
  for i = from or 1, #lines do
    if vim.startswith(lines[i], prefix) then
      return lines[i], i
    end
  end
end

---The `@@` lines of file `path`'s section.
local function hunk_lines(lines, path)
  local _, i = at_line(lines, "━━ " .. path)
  local out = {}
  for k = i + 1, #lines do
    if vim.startswith(lines[k], "━━ ") then
      break
    end
    if vim.startswith(lines[k], "@@ ") then
      out[#out + 1] = lines[k]
    end
  end
  return out
end

return {
  {
    "the review shows each Bash hunk's command, escaped and shortened, and none where no command was reported",
    function()
      local v = R.open(changeset())
      wait_for(function()
        return v.ready
      end, 5000, "the view")
      local lines = vim.api.nvim_buf_get_lines(v.buf, 0, -1, false)
      local text = table.concat(lines, "\n")
      -- sed's hunk (line 2) carries it; the edit tool's (line 9) does not.
      eq({ "@@ -2,1 +2,1 @@ pending  ← Bash: " .. SED, "@@ -9,1 +9,1 @@ pending" }, hunk_lines(lines, "sedded.txt"))
      -- A command known only to have changed the file: beside its hunk, escaped.
      local a = hunk_lines(lines, "a.txt")[1]
      ok(vim.startswith(a, "@@ -1,1 +1,1 @@ pending  ← Bash: printf x > a.txt "), a)
      contains(a, "\\x1b]52;c;aGk=\\x07\\x1b[2J\\nrm -rf ~ \\u{9b}")
      ok(
        not text:find("\27", 1, true) and not text:find("\7", 1, true) and not text:find("\194\155", 1, true),
        "no control character reaches the view"
      )
      -- A long command: its start and its end, the first of two and how many more.
      local g = hunk_lines(lines, "gen.txt")[1]
      ok(vim.startswith(g, "@@ -1,1 +1,1 @@ pending  ← Bash: python3 -c 'import sys; x = 1;"), g)
      contains(g, "…")
      contains(g, "&& echo THE-END (+1 more)")
      local shown = g:match("← Bash: (.*) %(%+1 more%)$")
      eq(require("claude_context.review.text").COMMAND_CHARS, vim.fn.strchars(shown))
      -- No report: nothing.
      eq({ "@@ -1,1 +1,1 @@ pending" }, hunk_lines(lines, "plain.txt"))
      -- The quickfix entries carry it too.
      local items = require("claude_context.review.quickfix").items(v.review)
      local sed_items = vim.tbl_filter(function(it)
        return vim.endswith(it.filename, "/sedded.txt")
      end, items)
      eq(2, #sed_items)
      eq("+1 −1 BETA  ← Bash: " .. SED, sed_items[1].text)
      eq("+1 −1 NINE", sed_items[2].text)
      require("claude_context.review.view").close()
    end,
  },
  {
    "the sessions the plugin starts: the report turned on in their --settings, a hook after Bash Claude waits for",
    function()
      local hk = require("claude_context.sessions.hooks")
      local function settings(argv)
        local arg = hk.settings_arg(argv)
        return arg and vim.json.decode(arg:match("^%-%-settings=(.+)$"))
      end
      local mcp_arg = "--mcp-config=" .. require("claude_context.native").mcp_config_dir() .. "/x.json"
      for _, argv in ipairs({ { "claude" }, { "claude", mcp_arg } }) do
        local s = assert(settings(argv))
        eq(true, s.bashEditDiffEnabled)
        local bash = s.hooks.PostToolUse[#s.hooks.PostToolUse]
        eq("Bash", bash.matcher)
        eq({ "hook", "PostToolUse" }, bash.hooks[1].args)
        eq(nil, bash.hooks[1].async, "waited for: it comes before the turn's Stop")
      end
      -- Without the bridge's server: the report after every other tool leaves Bash out (once).
      local plain = settings({ "claude" }).hooks.PostToolUse
      eq(2, #plain)
      eq({ hk.NOT_BASH, true }, { plain[1].matcher, plain[1].hooks[1].async })
      -- Background sessions get it too.
      local bg = vim.json.decode(require("claude_context.agents.launch").settings(hk.binary() or "/bin/relay"))
      eq(true, bg.bashEditDiffEnabled)
      eq("Bash", bg.hooks.PostToolUse[2].matcher)
      -- Off: neither the setting nor the hook; the report after every tool as before.
      require("claude_context").setup({ auto_start = false, sessions = { bash_edits = false } })
      local off = settings({ "claude" })
      eq(nil, off.bashEditDiffEnabled)
      eq(1, #off.hooks.PostToolUse)
      eq(nil, off.hooks.PostToolUse[1].matcher)
      eq(nil, settings({ "claude", mcp_arg }).hooks.PostToolUse)
      eq(nil, vim.json.decode(require("claude_context.agents.launch").settings("/bin/relay")).bashEditDiffEnabled)
      require("claude_context").setup({ auto_start = false })
    end,
  },
}
