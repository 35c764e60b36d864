-- The one process runner (claude_context.util.proc): argv without a shell, the callback on the
-- main thread, cwd, a whole environment, a timeout, text or bytes, and a program that cannot
-- start as a result (code -1), never an error; a long-lived program with stdin open, its output
-- as it comes and its own process group (edit in place's warm CLI).
local h = require("helpers")
local eq, ok, contains = h.eq, h.ok, h.contains

local proc = require("claude_context.util.proc")

---`proc.run`'s result, waited for (the spec may wait; the plugin never does).
local function run(argv, opts)
  local got
  proc.run(argv, opts, function(r)
    got = { r = r, fast = vim.in_fast_event() }
  end)
  h.wait_for(function()
    return got ~= nil
  end, 10000, table.concat(argv, " "))
  return got.r, got.fast
end

return {
  {
    "the callback runs on the main thread with code, stdout and stderr; cwd and env are the given ones",
    function()
      local dir = vim.uv.fs_realpath(h.tmpdir())
      local r, fast = run(
        { "sh", "-c", 'pwd; printf "%s" "$ONLY"; echo err >&2; exit 3' },
        { cwd = dir, env = { ONLY = "x y" } }
      )
      eq(false, fast)
      eq(3, r.code)
      eq(dir .. "\nx y", r.stdout)
      eq("err\n", r.stderr)
      -- The whole environment: nothing of Neovim's (HOME) reaches it.
      r = run({ "sh", "-c", 'printf "%s" "${HOME-unset}"' }, { env = { A = "1" } })
      eq("unset", r.stdout)
    end,
  },
  {
    "text by default (CRLF made LF), bytes with text = false; stdin closed unless given",
    function()
      eq("a\nb\n", run({ "printf", "a\r\nb\r\n" }).stdout)
      eq("a\r\nb\r\n", run({ "printf", "a\r\nb\r\n" }, { text = false }).stdout)
      eq("", run({ "cat" }).stdout)
      eq("fed", run({ "cat" }, { stdin = "fed" }).stdout)
    end,
  },
  {
    "a timeout kills it (code 124); a program that cannot start is code -1 with the reason",
    function()
      eq(124, run({ "sleep", "30" }, { timeout = 200 }).code)
      local r = run({ "/nonexistent/program" })
      eq(-1, r.code)
      ok(r.stderr ~= "", "the reason")
      local p, err = proc.run({ "/nonexistent/program" })
      eq(nil, p)
      contains(err, "nonexistent")
      local q = assert(proc.run({ "sh", "-c", "exit 5" }))
      eq(5, q:wait(10000).code)
    end,
  },
  {
    "stdin kept open and written to, stdout and stderr as they come, its own process group ended whole",
    function()
      local out, err, done = {}, {}, nil
      -- It echoes what it reads, and starts a child in its process group that outlives a kill of
      -- the parent alone.
      local p = assert(proc.run({ "sh", "-c", "sleep 60 & echo $! >&2; while read l; do echo got $l; done" }, {
        text = false,
        stdin = true,
        detach = true,
        stdout = function(_, data)
          out[#out + 1] = data
        end,
        stderr = function(_, data)
          err[#err + 1] = data
        end,
      }, function(r)
        done = r
      end))
      p:write("one\n")
      h.wait_for(function()
        return table.concat(out):find("got one\n", 1, true) ~= nil
      end, 10000, "the first answer")
      p:write("two\n")
      h.wait_for(function()
        return table.concat(out):find("got two\n", 1, true) ~= nil
      end, 10000, "the second answer, stdin still open")
      local child = tonumber(vim.trim(table.concat(err)))
      ok(child and vim.uv.kill(child, 0) == 0, "the child runs")
      proc.kill_group(p, "sigterm")
      h.wait_for(function()
        return done ~= nil and vim.uv.kill(child, 0) ~= 0
      end, 10000, "the program and its child to end")
      eq("", done.stdout)
    end,
  },
}
