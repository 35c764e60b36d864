---@mod claude_context.install Installs the native library: a verified prebuilt asset, else a cargo build
---
--- Used by `build.lua` (lazy.nvim's build step, or `nvim -l build.lua`) and `:ClaudeContext build`.
--- 1. Downloads this platform's release assets for this plugin version (`.sha256` first, with
---    short timeouts, so a missing asset or no network is known in seconds), verifies each
---    checksum, checks in a child Neovim that the library loads and reports the expected version.
--- 2. Otherwise (no asset, no network, no match) runs `cargo build --release` in the plugin
---    directory and checks that library the same way.
--- 3. Installs by rename into `lib/` (never half-written; a library a running Neovim has mapped is
---    renamed away, never written over) and records where it came from in `lib/install.json`.
--- 4. Starts the bridge when `setup()` ran before the library existed (and `auto_start` is on).
---
--- This file does not `require` other plugin modules at load time: lazy.nvim runs build.lua
--- before the plugin is on 'runtimepath' the first time.

local M = {}

local uv = vim.uv or vim.loop

M.DEFAULT_URL = "https://github.com/claude-context/claude-context.nvim/releases/download"
---Environment variable overriding the download base URL (tests point it at a loopback server).
M.ENV_URL = "CLAUDE_CONTEXT_DOWNLOAD_URL"
---Environment variable naming the cargo program used for the fallback build.
M.ENV_CARGO = "CLAUDE_CONTEXT_CARGO"
---Seconds allowed to connect, and for the small checksum file: a missing asset or a missing
---network is known this fast.
M.CONNECT_TIMEOUT = 5
M.CHECKSUM_TIMEOUT = 10
---Seconds allowed for one library download (a few MB).
M.DOWNLOAD_TIMEOUT = 90
---Milliseconds allowed for the child Neovim that checks a library.
M.CHECK_TIMEOUT_MS = 20000
---The provenance file written next to the library.
M.SIDECAR = "install.json"

---@return string root of this plugin checkout
function M.plugin_root()
  local src = debug.getinfo(1, "S").source:sub(2)
  return vim.fn.fnamemodify(src, ":p:h:h:h")
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
---@param opts table?
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

---Checks setup's `install` option: `{ url = string? }`.
---@param o any
function M.check_options(o)
  if type(o) ~= "table" then
    error(("claude-context: option install must be a table, got %s"):format(type(o)), 0)
  end
  for k in pairs(o) do
    if k ~= "url" then
      error(("claude-context: unknown option install.%s (see :help claude-context-build)"):format(tostring(k)), 0)
    end
  end
  if o.url ~= nil and type(o.url) ~= "string" then
    error("claude-context: option install.url must be a string", 0)
  end
end

-- ---------------------------------------------------------------------------------------------
-- Waiting without blocking: inside lazy.nvim's build coroutine the task is suspended and resumed
-- by the callback; inside our own coroutine (:ClaudeContext build) the callback resumes it; in
-- `nvim -l build.lua` (no coroutine) vim.wait runs the event loop.

---@type table<thread, boolean>
local own = setmetatable({}, { __mode = "k" })

local function lazy_async()
  local co = coroutine.running()
  local A = co and package.loaded["lazy.async"]
  return A and type(A.running) == "function" and A.running() or nil
end

---Runs `start(cb)` and returns what it passes to `cb`. Inside lazy.nvim, `poll()` (when given) is
---asked every half second for a progress line to show while waiting.
---@param start fun(cb: fun(res: any))
---@param poll (fun(): string?)?
---@return any
local function await(start, poll)
  local co = coroutine.running()
  local la = lazy_async()
  if la then
    local done, res = false, nil
    start(function(r)
      done, res = true, r
      vim.schedule(function()
        la:resume()
      end)
    end)
    while not done do
      if poll and type(la.sleep) == "function" then
        la:sleep(500)
        local line = not done and poll() or nil
        if line then
          coroutine.yield(line)
        end
      else
        la:suspend()
      end
    end
    return res
  elseif co and own[co] then
    local done, res = false, nil
    local waiting = false
    start(function(r)
      done, res = true, r
      if waiting then
        vim.schedule(function()
          local ok, err = coroutine.resume(co)
          if not ok then
            vim.notify("claude-context: build: " .. tostring(err), vim.log.levels.ERROR, { title = "claude-context" })
          end
        end)
      end
    end)
    if not done then
      waiting = true
      coroutine.yield()
    end
    return res
  end
  local done, res = false, nil
  start(function(r)
    done, res = true, r
  end)
  vim.wait(30 * 60 * 1000, function()
    return done
  end, 20)
  return res
end

---Runs a command; never raises (a missing program is a result with code -1). With `progress`,
---the latest line of its stderr is shown as progress inside lazy.nvim (cargo's "Compiling …").
---@param argv string[]
---@param o table? vim.system options
---@param progress boolean?
---@return {code: integer, stdout: string, stderr: string}
local function run(argv, o, progress)
  local opts = vim.tbl_extend("force", { text = true }, o or {})
  local err_buf, latest, shown = {}, nil, nil
  if progress then
    opts.stderr = function(_, data)
      if data then
        table.insert(err_buf, data)
        if #err_buf > 256 then
          err_buf = { table.concat(err_buf):sub(-16384) }
        end
        for line in data:gmatch("[^\r\n]+") do
          if vim.trim(line) ~= "" then
            latest = vim.trim(line)
          end
        end
      end
    end
  end
  local poll = progress and function()
    if latest ~= shown then
      shown = latest
      return latest
    end
  end or nil
  return await(function(cb)
    local ok, err = pcall(vim.system, argv, opts, function(r)
      cb({ code = r.code, stdout = r.stdout or "", stderr = progress and table.concat(err_buf) or (r.stderr or "") })
    end)
    if not ok then
      cb({ code = -1, stdout = "", stderr = tostring(err) })
    end
  end, poll)
end

-- ---------------------------------------------------------------------------------------------
-- Checksums

---@param path string
---@return string? bytes
local function read_file(path)
  local f = io.open(path, "rb")
  if not f then
    return nil
  end
  local s = f:read("*a")
  f:close()
  return s
end

-- SHA-256 round constants (FIPS 180-4).
local K = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

---SHA-256 of a string in Lua (LuaJIT's `bit`): the checksum of last resort, when the system
---has no sha256sum, shasum, certutil or openssl.
---@param msg string
---@return string hex
function M.sha256(msg)
  local band, bor, bxor, bnot = bit.band, bit.bor, bit.bxor, bit.bnot
  local rshift, lshift, ror, tobit = bit.rshift, bit.lshift, bit.ror, bit.tobit
  local len = #msg
  local bits = len * 8
  local hi, lo = math.floor(bits / 2 ^ 32), bits % 2 ^ 32
  local function be32(x)
    return string.char(band(rshift(x, 24), 255), band(rshift(x, 16), 255), band(rshift(x, 8), 255), band(x, 255))
  end
  msg = msg .. "\128" .. string.rep("\0", (64 - (len + 9) % 64) % 64) .. be32(tobit(hi)) .. be32(tobit(lo))
  local h = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 }
  local w = {}
  for i = 1, #msg, 64 do
    for j = 0, 15 do
      local a, b, c, d = msg:byte(i + j * 4, i + j * 4 + 3)
      w[j] = bor(lshift(a, 24), lshift(b, 16), lshift(c, 8), d)
    end
    for j = 16, 63 do
      local v15, v2 = w[j - 15], w[j - 2]
      local s0 = bxor(ror(v15, 7), ror(v15, 18), rshift(v15, 3))
      local s1 = bxor(ror(v2, 17), ror(v2, 19), rshift(v2, 10))
      w[j] = tobit(w[j - 16] + s0 + w[j - 7] + s1)
    end
    local a, b, c, d, e, f, g, hh = h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8]
    for j = 0, 63 do
      local s1 = bxor(ror(e, 6), ror(e, 11), ror(e, 25))
      local ch = bxor(band(e, f), band(bnot(e), g))
      local t1 = hh + s1 + ch + K[j + 1] + w[j]
      local s0 = bxor(ror(a, 2), ror(a, 13), ror(a, 22))
      local maj = bxor(band(a, b), band(a, c), band(b, c))
      hh, g, f, e, d, c, b, a = g, f, e, tobit(d + t1), c, b, a, tobit(t1 + s0 + maj)
    end
    h[1], h[2], h[3], h[4] = tobit(h[1] + a), tobit(h[2] + b), tobit(h[3] + c), tobit(h[4] + d)
    h[5], h[6], h[7], h[8] = tobit(h[5] + e), tobit(h[6] + f), tobit(h[7] + g), tobit(h[8] + hh)
  end
  local out = {}
  for i = 1, 8 do
    out[i] = bit.tohex(h[i])
  end
  return table.concat(out)
end

---SHA-256 of a file as lowercase hex, with whatever the system has (else in Lua).
---@param path string
---@param tools string[]? the programs to try (default: sha256sum, shasum, certutil, openssl)
---@return string? hex, string? err
function M.sha256_file(path, tools)
  local tries = {
    { "sha256sum", { "sha256sum", "--", path } },
    { "shasum", { "shasum", "-a", "256", path } },
    { "certutil", { "certutil", "-hashfile", path, "SHA256" } },
    { "openssl", { "openssl", "dgst", "-sha256", "-r", path } },
  }
  if tools then
    tries = vim.tbl_filter(function(t)
      return vim.tbl_contains(tools, t[1])
    end, tries)
  end
  for _, t in ipairs(tries) do
    if vim.fn.executable(t[1]) == 1 then
      local r = run(t[2])
      if r.code == 0 then
        -- sha256sum, shasum and `openssl -r`: "<hex> <file>"; certutil: a header line, the hash
        -- (older versions with spaces between bytes), a footer line.
        for line in (r.stdout or ""):gmatch("[^\r\n]+") do
          local hex = line:match("^(%x+)")
          if not (hex and #hex == 64) then
            hex = line:gsub("%s", ""):match("^(%x+)$")
          end
          if hex and #hex == 64 then
            return hex:lower()
          end
        end
      end
    end
  end
  local data = read_file(path)
  if not data then
    return nil, "cannot read " .. path .. " to verify it"
  end
  return M.sha256(data)
end

-- ---------------------------------------------------------------------------------------------
-- Files

---Writes `text` to `path` atomically (a temporary file in the same directory, then rename).
---@param path string
---@param text string
---@return boolean ok, string? err
function M.write_atomic(path, text)
  local tmp = ("%s.tmp-%d"):format(path, uv.os_getpid())
  local f, err = io.open(tmp, "wb")
  if not f then
    return false, err
  end
  f:write(text)
  f:close()
  local ok, rerr = uv.fs_rename(tmp, path)
  if not ok then
    os.remove(tmp)
    return false, rerr
  end
  return true
end

---Moves `src` to `dest` by rename. A file already at `dest` is never written over in place: on
---Unix the rename replaces the name (a Neovim that mapped the old library keeps its inode); on
---Windows, where a loaded DLL cannot be replaced, the old one is first renamed away
---(`<dest>.old-<time>`, removed on a later install when nothing maps it any more).
---@param src string
---@param dest string
---@return boolean ok, string? err
function M.install_file(src, dest)
  if is_windows() and uv.fs_stat(dest) then
    local old = ("%s.old-%d"):format(dest, os.time())
    local ok, err = uv.fs_rename(dest, old)
    if not ok then
      return false, ("cannot move the old %s away: %s"):format(dest, tostring(err))
    end
  end
  local ok, err = uv.fs_rename(src, dest)
  if not ok then
    return false, ("cannot rename %s to %s: %s"):format(src, dest, tostring(err))
  end
  return true
end

---Removes leftovers of earlier installs (`*.old-*` no longer mapped, temporary files).
---@param dir string
local function sweep(dir)
  for name, kind in vim.fs.dir(dir) do
    if kind == "file" and (name:find("%.old%-%d+$") or name:find("%.part$")) then
      os.remove(dir .. "/" .. name)
    end
  end
end

-- ---------------------------------------------------------------------------------------------
-- Steps

---@class claude_context.InstallOpts
---@field root string? the plugin checkout to install into (default: this one)
---@field version string? the version the library must report (default: the Lua side's)
---@field url string? download base URL (default: $CLAUDE_CONTEXT_DOWNLOAD_URL, then the releases)
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

---Checks a library in a child Neovim.
---@param path string
---@param expected string
---@return boolean ok, string why
function M.check_library(path, expected)
  local script = M.plugin_root() .. "/lua/claude_context/check_native.lua"
  local r = run({ vim.v.progpath, "--clean", "--headless", "-l", script, path }, { timeout = M.CHECK_TIMEOUT_MS })
  local out = vim.trim((r.stdout or "") .. "\n" .. (r.stderr or ""))
  local ver = out:match("version (%S+)")
  if r.code ~= 0 or not ver then
    local why = out:match("error ([^\n]+)") or ("the check exited with %s: %s"):format(tostring(r.code), out)
    return false, why
  end
  if ver ~= expected then
    return false, ("it reports version %s, but this plugin is %s"):format(ver, expected)
  end
  return true, ver
end

---Fetches `url` into `dest` with curl. Returns nil on success, else why not (one line).
---@param url string
---@param dest string
---@param max_time integer seconds
---@return string? err
local function fetch(url, dest, max_time)
  if vim.fn.executable("curl") ~= 1 then
    return "curl is not installed"
  end
  local r = run({
    "curl",
    "--fail",
    "--silent",
    "--show-error",
    "--location",
    "--proto",
    "=https,http",
    "--connect-timeout",
    tostring(M.CONNECT_TIMEOUT),
    "--max-time",
    tostring(max_time),
    "--output",
    dest,
    url,
  })
  if r.code == 0 then
    return nil
  end
  os.remove(dest)
  local msg = vim.trim(r.stderr):gsub("\n.*", "")
  if r.code == 22 then
    local status = msg:match("error: (%d%d%d)") or msg:match("(%d%d%d)")
    if status == "404" then
      return ("%s: not found (HTTP 404)"):format(url)
    end
    return ("%s: %s"):format(url, msg)
  elseif r.code == 18 then
    return ("%s: the download was truncated (%s)"):format(url, msg)
  elseif r.code == 28 then
    return ("%s: timed out (%s)"):format(url, msg)
  end
  return ("%s: %s"):format(url, msg ~= "" and msg or ("curl exited with " .. r.code))
end

---Downloads, verifies and checks both assets into temporary files in `lib_dir`.
---@return {lib: string, relay: string, sha: {lib: string, relay: string}, url: string}? files, string? err
local function download(o, lib_dir, log)
  local target, why = M.target()
  if not target then
    return nil, why
  end
  local names = M.asset_names(o.version, target)
  local base = M.base_url(o):gsub("/+$", "") .. "/v" .. o.version .. "/"
  local files, sha = {}, {}
  for _, kind in ipairs({ "lib", "relay" }) do
    local name = names[kind]
    local sum_path = ("%s/.%s.sha256.part"):format(lib_dir, name)
    local err = fetch(base .. name .. ".sha256", sum_path, M.CHECKSUM_TIMEOUT)
    if err then
      return nil, ("no prebuilt %s for v%s on %s: %s"):format(kind == "lib" and "library" or "relay", o.version, target, err)
    end
    local want = ((read_file(sum_path) or ""):match("^%s*(%x+)") or ""):lower()
    os.remove(sum_path)
    if #want ~= 64 then
      return nil, ("%s.sha256 does not hold a SHA-256 checksum"):format(base .. name)
    end
    local part = ("%s/.%s.%d.part"):format(lib_dir, name, uv.os_getpid())
    table.insert(log, "downloading " .. base .. name)
    o.progress("downloading " .. name)
    err = fetch(base .. name, part, M.DOWNLOAD_TIMEOUT)
    if err then
      return nil, err
    end
    files[kind] = part
    local got, herr = M.sha256_file(part)
    if not got then
      os.remove(part)
      return nil, herr
    end
    if got ~= want then
      os.remove(part)
      return nil, ("checksum mismatch for %s: expected %s, got %s (refused)"):format(name, want, got)
    end
    sha[kind] = got
    table.insert(log, ("%s: sha256 %s verified"):format(name, got))
  end
  if not is_windows() then
    uv.fs_chmod(files.relay, tonumber("755", 8))
  end
  o.progress("checking the downloaded library")
  local ok, why2 = M.check_library(files.lib, o.version)
  if not ok then
    os.remove(files.lib)
    os.remove(files.relay)
    return nil, ("the downloaded %s was refused: %s"):format(names.lib, why2)
  end
  return { lib = files.lib, relay = files.relay, sha = sha, url = base .. names.lib }
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
  local r = run({ cargo, "build", "--release", "--workspace", "--locked" }, { cwd = o.root }, true)
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

---Installs the native library (see the module's description). Waits without blocking when
---called inside lazy.nvim's build or `M.run_async`; otherwise runs the event loop until done.
---@param opts claude_context.InstallOpts?
---@return claude_context.InstallResult
function M.run(opts)
  local o = vim.tbl_extend("force", {}, opts or {})
  -- Where the loader looks (lua/claude_context/native.lua; a test may point it elsewhere).
  local native = package.loaded["claude_context.native"]
  o.root = o.root or (native and native.root) or M.plugin_root()
  -- The version of the Lua side that will load it (this checkout).
  o.version = o.version or M.plugin_version()
  if not o.progress then
    if lazy_async() then
      o.progress = function(msg)
        coroutine.yield(msg)
      end
    else
      o.progress = function() end
    end
  end
  local log = {}
  local lib_dir = o.root .. "/lib"
  vim.fn.mkdir(lib_dir, "p")
  sweep(lib_dir)
  local result = { ok = false, log = log }
  local files, derr
  if o.download ~= false then
    files, derr = download(o, lib_dir, log)
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
    return result
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
  }
  M.write_atomic(lib_dir .. "/" .. M.SIDECAR, vim.json.encode(record))
  result.ok = true
  result.path = lib_dest
  if result.source == "download" then
    result.message = ("claude-context: installed the prebuilt library v%s for %s (sha256 verified)"):format(o.version, target)
  else
    result.message = ("claude-context: built and installed the library v%s with cargo%s"):format(
      o.version,
      derr and (" (no prebuilt one: " .. derr .. ")") or ""
    )
  end
  if o.start ~= false then
    M.after_install(result, o)
  end
  return result
end

---After an install in a running Neovim: when `setup()` ran while the library was missing, load
---it now and start the bridge (with `auto_start`); when another library is loaded already, say
---that a restart picks up the new one.
---@param result claude_context.InstallResult
---@param o table
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
  if cc._setup_done and cfg and cfg.options.auto_start then
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
  local co = coroutine.create(function()
    local ok, res = pcall(M.run, opts)
    if not ok then
      res = { ok = false, message = "claude-context: build: " .. tostring(res), log = {} }
    end
    if on_done then
      on_done(res)
    end
  end)
  own[co] = true
  local ok, err = coroutine.resume(co)
  if not ok then
    vim.notify("claude-context: build: " .. tostring(err), vim.log.levels.ERROR, { title = "claude-context" })
  end
end

---The provenance record next to a library (`install.json`), or nil.
---@param lib_path string
---@return table?
function M.provenance(lib_path)
  local s = read_file(vim.fn.fnamemodify(lib_path, ":h") .. "/" .. M.SIDECAR)
  if not s then
    return nil
  end
  local ok, t = pcall(vim.json.decode, s)
  return ok and type(t) == "table" and t or nil
end

---`:ClaudeContext build`.
---@param commands table claude_context.commands
function M.register(commands)
  commands.register("build", {
    desc = "install the native library: a verified prebuilt one, else cargo build",
    run = function()
      vim.notify("claude-context: installing the native library…", vim.log.levels.INFO, { title = "claude-context" })
      M.run_async({}, function(res)
        vim.notify(res.message, res.ok and vim.log.levels.INFO or vim.log.levels.ERROR, { title = "claude-context" })
      end)
    end,
  })
end

return M
