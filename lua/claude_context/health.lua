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
  local ok, err = native.try_load()
  if ok then
    h.ok(("loaded %s (version %s, matches the Lua side)"):format(native.info.path, native.info.version))
  else
    h.error(err, { "Run `make` in " .. native.plugin_root(), "With lazy.nvim: :Lazy build claude-context.nvim" })
  end

  h.start("Bridge")
  local st = ok and require("claude_context").status() or nil
  if not st then
    h.warn("the bridge is not running", { ":ClaudeContext start, or setup({ auto_start = true })" })
  else
    h.ok(("listening on %s, %d client(s), token %s"):format(st.url, #st.clients, st.token))
    if st.lock_file and uv.fs_stat(st.lock_file) then
      local fm, dm = mode_of(st.lock_file), mode_of(vim.fn.fnamemodify(st.lock_file, ":h"))
      if fm == tonumber("600", 8) and dm == tonumber("700", 8) then
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
      "The official installer: " .. cli.INSTALL_OFFICIAL,
      "or npm: " .. cli.INSTALL_NPM,
      "or set setup({ claude = { cmd = '/path/to/claude' } })",
    })
  else
    if configured and source ~= "config" then
      h.warn(("%s = %s is not executable; using %s (%s)"):format(key, vim.inspect(configured), claude, source))
    end
    local res = vim.system({ claude, "--version" }, { text = true }):wait(5000)
    if res.code == 0 then
      h.ok(("%s (%s): %s"):format(claude, source, vim.trim(res.stdout or "")))
    else
      h.warn(("%s --version failed (exit %s): %s"):format(claude, tostring(res.code), vim.trim(res.stderr or "")))
    end
  end
end

return M
