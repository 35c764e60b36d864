---@mod claude_context.install Installs the native library: a pinned prebuilt asset, else a cargo build
---
--- Used by `build.lua` (lazy.nvim's build step, or `nvim -l build.lua`) and `:ClaudeContext build`.
--- 1. Looks up the SHA-256 this plugin version pins for this platform's release assets
---    (`pins/v<version>.sha256`, committed with each release; see `claude_context.install.pins`).
---    Without a pin there is no download: it builds from source and says why.
--- 2. Downloads the assets over https only (no redirect to anything else; a mirror named by
---    `install.url` or `$CLAUDE_CONTEXT_DOWNLOAD_URL` chooses where from, never what is accepted),
---    compares each with its pin, and only then checks in a child Neovim that the library loads
---    and reports the expected version.
--- 3. Otherwise (no pin, no asset, no network, no match) runs `cargo build --release` in the
---    plugin directory and checks that library the same way.
--- 4. Installs by rename into `lib/` (never half-written; a library a running Neovim has mapped is
---    renamed away, never written over) and records where it came from in `lib/install.json`.
--- 5. Starts the bridge when `setup()` ran before the library existed (and `auto_start` is on).
---
--- Its parts live beside this file: `proc` (waiting without blocking, running programs),
--- `files` (atomic writes, installing by rename), `sha256`, `pins`, `download` (curl, https
--- only) and `verify` (the pin, then the load check).
--- Nothing here `require`s other plugin modules at load time: lazy.nvim runs build.lua before
--- the plugin is on 'runtimepath' the first time, so the parts are found next to this file (and
--- the process runner, util/proc.lua, beside its folder).

-- The parts, by path (build.lua may load this file before the plugin is on 'runtimepath').
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)[/\\]") or "."
for _, part in ipairs({ "proc", "files", "sha256", "pins", "download", "verify" }) do
  local name = "claude_context.install." .. part
  if package.loaded[name] == nil then
    package.preload[name] = function()
      return dofile(here .. "/" .. part .. ".lua")
    end
  end
end
-- The plugin's one process runner, which install.proc runs programs with: in util/, beside.
if package.loaded["claude_context.util.proc"] == nil then
  package.preload["claude_context.util.proc"] = function()
    return dofile(here .. "/../util/proc.lua")
  end
end
local proc = require("claude_context.install.proc")
local disk = require("claude_context.install.files")
local sha256 = require("claude_context.install.sha256")
local pins = require("claude_context.install.pins")
local download = require("claude_context.install.download")
local verify = require("claude_context.install.verify")

local M = {}

local uv = vim.uv or vim.loop

M.DEFAULT_URL = "https://github.com/claude-context/claude-context.nvim/releases/download"
---Environment variable naming a mirror to download from (https only; what is accepted is still
---what the plugin pins). Tests point it at a loopback server.
M.ENV_URL = "CLAUDE_CONTEXT_DOWNLOAD_URL"
---Environment variable naming the cargo program used for the fallback build.
M.ENV_CARGO = "CLAUDE_CONTEXT_CARGO"
M.CONNECT_TIMEOUT = download.CONNECT_TIMEOUT
M.DOWNLOAD_TIMEOUT = download.DOWNLOAD_TIMEOUT
M.CHECK_TIMEOUT_MS = verify.CHECK_TIMEOUT_MS
---The provenance file written next to the library.
M.SIDECAR = "install.json"

---@return string root of this plugin checkout
function M.plugin_root()
  local src = debug.getinfo(1, "S").source:sub(2)
  return vim.fn.fnamemodify(src, ":p:h:h:h:h")
end

---@param root string?
---@return string version of the Lua side
function M.plugin_version(root)
  return dofile((root or M.plugin_root()) .. "/lua/claude_context/version.lua")
end

---@return boolean
local function is_windows()
  return vim.fn.has("win32") == 1
end

---@return "so"|"dylib"|"dll"
function M.lib_ext()
  if vim.fn.has("mac") == 1 then
    return "dylib"
  elseif is_windows() then
    return "dll"
  end
  return "so"
end

---The installed library's file name (in lib/).
---@return string
function M.lib_name()
  return "claude_context_native." .. M.lib_ext()
end

---The file name cargo gives the library (no `lib` prefix on Windows).
---@return string
function M.cargo_lib_name()
  return (is_windows() and "" or "lib") .. "claude_context_native." .. M.lib_ext()
end

---The relay's file name.
---@return string
function M.relay_name()
  return "claude-context-mcp" .. (is_windows() and ".exe" or "")
end

---The Rust target triple of the release assets for this machine, or nil and why not.
---@return string? target, string? why_not
function M.target()
  local u = uv.os_uname()
  local m = (u.machine or ""):lower()
  local arch = (m == "x86_64" or m == "amd64" or m == "x64") and "x86_64"
    or (m == "aarch64" or m == "arm64") and "aarch64"
    or nil
  local sys = u.sysname or ""
  if not arch then
    return nil, ("no prebuilt libraries for the %s processor"):format(u.machine)
  end
  if sys == "Linux" then
    return arch .. "-unknown-linux-gnu"
  elseif sys == "Darwin" then
    return arch .. "-apple-darwin"
  elseif sys:match("^Windows") and arch == "x86_64" then
    return "x86_64-pc-windows-msvc"
  end
  return nil, ("no prebuilt libraries for %s on %s"):format(sys, arch)
end

---The release asset names for a version and target (the scheme the release workflow publishes;
---each also has `<name>.sha256`).
---@param version string
---@param target string
---@return {lib: string, relay: string}
function M.asset_names(version, target)
  local windows = target:find("windows", 1, true) ~= nil
  local ext = windows and "dll" or target:find("apple", 1, true) and "dylib" or "so"
  return {
    lib = ("claude_context_native-v%s-%s.%s"):format(version, target, ext),
    relay = ("claude-context-mcp-v%s-%s%s"):format(version, target, windows and ".exe" or ""),
  }
end

---The download base URL: `opts.url`, `$CLAUDE_CONTEXT_DOWNLOAD_URL`, setup's `install.url`, or
---the project's GitHub releases.
---@param opts claude_context.InstallOpts?
---@return string
function M.base_url(opts)
  if opts and opts.url and opts.url ~= "" then
    return opts.url
  end
  local env = vim.env[M.ENV_URL]
  if env and env ~= "" then
    return env
  end
  local cfg = package.loaded["claude_context.config"]
  local o = cfg and cfg.options and cfg.options.install
  if type(o) == "table" and type(o.url) == "string" and o.url ~= "" then
    return o.url
  end
  return M.DEFAULT_URL
end

---SHA-256 of a string, in Lua (see `claude_context.install.sha256`).
M.sha256 = sha256.string
---SHA-256 of a file as lowercase hex, with whatever the system has (else in Lua).
M.sha256_file = sha256.file

M.write_atomic = disk.write_atomic
M.install_file = disk.install_file

-- ---------------------------------------------------------------------------------------------
-- Steps

---@class claude_context.InstallOpts
---@field root string? the plugin checkout to install into (default: this one)
---@field version string? the version the library must report (default: the Lua side's)
---@field url string? base URL, https only (default: $CLAUDE_CONTEXT_DOWNLOAD_URL, then the releases)
---@field cargo string? cargo program (default: $CLAUDE_CONTEXT_CARGO, then `cargo`)
---@field download boolean? false: skip the download, build with cargo
---@field build boolean? false: no cargo fallback
---@field progress fun(msg: string)? progress messages (default: lazy's, else stdout in `nvim -l`)
---@field start boolean? false: do not start the bridge afterwards

---@class claude_context.InstallResult
---@field ok boolean
---@field source "download"|"cargo"|nil
---@field path string? the installed library
---@field message string one line for the person: what happened, or why it failed
---@field download_error string? why the download was not used
---@field log string[] every step
---@field started boolean? the bridge was started after the install

---Checks a library in a child Neovim (its code runs: only for a library already vouched for).
---@param path string
---@param expected string
---@return boolean ok, string why
function M.check_library(path, expected)
  return verify.check_library(M.plugin_root() .. "/lua/claude_context/check_native.lua", path, expected)
end

---Downloads both assets into temporary files in `lib_dir`, each compared with the checksum this
---plugin pins for it before the library is load-checked.
---@return {lib: string, relay: string, sha: {lib: string, relay: string}, url: string, pins: string}? files, string? err
local function prebuilt(o, lib_dir, log)
  local target, why = M.target()
  if not target then
    return nil, why
  end
  local names = M.asset_names(o.version, target)
  local pinned, perr = pins.lookup(o.root, o.version, names)
  if not pinned then
    return nil, perr
  end
  local base = M.base_url(o):gsub("/+$", "") .. "/v" .. o.version .. "/"
  local https, uerr = download.https_only(base)
  if not https then
    return nil, uerr
  end
  local files, sha = {}, {}
  local function discard()
    for _, part in pairs(files) do
      os.remove(part)
    end
  end
  for _, kind in ipairs({ "lib", "relay" }) do
    local name = names[kind]
    local part = ("%s/.%s.%d.part"):format(lib_dir, name, uv.os_getpid())
    table.insert(log, "downloading " .. base .. name)
    o.progress("downloading " .. name)
    local err = download.fetch(base .. name, part)
    if err then
      discard()
      return nil,
        ("no prebuilt %s for v%s on %s: %s"):format(kind == "lib" and "library" or "relay", o.version, target, err)
    end
    files[kind] = part
    local got, verr = verify.against_pin(part, name, pinned[kind])
    if not got then
      discard()
      return nil, verr
    end
    sha[kind] = got
    table.insert(log, ("%s: sha256 %s, as %s pins"):format(name, got, pins.relpath(o.version)))
  end
  if not is_windows() then
    uv.fs_chmod(files.relay, tonumber("755", 8))
  end
  o.progress("checking the downloaded library")
  local ok, why2 = M.check_library(files.lib, o.version)
  if not ok then
    discard()
    return nil, ("the downloaded %s was refused: %s"):format(names.lib, why2)
  end
  return { lib = files.lib, relay = files.relay, sha = sha, url = base .. names.lib, pins = pins.relpath(o.version) }
end

---Builds with cargo and copies the results into temporary files in `lib_dir`.
---@return {lib: string, relay: string}? files, string? err
local function cargo_build(o, lib_dir, log)
  local cargo = o.cargo or vim.env[M.ENV_CARGO]
  if not cargo or cargo == "" then
    cargo = "cargo"
  end
  if vim.fn.executable(cargo) ~= 1 then
    return nil,
      ("no Rust toolchain (`%s` not found) to build it: install Rust from https://rustup.rs and run :ClaudeContext build again"):format(
        cargo
      )
  end
  o.progress("building with cargo (the first build takes a few minutes)")
  table.insert(log, "running " .. cargo .. " build --release --workspace --locked in " .. o.root)
  local r = proc.run({ cargo, "build", "--release", "--workspace", "--locked" }, { cwd = o.root }, true)
  if r.code ~= 0 then
    local tail = vim.split(vim.trim(r.stderr or ""), "\n")
    return nil, ("cargo build failed (exit %s): %s"):format(tostring(r.code), tail[#tail] or "")
  end
  local out = {}
  for kind, name in pairs({ lib = M.cargo_lib_name(), relay = M.relay_name() }) do
    local src = o.root .. "/target/release/" .. name
    local part = ("%s/.%s.%d.part"):format(lib_dir, name, uv.os_getpid())
    local ok, err = uv.fs_copyfile(src, part)
    if not ok then
      return nil, ("cargo built, but %s cannot be copied: %s"):format(src, tostring(err))
    end
    out[kind] = part
  end
  local ok, why = M.check_library(out.lib, o.version)
  if not ok then
    os.remove(out.lib)
    os.remove(out.relay)
    return nil, "the library cargo built was refused: " .. why
  end
  return out
end

---`opts` with its defaults: where the loader looks, the version of this checkout, and how
---progress is told (yielded from a coroutine when the install runs in one).
---@param opts claude_context.InstallOpts?
---@return claude_context.InstallOpts
local function run_options(opts)
  local o = vim.tbl_extend("force", {}, opts or {})
  -- Where the loader looks (lua/claude_context/native.lua; a test may point it elsewhere).
  local native = package.loaded["claude_context.native"]
  o.root = o.root or (native and native.root) or M.plugin_root()
  -- The version of the Lua side that will load it (this checkout).
  o.version = o.version or M.plugin_version()
  if not o.progress then
    if proc.lazy_async() then
      o.progress = function(msg)
        coroutine.yield(msg)
      end
    else
      o.progress = function() end
    end
  end
  return o
end

---Installs the library and relay `files` (downloaded or built) into `lib_dir` with their
---record; fills `result` (ok, path, message). False when they could not be put in place.
---@return boolean
local function put_in_place(o, files, lib_dir, derr, result)
  local lib_dest = lib_dir .. "/" .. M.lib_name()
  local relay_dest = lib_dir .. "/" .. M.relay_name()
  local ok, err = M.install_file(files.relay, relay_dest)
  if ok then
    ok, err = M.install_file(files.lib, lib_dest)
  end
  if not ok then
    os.remove(files.lib)
    os.remove(files.relay)
    result.source = nil
    result.message = "claude-context: the native library was not installed: " .. err
    return false
  end
  local target = M.target()
  local record = {
    source = result.source,
    version = o.version,
    target = target,
    installed_at = os.date("!%Y-%m-%dT%H:%M:%SZ"),
    url = files.url,
    sha256 = files.sha and files.sha.lib or M.sha256_file(lib_dest),
    relay_sha256 = files.sha and files.sha.relay or nil,
    pins = files.pins,
  }
  M.write_atomic(lib_dir .. "/" .. M.SIDECAR, vim.json.encode(record))
  result.ok = true
  result.path = lib_dest
  if result.source == "download" then
    result.message = ("claude-context: installed the prebuilt library v%s for %s (sha256 verified against %s)"):format(
      o.version,
      target,
      files.pins
    )
  else
    result.message = ("claude-context: built and installed the library v%s with cargo%s"):format(
      o.version,
      derr and (" (no prebuilt one: " .. derr .. ")") or ""
    )
  end
  return true
end

---Installs the native library (see the module's description). Waits without blocking when
---called inside lazy.nvim's build or `M.run_async`; otherwise runs the event loop until done.
---@param opts claude_context.InstallOpts?
---@return claude_context.InstallResult
function M.run(opts)
  local o = run_options(opts)
  local log = {}
  local lib_dir = o.root .. "/lib"
  vim.fn.mkdir(lib_dir, "p")
  disk.sweep(lib_dir)
  local result = { ok = false, log = log }
  local files, derr
  if o.download ~= false then
    files, derr = prebuilt(o, lib_dir, log)
    if files then
      result.source = "download"
    else
      result.download_error = derr
      table.insert(log, "download not used: " .. derr)
      o.progress("no verified prebuilt library (" .. derr .. "); building with cargo")
    end
  end
  local berr
  if not files and o.build ~= false then
    files, berr = cargo_build(o, lib_dir, log)
    result.source = files and "cargo" or nil
  end
  if not files then
    local parts = {}
    if derr then
      table.insert(parts, "download: " .. derr)
    end
    if berr then
      table.insert(parts, "build: " .. berr)
    end
    result.message = "claude-context: the native library was not installed. " .. table.concat(parts, "; ")
    return result
  end
  if put_in_place(o, files, lib_dir, derr, result) and o.start ~= false then
    M.after_install(result, o)
  end
  return result
end

---After an install in a running Neovim: when `setup()` ran while the library was missing, load
---it now and start the bridge (with `auto_start`); when another library is loaded already, say
---that a restart picks up the new one.
---@param result claude_context.InstallResult
---@param o claude_context.InstallOpts
function M.after_install(result, o)
  local cc = package.loaded["claude_context"]
  local native = package.loaded["claude_context.native"]
  if not cc or not native then
    return
  end
  if native.info and native.info.path and native.info.version then
    if native.info.version ~= o.version or native.info.path ~= result.path then
      result.message = result.message .. "; restart Neovim to load it"
    end
    return
  end
  local cfg = package.loaded["claude_context.config"]
  local bridge = package.loaded["claude_context.bridge"]
  if bridge and bridge.setup_done and cfg and cfg.options.auto_start then
    local ok, err = cc.start({ silent = true })
    if ok then
      result.started = true
      result.message = result.message .. "; the bridge is running"
    else
      result.message = result.message .. "; the bridge did not start: " .. tostring(err)
    end
  end
end

---Runs `M.run` in a coroutine of its own (the editor keeps working); `on_done(result)` follows.
---@param opts claude_context.InstallOpts?
---@param on_done fun(result: claude_context.InstallResult)?
function M.run_async(opts, on_done)
  proc.spawn(function()
    local ok, res = pcall(M.run, opts)
    if not ok then
      res = { ok = false, message = "claude-context: build: " .. tostring(res), log = {} }
    end
    if on_done then
      on_done(res)
    end
  end)
end

---The provenance record next to a library (`install.json`), or nil.
---@param lib_path string
---@return {source: string?, version: string?, installed_at: string?, sha256: string?, url: string?}?
function M.provenance(lib_path)
  local s = disk.read(vim.fn.fnamemodify(lib_path, ":h") .. "/" .. M.SIDECAR)
  if not s then
    return nil
  end
  local ok, t = pcall(vim.json.decode, s)
  return ok and type(t) == "table" and t or nil
end

---`:ClaudeContext build`.
---@param commands claude_context.Commands
function M.register(commands)
  commands.register("build", {
    desc = "install the native library: a prebuilt one matching the plugin's pins, else cargo build",
    run = function()
      vim.notify("claude-context: installing the native library…", vim.log.levels.INFO, { title = "claude-context" })
      M.run_async({}, function(res)
        vim.notify(res.message, res.ok and vim.log.levels.INFO or vim.log.levels.ERROR, { title = "claude-context" })
      end)
    end,
  })
end

return M
