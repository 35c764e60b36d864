-- Release assets on a loopback https server (tests/nvim/asset_server.py, with a throwaway
-- self-signed certificate that curl trusts through CURL_CA_BUNDLE, set here for this test
-- process only) for the installer specs, the plugin's pins for them, and a stand-in for cargo
-- that records that it ran.
local h = require("helpers")
local M = {}

local here = h.here
M.root = vim.fn.fnamemodify(here, ":h:h")

local function python()
  local p = vim.env.CLAUDE_CONTEXT_TEST_PYTHON
  if p and p ~= "" then
    return p
  end
  return M.root .. "/.deps/venv/bin/python"
end

local install = require("claude_context.install")
M.version = install.plugin_version(M.root)
M.target = assert(install.target())
-- The library `make build` installed into this checkout: the "good" asset.
M.real_lib = M.root .. "/lib/" .. install.lib_name()
M.real_relay = M.root .. "/lib/" .. install.relay_name()

---A self-signed certificate for 127.0.0.1, made once per test process; curl (run by the
---installer from this process) trusts it through CURL_CA_BUNDLE.
local function certificate()
  if M.cert then
    return M.cert, M.key
  end
  local dir = h.tmpdir()
  local cert, key = dir .. "/cert.pem", dir .. "/key.pem"
  local r = vim
    .system({
      "openssl",
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      "2",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
    }, { text = true })
    :wait(60000)
  h.eq(0, r.code, "openssl made no certificate: " .. (r.stderr or ""))
  M.cert, M.key = cert, key
  vim.env.CURL_CA_BUNDLE = cert
  return cert, key
end

---Starts the server on a fresh directory. Returns {dir, url (https), http_url, stop, requests}.
function M.serve()
  h.ok(vim.uv.fs_stat(M.real_lib), "build the library first: make build (missing " .. M.real_lib .. ")")
  local cert, key = certificate()
  local dir = h.tmpdir()
  local srv = { dir = dir, out = "" }
  srv.proc = vim.system({ python(), here .. "/asset_server.py", dir, cert, key }, {
    stdin = true,
    stdout = function(_, data)
      srv.out = srv.out .. (data or "")
    end,
  })
  local port = h.wait_for(function()
    return srv.out:match("http_port %d+\n") and srv.out:match("^port (%d+)")
  end, 10000, "the asset server's port")
  srv.url = "https://127.0.0.1:" .. port
  srv.http_url = "http://127.0.0.1:" .. srv.out:match("http_port (%d+)")
  function srv.stop()
    pcall(srv.proc.write, srv.proc, nil)
    srv.proc:wait(2000)
  end
  ---The requests, in order: "https <path>" or "http <path>".
  function srv.requests()
    return vim.split(vim.trim(h.read(dir .. "/requests.log") or ""), "\n", { trimempty = true })
  end
  return srv
end

---Publishes the library (and relay) as release assets of `version` under the server's directory,
---each with the `.sha256` the server vouches for it with (which the installer must ignore).
---o.lib_bytes replaces the library's bytes; o.lib_sha replaces its published checksum.
function M.publish(srv, version, o)
  o = o or {}
  local names = install.asset_names(version, M.target)
  local vdir = srv.dir .. "/v" .. version
  vim.fn.mkdir(vdir, "p")
  local lib = o.lib_bytes or assert(h.read(M.real_lib))
  h.write(vdir .. "/" .. names.lib, lib)
  h.write(vdir .. "/" .. names.relay, assert(h.read(M.real_relay)))
  local lib_sha = o.lib_sha or install.sha256_file(vdir .. "/" .. names.lib)
  h.write(vdir .. "/" .. names.lib .. ".sha256", lib_sha .. "  " .. names.lib .. "\n")
  h.write(
    vdir .. "/" .. names.relay .. ".sha256",
    install.sha256_file(vdir .. "/" .. names.relay) .. "  " .. names.relay .. "\n"
  )
  return names
end

---Writes the pins a release commit carries (`pins/v<version>.sha256`) into the plugin checkout
---`root`: the real library and relay unless o.lib_sha / o.relay_sha say otherwise.
function M.pin(root, version, o)
  o = o or {}
  local names = install.asset_names(version, M.target)
  vim.fn.mkdir(root .. "/pins", "p")
  h.write(
    ("%s/pins/v%s.sha256"):format(root, version),
    table.concat({
      "# pinned by the test",
      (o.lib_sha or install.sha256_file(M.real_lib)) .. "  " .. names.lib,
      (o.relay_sha or install.sha256_file(M.real_relay)) .. "  " .. names.relay,
      "",
    }, "\n")
  )
  return names
end

---A fake cargo: records its arguments in `<dir>/cargo-ran`, "builds" by copying the real library
---and relay into ./target/release with cargo's names.
function M.fake_cargo()
  local dir = h.tmpdir()
  local script = dir .. "/cargo"
  h.write(
    script,
    table.concat({
      "#!/bin/sh",
      ('echo "$PWD $*" >> %q'):format(dir .. "/cargo-ran"),
      "echo '   Compiling claude-context-core v0 (fake)' >&2",
      "sleep ${FAKE_CARGO_SLEEP:-0}",
      "echo '    Finished release (fake)' >&2",
      "mkdir -p target/release",
      ("cp %q target/release/%s"):format(M.real_lib, install.cargo_lib_name()),
      ("cp %q target/release/%s"):format(M.real_relay, install.relay_name()),
      "",
    }, "\n")
  )
  vim.uv.fs_chmod(script, tonumber("755", 8))
  return { cmd = script, record = dir .. "/cargo-ran" }
end

---A copy of the files build.lua needs, in a fresh directory (so it installs there).
function M.plugin_copy()
  local dir = h.tmpdir()
  vim.fn.mkdir(dir .. "/lua/claude_context/install", "p")
  vim.fn.mkdir(dir .. "/lua/claude_context/util", "p")
  local files = {
    "build.lua",
    "lua/claude_context/version.lua",
    "lua/claude_context/check_native.lua",
    -- The installer runs its programs through the plugin's one process runner.
    "lua/claude_context/util/proc.lua",
  }
  for name in vim.fs.dir(M.root .. "/lua/claude_context/install") do
    table.insert(files, "lua/claude_context/install/" .. name)
  end
  for _, f in ipairs(files) do
    h.write(dir .. "/" .. f, assert(h.read(M.root .. "/" .. f)))
  end
  return dir
end

return M
