-- A fake `claude` for the background sessions' specs (h.load("agents_fake").new(tmp)): each call
-- is logged (its arguments on one line); `--help` prints help.txt, `agents` prints agents.json
-- (or fails with agents.fail's text when that file exists), `stop` says so, anything else starts
-- a session `abcd1234`. Its answers are replaced whole (`answer`), so a `claude agents` run
-- meanwhile never reads half a file.
local h = require("helpers")

local M = {}

---A CLI with every background command, and one before `claude stop` (a session is ended by pid).
M.HELP =
  "Options:\n  --bg, --background  x\nCommands:\n  agents [options]  x\n  attach <id|name>  x\n  stop|kill <id>  x\n  rm <id>  x\n  logs <id|name>  x\n"
M.HELP_NO_STOP = "Options:\n  --bg, --background  x\nCommands:\n  agents [options]  x\n  attach <id|name>  x\n"

---Writes the fake into directory `tmp`; returns `{ exe, log, agents_json, agents_fail, help }`
---and its helpers `answer`, `called`, `refresh`, `help_is`.
---@param tmp string
---@return table
function M.new(tmp)
  local f = {
    exe = tmp .. "/claude",
    log = tmp .. "/fake-calls.log",
    agents_json = tmp .. "/agents.json",
    agents_fail = tmp .. "/agents.fail",
    help = tmp .. "/help.txt",
  }
  h.write(
    f.exe,
    ([[#!/bin/sh
printf '%%s\n' "$*" >> %q
case "$1" in
  --help) cat %q ;;
  agents) if [ -f %q ]; then cat %q >&2; exit 1; fi; cat %q ;;
  stop) echo "stopped $2" ;;
  *) printf 'backgrounded \302\267 abcd1234\n' ;;
esac
]]):format(f.log, f.help, f.agents_fail, f.agents_fail, f.agents_json)
  )
  vim.fn.setfperm(f.exe, "rwxr-xr-x")
  h.write(f.help, M.HELP)
  h.write(f.agents_json, "[]")

  ---Replaces the file `path` whole with `text`.
  function f.answer(path, text)
    h.write(path .. ".new", text)
    assert(os.rename(path .. ".new", path))
  end

  ---Whether some call's arguments held `what`.
  function f.called(what)
    return (h.read(f.log) or ""):find(what, 1, true) ~= nil
  end

  ---Reads `claude agents --json` anew: a refresh already under way (agents() starts one when
  ---its cache is old) may have read the fake's files before the test changed them, so it is
  ---waited for first. Returns `{ list, err }`.
  function f.refresh()
    h.wait_for(function()
      return not require("claude_context.agents.cli").cache.running
    end, 10000, "the refresh under way")
    local got
    -- The feature loaded, as agents() loads it (it tells of the sessions that ended).
    require("claude_context.agents")
    require("claude_context.agents.list").refresh(function(l, err)
      got = { list = l, err = err }
    end)
    return h.wait_for(function()
      return got
    end, 10000, "the refresh")
  end

  ---Makes the fake answer `--help` with `text` from now on (the CLI's features asked again).
  function f.help_is(text)
    h.write(f.help, text)
    require("claude_context.agents.cli").features_cache = {}
  end
  return f
end

return M
