-- :ClaudeContext <Tab> completes subcommands and their arguments (branches, worktrees, turn
-- numbers) from files read without running git; a subcommand gets completion from one field;
-- :ClaudeContext without arguments lists every subcommand under its group, one line each.
local h = require("helpers")
local eq, ok, contains = h.eq, h.ok, h.contains

local function git(dir, ...)
  local res = vim.system({ "git", "-c", "user.name=t", "-c", "user.email=t@t", ... }, { cwd = dir, text = true }):wait()
  assert(res.code == 0, table.concat({ ... }, " ") .. ": " .. (res.stderr or ""))
end

---A repository with branches main, feature/deep, packed (only in packed-refs) and a linked
---worktree `wt-one`, plus `.claude/worktrees/{agent-a, "bad name"}`.
local function repo()
  local dir = vim.fn.resolve(vim.fn.tempname())
  vim.fn.mkdir(dir, "p")
  git(dir, "init", "-q", "-b", "main")
  vim.fn.writefile({ "x" }, dir .. "/a.txt")
  git(dir, "add", "a.txt")
  git(dir, "commit", "-q", "-m", "one")
  git(dir, "branch", "packed")
  git(dir, "pack-refs", "--all")
  git(dir, "branch", "feature/deep")
  git(dir, "worktree", "add", "-q", "-b", "wt-branch", dir .. "-wt-one")
  vim.fn.mkdir(dir .. "/.claude/worktrees/agent-a", "p")
  vim.fn.mkdir(dir .. "/.claude/worktrees/bad name", "p")
  return dir
end

local function completion(line)
  return vim.fn.getcompletion(line, "cmdline")
end

return {
  {
    "complete.any: each word once, in the order its sources give (a session id that is also a conversation's)",
    function()
      local any = require("claude_context.complete").any
      eq(
        { "a", "b", "c" },
        any({ "a", "b" }, function()
          return { "b", "c", "a" }
        end)()
      )
    end,
  },
  {
    "branches and worktrees are read from the repository's files (packed refs too, nested names)",
    function()
      local dir = repo()
      local c = require("claude_context.complete")
      eq({ "feature/deep", "main", "packed", "wt-branch" }, c.branches(dir))
      local want = { "agent-a", vim.fs.basename(dir) .. "-wt-one" }
      table.sort(want)
      eq(want, c.worktrees(dir))
      -- From inside the linked worktree: the same repository's branches and worktrees.
      eq({ "feature/deep", "main", "packed", "wt-branch" }, c.branches(dir .. "-wt-one"))
      contains(table.concat(c.worktrees(dir .. "-wt-one"), " "), "-wt-one")
      -- Outside a repository: nothing, no error.
      local none = vim.fn.tempname()
      vim.fn.mkdir(none, "p")
      eq({}, c.branches(none))
    end,
  },
  {
    "a FIFO in the repository's git files (packed-refs, commondir, a worktree's gitdir) is never waited on",
    function()
      local dir = repo()
      local _, common = require("claude_context.complete").git_dirs(dir)
      local function fifo(path)
        os.remove(path)
        local r = vim.system({ "mkfifo", path }, { text = true }):wait()
        eq(0, r.code, r.stderr)
      end
      fifo(common .. "/packed-refs")
      fifo(common .. "/commondir")
      for _, wt in ipairs(vim.fn.glob(common .. "/worktrees/*", false, true)) do
        fifo(wt .. "/gitdir")
      end
      -- In another Neovim, which a blocking open would hold until the timeout.
      local script = vim.fn.tempname() .. ".lua"
      vim.fn.writefile({
        "local c = require('claude_context.complete')",
        ("local b, w = c.branches(%q), c.worktrees(%q)"):format(dir, dir),
        "io.stdout:write(vim.json.encode({ b, w }))",
      }, script)
      local init = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h") .. "/minimal_init.lua"
      local r = vim
        .system({ vim.v.progpath, "--headless", "--clean", "-u", init, "-l", script }, { text = true, timeout = 20000 })
        :wait()
      eq(0, r.code, "the completion returned: " .. (r.stderr or ""))
      local got = vim.json.decode(r.stdout)
      eq({ "feature/deep", "wt-branch" }, got[1], "the packed branches (main, packed) left out, the loose ones offered")
      contains(table.concat(got[2], " "), "agent-a")
    end,
  },
  {
    ":ClaudeContext context / memory <Tab> complete branches; rewind and review turn numbers",
    function()
      local dir = repo()
      vim.cmd.cd(vim.fn.fnameescape(dir))
      eq({ "feature/deep" }, completion("ClaudeContext context fe"))
      eq({ "feature/deep", "main", "packed", "wt-branch" }, completion("ClaudeContext memory "))
      eq({}, completion("ClaudeContext context main "))
      local rewind = completion("ClaudeContext rewind ")
      ok(vim.tbl_contains(rewind, "1") and vim.tbl_contains(rewind, "undo"), vim.inspect(rewind))
      local review = completion("ClaudeContext review ")
      ok(vim.tbl_contains(review, "1") and vim.tbl_contains(review, "keep"), vim.inspect(review))
      eq({ "undo" }, completion("ClaudeContext! rewind u"))
      vim.cmd.cd("-")
    end,
  },
  {
    "a subcommand gets argument completion from its one `complete` field",
    function()
      local dir = repo()
      vim.cmd.cd(vim.fn.fnameescape(dir))
      local commands = require("claude_context.commands")
      local c = require("claude_context.complete")
      commands.register("land-test", {
        desc = "test",
        group = "sessions",
        run = function() end,
        complete = c.args(c.worktrees, { "--keep", "--squash" }),
      })
      eq({ "agent-a" }, completion("ClaudeContext land-test ag"))
      eq({ "--keep", "--squash" }, completion("ClaudeContext land-test agent-a --"))
      eq({}, completion("ClaudeContext land-test agent-a --keep "))
      ok(vim.tbl_contains(completion("ClaudeContext la"), "land-test"), "the subcommand itself completes")
      commands.subcommands["land-test"] = nil
      vim.cmd.cd("-")
    end,
  },
  {
    ":ClaudeContext without arguments lists every subcommand once, under its group",
    function()
      local commands = require("claude_context.commands")
      local shown = h.shown("ClaudeContext")
      contains(shown, "bridge not running")
      for _, g in ipairs(commands.GROUPS) do
        if g[1] ~= "sessions" then
          contains(shown, g[2])
        end
      end
      -- Every subcommand the plugin registers has a group (none falls into "Other").
      ok(not shown:find("\nOther\n", 1, true), shown)
      local lines = commands.overview_lines()
      for _, name in ipairs(commands.names()) do
        local n = 0
        for _, l in ipairs(lines) do
          if l:match("^  (%S+)") == name then
            n = n + 1
          end
        end
        eq(1, n, name .. " listed once")
      end
    end,
  },
}
