-- :ClaudeContext ask / history / session / reset / cancel against a fake `claude` (a shell
-- script answering in the CLI's JSON shape): background runs, progress autocmds, the answer
-- buffer, range context, options validation.
local h = require("helpers")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for

local dir = h.tmpdir()

---A fake CLI: keeps its stdin and args, optionally sleeps, answers "answer <n>" with session
---`sess-<n>` (or the resumed one).
local function fake(sleep)
  local path = dir .. "/claude"
  local f = assert(io.open(path, "w"))
  f:write(([[#!/bin/sh
d='%s'
input=$(cat)
n=$(( $(cat "$d/count" 2>/dev/null || echo 0) + 1 ))
# Atomically (a reader never sees it half written): written beside, renamed over.
echo $n > "$d/count.$$" && mv -f "$d/count.$$" "$d/count"
printf '%%s' "$input" > "$d/stdin.$n"
printf '%%s\n' "$*" >> "$d/args.log"
%s
resume=""
prev=""
for a in "$@"; do
  if [ "$prev" = "--resume" ]; then resume="$a"; fi
  prev="$a"
done
printf '{"result":"answer %%s\\n\\n- item","session_id":"%%s","is_error":false,"total_cost_usd":0.5,"duration_ms":9,"usage":{"input_tokens":4,"output_tokens":2}}\n' "$n" "${resume:-sess-$n}"
]]):format(dir, sleep and ("sleep " .. sleep) or ""))
  f:close()
  vim.uv.fs_chmod(path, tonumber("755", 8))
  return path
end

local function read(p)
  return h.read(p) or ""
end

local events = {}
vim.api.nvim_create_autocmd("User", {
  pattern = "ClaudeContextRun",
  callback = function(a)
    table.insert(events, a.data)
  end,
})

local function answer_bufs()
  return vim.tbl_filter(function(b)
    return vim.api.nvim_buf_get_name(b):match("^claude%-context://answer/") ~= nil
  end, vim.api.nvim_list_bufs())
end

local function session()
  return require("claude_context.ask")
end

---Restarts the bridge with a CLI that takes 30 s and starts `:ClaudeContext ask {prompt}`,
---capturing vim.notify; returns the notes and a function that restores vim.notify and gives
---the notes' text.
local function slow_run(progress, prompt)
  require("claude_context").stop({ silent = true })
  require("claude_context").setup({ claude = { cmd = fake("30"), progress = progress } })
  events = {}
  local notes, orig = {}, vim.notify
  vim.notify = function(msg, level)
    table.insert(notes, { msg, level })
  end
  vim.cmd("ClaudeContext ask " .. prompt)
  return function()
    vim.notify = orig
    return table.concat(
      vim.tbl_map(function(n)
        return n[1]
      end, notes),
      "\n"
    )
  end
end

return {
  {
    "setup rejects bad claude options with a clear message",
    function()
      local cc = require("claude_context")
      local e1 = select(2, pcall(cc.setup, { auto_start = false, claude = { comd = "x" } }))
      contains(tostring(e1), "claude.comd")
      local e2 = select(2, pcall(cc.setup, { auto_start = false, claude = { args = "x" } }))
      contains(tostring(e2), "claude.args must be a table")
      local e3 = select(2, pcall(cc.setup, { auto_start = false, claude = { progress = "loud" } }))
      contains(tostring(e3), "claude.progress")
      -- The native table carries only the native keys.
      require("claude_context.config").resolve({ claude = { cmd = "~/bin/claude", timeout = 5, env = {} } })
      local t = vim.json.decode(require("claude_context.config").to_native(require("claude_context.config").options))
      eq({ cmd = vim.fn.expand("~/bin/claude") }, t.claude)
      -- The sub-agent's tools and permission mode go to the native side.
      require("claude_context.config").resolve({
        claude = { allowed_tools = { "Read", "Bash(git status)" }, permission_mode = "default" },
      })
      t = vim.json.decode(require("claude_context.config").to_native(require("claude_context.config").options))
      eq({ allowed_tools = { "Read", "Bash(git status)" }, permission_mode = "default" }, t.claude)
      local e4 = select(2, pcall(cc.setup, { auto_start = false, claude = { allowed_tools = { 1 } } }))
      contains(tostring(e4), "claude.allowed_tools must be a list")
      require("claude_context.config").resolve({})
    end,
  },
  {
    ":checkhealth warns when the person lets the sub-agent skip permissions",
    function()
      local health = require("claude_context.health")
      local function section(opts)
        require("claude_context.config").resolve(opts)
        local lines = {}
        local orig = vim.health
        vim.health = {
          start = function(m)
            table.insert(lines, "START " .. m)
          end,
          ok = function(m)
            table.insert(lines, "OK " .. m)
          end,
          warn = function(m)
            table.insert(lines, "WARN " .. m)
          end,
        }
        health.check_sub_agent()
        vim.health = orig
        return table.concat(lines, "\n")
      end
      local d = section({})
      contains(d, "OK tools: Read, Grep, Glob; permission mode: dontAsk; settings loaded: user")
      ok(not d:find("WARN", 1, true), d)
      contains(
        section({ claude = { args = { "--dangerously-skip-permissions", "--output-format", "json" } } }),
        "WARN the sub-agent skips every permission check"
      )
      contains(section({ claude = { permission_mode = "bypassPermissions" } }), "WARN the sub-agent skips")
      contains(
        section({ claude = { args = { "--permission-mode", "bypassPermissions" } } }),
        "WARN the sub-agent skips"
      )
      require("claude_context.config").resolve({})
    end,
  },
  {
    "ask runs in the background, fires ClaudeContextRun and opens a Markdown answer",
    function()
      require("claude_context").setup({ claude = { cmd = fake("0.3"), progress = "echo" } })
      events = {}
      -- The spinner in the command line (progress = "echo"): frames change while the run lasts.
      local echoed, orig_echo = {}, vim.api.nvim_echo
      vim.api.nvim_echo = function(chunks, history, o)
        table.insert(echoed, chunks[1] and chunks[1][1] or "")
        return orig_echo(chunks, history, o)
      end
      vim.cmd("ClaudeContext ask what is   this?")
      -- The command returned at once; the run is in progress.
      eq(1, #events, "ask returned before the run ended")
      eq("running", events[1].status)
      eq(1, events[1].active)
      ok(session().statusline():find("Claude", 1, true), "statusline shows the run")
      wait_for(function()
        return #events == 2
      end, 20000, "the run to end")
      vim.api.nvim_echo = orig_echo
      local spins = vim.tbl_filter(function(t)
        return t:find("Claude %d+s  %(:ClaudeContext cancel%)") ~= nil
      end, echoed)
      ok(#spins >= 2, "the spinner was echoed: " .. vim.inspect(echoed))
      ok(spins[1]:sub(1, 3) ~= spins[2]:sub(1, 3), "the frames change: " .. vim.inspect(spins))
      eq("done", events[2].status)
      eq(0, events[2].active)
      eq("", session().statusline())
      local bufs = answer_bufs()
      eq(1, #bufs)
      local b = bufs[1]
      eq("markdown", vim.bo[b].filetype)
      eq(false, vim.bo[b].modifiable)
      local text = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n")
      contains(text, "> what is this?")
      contains(text, "answer 1\n\n- item")
      eq("what is this?", read(dir .. "/stdin.1"))
      eq(b, vim.api.nvim_get_current_buf())
    end,
  },
  {
    "a range sends the lines along, and the next ask resumes the session",
    function()
      vim.cmd("enew")
      vim.api.nvim_buf_set_lines(0, 0, -1, false, { "local a = 1", "local b = 2", "return a + b" })
      vim.bo.filetype = "lua"
      events = {}
      vim.cmd("2,3ClaudeContext ask explain")
      wait_for(function()
        return #events == 2
      end, 20000, "the run to end")
      local stdin = read(dir .. "/stdin.2")
      contains(stdin, "explain")
      contains(stdin, "Selected lines 2-3")
      contains(stdin, "```lua\nlocal b = 2\nreturn a + b\n```")
      ok(not stdin:find("local a = 1", 1, true), "only the range")
      local args = vim.split(vim.trim(read(dir .. "/args.log")), "\n")
      ok(args[2]:find("--resume sess-1", 1, true), args[2])
    end,
  },
  {
    ":ClaudeContext session, history and reset",
    function()
      local lines
      session().session_lines(function(l)
        lines = l
      end)
      wait_for(function()
        return lines
      end, 5000, "session lines")
      contains(lines[1], "sess-1")
      contains(lines[2], "runs: 2 (2 ok, 0 failed)")
      contains(lines[3], "$1.0000")
      -- history: the picker lists newest first; choosing opens the entry.
      local orig = vim.ui.select
      local seen
      vim.ui.select = function(items, o, cb)
        seen = vim.tbl_map(o.format_item, items)
        cb(items[#items])
      end
      local before = #answer_bufs()
      vim.cmd("ClaudeContext history")
      wait_for(function()
        return seen
      end, 5000, "the history picker")
      vim.ui.select = orig
      eq(2, #seen)
      contains(seen[1], "explain")
      contains(seen[2], "what is this?")
      eq(before + 1, #answer_bufs())
      contains(table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n"), "answer 1")
      -- reset: the next run starts fresh.
      vim.cmd("ClaudeContext reset")
      wait_for(function()
        return not h.call("get_current_session").structuredContent.has_session
      end, 5000, "the reset")
    end,
  },
  {
    "cancel stops a slow run and reports it",
    function()
      local finish = slow_run("none", "slow one")
      wait_for(function()
        local n = tonumber(vim.trim(read(dir .. "/count")))
        return n ~= nil and n >= 3
      end, 10000, "the slow CLI to start")
      vim.cmd("ClaudeContext cancel")
      wait_for(function()
        return #events == 2
      end, 10000, "the cancelled run to end")
      local all = finish()
      eq("cancelled", events[2].status)
      contains(events[2].error, "cancelled")
      contains(all, "Cancelled 1 Claude run")
    end,
  },
  {
    "stopping the bridge during a run ends it: the spinner stops and the end event fires",
    function()
      local finish = slow_run("echo", "stopped midway")
      wait_for(function()
        return session().statusline() ~= ""
      end, 10000, "the run to show")
      require("claude_context").stop({ silent = true })
      wait_for(function()
        return #events == 2
      end, 10000, "the run to end")
      local all = finish()
      eq("failed", events[2].status)
      contains(events[2].error, "the bridge stopped")
      contains(all, "Claude: the bridge stopped before the tool answered")
      eq("", session().statusline())
      eq({}, session().runs)
      require("claude_context").setup({ claude = { cmd = fake() } })
    end,
  },
  {
    "an empty prompt is refused without a run",
    function()
      events = {}
      local notes = {}
      local orig = vim.notify
      vim.notify = function(msg)
        table.insert(notes, msg)
      end
      vim.cmd("ClaudeContext ask   ")
      vim.notify = orig
      eq({}, events)
      contains(notes[1], "usage: :[range]ClaudeContext ask")
    end,
  },
}
