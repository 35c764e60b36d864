-- Terminal providers: external (a launcher with the IDE environment), none (we only serve), a
-- custom provider table, snacks.nvim's terminal (a double following Snacks.terminal.open's
-- documented API; "auto" picks it when present); and the model picker.
-- (sessions.hooks = false throughout: these argv checks are about the terminal options; the
-- session-state hooks are checked in terminal_spec and sessions_state_spec.)
local h = require("helpers")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local cc = h.cc
local term = h.term
local S = require("claude_context.terminal.sessions")

local messages = h.record_notify()

local tmp = h.tmpdir()
local out = tmp .. "/out"
local fake = tmp .. "/fake-claude"
h.write(
  fake,
  [[#!/bin/sh
for a in "$@"; do printf '%s\n' "$a"; done > "$FAKE_OUT.args.tmp"
env > "$FAKE_OUT.env"
mv "$FAKE_OUT.args.tmp" "$FAKE_OUT.args"
while read -r line; do printf '%s\n' "$line" >> "$FAKE_OUT.typed"; done
]]
)
vim.fn.setfperm(fake, "rwx------")

local function clear()
  for _, s in ipairs({ ".args", ".env", ".typed" }) do
    os.remove(out .. s)
  end
end

local function started()
  return wait_for(function()
    local s = h.read(out .. ".args")
    return s and vim.split(s, "\n", { trimempty = true })
  end, 10000, "the fake claude to start")
end

local function env()
  local e = {}
  for _, l in ipairs(vim.split(h.read(out .. ".env") or "", "\n")) do
    local k, v = l:match("^([^=]+)=(.*)$")
    if k then
      e[k] = v
    end
  end
  return e
end

-- permission_mode = false: these tests look at the arguments the provider passes on.
local base = { env = { FAKE_OUT = out }, mcp_config = false, auto_insert = false, permission_mode = false }

return {
  {
    "provider = external: the launcher gets the claude command line with the IDE environment",
    function()
      cc().setup({
        claude = { cmd = fake },
        sessions = { hooks = false },
        terminal = vim.tbl_extend(
          "force",
          base,
          { provider = "external", external_cmd = { "sh", "-c", "{cmd}" }, args = { "--verbose" } }
        ),
      })
      clear()
      local wins = #vim.api.nvim_list_wins()
      vim.cmd("ClaudeContext open")
      eq({ "--verbose" }, started())
      local e = env()
      eq(tostring(cc().status().port), e.CLAUDE_CODE_SSE_PORT)
      eq("true", e.ENABLE_IDE_INTEGRATION)
      eq(out, e.FAKE_OUT)
      eq(wins, #vim.api.nvim_list_wins(), "no window here")
      local okc, err = pcall(cc().setup, { terminal = { provider = "external" } })
      eq(false, okc)
      contains(err, "terminal.external_cmd")
    end,
  },
  {
    "provider = none: nothing started, the message says how to connect",
    function()
      cc().setup({
        claude = { cmd = fake },
        sessions = { hooks = false },
        terminal = vim.tbl_extend("force", base, { provider = "none" }),
      })
      clear()
      h.clear(messages)
      vim.cmd("ClaudeContext open")
      contains(messages[#messages].msg, "provider = none")
      contains(messages[#messages].msg, tostring(cc().status().port))
      vim.wait(200)
      eq(nil, h.read(out .. ".args"), "no claude started")
      eq(nil, term()._state.job)
    end,
  },
  {
    "a custom provider table: its buffer gets the name, filetype and keys; hide/show go through it",
    function()
      local calls = {}
      local provider = {
        open = function(cmd, e, cwd)
          table.insert(calls, "open")
          vim.cmd("botright new")
          local job = vim.fn.jobstart(cmd, { term = true, env = e, cwd = cwd })
          return vim.api.nvim_get_current_buf(), job
        end,
        hide = function(buf)
          table.insert(calls, "hide")
          for _, w in ipairs(vim.fn.win_findbuf(buf)) do
            vim.api.nvim_win_close(w, false)
          end
        end,
        show = function(buf)
          table.insert(calls, "show")
          vim.cmd("botright sbuffer " .. buf)
        end,
      }
      cc().setup({
        claude = { cmd = fake },
        sessions = { hooks = false },
        terminal = vim.tbl_extend("force", base, { provider = provider }),
      })
      clear()
      vim.cmd("ClaudeContext open")
      started()
      local buf = term()._state.buf
      eq("claude_context_terminal", vim.bo[buf].filetype)
      contains(vim.api.nvim_buf_get_name(buf), "claude://")
      eq(tostring(cc().status().port), env().CLAUDE_CODE_SSE_PORT)
      vim.cmd("ClaudeContext open") -- hide
      vim.cmd("ClaudeContext open") -- show
      eq({ "open", "hide", "show" }, calls)
      eq(1, #vim.fn.win_findbuf(buf))
      -- The model picker types /model into the running claude.
      term().pick_model("opus")
      wait_for(function()
        return (h.read(out .. ".typed") or ""):find("/model opus", 1, true)
      end, 3000, "/model typed")
      term().close()
    end,
  },
  {
    "snacks.nvim (Snacks.terminal.open): provider auto picks it; env, cwd and position passed",
    function()
      local seen
      _G.Snacks = {
        terminal = {
          open = function(cmd, o)
            seen = o
            vim.cmd("botright vnew")
            local buf = vim.api.nvim_get_current_buf()
            vim.fn.jobstart(cmd, { term = true, env = o.env, cwd = o.cwd })
            local t = { buf = buf, win = vim.api.nvim_get_current_win() }
            function t:show()
              vim.cmd("botright vertical sbuffer " .. self.buf)
            end
            function t:hide()
              for _, w in ipairs(vim.fn.win_findbuf(self.buf)) do
                vim.api.nvim_win_close(w, false)
              end
            end
            return t
          end,
        },
      }
      cc().setup({
        claude = { cmd = fake },
        sessions = { hooks = false },
        terminal = vim.tbl_extend("force", base, { provider = "auto", args = { "--continue" } }),
      })
      clear()
      vim.cmd("ClaudeContext open")
      eq({ "--continue" }, started())
      eq("right", seen.win.position)
      eq(vim.fn.getcwd(), seen.cwd)
      eq("true", seen.env.ENABLE_IDE_INTEGRATION)
      local buf = term()._state.buf
      eq(vim.b[buf].terminal_job_id, term()._state.job)
      eq("claude_context_terminal", vim.bo[buf].filetype)
      vim.cmd("ClaudeContext open")
      eq(0, #vim.fn.win_findbuf(buf), "hidden through the snacks object")
      vim.cmd("ClaudeContext open")
      eq(1, #vim.fn.win_findbuf(buf), "shown again")
      term().close()
      _G.Snacks = nil
    end,
  },
  {
    ":ClaudeContext model without claude running starts it with --model (picked with vim.ui.select)",
    function()
      cc().setup({ claude = { cmd = fake }, sessions = { hooks = false }, terminal = base })
      clear()
      local orig = vim.ui.select
      vim.ui.select = function(items, o, cb)
        vim.ui.select = orig
        ok(vim.tbl_contains(items, "opus"), "opus offered")
        eq("claude_context.model", o.kind)
        cb("haiku")
      end
      vim.cmd("ClaudeContext model")
      eq({ "--model", "haiku" }, started())
      term().close()
    end,
  },
  {
    "named sessions: each its own claude and buffer; listed; switching shows one, hides the other",
    function()
      cc().setup({
        claude = { cmd = fake },
        sessions = { hooks = false },
        terminal = vim.tbl_extend("force", base, { args = {} }),
      })
      local t = term()
      clear()
      vim.cmd("ClaudeContext open")
      started()
      local main = t._state
      clear()
      vim.cmd("ClaudeContext sessions review")
      started()
      local review = t._state
      ok(review.job ~= main.job and review.buf ~= main.buf, "a second claude")
      eq("review", S.name)
      contains(vim.api.nvim_buf_get_name(review.buf), "[review]")
      eq(0, #vim.fn.win_findbuf(main.buf), "main hidden in this tab page")
      eq(1, #vim.fn.win_findbuf(review.buf))
      local list = S.list()
      eq(
        { "main", "review" },
        vim.tbl_map(function(x)
          return x.name
        end, list)
      )
      eq({ true, true }, { list[1].running, list[2].running })
      eq({ false, true }, { list[1].current, list[2].current })
      local orig = vim.ui.select
      vim.ui.select = function(items, o, cb)
        vim.ui.select = orig
        contains(o.format_item(items[2]), "* review (running)")
        cb(items[1])
      end
      vim.cmd("ClaudeContext sessions")
      eq("main", S.name)
      eq(main, t._state)
      eq(1, #vim.fn.win_findbuf(main.buf))
      eq(0, #vim.fn.win_findbuf(review.buf))
      eq({ "main", "review" }, vim.fn.getcompletion("ClaudeContext sessions ", "cmdline"))
      -- Closing one leaves the other.
      t.close()
      eq(nil, S.by_name.main)
      ok(S.by_name.review and vim.fn.jobwait({ review.job }, 0)[1] == -1, "review still runs")
      t.switch("review")
      t.close()
      S.name = "main"
      eq({}, S.by_name)
    end,
  },
  {
    "terminal.per_tab: each tab page its own claude; open in a tab page acts on that tab's",
    function()
      cc().setup({
        claude = { cmd = fake },
        sessions = { hooks = false },
        terminal = vim.tbl_extend("force", base, { args = {}, per_tab = true }),
      })
      local t = term()
      clear()
      vim.cmd("ClaudeContext open")
      started()
      local first = t._state
      vim.cmd("tabnew")
      clear()
      vim.cmd("ClaudeContext open")
      started()
      local second = t._state
      ok(second.job ~= first.job, "a second claude in the second tab page")
      eq(1, #vim.fn.win_findbuf(second.buf))
      vim.cmd("tabprevious")
      vim.cmd("ClaudeContext open") -- this tab's claude is shown: hides it
      eq(first, t._state)
      eq(0, #vim.fn.win_findbuf(first.buf))
      ok(vim.fn.jobwait({ first.job }, 0)[1] == -1 and vim.fn.jobwait({ second.job }, 0)[1] == -1, "both run")
      eq(2, #S.list())
      t.close()
      vim.cmd("tabnext")
      S.sync_tab()
      t.close()
      vim.cmd("tabonly")
      S.name = "main"
      eq({}, S.by_name)
      cc().setup({ claude = { cmd = fake }, sessions = { hooks = false }, terminal = base })
    end,
  },
}
