---@mod claude_context.health :checkhealth claude_context

local M = {}

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
        h.error(("lock file %s has mode %o in a directory of mode %o; expected 600 / 700"):format(st.lock_file, fm or 0, dm or 0))
      end
    else
      h.error("the lock file is missing: Claude Code cannot find the editor", { ":ClaudeContext restart" })
    end
  end

  h.start("Claude Code CLI")
  local cli = require("claude_context.cli")
  local claude, source = M.claude_path()
  local configured, key = cli.configured()
  if key == "terminal.cmd" then
    h.warn("terminal.cmd is deprecated: set claude.cmd (one setting for :ClaudeContext open, the sub-agent and this check)")
  end
  if not claude then
    h.warn(source, {
      "The official installer: " .. cli.install().official,
      "or npm: " .. cli.install().npm,
      "or set setup({ claude = { cmd = '/path/to/claude' } })",
    })
  else
    if configured and source ~= "config" then
      h.warn(("%s = %s is not executable; using %s (%s)"):format(key, vim.inspect(configured), claude, source))
    end
    local res = vim.system({ claude, "--version" }, { text = true }):wait(5000)
    if res.code == 0 then
      h.ok(("%s (%s): %s"):format(claude, source, vim.trim(res.stdout or "")))
      local hooks = require("claude_context.hooks")
      if hooks.enabled() and hooks.cli_supported(res.stdout) == false then
        h.warn(
          ("Claude Code %s or newer is needed for the session hooks (states, turns, checkpoints, plan review): older CLIs do not run hooks without a shell"):format(hooks.MIN_CLI),
          { "Update Claude Code (`claude update`), or turn the hooks off: setup({ sessions = { hooks = false } })" }
        )
      end
    else
      h.warn(("%s --version failed (exit %s): %s"):format(claude, tostring(res.code), vim.trim(res.stderr or "")))
    end
  end

  M.check_sub_agent()
  M.check_claude_plugin()
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
    h.info(("not registered (marketplace %s, plugin %s): only sessions started by :ClaudeContext open report turns and checkpoints"):format(r.marketplace and "added" or "not added", r.installed and "installed" or "not installed"), { "Run the commands :ClaudeContext claude-plugin shows" })
  end
end

---Whether the sub-agent (`execute_claude*`) skips permission checks, per `setup{claude = …}`.
---@param c table? `setup{claude = …}`
---@return boolean
function M.sub_agent_skips_permissions(c)
  c = c or {}
  local args = c.args or {}
  for i, a in ipairs(args) do
    if a == "--dangerously-skip-permissions" or a == "--permission-mode=bypassPermissions" then
      return true
    end
    if a == "--permission-mode" and args[i + 1] == "bypassPermissions" then
      return true
    end
  end
  return c.permission_mode == "bypassPermissions"
end

---:checkhealth section: what the sub-agent of the session tools may do.
function M.check_sub_agent()
  local h = vim.health
  h.start("Claude sub-agent (execute_claude) permissions")
  local c = require("claude_context.config").options.claude or {}
  if M.sub_agent_skips_permissions(c) then
    h.warn(
      "the sub-agent skips every permission check (setup{claude}: --dangerously-skip-permissions or "
        .. "bypassPermissions): one execute_claude call, by the model or by a prompt injected through "
        .. "repository content, can run any command as you",
      { "Remove it from setup{claude = {args, permission_mode}}", "See :help claude-context-session-permissions" }
    )
    return
  end
  local tools = c.allowed_tools or { "Read", "Grep", "Glob" }
  h.ok(
    ("tools: %s; permission mode: %s; settings loaded: %s"):format(
      #tools == 0 and "none" or table.concat(tools, ", "),
      c.permission_mode or "dontAsk",
      table.concat(c.setting_sources or { "user" }, ", ")
    )
  )
end

return M
