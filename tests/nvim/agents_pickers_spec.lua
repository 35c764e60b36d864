-- The sessions picker's adapters (claude_context.agents.pickers): snacks.nvim, telescope and
-- fzf-lua stood in for by stub modules in package.loaded (no plugin installed, no network); each
-- is given the sessions and its chosen entry and keys run the actions; vim.ui.select otherwise.
local h = require("helpers")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local messages = h.record_notify()

local C = require("claude_context.agents.commands")
local P = require("claude_context.agents.pickers")
local A = require("claude_context.agents")

local ENTRIES = {
  {
    id = "abcd1234",
    name = "feat",
    kind = "background",
    state = "working",
    worktree = "/p/.claude/worktrees/feat",
    files_changed = 3,
    prompt = "fix it",
  },
  { id = "t1", name = "main", kind = "terminal", state = "idle" },
}
require("claude_context.agents.list").list = function()
  return ENTRIES
end
-- The list read again while a picker is open (every REFRESH_MS): from ENTRIES, at once.
require("claude_context.agents.cli").refresh = function(cb)
  if cb then
    vim.schedule(function()
      cb({})
    end)
  end
end
C.REFRESH_MS = 30
local NEW_ENTRY = {
  id = "beef0001",
  name = "second",
  kind = "background",
  state = "starting",
  worktree = "/p/.claude/worktrees/second",
  files_changed = 1,
  prompt = "more",
}

-- What the picker ran: { action, entry name } (the actions menu is vim.ui.select, answered by
-- `menu_choice`).
local ran = {}
C.act = function(action, e)
  ran[#ran + 1] = { action, e.name }
end
local menu_choice
local select_calls = {}
vim.ui.select = function(items, opts, cb)
  select_calls[#select_calls + 1] = { items = items, opts = opts }
  if opts.kind == "claude_context.agents" then
    cb(items[1])
  else
    cb(menu_choice)
  end
end

local function reset()
  h.clear(ran)
  h.clear(select_calls)
  h.clear(messages)
  require("claude_context.config").options.sessions.picker = "auto"
end

local function stub(mods)
  for k, v in pairs(mods) do
    package.loaded[k] = v
  end
  return function()
    for k in pairs(mods) do
      package.loaded[k] = nil
    end
  end
end

return {
  {
    "nothing installed: vim.ui.select, the same lines, then the actions menu",
    function()
      reset()
      local _, name = P.resolve("auto")
      eq("select", name)
      menu_choice = "land"
      C.pick()
      eq("Claude sessions", select_calls[1].opts.prompt)
      eq(C.format(ENTRIES[1]), select_calls[1].opts.format_item(select_calls[1].items[1]))
      eq(C.actions_for(ENTRIES[1]), select_calls[2].items)
      eq({ { "land", "feat" } }, ran)
      -- One asked for but not installed: vim.ui.select, and said so.
      local _, n2, why = P.resolve("telescope")
      eq("select", n2)
      contains(why, "telescope")
      local okk, err = pcall(require("claude_context.config.sessions").resolve, { picker = "nope" })
      ok(not okk)
      contains(err, "sessions.picker")
    end,
  },
  {
    "snacks: Snacks.picker.pick gets the sessions; confirm opens the menu; a key runs its action",
    function()
      reset()
      local got
      local finds = 0
      local shown = {
        find = function()
          finds = finds + 1
        end,
      }
      _G.Snacks = { picker = {
        pick = function(o)
          got = o
          return shown
        end,
      } }
      local _, name = P.resolve("auto")
      eq("snacks", name)
      C.pick()
      ok(got, "Snacks.picker.pick was called")
      got.items = got.finder()
      eq(2, #got.items)
      eq(C.format(ENTRIES[1]), got.items[1].text)
      eq({ { C.format(ENTRIES[2]) } }, got.format(got.items[2]))
      eq("select", got.layout.preset, "no preview: snacks' compact select layout")
      -- While it is open, a changed list is shown: the finder gives it, the picker finds again.
      vim.wait(100)
      eq(0, finds, "nothing changed: nothing shown anew")
      table.insert(ENTRIES, NEW_ENTRY)
      wait_for(function()
        return finds > 0
      end, 5000, "the new list shown")
      eq(3, #got.finder())
      eq(C.format(NEW_ENTRY), got.finder()[3].text)
      table.remove(ENTRIES, 3)
      wait_for(function()
        return finds > 1
      end, 5000, "the list shown again")
      -- A short title; the keys in the box's footer (the title was cut with them in it).
      eq("Claude sessions", got.title)
      contains(got.layout.layout.footer, "<CR> actions  <M-a> attach")
      contains(got.layout.layout.footer, "<M-l> land")
      local closed = 0
      local picker = {
        close = function()
          closed = closed + 1
        end,
      }
      eq({ "claude_context_land", mode = { "n", "i" }, desc = "land" }, got.win.input.keys["<M-l>"])
      got.actions.claude_context_land(picker, got.items[1])
      eq({ { "land", "feat" } }, ran)
      eq(1, closed)
      menu_choice = "review"
      got.confirm(picker, got.items[2])
      eq({ { "land", "feat" }, { "review", "main" } }, ran)
      -- A key of an action the entry does not have: said, nothing run.
      got.actions.claude_context_stop(picker, got.items[2])
      eq(2, #ran)
      contains(vim.inspect(messages), "not an action of main")
      got.on_close()
      -- Closed: nothing shown any more.
      local before = finds
      table.insert(ENTRIES, NEW_ENTRY)
      vim.wait(150)
      table.remove(ENTRIES, 3)
      eq(before, finds)
      _G.Snacks = nil
    end,
  },
  {
    "telescope: a picker of the sessions; <CR> opens the menu; a mapped key runs its action",
    function()
      reset()
      local spec, found, selected, closed_buf, refreshed
      local maps = {}
      local default_fn
      local unstub = stub({
        ["telescope.pickers"] = {
          new = function(_, s)
            spec = s
            return {
              find = function()
                found = true
              end,
            }
          end,
        },
        ["telescope.finders"] = {
          new_table = function(t)
            return t
          end,
        },
        ["telescope.config"] = {
          values = {
            generic_sorter = function()
              return "sorter"
            end,
          },
        },
        ["telescope.actions"] = {
          close = function(b)
            closed_buf = b
          end,
          select_default = {
            replace = function(_, fn)
              default_fn = fn
            end,
          },
        },
        ["telescope.actions.state"] = {
          get_selected_entry = function()
            return selected
          end,
          get_current_picker = function(b)
            return {
              refresh = function(_, finder, o)
                refreshed = { buf = b, finder = finder, opts = o }
              end,
            }
          end,
        },
      })
      local _, name = P.resolve("auto")
      eq("telescope", name)
      C.pick()
      ok(found, "the picker was shown")
      eq(ENTRIES, spec.finder.results)
      local e1 = spec.finder.entry_maker(ENTRIES[1])
      eq(C.format(ENTRIES[1]), e1.display)
      eq("Claude sessions", spec.prompt_title)
      contains(spec.results_title, "<M-d> discard")
      eq(ENTRIES[1], e1.value)
      local buf = vim.api.nvim_create_buf(false, true)
      eq(
        true,
        spec.attach_mappings(buf, function(modes, key, fn)
          maps[key] = { modes = modes, fn = fn }
        end)
      )
      for _, k in ipairs(P.KEYS) do
        ok(maps[k.key], k.key .. " is mapped")
      end
      -- While it is open, a changed list: the picker refreshed with it, the prompt kept.
      table.insert(ENTRIES, NEW_ENTRY)
      wait_for(function()
        return refreshed
      end, 5000, "the picker refreshed")
      eq(buf, refreshed.buf)
      eq(NEW_ENTRY, refreshed.finder.results[3])
      eq(C.format(NEW_ENTRY), refreshed.finder.entry_maker(NEW_ENTRY).display)
      eq({ reset_prompt = false }, refreshed.opts)
      table.remove(ENTRIES, 3)
      selected = e1
      maps["<M-d>"].fn()
      eq({ { "discard", "feat" } }, ran)
      eq(buf, closed_buf)
      menu_choice = "attach"
      default_fn()
      eq({ { "discard", "feat" }, { "attach", "feat" } }, ran)
      vim.api.nvim_buf_delete(buf, { force = true })
      unstub()
    end,
  },
  {
    "fzf-lua: fzf_exec gets the lines; default opens the menu; alt-keys run their actions; forced by sessions.picker",
    function()
      reset()
      local lines, opts
      local unstub = stub({
        ["fzf-lua"] = {
          fzf_exec = function(l, o)
            lines, opts = l, o
          end,
        },
      })
      -- Snacks is set up too, but the option asks for fzf-lua.
      _G.Snacks = { picker = {
        pick = function()
          error("not this one")
        end,
      } }
      require("claude_context.config").options.sessions.picker = "fzf-lua"
      C.pick()
      eq(2, #lines)
      eq("2\t" .. C.format(ENTRIES[2]), lines[2])
      eq("2..", opts.fzf_opts["--with-nth"])
      eq("Claude sessions> ", opts.prompt)
      contains(opts.fzf_opts["--header"], "<M-s> stop")
      eq("alt-s", require("claude_context.agents.pickers.fzf_lua").fzf_key("<M-s>"))
      opts.actions["alt-s"]({ lines[1] })
      eq({ { "stop", "feat" } }, ran)
      menu_choice = "review"
      opts.actions["default"]({ lines[2] })
      eq({ { "stop", "feat" }, { "review", "main" } }, ran)
      opts.winopts.on_close()
      _G.Snacks = nil
      unstub()
    end,
  },
  {
    "the keys' hint: all of them, else as many as fit in the width and …",
    function()
      local all = P.keys_hint()
      eq("<CR> actions  <M-a> attach  <M-r> review  <M-l> land  <M-d> discard  <M-s> stop", all)
      eq(all, P.keys_hint(nil, #all))
      eq("<CR> actions  <M-a> attach  …", P.keys_hint(nil, 30))
      eq("<CR> actions  …", P.keys_hint(nil, 10))
      for w = 10, #all do
        ok(vim.api.nvim_strwidth(P.keys_hint(nil, w)) <= math.max(w, 15), "fits in " .. w)
      end
    end,
  },
  {
    "a picker that fails: a message, the editor goes on",
    function()
      reset()
      _G.Snacks = { picker = {
        pick = function()
          error("boom")
        end,
      } }
      C.pick()
      contains(vim.inspect(messages), "the snacks picker failed")
      _G.Snacks = nil
    end,
  },
}
