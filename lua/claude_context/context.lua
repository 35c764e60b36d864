---@mod claude_context.context Memory bank and decision commands
---
--- `:ClaudeContext context [branch]` shows the merged context (rules, branch and global core
--- files) read by the bridge's `read_context` tool in a read-only Markdown buffer;
--- `:ClaudeContext memory [branch]` picks a memory bank document and opens it for editing;
--- `:ClaudeContext decision` shows the WRAP decision status (`get_current_status`).
---
--- Option `memory_bank = { root = nil, language = nil }` (see :help claude-context-memory-bank):
--- the language defaults from the editor's (`v:lang`, else `$LANG`: `ja*` is Japanese, anything
--- else English); the bridge's memory bank tools use it when called without `language`, and
--- the views here speak it.

local M = {}

local mb_config = require("claude_context.config.memory_bank")

---The core files of a bank (`"branch"` or `"global"`), in their order: the library owns the
---lists (crates/core/src/memory_bank/mod.rs) and the API table carries them.
---@param kind "branch"|"global"
---@return string[]
local function core_files(kind)
  local native = require("claude_context.native").get()
  local lists = native and native.memory_bank_core_files
  return lists and lists[kind] or {}
end

---The effective memory bank options (claude_context.config.memory_bank).
---@return claude_context.MemoryBankConfig
function M.options()
  return mb_config.options()
end

---The words of the views, per language.
M.TEXT = {
  en = {
    context = "Context · branch %s",
    rules = "Rules",
    branch_bank = "Branch memory bank · %s",
    global_bank = "Global memory bank",
    none = "(none)",
    tags = "tags",
    no_issue = "No issue is defined (Claude defines one with define_issue).",
    issue = "Current issue: %s",
    id = "ID: %s",
    description = "Description: %s",
    created = "Created: %s",
    background = "Background: %s",
    constraints = "Constraints:",
    no_options = "Options: none registered yet",
    options = "Options (%d):",
    info = "Notes: %s",
    step = "Step: %s",
    next = "Next: %s",
    steps = {
      ["widen-options"] = "Widen your options: register at least three options with register_options.",
      ["reality-test"] = "Reality-test your assumptions: check what each option assumes, attain distance before deciding, and prepare to be wrong.",
    },
  },
  ja = {
    context = "コンテキスト · ブランチ %s",
    rules = "ルール",
    branch_bank = "ブランチのメモリバンク · %s",
    global_bank = "グローバルメモリバンク",
    none = "（なし）",
    tags = "タグ",
  },
}

---The words of the configured language.
local function text()
  return M.TEXT[M.options().language] or M.TEXT.en
end

local notify = require("claude_context.util.notify")

local function err(msg)
  notify(msg, vim.log.levels.ERROR)
end

---Calls a bridge tool and waits; returns the result table or nil and a message (a tool error,
---a protocol error, or the bridge not running).
---@param name string
---@param args table<string, any>?
---@return claude_context.ToolResult? result, string? err
function M.call(name, args)
  local ok, r, e = pcall(require("claude_context").call_tool_sync, name, args or {})
  if not ok then
    return nil, tostring(r)
  end
  if not r then
    return nil, e
  end
  if r.isError then
    return nil, (r.content and r.content[1] and r.content[1].text) or (name .. " failed")
  end
  return r
end

local function push_lines(out, text)
  for _, l in ipairs(vim.split(text or "", "\n", { plain = true })) do
    table.insert(out, l)
  end
end

local function push_docs(out, docs, order)
  docs = docs or {}
  local names = vim.deepcopy(order)
  local extra = {}
  for k in pairs(docs) do
    if not vim.tbl_contains(order, k) then
      table.insert(extra, k)
    end
  end
  table.sort(extra)
  vim.list_extend(names, extra)
  local any = false
  for _, name in ipairs(names) do
    local d = docs[name]
    if d then
      any = true
      table.insert(out, "")
      table.insert(out, ("### %s"):format(name))
      local tags = (d.tags and #d.tags > 0) and (" · " .. text().tags .. ": " .. table.concat(d.tags, " ")) or ""
      table.insert(out, ("_%s%s_"):format(d.lastModified or "", tags))
      table.insert(out, "")
      push_lines(out, d.content)
    end
  end
  if not any then
    table.insert(out, "")
    table.insert(out, "_" .. text().none .. "_")
  end
end

---The Markdown lines of a read_context result.
---@param ctx table<string, any> read_context's structuredContent
---@param branch string
---@return string[]
function M.render(ctx, branch)
  local t = text()
  local out = { "# " .. t.context:format(branch) }
  for _, n in ipairs(ctx.notes or {}) do
    table.insert(out, "")
    table.insert(out, "> " .. n)
  end
  if ctx.rules then
    table.insert(out, "")
    table.insert(out, "## " .. t.rules)
    table.insert(out, "")
    push_lines(out, ctx.rules.content)
  end
  if ctx.branchMemory then
    table.insert(out, "")
    table.insert(out, "## " .. t.branch_bank:format(branch))
    push_docs(out, ctx.branchMemory, core_files("branch"))
  end
  if ctx.globalMemory then
    table.insert(out, "")
    table.insert(out, "## " .. t.global_bank)
    push_docs(out, ctx.globalMemory, core_files("global"))
  end
  return out
end

---Shows `lines` in a read-only Markdown scratch buffer named `name` (reused when it exists).
---@param lines string[]
---@param name string
---@param mods string? command modifiers (:vertical, :tab, …)
---@return integer buf
function M.show(lines, name, mods)
  local buf = vim.fn.bufnr("^" .. vim.fn.escape(name, "\\/.*$^~[]") .. "$")
  local win = buf ~= -1 and vim.fn.bufwinid(buf) or -1
  if win ~= -1 then
    vim.api.nvim_set_current_win(win)
  else
    vim.cmd(((mods and mods ~= "") and (mods .. " ") or "") .. "split")
    if buf == -1 or not vim.api.nvim_buf_is_valid(buf) then
      buf = vim.api.nvim_create_buf(false, true)
      vim.api.nvim_buf_set_name(buf, name)
    end
    vim.api.nvim_win_set_buf(0, buf)
  end
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = true
  vim.bo[buf].readonly = false
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modified = false
  vim.bo[buf].modifiable = false
  vim.bo[buf].readonly = true
  vim.bo[buf].filetype = "markdown"
  return buf
end

---:ClaudeContext context [branch]
function M.context(o, args)
  local branch = args[1] ~= "" and args[1] or nil
  -- Without a branch, read_context reads the project's current one from git's HEAD (no
  -- process, no wait) and names it in its answer.
  local r, e = M.call("read_context", { branch = branch, language = M.options().language })
  if not r and not branch and tostring(e):find("needs 'branch'", 1, true) then
    return err(
      "claude-context: no current git branch here (not a repository, or detached HEAD); use :ClaudeContext context {branch}"
    )
  end
  if not r then
    return err("claude-context: read_context: " .. tostring(e))
  end
  branch = branch or (r.structuredContent or {}).branch or "?"
  return M.show(M.render(r.structuredContent or {}, branch), "claude-context://context/" .. branch, o and o.mods)
end

---The label of a bank document in the picker.
function M.label(d)
  if d.scope == "global" then
    return "global: " .. d.path
  end
  return ("branch %s: %s"):format(d.branch or "?", d.path)
end

---:ClaudeContext memory [branch]
function M.memory(o, args)
  local a = args[1] and { scope = "all", branch = args[1] } or { scope = "all" }
  local r, e = M.call("list_memory_bank_documents", a)
  if not r then
    return err("claude-context: " .. tostring(e))
  end
  local out = r.structuredContent or {}
  local docs = out.documents or {}
  if #docs == 0 then
    return notify(
      ("claude-context: the memory bank at %s has no documents yet (Claude creates them with write_branch_memory_bank / write_global_memory_bank)"):format(
        tostring(out.root)
      ),
      vim.log.levels.WARN
    )
  end
  vim.ui.select(docs, {
    prompt = "Memory bank document",
    kind = "claude_context.memory",
    format_item = M.label,
  }, function(choice)
    if choice then
      -- Never in Claude's terminal (or another special window) the command was run from. The
      -- path is the bridge's, in a folder Claude writes: read without waiting on what it names.
      require("claude_context.util.windows").enter_edit_target(o and o.mods)
      require("claude_context.ide.files").open(choice.absolutePath, { mods = o and o.mods })
    end
  end)
end

---The lines of `:ClaudeContext decision` for a get_current_status result, in `lang`: Japanese is
---the tool's own text (kept word for word: doc/protocol.md, WRAP decisions); English is written from its structured part.
---@param r claude_context.ToolResult
---@param lang "en"|"ja"
---@return string
function M.decision_text(r, lang)
  local own = (r.content and r.content[1] and r.content[1].text) or ""
  local st = r.structuredContent
  if lang == "ja" then
    return own
  end
  local t = M.TEXT.en
  if type(st) ~= "table" or type(st.issue) ~= "table" then
    return t.no_issue
  end
  local i = st.issue
  local out = {
    t.issue:format(i.title or ""),
    t.id:format(i.id or ""),
    t.description:format(i.description or ""),
    t.created:format(i.createdAt or ""),
  }
  if type(i.context) == "string" then
    table.insert(out, t.background:format(i.context))
  end
  if type(i.constraints) == "table" and #i.constraints > 0 then
    table.insert(out, t.constraints)
    for _, c in ipairs(i.constraints) do
      table.insert(out, "  - " .. c)
    end
  end
  local options = type(st.options) == "table" and st.options or {}
  if #options == 0 then
    table.insert(out, t.no_options)
  else
    table.insert(out, t.options:format(#options))
    for n, o in ipairs(options) do
      table.insert(out, ("  %d. %s (id: %s)"):format(n, o.text or "", o.id or ""))
      if type(o.supplementaryInfo) == "string" then
        table.insert(out, "     " .. t.info:format(o.supplementaryInfo))
      end
    end
  end
  local step = type(st.workflow) == "table" and st.workflow.step or ""
  table.insert(out, t.step:format(step))
  table.insert(out, t.next:format(t.steps[step] or (st.workflow and st.workflow.nextAction) or ""))
  return table.concat(out, "\n")
end

---:ClaudeContext decision
function M.decision()
  local r, e = M.call("get_current_status", {})
  if not r then
    return err("claude-context: " .. tostring(e))
  end
  local text = M.decision_text(r, M.options().language)
  -- A window, not the command line: no hit-enter prompt (claude_context.util.output).
  require("claude_context.util.output").show(
    vim.split(text, "\n", { plain = true }),
    { title = "WRAP decision status" }
  )
  return text
end

---Registers the subcommands on claude_context.commands.
---@param commands claude_context.Commands
function M.register(commands)
  local complete = require("claude_context.complete")
  local a_branch = complete.args(complete.branches)
  commands.register("context", {
    desc = "show the merged memory bank context of a branch (default: the current git branch)",
    run = M.context,
    complete = a_branch,
  })
  commands.register("memory", {
    desc = "pick a memory bank document and open it for editing",
    run = M.memory,
    complete = a_branch,
  })
  commands.register("decision", {
    desc = "show the WRAP decision status (get_current_status)",
    run = M.decision,
  })
end

return M
