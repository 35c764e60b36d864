---@mod claude_context.health :checkhealth claude_context

local M = {}

local features = require("claude_context.health.features")

local uv = vim.uv or vim.loop

local function mode_of(path)
  local st = uv.fs_stat(path)
  return st and bit.band(st.mode, 511) or nil
end

---The `claude` executable the plugin would run (the same for :ClaudeContext open, the sub-agent
---and here: claude_context.cli), or nil and why not.
---@return string? path, string source_or_err
function M.claude_path()
  return require("claude_context.cli").find()
end

---Where the library at `path` came from, from the `install.json` written next to it.
---@param path string
---@return string
function M.provenance_line(path)
  local p = require("claude_context.install").provenance(path)
  if not p then
    if path:find("/target/release/", 1, true) or path:find("/target/debug/", 1, true) then
      return "origin: a local cargo build, loaded from cargo's output directory (not installed into lib/)"
    end
    return "origin: not recorded (not installed by :ClaudeContext build, build.lua or make)"
  end
  if p.source == "download" then
    return ("origin: downloaded prebuilt v%s for %s from %s on %s, sha256 %s (%s)"):format(
      tostring(p.version),
      tostring(p.target),
      tostring(p.url),
      tostring(p.installed_at),
      tostring(p.sha256),
      p.pins and ("verified against " .. tostring(p.pins))
        or "checked only against the download server's checksum: :ClaudeContext build installs a pinned one"
    )
  end
  return ("origin: built locally (%s) v%s on %s, sha256 %s"):format(
    p.source == "make" and "make" or "cargo build --release",
    tostring(p.version),
    tostring(p.installed_at),
    tostring(p.sha256)
  )
end

function M.check()
  local h = vim.health
  h.start("Neovim")
  if vim.fn.has("nvim-0.11") == 1 then
    h.ok("Neovim " .. tostring(vim.version()))
  else
    h.error("Neovim 0.11 or newer is required, this is " .. tostring(vim.version()))
  end

  h.start("Native library")
  local native = require("claude_context.native")
  local install = require("claude_context.install")
  local ok, err = native.try_load()
  if ok then
    h.ok(("loaded %s (version %s, matches the Lua side)"):format(native.info.path, native.info.version))
    h.info(M.provenance_line(native.info.path))
  else
    local target, why = install.target()
    h.error(err, {
      ":ClaudeContext build (or :Lazy build claude-context.nvim) downloads the prebuilt library for "
        .. (target or ("this system: " .. tostring(why)))
        .. ", verifies it against the checksum the plugin pins, and builds it with cargo when there is none",
      "Or run `make` in " .. native.plugin_root() .. " (needs a Rust toolchain)",
    })
  end

  h.start("Bridge")
  local st = ok and require("claude_context").status() or nil
  if not ok then
    h.warn("the bridge cannot run until the native library is built (see above)")
  elseif not st then
    local cfg = require("claude_context.config").options
    h.warn("the bridge is not running", {
      cfg.auto_start == false and ":ClaudeContext start (auto_start = false in your setup())"
        or ":ClaudeContext start (setup() has not run, or the bridge was stopped)",
    })
  else
    h.ok(("listening on %s, %d client(s), token %s"):format(st.url, #st.clients, st.token))
    if st.lock_file and uv.fs_stat(st.lock_file) then
      local fm, dm = mode_of(st.lock_file), mode_of(vim.fn.fnamemodify(st.lock_file, ":h"))
      if vim.fn.has("win32") == 1 then
        h.ok(("lock file %s"):format(st.lock_file))
      elseif fm == tonumber("600", 8) and dm == tonumber("700", 8) then
        h.ok(("lock file %s (0600 in a 0700 directory)"):format(st.lock_file))
      else
        h.error(
          ("lock file %s has mode %o in a directory of mode %o; expected 600 / 700"):format(
            st.lock_file,
            fm or 0,
            dm or 0
          )
        )
      end
    else
      h.error("the lock file is missing: Claude Code cannot find the editor", { ":ClaudeContext restart" })
    end
  end

  M.check_cli()
  M.check_sub_agent()
  features.check_edit()
  M.check_hooks()
  features.check_transcripts()
  M.check_claude_plugin()
  M.check_git()
  M.check_code_tools()
  features.check_claudecode(st)
  features.check_conversations()
end

---Runs `argv` (without a shell) and gives its result, waiting at most `ms`: health may block a
---little (the person asked for it), never long.
---@param argv string[]
---@return vim.SystemObj? proc
local function spawn(argv)
  return (require("claude_context.util.proc").run(argv))
end

---How long the CLI checks may take, all of them (they run side by side).
M.CLI_WAIT_MS = 5000

---A wait of `ms` from now, which several checks share.
---@param ms integer
---@return {ms:integer, deadline:number}
local function budget(ms)
  return { ms = ms, deadline = vim.uv.hrtime() + ms * 1e6 }
end

---Waits for `proc` within what is left of `b`: checks that share one budget cost it once, not
---once each (a hung CLI: `CLI_WAIT_MS`, not three times that).
---@param proc vim.SystemObj?
---@param b {ms:integer, deadline:number}
---@return vim.SystemCompleted? res, string? err
local function finish(proc, b)
  if not proc then
    return nil, "could not be started"
  end
  local res = proc:wait(math.max(0, math.floor((b.deadline - vim.uv.hrtime()) / 1e6)))
  if not res or res.code == 124 then
    pcall(proc.kill, proc, 9)
    return nil, ("gave no answer within %.1f s"):format(b.ms / 1000)
  end
  return res
end

---:checkhealth section: the Claude Code CLI and, for each feature that needs something of it,
---whether this one has it.
function M.check_cli()
  local h = vim.health
  h.start("Claude Code CLI")
  local cli = require("claude_context.cli")
  local claude, source = M.claude_path()
  local configured = cli.configured()
  if not claude then
    h.warn(source, {
      "The official installer: " .. cli.install().official,
      "or npm: " .. cli.install().npm,
      "or set setup({ claude = { cmd = '/path/to/claude' } })",
    })
    return
  end
  if configured and source ~= "config" then
    h.warn(("claude.cmd = %s is not executable; using %s (%s)"):format(vim.inspect(configured), claude, source))
  end
  -- Side by side: the version, the options it knows, its background sessions.
  local pv, ph, pa = spawn({ claude, "--version" }), spawn({ claude, "--help" }), spawn({ claude, "agents", "--json" })
  local b = budget(M.CLI_WAIT_MS)
  local res, err = finish(pv, b)
  local help = finish(ph, b)
  local agents, aerr = finish(pa, b)
  if not res or res.code ~= 0 then
    h.warn(
      ("%s --version failed (%s): %s"):format(
        claude,
        err or ("exit " .. tostring(res.code)),
        vim.trim(res and res.stderr or "")
      )
    )
    return
  end
  h.ok(("%s (%s): %s"):format(claude, source, vim.trim(res.stdout or "")))
  M.cli_features(res.stdout, help and help.code == 0 and help.stdout or "", agents, aerr)
end

---What each feature needs of the CLI, from its version, its `--help` and `claude agents --json`.
---@param version string `claude --version`'s output
---@param help string `claude --help`'s output ("" when it failed)
---@param agents vim.SystemCompleted?
---@param agents_err string?
function M.cli_features(version, help, agents, agents_err)
  local h = vim.health
  local hooks = require("claude_context.sessions.hooks")
  h.ok("Claude's terminal and /ide (diffs, selections, @-mentions): every supported Claude Code")
  if hooks.enabled() and hooks.cli_supported(version) == false then
    h.warn(
      ("Claude Code %s or newer is needed for the session hooks (states, turns, checkpoints, plan review): older CLIs do not run hooks without a shell"):format(
        hooks.min_cli() or "?"
      ),
      { "Update Claude Code (`claude update`), or turn the hooks off: setup({ sessions = { hooks = false } })" }
    )
  elseif hooks.enabled() then
    h.ok(
      ("session hooks (states, turns, checkpoints, review of a turn, plan review): Claude Code %s or newer"):format(
        hooks.min_cli() or "?"
      )
    )
  end
  local function knows(flag)
    return help:find(flag, 1, true) ~= nil
  end
  if knows("--worktree") then
    h.ok("worktrees (claude --worktree): supported")
  else
    h.info("this Claude Code has no --worktree: sessions in their own worktree need a newer CLI (`claude update`)")
  end
  local need = require("claude_context.cli").versions() or { bg = "?" }
  local agents_said = agents and vim.trim((agents.stderr or "") .. " " .. (agents.stdout or "")) or ""
  if not knows("--bg") then
    h.info(
      ("this Claude Code has no --bg: background sessions (:ClaudeContext new, agents) need a newer CLI: Claude Code %s or newer (`claude update`)"):format(
        need.bg
      )
    )
  elseif
    agents
    and agents.code ~= 0
    and (agents_said:find("unknown command", 1, true) or agents_said:find("unknown option", 1, true))
  then
    h.info(
      ("this Claude Code has no `claude agents --json`: background sessions need Claude Code %s or newer (`claude update`)"):format(
        need.bg
      )
    )
  elseif not agents or agents.code ~= 0 then
    h.warn(
      ("the background service does not answer: `claude agents --json` %s"):format(
        agents_err or ("failed (exit " .. tostring(agents.code) .. "): " .. vim.trim(agents.stderr or ""))
      ),
      {
        "Run `claude agents` in a shell to see why (signed in? `claude /login`)",
      }
    )
  else
    local ok, list = pcall(vim.json.decode, agents.stdout or "")
    if ok and type(list) == "table" then
      h.ok(("background sessions (claude --bg; `claude agents --json` lists %d)"):format(#list))
      local f = require("claude_context.agents.cli").parse_features(help)
      if not (f.attach and f.stop) then
        h.info(
          ("this Claude Code has no `claude attach` / `claude stop`: attaching to and stopping background sessions need Claude Code %s or newer (`claude update`)"):format(
            need.manage
          )
        )
      end
    else
      h.warn("`claude agents --json` did not print JSON: background sessions cannot be listed")
    end
  end
end

---:checkhealth section: the hooks `:ClaudeContext open` gives Claude (session states, turns,
---checkpoints, plan review).
function M.check_hooks()
  local h = vim.health
  h.start("Session hooks (:ClaudeContext open)")
  local hooks = require("claude_context.sessions.hooks")
  local targs = require("claude_context.config.terminal").options().args or {}
  local arg, why = hooks.settings_arg(targs)
  if arg then
    h.ok(
      ("on: %s runs them (mcp_tool hooks over the session's MCP connection for the tool calls)"):format(hooks.binary())
    )
  elseif why == "sessions.hooks = false" then
    h.info("off (setup{sessions = {hooks = false}}): no session states, turns, checkpoints, plan review or follow")
  else
    h.warn(("not added: %s"):format(why), {
      why:find("not built", 1, true) and ("Build it: " .. require("claude_context.native").HOW_TO_BUILD)
        or "Remove --settings from setup{terminal = {args}}, or merge the plugin's hooks into it",
    })
  end
end

---:checkhealth section: the Claude Code plugin for sessions started outside Neovim.
function M.check_claude_plugin()
  local h = vim.health
  h.start("Claude Code plugin (sessions started outside Neovim)")
  local cp = require("claude_context.claude_plugin")
  local r = cp.registered()
  if r.marketplace and r.installed then
    h.ok(("registered: marketplace %s (%s), plugin %s"):format(cp.MARKETPLACE, r.path or "?", cp.PLUGIN))
  else
    h.info(
      ("not registered (marketplace %s, plugin %s): only sessions started by :ClaudeContext open report turns and checkpoints"):format(
        r.marketplace and "added" or "not added",
        r.installed and "installed" or "not installed"
      ) .. ". Run the commands :ClaudeContext claude-plugin shows"
    )
  end
end

---:checkhealth section: git, which the worktrees of sessions and the memory bank's branches use.
function M.check_git()
  local h = vim.health
  h.start("git (worktrees, branches)")
  if vim.fn.executable("git") == 0 then
    h.warn("git is not on PATH: no worktrees for sessions, the memory bank uses the branch `main`", { "Install git" })
    return
  end
  local res, err = finish(spawn({ "git", "--version" }), budget(3000))
  local v = res and res.code == 0 and (res.stdout or ""):match("(%d+%.%d+%.?%d*)")
  if not v then
    h.warn("git --version failed: " .. tostring(err or (res and res.stderr)))
    return
  end
  if vim.version.ge(vim.version.parse(v), vim.version.parse(M.GIT_WORKTREES)) then
    h.ok(("git %s (worktrees need %s or newer)"):format(v, M.GIT_WORKTREES))
  else
    h.warn(
      ("git %s: sessions in their own worktree need git %s or newer (git worktree remove; --attr-source, so a worktree's attributes choose no filter)"):format(
        v,
        M.GIT_WORKTREES
      )
    )
  end
  local complete = require("claude_context.complete")
  if not complete.git_dirs() then
    h.info(("%s is not in a git repository: no worktrees, no branches for the memory bank"):format(vim.fn.getcwd()))
    return
  end
  local wts = complete.worktrees()
  h.info(("worktrees: %s"):format(#wts == 0 and "none besides the main one" or table.concat(wts, ", ")))
end

---The oldest git with every `git worktree` command the sessions use, and `--attr-source`
---(claude_context.agents.worktree: a worktree's `.gitattributes` names no filter or driver).
M.GIT_WORKTREES = "2.40.0"

---The filetypes the code tools may meet: those of the enabled language servers' configurations
---and of the loaded buffers. Returns them with the servers configured for each.
---@return string[] filetypes, table<string, string[]> servers_by_ft, table<string, string> problems
function M.code_filetypes()
  local fts, by_ft, problems = {}, {}, {}
  local function add(ft, server)
    if type(ft) ~= "string" or ft == "" then
      return
    end
    if not by_ft[ft] then
      by_ft[ft] = {}
      table.insert(fts, ft)
    end
    if server and not vim.tbl_contains(by_ft[ft], server) then
      table.insert(by_ft[ft], server)
    end
  end
  local ok, enabled = pcall(function()
    return vim.lsp._enabled_configs
  end)
  for name in pairs(ok and type(enabled) == "table" and enabled or {}) do
    local cfg_ok, cfg = pcall(function()
      return vim.lsp.config[name]
    end)
    cfg = cfg_ok and cfg or {}
    local cmd = type(cfg.cmd) == "table" and cfg.cmd[1] or nil
    if cmd and vim.fn.executable(cmd) == 0 then
      problems[name] = ("%s is not executable"):format(cmd)
    end
    for _, ft in ipairs(cfg.filetypes or {}) do
      add(ft, name)
    end
  end
  for _, c in ipairs(vim.lsp.get_clients()) do
    for _, ft in ipairs(c.config.filetypes or {}) do
      add(ft, c.name)
    end
  end
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == "" then
      add(vim.bo[b].filetype)
    end
  end
  table.sort(fts)
  return fts, by_ft, problems
end

---Whether a tree-sitter parser for filetype `ft` loads.
---@param ft string
---@return boolean, string lang
function M.has_parser(ft)
  local lang = vim.treesitter.language.get_lang(ft) or ft
  local ok, res = pcall(vim.treesitter.language.add, lang)
  return ok and res ~= false and res ~= nil, lang
end

---:checkhealth section: the language servers and tree-sitter parsers the model's code tools
---(lsp_*, code_outline) would use, per filetype.
function M.check_code_tools()
  local h = vim.health
  h.start("Code tools (lsp_*, code_outline): language servers and tree-sitter parsers")
  local fts, by_ft, problems = M.code_filetypes()
  if #fts == 0 then
    h.info(
      "no language server enabled (vim.lsp.enable) and no file open: lsp_* answer that no server is attached; code_outline needs a tree-sitter parser or a server"
    )
    return
  end
  for name, why in pairs(problems) do
    h.warn(("language server %s: %s; the lsp_* tools get nothing from it"):format(name, why))
  end
  for _, ft in ipairs(fts) do
    local servers = by_ft[ft]
    local parser, lang = M.has_parser(ft)
    local line = ("%s: language server %s; tree-sitter parser %s"):format(
      ft,
      #servers > 0 and table.concat(servers, ", ") or "none",
      parser and (lang .. " loads") or ("for " .. lang .. " missing")
    )
    if #servers > 0 and parser then
      h.ok(line)
    elseif #servers > 0 or parser then
      h.info(
        line
          .. (
            parser and " (lsp_* tools answer that no server is attached)"
            or " (code_outline uses the server's document symbols)"
          )
      )
    else
      h.warn(line .. ": the code tools cannot read these files' structure", {
        "Enable a language server (:help lsp-config) or install the parser (:TSInstall "
          .. lang
          .. " with nvim-treesitter)",
      })
    end
  end
end

---What the sub-agent (`execute_claude*`) runs with under `opts` (the options setup() got): the
---library's answer (`person_owns`, `allowed_tools`, `permission_mode`, `setting_sources`), or nil
---and why not. The library owns the check and the defaults (claude::args, config.rs).
---@param opts claude_context.Config? the resolved options (default: the current ones)
---@return {person_owns: boolean, allowed_tools: string[], permission_mode: string?, setting_sources: string[]?}? perms, string? err
function M.sub_agent_permissions(opts)
  local native, missing = require("claude_context.native").get()
  if not native then
    return nil, missing
  end
  local config = require("claude_context.config")
  local ok, res = pcall(native.sub_agent_permissions, config.to_native(opts or config.options))
  if not ok then
    return nil, require("claude_context.native").message(res)
  end
  return vim.json.decode(res)
end

---:checkhealth section: what the sub-agent of the session tools may do.
function M.check_sub_agent()
  local h = vim.health
  h.start("Claude sub-agent (execute_claude) permissions")
  local p, err = M.sub_agent_permissions()
  if not p then
    h.warn("cannot tell until the native library loads: " .. tostring(err))
    return
  end
  if p.person_owns then
    h.warn(
      "the sub-agent skips every permission check the plugin sets (setup{claude} has your own --settings, "
        .. "--dangerously-skip-permissions, --allow-dangerously-skip-permissions or bypassPermissions): "
        .. "one execute_claude call, by the model or by a prompt injected through repository content, "
        .. "can run what those allow, any command as you with a bypass",
      { "Remove it from setup{claude = {args, permission_mode}}", "See :help claude-context-session-permissions" }
    )
    return
  end
  local tools = p.allowed_tools or {}
  h.ok(
    ("tools: %s; permission mode: %s; settings loaded: %s"):format(
      #tools == 0 and "none" or table.concat(tools, ", "),
      tostring(p.permission_mode),
      table.concat(p.setting_sources or {}, ", ")
    )
  )
end

return M
