-- The memory bank and decision commands in a real Neovim: memory_bank options reaching the
-- bridge, :ClaudeContext context / memory / decision.
local h = require("helpers")
local eq, ok, contains = h.eq, h.ok, h.contains
local cc = h.cc

local project = vim.uv.fs_realpath(vim.fn.getcwd())
local bank = project .. "/bank"

local function messages()
  return vim.api.nvim_exec2("messages", { output = true }).output
end

---What the last command showed: its output window's text (claude_context.util.output), else the
---messages (a one-liner goes through vim.notify).
local function shown()
  local out = require("claude_context.util.output")
  if out.win and vim.api.nvim_win_is_valid(out.win) then
    local text = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(out.win), 0, -1, false), "\n")
    out.close()
    return text
  end
  return messages()
end

local function buffer_text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf or 0, 0, -1, false), "\n")
end

local notified = h.notified

return {
  {
    "setup rejects bad memory_bank options with the option's name",
    function()
      local okk, e = pcall(cc().setup, { auto_start = false, memory_bank = { root = 1 } })
      eq(false, okk)
      contains(e, "memory_bank.root")
      okk, e = pcall(cc().setup, { auto_start = false, memory_bank = { colour = "x" } })
      eq(false, okk)
      contains(e, "unknown option memory_bank.colour")
      okk, e = pcall(cc().setup, { auto_start = false, memory_bank = { language = "fr" } })
      eq(false, okk)
      contains(e, "memory_bank.language")
      okk, e = pcall(cc().setup, { auto_start = false, memory_bank = "docs" })
      eq(false, okk)
      contains(e, "memory_bank")
    end,
  },
  {
    "setup{memory_bank.root} reaches the bridge",
    function()
      vim.env.MEMORY_BANK_ROOT = nil
      cc().setup({ memory_bank = { root = bank } })
      ok(cc().status(), "running")
      local r = h.call("list_memory_bank_documents", {})
      eq(bank, r.structuredContent.root)
      eq("setup{memory_bank = {root}}", r.structuredContent.rootSource)
      eq({}, r.structuredContent.documents)
    end,
  },
  {
    ":ClaudeContext context {branch} says plainly when the branch has no bank",
    function()
      vim.cmd("ClaudeContext context feature/none")
      local buf = vim.api.nvim_get_current_buf()
      eq("claude-context://context/feature/none", vim.api.nvim_buf_get_name(buf))
      -- The editor's language here is C.UTF-8: English (the default follows v:lang / $LANG).
      contains(buffer_text(buf), "feature/none")
      contains(buffer_text(buf), "does not exist yet")
      contains(buffer_text(buf), "## Rules")
      vim.cmd("close")
    end,
  },
  {
    ":ClaudeContext context {branch} shows the merged context read-only",
    function()
      local r = h.call("write_branch_memory_bank", {
        branch = "feature/x",
        path = "activeContext.md",
        content = "# いまの作業\n\ntags: #core #active-context\n\nログイン画面を作る",
      })
      eq(false, r.isError)
      h.call("write_global_memory_bank", { path = "glossary.md", content = "# Glossary\n\n**bank**: memory" })
      vim.cmd("ClaudeContext context feature/x")
      local buf = vim.api.nvim_get_current_buf()
      local text = buffer_text(buf)
      eq("claude-context://context/feature/x", vim.api.nvim_buf_get_name(buf))
      eq("markdown", vim.bo[buf].filetype)
      eq(false, vim.bo[buf].modifiable)
      eq(true, vim.bo[buf].readonly)
      contains(text, "# Context · branch feature/x")
      contains(text, "## Branch memory bank · feature/x")
      contains(text, "### activeContext.md")
      contains(text, "ログイン画面を作る")
      contains(text, "### progress.md") -- seeded from the template
      contains(text, "## Global memory bank")
      contains(text, "**bank**: memory")
      -- Core files appear in the spec's order.
      ok(text:find("### branchContext.md", 1, true) < text:find("### progress.md", 1, true), "branch order")
      ok(text:find("### architecture.md", 1, true) < text:find("### user-guide.md", 1, true), "global order")
      -- Running it again reuses the buffer.
      vim.cmd("ClaudeContext context feature/x")
      eq(buf, vim.api.nvim_get_current_buf())
      vim.cmd("close")
    end,
  },
  {
    ":ClaudeContext context without a branch uses the current git branch, or says why not",
    function()
      local got = notified(function()
        vim.cmd("ClaudeContext context")
      end)
      eq(1, #got)
      contains(got[1].msg, ":ClaudeContext context {branch}")
      eq(vim.log.levels.ERROR, got[1].level)
      if vim.fn.executable("git") == 1 then
        local res = vim.system({ "git", "init", "-q" }, { cwd = project }):wait()
        eq(0, res.code)
        vim.system({ "git", "checkout", "-q", "-b", "feature/x" }, { cwd = project }):wait()
        vim.cmd("ClaudeContext context")
        eq("claude-context://context/feature/x", vim.api.nvim_buf_get_name(0))
        contains(buffer_text(0), "ログイン画面を作る")
        vim.cmd("close")
      end
    end,
  },
  {
    ":ClaudeContext memory picks a document and opens it for editing",
    function()
      local items, labels
      local orig = vim.ui.select
      vim.ui.select = function(its, opts, on_choice)
        items = its
        labels = vim.tbl_map(opts.format_item, its)
        for _, it in ipairs(its) do
          if it.path == "activeContext.md" then
            return on_choice(it)
          end
        end
        on_choice(nil)
      end
      vim.cmd("ClaudeContext memory")
      vim.ui.select = orig
      ok(items and #items == 10, "6 global + 4 branch documents, got " .. vim.inspect(labels))
      ok(vim.tbl_contains(labels, "global: glossary.md"), vim.inspect(labels))
      ok(vim.tbl_contains(labels, "branch feature-x: activeContext.md"), vim.inspect(labels))
      eq(bank .. "/branch-memory-bank/feature-x/activeContext.md", vim.api.nvim_buf_get_name(0))
      eq(true, vim.bo.modifiable)
      contains(buffer_text(0), "ログイン画面を作る")
      vim.cmd("bwipe")
    end,
  },
  {
    ":ClaudeContext memory: a document that became a FIFO never holds the editor; a regular one opens as read by :edit",
    function()
      local doc = bank .. "/branch-memory-bank/feature-x/activeContext.md"
      local text = h.read(doc)
      local orig = vim.ui.select
      local fifo, held, picked, err = true, nil, nil, nil
      vim.ui.select = function(its, _, on_choice)
        for _, it in ipairs(its) do
          if it.path == "activeContext.md" then
            if not fifo then
              return on_choice(it)
            end
            -- Listed as a regular file, a FIFO by the time it is opened.
            held, picked, err = h.with_swapped_fifo(doc, function()
              on_choice(it)
            end)
            return
          end
        end
        on_choice(nil)
      end
      vim.cmd.enew()
      local home = vim.api.nvim_get_current_buf()
      vim.cmd("ClaudeContext memory")
      h.write(doc, text)
      ok(held == false, "the FIFO was opened and waited on")
      assert(picked, err)
      eq(home, vim.api.nvim_get_current_buf())
      fifo = false
      vim.cmd("ClaudeContext memory")
      vim.ui.select = orig
      eq(doc, vim.api.nvim_buf_get_name(0))
      eq({ false, true, "", "markdown" }, { vim.bo.modified, vim.bo.buflisted, vim.bo.buftype, vim.bo.filetype })
      eq(vim.split(text, "\n"), vim.api.nvim_buf_get_lines(0, 0, -1, false))
      vim.cmd("bwipe")
    end,
  },
  {
    ":ClaudeContext decision shows the status, or that no issue is defined, in the person's language",
    function()
      vim.cmd("messages clear")
      vim.cmd("ClaudeContext decision")
      contains(shown(), "No issue is defined")
      -- The tool's own answer keeps the spec's words verbatim whatever the language.
      local none = h.call("get_current_status", {})
      eq("課題が定義されていません", none.content[1].text)
      local r = h.call("define_issue", { title = "DB選定", description = "どのDBを使うか" })
      eq(false, r.isError)
      vim.cmd("messages clear")
      vim.cmd("ClaudeContext decision")
      local text = shown()
      contains(text, "Current issue: DB選定")
      contains(text, "Step: widen-options")
      contains(text, "Widen your options")
      ok(not text:find("現在の課題", 1, true), text)
      -- In Japanese: the tool's text as the spec writes it.
      local mb = require("claude_context.config").options.memory_bank
      require("claude_context.config").options.memory_bank = vim.tbl_extend("force", mb or {}, { language = "ja" })
      vim.cmd("messages clear")
      vim.cmd("ClaudeContext decision")
      require("claude_context.config").options.memory_bank = mb
      text = shown()
      contains(text, "現在の課題: DB選定")
      contains(text, "widen-options")
      -- The store is under stdpath("state")/claude-context, one file per project.
      local stores = vim.fn.glob(vim.fn.stdpath("state") .. "/claude-context/decisions/*.json", false, true)
      eq(1, #stores)
      eq("DB選定", h.read_json(stores[1]).issue.title)
      eq(tonumber("600", 8), h.mode(stores[1]))
    end,
  },
  {
    "memory_bank.language defaults from the editor's language and reaches the tools",
    function()
      local ctx = require("claude_context.config.memory_bank")
      eq("ja", ctx.editor_language("ja_JP.UTF-8", "C.UTF-8"))
      eq("ja", ctx.editor_language("C.UTF-8", "ja_JP.eucJP"), "v:lang says nothing: $LANG")
      eq("ja", ctx.editor_language("", "ja"))
      eq("en", ctx.editor_language("en_US.UTF-8", "ja_JP.UTF-8"), "v:lang first")
      eq("en", ctx.editor_language("de_DE.UTF-8", ""))
      eq("en", ctx.editor_language("C", "POSIX"))
      local config = require("claude_context.config")
      local function native_lang(mb)
        return vim.json.decode(config.to_native(config.resolve({ memory_bank = mb }))).memory_bank_language
      end
      eq(ctx.editor_language(), native_lang(nil), "the editor's language by default")
      eq("en", native_lang(nil), "C.UTF-8 here")
      eq("ja", native_lang({ language = "ja" }))
      eq("en", native_lang({ language = "en" }))
      eq("zh", native_lang({ language = "zh" }))
      -- A tool called without `language` uses the configured one; an explicit one still wins.
      cc().stop({ silent = true })
      cc().setup({ memory_bank = { root = bank, language = "ja" } })
      local r = h.call("read_rules", {})
      contains(r.structuredContent.rules.content, "メモリバンクのルール")
      cc().stop({ silent = true })
      cc().setup({ memory_bank = { root = bank, language = "zh" } })
      r = h.call("read_rules", {})
      contains(r.structuredContent.rules.content, "记忆库规则", "zh from setup() reaches the tools")
      cc().stop({ silent = true })
      cc().setup({ memory_bank = { root = bank } })
      r = h.call("read_rules", {})
      ok(not r.structuredContent.rules.content:find("メモリバンクのルール", 1, true), "English rules")
      r = h.call("read_rules", { language = "ja" })
      contains(r.structuredContent.rules.content, "メモリバンクのルール")
    end,
  },
  {
    ":ClaudeContext context speaks the configured language",
    function()
      cc().stop({ silent = true })
      cc().setup({ memory_bank = { root = bank, language = "ja" } })
      vim.cmd("ClaudeContext context feature/ja-none")
      local text = buffer_text(0)
      vim.cmd("close")
      contains(text, "# コンテキスト · ブランチ feature/ja-none")
      contains(text, "## ルール")
      contains(text, "メモリバンクのルール")
      contains(text, "ブランチ 'feature/ja-none' のメモリバンクはまだありません")
      ok(
        text:find("## ルール", 1, true) < text:find("メモリバンクのルール", 1, true),
        "the heading, then the rules"
      )
      cc().stop({ silent = true })
      cc().setup({ memory_bank = { root = bank } })
    end,
  },
  {
    "MEMORY_BANK_ROOT wins over setup{memory_bank.root}",
    function()
      local other = h.tmpdir()
      vim.env.MEMORY_BANK_ROOT = other
      local r = h.call("list_memory_bank_documents", {})
      vim.env.MEMORY_BANK_ROOT = nil
      eq(other, r.structuredContent.root)
      eq("MEMORY_BANK_ROOT", r.structuredContent.rootSource)
    end,
  },
  {
    "commands complain clearly when the bridge is stopped",
    function()
      cc().stop({ silent = true })
      local got = notified(function()
        vim.cmd("ClaudeContext decision")
      end)
      eq(1, #got)
      contains(got[1].msg, "not running")
    end,
  },
}
