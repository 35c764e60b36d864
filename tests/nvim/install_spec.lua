-- The installer (lua/claude_context/install/, run by build.lua and :ClaudeContext build) against
-- release assets on a loopback https server: an asset the plugin pins installs by rename with
-- its provenance recorded; a self-served asset with its own matching checksum, no pin for the
-- version, plain http, a redirect to http, a checksum that is not the pinned one, a truncated
-- download, a 404, no network, a wrong version and a library that does not load are each
-- refused with a clear message and fall back to the cargo build (a stand-in that records it
-- ran). Needs `make build` (the "good" asset).
local h = require("helpers")
local A = h.load("assets")
local eq, ok, contains = h.eq, h.ok, h.contains
local install = require("claude_context.install")

local srv = A.serve()

---Installs into a fresh plugin directory from `url`, with the fake cargo. The directory pins
---the real library and relay for A.version unless o.pin is false (or a table: A.pin's options).
local function run(o)
  o = o or {}
  local dest = h.tmpdir()
  local cargo = A.fake_cargo()
  if o.pin ~= false then
    A.pin(dest, o.version or A.version, type(o.pin) == "table" and o.pin or nil)
  end
  o.pin = nil
  local res = install.run(vim.tbl_extend("force", { root = dest, url = srv.url, cargo = cargo.cmd, start = false }, o))
  return res, dest, cargo
end

---The requests the server saw from `mark` on (its index into srv.requests()).
local function requests_since(mark)
  return vim.list_slice(srv.requests(), mark + 1)
end

local function lib_of(dest)
  return dest .. "/lib/" .. install.lib_name()
end

---Nothing half-written is left in lib/.
local function no_leftovers(dest)
  for name in vim.fs.dir(dest .. "/lib") do
    ok(not name:find("%.part$") and not name:find("%.tmp%-"), "leftover in lib/: " .. name)
  end
end

local function fell_back(res, dest, cargo, why)
  contains(res.download_error, why, "the reason the download was refused")
  ok(h.read(cargo.record), "the cargo fallback ran")
  contains(h.read(cargo.record), dest .. " build --release", "cargo ran in the plugin directory")
  eq(true, res.ok, res.message)
  eq("cargo", res.source)
  contains(res.message, why, "the message says why there was no prebuilt library")
  eq("cargo", install.provenance(lib_of(dest)).source, "install.json records the local build")
  no_leftovers(dest)
end

return {
  {
    "installer_accepts_a_pinned_asset: it installs by rename, verified against the pin, with its provenance recorded, and cargo does not run",
    function()
      local names = A.publish(srv, A.version)
      local mark = #srv.requests()
      local res, dest, cargo = run()
      eq(true, res.ok, res.message)
      eq("download", res.source)
      contains(res.message, "sha256 verified against pins/v" .. A.version .. ".sha256")
      local want = install.sha256_file(A.real_lib)
      eq(want, install.sha256_file(lib_of(dest)), "the installed library is the asset")
      eq(install.sha256_file(A.real_relay), install.sha256_file(dest .. "/lib/" .. install.relay_name()))
      eq(tonumber("755", 8), h.mode(dest .. "/lib/" .. install.relay_name()), "the relay is executable")
      eq(nil, h.read(cargo.record), "cargo did not run")
      local p = install.provenance(lib_of(dest))
      eq("download", p.source)
      eq(want, p.sha256)
      eq(A.version, p.version)
      eq(srv.url .. "/v" .. A.version .. "/" .. names.lib, p.url)
      eq("pins/v" .. A.version .. ".sha256", p.pins)
      -- The server's own .sha256 files are not even asked for: what is accepted is the pin.
      eq({
        "https /v" .. A.version .. "/" .. names.lib,
        "https /v" .. A.version .. "/" .. names.relay,
      }, requests_since(mark))
      no_leftovers(dest)
    end,
  },
  {
    "a library a running Neovim has mapped is replaced by rename, never written over in place",
    function()
      A.publish(srv, A.version)
      local dest = h.tmpdir()
      A.pin(dest, A.version)
      vim.fn.mkdir(dest .. "/lib", "p")
      h.write(lib_of(dest), "the old library")
      local fd = assert(vim.uv.fs_open(lib_of(dest), "r", 0))
      local res = install.run({ root = dest, url = srv.url, cargo = "/nonexistent/cargo", start = false })
      eq(true, res.ok, res.message)
      eq("the old library", vim.uv.fs_read(fd, 100, 0), "the old file's contents are untouched")
      vim.uv.fs_close(fd)
      eq(install.sha256_file(A.real_lib), install.sha256_file(lib_of(dest)))
    end,
  },
  {
    "an asset that is not the one pinned is refused and the cargo build runs instead",
    function()
      A.publish(srv, A.version)
      local res, dest, cargo = run({ pin = { lib_sha = string.rep("0", 64) } })
      fell_back(res, dest, cargo, "checksum mismatch")
      contains(res.download_error, "the plugin pins " .. string.rep("0", 64))
    end,
  },
  {
    "installer_refuses_self_served_checksum: a self-served library with its own matching checksum is refused, before anything loads it",
    function()
      -- A loadable library of the right version, but not the released one: the server (or a
      -- mirror) vouches for it with its own matching .sha256.
      local names = A.publish(srv, A.version, { lib_bytes = assert(h.read(A.real_lib)) .. "self-served" })
      local res, dest, cargo = run()
      fell_back(res, dest, cargo, "checksum mismatch for " .. names.lib)
      contains(res.download_error, "the plugin pins " .. install.sha256_file(A.real_lib))
      eq(install.sha256_file(A.real_lib), install.sha256_file(lib_of(dest)), "what got installed is cargo's build")
      -- Not a library at all, with a matching checksum: refused by the pin, not by the load
      -- check (the load check would have run its code).
      A.publish(srv, A.version, { lib_bytes = string.rep("not a library ", 1000) })
      res, dest, cargo = run()
      fell_back(res, dest, cargo, "checksum mismatch for " .. names.lib)
      ok(not res.download_error:find("cannot load it", 1, true), res.download_error)
      -- The same through a mirror named by $CLAUDE_CONTEXT_DOWNLOAD_URL.
      vim.env.CLAUDE_CONTEXT_DOWNLOAD_URL = srv.url
      res, dest, cargo = run({ url = "" })
      vim.env.CLAUDE_CONTEXT_DOWNLOAD_URL = nil
      fell_back(res, dest, cargo, "checksum mismatch for " .. names.lib)
    end,
  },
  {
    "installer_without_pin_builds_from_source: no pin for this version, no download, and the message says why",
    function()
      A.publish(srv, A.version)
      local mark = #srv.requests()
      local res, dest, cargo = run({ pin = false })
      fell_back(res, dest, cargo, "pins no prebuilt assets")
      contains(res.message, "pins/v" .. A.version .. ".sha256 is absent")
      eq({}, requests_since(mark), "nothing was downloaded")
      -- A pin file without this platform's assets: the same.
      local dest2 = h.tmpdir()
      vim.fn.mkdir(dest2 .. "/pins", "p")
      h.write(dest2 .. "/pins/v" .. A.version .. ".sha256", string.rep("a", 64) .. "  other-asset\n")
      res = install.run({ root = dest2, url = srv.url, cargo = A.fake_cargo().cmd, start = false })
      eq("cargo", res.source, res.message)
      contains(res.download_error, "pins no " .. install.asset_names(A.version, A.target).lib)
      -- A malformed pin file is not used.
      h.write(
        dest2 .. "/pins/v" .. A.version .. ".sha256",
        "deadbeef  " .. install.asset_names(A.version, A.target).lib .. "\n"
      )
      res = install.run({ root = dest2, url = srv.url, cargo = A.fake_cargo().cmd, start = false })
      eq("cargo", res.source, res.message)
      contains(res.download_error, "line 1 is not")
      eq({}, requests_since(mark), "nothing was downloaded")
    end,
  },
  {
    "installer_refuses_http: a plain-http download URL is refused before anything is fetched",
    function()
      A.publish(srv, A.version)
      local mark = #srv.requests()
      local res, dest, cargo = run({ url = srv.http_url })
      fell_back(res, dest, cargo, "downloads are https only")
      eq({}, requests_since(mark), "nothing was fetched over http")
    end,
  },
  {
    "installer_refuses_redirect_to_http: an https URL redirecting to http is refused",
    function()
      A.publish(srv, A.version)
      local mark = #srv.requests()
      local res, dest, cargo = run({ url = srv.url .. "/redirect-http" })
      fell_back(res, dest, cargo, "refused a redirect away from https")
      for _, r in ipairs(requests_since(mark)) do
        ok(r:find("^https "), "a request over http: " .. r)
      end
    end,
  },
  {
    "a truncated download is refused and the cargo build runs instead",
    function()
      A.publish(srv, A.version)
      local res, dest, cargo = run({ url = srv.url .. "/truncate" })
      fell_back(res, dest, cargo, "truncated")
    end,
  },
  {
    "a missing asset (404) is refused and the cargo build runs instead",
    function()
      local res, dest, cargo = run({ url = srv.url .. "/nothing-here" })
      fell_back(res, dest, cargo, "HTTP 404")
      contains(res.download_error, "no prebuilt library for v" .. A.version .. " on " .. A.target)
    end,
  },
  {
    "no network (nothing listening) falls back to cargo",
    function()
      local res, dest, cargo = run({ url = "https://127.0.0.1:9" })
      fell_back(res, dest, cargo, "127.0.0.1:9")
    end,
  },
  {
    "a library of another version is refused (and so is the build, which reports it too)",
    function()
      -- The plugin says 0.0.9: the published library (and the one cargo builds) report A.version.
      A.publish(srv, "0.0.9")
      local res, dest, cargo = run({ version = "0.0.9", pin = {} })
      contains(res.download_error, ("it reports version %s, but this plugin is 0.0.9"):format(A.version))
      ok(h.read(cargo.record), "the cargo fallback ran")
      eq(false, res.ok)
      contains(res.message, "the library cargo built was refused")
      eq(nil, vim.uv.fs_stat(lib_of(dest)), "nothing was installed")
      no_leftovers(dest)
    end,
  },
  {
    "a library that does not load is refused, even with a matching checksum",
    function()
      local garbage = string.rep("not a library ", 1000)
      A.publish(srv, A.version, { lib_bytes = garbage })
      local res, dest, cargo = run({ pin = { lib_sha = install.sha256(garbage) } })
      fell_back(res, dest, cargo, "was refused: cannot load it")
    end,
  },
  {
    "without an asset and without cargo: nothing installed, the message says to install Rust",
    function()
      local res, dest = run({ url = srv.url .. "/nothing-here", cargo = "/nonexistent/cargo" })
      eq(false, res.ok)
      contains(res.message, "HTTP 404")
      contains(res.message, "no Rust toolchain")
      contains(res.message, "rustup.rs")
      eq(nil, vim.uv.fs_stat(lib_of(dest)))
      no_leftovers(dest)
    end,
  },
  {
    "the download URL comes from $CLAUDE_CONTEXT_DOWNLOAD_URL, else the project's releases",
    function()
      vim.env.CLAUDE_CONTEXT_DOWNLOAD_URL = nil
      eq("https://github.com/claude-context/claude-context.nvim/releases/download", install.base_url())
      vim.env.CLAUDE_CONTEXT_DOWNLOAD_URL = srv.url .. "/x"
      eq(srv.url .. "/x", install.base_url())
      eq("http://o", install.base_url({ url = "http://o" }))
      vim.env.CLAUDE_CONTEXT_DOWNLOAD_URL = nil
      require("claude_context").setup({ auto_start = false, install = { url = "http://mirror.example/dl" } })
      eq("http://mirror.example/dl", install.base_url())
      local okk, err = pcall(require("claude_context").setup, { auto_start = false, install = { uri = "x" } })
      eq(false, okk)
      contains(err, "unknown option install.uri")
      require("claude_context").setup({ auto_start = false })
      eq("https://github.com/claude-context/claude-context.nvim/releases/download", install.base_url())
    end,
  },
  {
    "the Lua SHA-256 (no checksum program on the system) agrees with sha256sum",
    function()
      eq("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", install.sha256(""))
      eq("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", install.sha256("abc"))
      local dir = h.tmpdir()
      -- Lengths around the padding boundaries, and a real binary.
      for _, n in ipairs({ 55, 56, 63, 64, 65, 1000 }) do
        local p = ("%s/%d.bin"):format(dir, n)
        local bytes = {}
        for i = 1, n do
          bytes[i] = string.char((i * 37 + n) % 256)
        end
        h.write(p, table.concat(bytes))
        eq(install.sha256_file(p, { "sha256sum" }), install.sha256_file(p, {}), "length " .. n)
      end
      eq(install.sha256_file(A.real_relay, { "sha256sum" }), install.sha256_file(A.real_relay, {}))
    end,
  },
  {
    "asset names follow the documented scheme",
    function()
      eq({
        lib = "claude_context_native-v1.2.3-x86_64-unknown-linux-gnu.so",
        relay = "claude-context-mcp-v1.2.3-x86_64-unknown-linux-gnu",
      }, install.asset_names("1.2.3", "x86_64-unknown-linux-gnu"))
      eq({
        lib = "claude_context_native-v1.2.3-aarch64-apple-darwin.dylib",
        relay = "claude-context-mcp-v1.2.3-aarch64-apple-darwin",
      }, install.asset_names("1.2.3", "aarch64-apple-darwin"))
      eq({
        lib = "claude_context_native-v1.2.3-x86_64-pc-windows-msvc.dll",
        relay = "claude-context-mcp-v1.2.3-x86_64-pc-windows-msvc.exe",
      }, install.asset_names("1.2.3", "x86_64-pc-windows-msvc"))
    end,
  },
  {
    "nvim -l build.lua installs the prebuilt library into its plugin directory",
    function()
      A.publish(srv, A.version)
      local plugin = A.plugin_copy()
      A.pin(plugin, A.version)
      local r = vim
        .system({ vim.v.progpath, "--clean", "--headless", "-l", plugin .. "/build.lua" }, {
          env = { CLAUDE_CONTEXT_DOWNLOAD_URL = srv.url, CLAUDE_CONTEXT_CARGO = "/nonexistent/cargo" },
          text = true,
        })
        :wait(60000)
      eq(0, r.code, r.stdout .. r.stderr)
      contains(r.stdout, "installed the prebuilt library v" .. A.version)
      eq(install.sha256_file(A.real_lib), install.sha256_file(lib_of(plugin)))
      eq("download", install.provenance(lib_of(plugin)).source)
    end,
  },
  {
    'make without cargo (a `build = "make"` spec on a machine without Rust) installs the prebuilt library',
    function()
      A.publish(srv, A.version)
      local plugin = A.plugin_copy()
      A.pin(plugin, A.version)
      h.write(plugin .. "/Makefile", assert(h.read(A.root .. "/Makefile")))
      local r = vim
        .system({ "make", "-C", plugin, "build", "CARGO=/nonexistent/cargo", "NVIM_FOR_BUILD=" .. vim.v.progpath }, {
          env = { CLAUDE_CONTEXT_DOWNLOAD_URL = srv.url, CLAUDE_CONTEXT_CARGO = "/nonexistent/cargo" },
          text = true,
        })
        :wait(60000)
      eq(0, r.code, r.stdout .. r.stderr)
      contains(r.stdout, "/nonexistent/cargo not found: installing the prebuilt library")
      contains(r.stdout, "installed the prebuilt library v" .. A.version)
      eq("download", install.provenance(lib_of(plugin)).source)
    end,
  },
  {
    "inside lazy.nvim's build coroutine, build.lua waits without blocking and reports progress",
    function()
      A.publish(srv, A.version)
      local plugin = A.plugin_copy()
      A.pin(plugin, A.version)
      vim.env.CLAUDE_CONTEXT_DOWNLOAD_URL = srv.url
      -- lazy.async's contract: the build runs in a coroutine of an Async; suspend() yields until
      -- resume(); a yielded string is a progress message.
      local yielded, suspends = {}, 0
      local task = {}
      function task:suspend()
        self.suspended = true
        suspends = suspends + 1
        coroutine.yield()
      end
      function task:resume()
        self.suspended = false
        vim.schedule(function()
          self:step()
        end)
      end
      function task:sleep(ms)
        vim.defer_fn(function()
          self:resume()
        end, ms)
        self:suspend()
      end
      function task:step()
        while not self.suspended and coroutine.status(self.co) == "suspended" do
          local okr, msg = coroutine.resume(self.co)
          assert(okr, msg)
          if msg then
            table.insert(yielded, msg)
          end
        end
      end
      package.loaded["lazy.async"] = {
        running = function()
          return coroutine.running() == task.co and task or nil
        end,
      }
      local done, err = false, nil
      task.co = coroutine.create(function()
        local okb, e = pcall(assert(loadfile(plugin .. "/build.lua")))
        done, err = true, (not okb) and e or nil
      end)
      task:step()
      eq(false, done, "the build yielded instead of blocking")
      h.wait_for(function()
        return done
      end, 60000, "build.lua under the lazy stand-in")
      package.loaded["lazy.async"] = nil
      vim.env.CLAUDE_CONTEXT_DOWNLOAD_URL = nil
      eq(nil, err)
      ok(suspends > 0, "it suspended while waiting")
      ok(
        vim.tbl_contains(yielded, "downloading " .. install.asset_names(A.version, A.target).lib),
        vim.inspect(yielded)
      )
      contains(yielded[#yielded], "installed the prebuilt library")
      eq("download", install.provenance(lib_of(plugin)).source)

      -- The cargo fallback (no asset): cargo's latest line shows as progress while it builds.
      yielded, done, err = {}, false, nil
      local cargo = A.fake_cargo()
      vim.env.CLAUDE_CONTEXT_DOWNLOAD_URL = srv.url .. "/nothing-here"
      vim.env.CLAUDE_CONTEXT_CARGO = cargo.cmd
      vim.env.FAKE_CARGO_SLEEP = "2"
      package.loaded["lazy.async"] = {
        running = function()
          return coroutine.running() == task.co and task or nil
        end,
      }
      task.co = coroutine.create(function()
        local okb, e = pcall(assert(loadfile(plugin .. "/build.lua")))
        done, err = true, (not okb) and e or nil
      end)
      task.suspended = false
      task:step()
      h.wait_for(function()
        return done
      end, 60000, "build.lua's cargo fallback under the lazy stand-in")
      package.loaded["lazy.async"] = nil
      vim.env.CLAUDE_CONTEXT_DOWNLOAD_URL, vim.env.CLAUDE_CONTEXT_CARGO, vim.env.FAKE_CARGO_SLEEP = nil, nil, nil
      eq(nil, err)
      ok(vim.tbl_contains(yielded, "Compiling claude-context-core v0 (fake)"), vim.inspect(yielded))
      contains(yielded[#yielded], "built and installed the library")
      eq("cargo", install.provenance(lib_of(plugin)).source)
    end,
  },
  {
    "the release workflow writes the pin file in the format the installer reads",
    function()
      -- The lines of .github/workflows/release.yml that write pins/vV.sha256, run on assets with
      -- their .sha256 as the build jobs stage them (Windows' sha256sum marks binary files "*").
      local wf = assert(h.read(A.root .. "/.github/workflows/release.yml"))
      local script = wf:match('\n(%s*mkdir %-p pins\n.-\n%s*} > "pins/%$tag%.sha256")\n')
      ok(script, "release.yml writes pins/$tag.sha256")
      local dir = h.tmpdir()
      local names = install.asset_names("9.9.9", A.target)
      local win = install.asset_names("9.9.9", "x86_64-pc-windows-msvc")
      vim.fn.mkdir(dir .. "/dist", "p")
      local sums = {}
      for i, name in ipairs({ names.lib, names.relay, win.lib }) do
        h.write(dir .. "/dist/" .. name, ("asset %d"):format(i))
        sums[name] = install.sha256(("asset %d"):format(i))
        local mark = name == win.lib and " *" or "  "
        h.write(dir .. "/dist/" .. name .. ".sha256", sums[name] .. mark .. name .. "\n")
      end
      local r = vim.system({ "bash", "-euc", "tag=v9.9.9\n" .. script }, { cwd = dir, text = true }):wait(10000)
      eq(0, r.code, r.stderr)
      local by_name, why = require("claude_context.install.pins").read(dir, "9.9.9")
      eq(sums, by_name, why)
    end,
  },
  {
    "stop the server",
    function()
      srv.stop()
    end,
  },
}
