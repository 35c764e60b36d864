---@mod claude_context.health.features The :checkhealth sections of the features beside Claude
---
--- Edit in place, transcripts and follow, conversations, and arriving from claudecode.nvim:
--- each a section of `:checkhealth claude_context` (claude_context.health runs them in order).

local M = {}

---:checkhealth section: another bridge serving the project (claudecode.nvim, another editor)
---and claudecode.nvim's options setup() translated (claude_context.config.claudecode).
---@param st claude_context.Status? the bridge's status
function M.check_claudecode(st)
  local h = vim.health
  h.start("Arriving from claudecode.nvim: a second bridge, its options")
  local bridges = require("claude_context.bridges")
  local found = bridges.find(st)
  if found.claudecode then
    h.warn(
      found.claudecode.loaded and "claudecode.nvim is loaded: it runs a bridge of its own"
        or ("claudecode.nvim is on the runtimepath (%s): loaded, it runs a bridge of its own"):format(
          bridges.shown(found.claudecode.path)
        ),
      {
        "Remove coder/claudecode.nvim from your plugins (or `enabled = false` in its lazy.nvim spec)",
        ":help claude-context-from-claudecode",
      }
    )
  end
  for _, l in ipairs(found.locks) do
    local line = ("%s: %s (pid %d%s) serves %s too: Claude Code's /ide connects by itself only when one editor serves the folder"):format(
      bridges.shown(l.path),
      l.ide,
      l.pid,
      l.this_nvim and ", this Neovim" or "",
      bridges.shown(l.folder)
    )
    if l.ours then
      h.info(line .. " (another Neovim with this plugin: pick one with /ide)")
    else
      h.warn(line, { bridges.ADVICE })
    end
  end
  if not found.claudecode and #found.locks == 0 then
    h.ok(("no other bridge serves %s"):format(bridges.shown(found.dir)))
  end
  if require("claude_context.config").options.claudecode.commands then
    local line = "claudecode.commands: :ClaudeCode, :ClaudeCodeSend, … run this plugin's actions"
    if found.claudecode then
      h.warn(line .. ", but claudecode.nvim defines the same commands: whichever loads last wins")
    else
      h.ok(line)
    end
  end
  local lines = require("claude_context.config.claudecode").report_lines()
  if not lines then
    h.info("setup() had none of claudecode.nvim's options")
    return
  end
  for _, l in ipairs(lines.ok) do
    h.ok(l)
  end
  for _, l in ipairs(lines.dropped) do
    h.info(l)
  end
end

---Claude Code's conversations of this project (:ClaudeContext conversations): where they are and
---how many (listed off the main thread; health waits at most two seconds for the answer).
function M.check_conversations()
  local h = vim.health
  h.start("Conversations (:ClaudeContext conversations)")
  local cfg = vim.env.CLAUDE_CONFIG_DIR
  cfg = (cfg and cfg ~= "") and cfg or ((vim.env.HOME or "~") .. "/.claude")
  local dir = cfg .. "/projects"
  if vim.fn.isdirectory(dir) == 0 then
    h.info(("no conversations yet: %s does not exist (Claude Code makes it with the first conversation)"):format(dir))
    return
  end
  local got, err
  require("claude_context.conversations").list({}, function(list, e)
    got, err = list, e
  end)
  vim.wait(2000, function()
    return got ~= nil
  end, 20)
  if err then
    h.warn(("%s: %s"):format(dir, err))
  elseif not got then
    h.warn(("%s: no answer within 2 s (a slow disk?)"):format(dir))
  else
    h.ok(("%s: %d conversation(s) of this project"):format(dir, #got))
  end
end

---:checkhealth line: where the transcripts are read from (|claude-context-transcript|).
function M.check_transcripts()
  local h = vim.health
  local dir = (
    vim.env.CLAUDE_CONFIG_DIR ~= nil and vim.env.CLAUDE_CONFIG_DIR ~= "" and vim.env.CLAUDE_CONFIG_DIR
    or (vim.env.HOME or "~") .. "/.claude"
  ) .. "/projects"
  local st = vim.uv.fs_stat(dir)
  local shown = vim.fn.strtrans(dir)
  if st and st.type == "directory" then
    h.ok(("transcripts, trail and usage read Claude Code's conversations in %s"):format(shown))
  else
    h.info(
      ("no conversations yet in %s (:ClaudeContext transcript shows them once Claude Code wrote one)"):format(shown)
    )
  end
end

---:checkhealth section: edit in place's warm Claude Code process (loaded only when an edit ran).
function M.check_edit()
  local h = vim.health
  h.start("Edit in place (:ClaudeContext edit)")
  local e = package.loaded["claude_context.edit"]
  if not e then
    h.ok("no edit yet: the warm Claude Code process starts with the first edit")
    return
  end
  local st = e.state()
  local line = ("warm process: %s%s; %d edit(s) answered by it, %d process(es) started"):format(
    st.state,
    st.pid and (" (pid " .. st.pid .. ")") or "",
    st.edits,
    st.starts
  )
  if st.died then
    h.warn(line .. "; the last one ended by itself: " .. st.died, { "The next edit starts a new one" })
  else
    h.ok(line)
  end
end

return M
