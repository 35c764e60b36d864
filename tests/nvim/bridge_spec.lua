-- The bridge in a real Neovim: lazy loading, lock file life cycle, getWorkspaceFolders following
-- :cd/:tcd/:lcd and LSP folders, fs-get-project-info sources, commands and health.
local h = require("helpers")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local cc = h.cc

local lock_dir = vim.env.CLAUDE_CONFIG_DIR .. "/ide"

local function folders()
  return h.call("getWorkspaceFolders").structuredContent
end

local function lock_files()
  return vim.fn.glob(lock_dir .. "/*.lock", false, true)
end

local fake_lsp = h.fake_lsp

---A headless Neovim with this checkout (the spec's own init), then `args`.
---@param args string[]
---@return string[]
local function child_nvim(args)
  local init = vim.env.MYVIMRC ~= "" and vim.env.MYVIMRC
    or (require("claude_context.native").plugin_root() .. "/tests/minimal_init.lua")
  return vim.list_extend({ vim.v.progpath, "--headless", "--clean", "-u", init }, args)
end

return {
  {
    "plugin/ defines :ClaudeContext without loading the native library",
    function()
      eq(2, vim.fn.exists(":ClaudeContext"))
      eq(nil, package.loaded["claude_context._native"])
      eq(nil, package.loaded["claude_context"])
    end,
  },
  {
    "setup starts the bridge and writes the lock file (0600 in 0700)",
    function()
      cc().setup({})
      local st = cc().status()
      ok(st and st.running, "running")
      ok(st.port >= 10000 and st.port <= 65535, "port in range")
      eq({ lock_dir .. "/" .. st.port .. ".lock" }, lock_files())
      eq(tonumber("600", 8), h.mode(st.lock_file), "lock file mode")
      eq(tonumber("700", 8), h.mode(lock_dir), "lock dir mode")
      local lock = h.read_json(st.lock_file)
      eq(vim.fn.getpid(), lock.pid)
      eq(("Neovim (%s, pid %d)"):format(vim.fn.fnamemodify(vim.fn.getcwd(), ":t"), vim.fn.getpid()), lock.ideName)
      eq("Neovim", lock.ideKind)
      eq("ws", lock.transport)
      ok(lock.authToken:match("^%x+$") and #lock.authToken == 32, "128-bit hex token")
      eq({ vim.uv.fs_realpath(vim.fn.getcwd()) }, vim.tbl_map(vim.uv.fs_realpath, lock.workspaceFolders))
    end,
  },
  {
    "getWorkspaceFolders follows :cd, :tcd and :lcd",
    function()
      local a, b, c = h.tmpdir(), h.tmpdir(), h.tmpdir()
      vim.cmd.cd(a)
      wait_for(function()
        return folders().rootPath == a
      end, 2000, ":cd")
      local f = folders()
      eq(true, f.success)
      eq({ { name = vim.fn.fnamemodify(a, ":t"), uri = vim.uri_from_fname(a), path = a } }, f.folders)
      vim.cmd("tabnew")
      vim.cmd.tcd(b)
      wait_for(function()
        return folders().rootPath == b
      end, 2000, ":tcd")
      vim.cmd("vsplit")
      vim.cmd.lcd(c)
      wait_for(function()
        return folders().rootPath == c
      end, 2000, ":lcd")
      vim.cmd("wincmd p") -- back to the window without :lcd: tab-local dir again
      wait_for(function()
        return folders().rootPath == b
      end, 2000, "window switch")
      vim.cmd("tabclose")
      wait_for(function()
        return folders().rootPath == a
      end, 2000, "tab close")
      -- The lock file follows too.
      wait_for(function()
        return h.read_json(cc().status().lock_file).workspaceFolders[1] == a
      end, 2000, "lock file update")
    end,
  },
  {
    "uri is percent-encoded",
    function()
      local d = h.tmpdir() .. "/with space#hash"
      vim.fn.mkdir(d, "p")
      vim.cmd.cd(vim.fn.fnameescape(d))
      local f = wait_for(function()
        local r = folders()
        return r.rootPath == d and r
      end, 2000)
      contains(f.folders[1].uri, "with%20space%23hash")
    end,
  },
  {
    "LSP workspace folders follow the cwd, deduplicated, follow add/remove, and leave with the client",
    function()
      local cwd, lsp_root, extra = h.tmpdir(), h.tmpdir(), h.tmpdir()
      vim.cmd.cd(cwd)
      local buf = vim.api.nvim_create_buf(true, false)
      vim.api.nvim_set_current_buf(buf)
      local id = fake_lsp(lsp_root, { extra, cwd })
      ok(id, "fake LSP client started")
      local f = wait_for(function()
        local r = folders()
        return #r.folders == 3 and r
      end, 3000, "LSP folders")
      eq(
        { cwd, lsp_root, extra },
        vim.tbl_map(function(x)
          return x.path
        end, f.folders)
      )
      wait_for(function()
        return #h.read_json(cc().status().lock_file).workspaceFolders == 3
      end, 2000, "lock file has LSP folders")
      -- Folders added and removed on a running client (no buffer or window switch).
      local added = h.tmpdir()
      vim.lsp.buf.add_workspace_folder(added)
      wait_for(function()
        return #folders().folders == 4 and folders().folders[4].path == added
      end, 3000, "the added LSP folder")
      vim.lsp.buf.remove_workspace_folder(added)
      wait_for(function()
        return #folders().folders == 3
      end, 3000, "the removed LSP folder gone")
      -- fs-get-project-info: the current buffer's LSP root lies outside the cwd, so it does not
      -- move the project root (roots_spec covers an LSP root inside the cwd, which wins).
      local info = h.call("fs-get-project-info").structuredContent
      eq("cwd", info.project_root_source)
      eq(cwd, info.project_root)
      vim.lsp.stop_client(id, true)
      wait_for(function()
        return #folders().folders == 1
      end, 3000, "LSP folders gone")
    end,
  },
  {
    "fs-get-project-info: git, config and env sources; relative_cwd; (unavailable)",
    function()
      local repo = h.tmpdir()
      vim.fn.mkdir(repo .. "/.git", "p")
      vim.fn.mkdir(repo .. "/src/deep", "p")
      vim.cmd.cd(repo .. "/src/deep")
      local info = wait_for(function()
        local i = h.call("fs-get-project-info").structuredContent
        return i.cwd == repo .. "/src/deep" and i
      end, 2000)
      eq("git", info.project_root_source)
      eq(repo, info.project_root)
      eq("src/deep", info.relative_cwd)
      eq(nil, info.env_mcp_project_root)
      eq(cc().version, info.plugin_version)
      eq(tostring(vim.version()):match("^%d+%.%d+%.%d+"), info.nvim_version)
      -- Aliases reach the same tool.
      for _, alias in ipairs({ "fs_get_project_info", "fs.project-info", "project-info" }) do
        eq(repo, h.call(alias).structuredContent.project_root, alias)
      end
      -- Stats honour .gitignore.
      vim.fn.writefile({ "ignored/" }, repo .. "/.gitignore")
      vim.fn.mkdir(repo .. "/ignored", "p")
      vim.fn.writefile({ "x" }, repo .. "/ignored/a.txt")
      vim.fn.writefile({ "fn main() {}" }, repo .. "/src/main.rs")
      local stats = h.call("fs-get-project-info", { stats = true }).structuredContent.stats
      eq(2, stats.total_files) -- .gitignore and src/main.rs
      eq(1, stats.files_by_extension.rs)
      -- config source
      require("claude_context.config").options.project_root = nil
      cc().stop({ silent = true })
      cc().setup({ project_root = repo .. "/src" })
      eq("config", h.call("fs-get-project-info").structuredContent.project_root_source)
      -- env source, and relative_cwd absent when cwd is outside the root
      local other = h.tmpdir()
      vim.env.MCP_PROJECT_ROOT = other
      info = h.call("fs-get-project-info").structuredContent
      eq("env", info.project_root_source)
      eq(other, info.env_mcp_project_root)
      eq(nil, info.relative_cwd)
      vim.env.MCP_PROJECT_ROOT = nil
      cc().stop({ silent = true })
      cc().setup({})
      -- A deleted cwd.
      local gone = h.tmpdir()
      vim.cmd.cd(gone)
      vim.fn.delete(gone, "d")
      require("claude_context.state").push()
      info = h.call("fs-get-project-info").structuredContent
      eq("(unavailable)", info.cwd)
      vim.cmd.cd(repo)
    end,
  },
  {
    "fs tools stay inside the project root",
    function()
      local root = h.tmpdir()
      vim.fn.mkdir(root .. "/.git", "p")
      vim.cmd.cd(root)
      require("claude_context.state").push()
      local w = h.call("fs-write-file", { path = "dir/new.txt", content = "hello\nworld\n" })
      eq(false, w.isError)
      eq({ "hello", "world" }, vim.fn.readfile(root .. "/dir/new.txt"))
      local r = h.call("fs-read-file", { path = "dir/new.txt", offset = 1, limit = 1 })
      eq("world\n", r.content[1].text)
      local l = h.call("fs-list-directory", { path = "dir" }).structuredContent
      eq("new.txt", l.entries[1].name)
      local bad = h.call("fs-read-file", { path = "../../etc/passwd" })
      eq(true, bad.isError)
      contains(bad.content[1].text, "outside the project root")
      contains(bad.content[1].text, root)
    end,
  },
  {
    "model writes to files that run code are refused unless setup{security.allow_write} allows them",
    function()
      local root = h.tmpdir()
      vim.fn.mkdir(root .. "/.git/hooks", "p")
      vim.cmd.cd(root)
      require("claude_context.state").push()
      for _, p in ipairs({ ".git/hooks/pre-commit", ".claude/settings.local.json", ".nvim.lua" }) do
        local w = h.call("fs-write-file", { path = p, content = "x" })
        eq(true, w.isError, p)
        contains(w.content[1].text, "allow_write")
        eq(0, vim.fn.filereadable(root .. "/" .. p), p)
      end
      cc().stop({ silent = true })
      cc().setup({ security = { allow_write = { ".claude/settings.local.json" } } })
      vim.cmd.cd(root)
      require("claude_context.state").push()
      local w = h.call("fs-write-file", { path = ".claude/settings.local.json", content = "{}" })
      eq(false, w.isError)
      eq("{}", h.read(root .. "/.claude/settings.local.json"))
      eq(true, h.call("fs-write-file", { path = ".claude/settings.json", content = "{}" }).isError)
      local okk, err = pcall(require("claude_context.config").resolve, { security = { allow_write = { 1 } } })
      eq(false, okk)
      contains(err, "security.allow_write")
      cc().stop({ silent = true })
      cc().setup({})
    end,
  },
  {
    ":ClaudeContext status masks the token; completion lists subcommands",
    function()
      local lines = table.concat(require("claude_context.commands").status_lines(), "\n")
      local st = cc().status()
      contains(lines, tostring(st.port))
      contains(lines, st.lock_file)
      local token = h.read_json(st.lock_file).authToken
      ok(not lines:find(token, 1, true), "full token must not be shown")
      local msgs = h.shown("ClaudeContext status")
      ok(not msgs:find(token, 1, true), "full token must not be echoed")
      local comp = vim.fn.getcompletion("ClaudeContext ", "cmdline")
      for _, want in ipairs({ "info", "log", "restart", "start", "status", "stop" }) do
        ok(vim.tbl_contains(comp, want), "completes " .. want)
      end
      local st_comp = vim.fn.getcompletion("ClaudeContext st", "cmdline")
      table.sort(st_comp)
      eq({ "start", "status", "stop" }, st_comp)
      local info = h.shown("ClaudeContext info")
      contains(info, "project_root")
    end,
  },
  {
    "stop removes the lock file; start and :ClaudeContext restart get a new token and lock file",
    function()
      local old = cc().status()
      local old_token = h.read_json(old.lock_file).authToken
      eq(true, cc().stop({ silent = true }))
      eq({}, lock_files())
      eq(nil, cc().status())
      vim.cmd("ClaudeContext start")
      local new = cc().status()
      ok(new and new.lock_file and vim.uv.fs_stat(new.lock_file), "new lock file")
      eq({ new.lock_file }, lock_files())
      local new_token = h.read_json(new.lock_file).authToken
      ok(new_token ~= old_token, "a fresh token on start")
      vim.cmd("ClaudeContext restart")
      local again = cc().status()
      ok(again and again.running, "running after restart")
      eq({ again.lock_file }, lock_files())
      ok(h.read_json(again.lock_file).authToken ~= new_token, "a fresh token on restart")
      -- The old port no longer answers when the new one differs (the random start may repeat it).
      if again.port ~= new.port then
        ok(not vim.uv.fs_stat(new.lock_file), "the previous lock file is gone")
      end
    end,
  },
  {
    "two Neovims at once; each removes its own lock file on exit (VimLeavePre)",
    function()
      local mine = cc().status()
      local flag = h.tmpdir() .. "/go"
      local job = vim.system(
        child_nvim({
          "-c",
          "lua require('claude_context').setup({})",
          "-c",
          ("lua vim.wait(20000, function() return vim.uv.fs_stat(%q) ~= nil end, 20)"):format(flag),
          "-c",
          "qa",
        }),
        { env = { CLAUDE_CONFIG_DIR = vim.env.CLAUDE_CONFIG_DIR } }
      )
      wait_for(function()
        return #lock_files() == 2
      end, 10000, "second editor's lock file")
      local files = lock_files()
      local ports = {}
      for _, f in ipairs(files) do
        ports[h.read_json(f).pid] = f
      end
      ok(ports[vim.fn.getpid()] == mine.lock_file, "mine is listed")
      vim.fn.writefile({}, flag)
      job:wait(10000)
      eq({ mine.lock_file }, lock_files(), "the other editor removed only its own lock file")
    end,
  },
  {
    "a Neovim ended by a signal in an autocmd (no VimLeavePre) exits cleanly and removes its lock file",
    function()
      -- The terminal emulator closed under an editor busy in an autocmd: Neovim exits at once,
      -- without VimLeavePre, and the bridge is stopped by its thread-local's destructor. That used
      -- to panic inside tokio (its thread-locals already gone) and abort the process.
      local script = h.tmpdir() .. "/hup.lua"
      h.write(
        script,
        [[
require("claude_context").setup({})
vim.api.nvim_create_autocmd("FileType", { pattern = "cc_hup", callback = function()
  vim.uv.kill(vim.uv.os_getpid(), "sighup")
  vim.wait(2000)
end })
vim.defer_fn(function() vim.bo.filetype = "cc_hup" end, 50)
]]
      )
      local before = #lock_files()
      local res = vim
        .system(
          child_nvim({
            "-c",
            "luafile " .. script,
          }),
          { env = { CLAUDE_CONFIG_DIR = vim.env.CLAUDE_CONFIG_DIR }, text = true }
        )
        :wait(20000)
      eq(0, res.signal, "no abort (signal) — output: " .. tostring(res.stderr) .. tostring(res.stdout))
      eq(1, res.code, "Neovim's own exit code for a deadly signal")
      contains(res.stdout .. res.stderr, "Caught deadly signal 'SIGHUP'")
      eq(before, #lock_files(), "its lock file is removed")
    end,
  },
  {
    "the loader lists every path it tried and says how to build",
    function()
      local native = dofile(require("claude_context.native").plugin_root() .. "/lua/claude_context/native.lua")
      native.candidates = function()
        return { "/nonexistent/one.so", "/nonexistent/two.so" }
      end
      local ok2, err = pcall(native.load)
      eq(false, ok2)
      -- One line: the paths tried (missing files by name, others with the reason), how to build.
      contains(err, "the native library is not built (tried /nonexistent/one.so, /nonexistent/two.so in ")
      contains(err, ":Lazy build claude-context.nvim")
      contains(err, "make")
      ok(not err:find("\n"), "one line")
      -- A library built from another version is refused before its initialisation runs.
      local real = require("claude_context.native").info.path
      package.loaded["claude_context.version"] = "9.9.9"
      local native2 = dofile(require("claude_context.native").plugin_root() .. "/lua/claude_context/native.lua")
      package.loaded["claude_context.version"] = nil
      native2.candidates = function()
        return { real }
      end
      local ok3, err3 = pcall(native2.load)
      eq(false, ok3)
      contains(err3, "built from version " .. cc().version .. ", but the Lua side is 9.9.9")
    end,
  },
  {
    ":checkhealth claude_context reports the library, the server and the lock file",
    function()
      vim.cmd("checkhealth claude_context")
      local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
      contains(text, "matches the Lua side")
      -- Where it came from (lib/install.json, written by make build / the build step).
      contains(text, "origin: ")
      contains(text, "0600 in a 0700 directory")
      contains(text, "listening on ws://127.0.0.1:")
      contains(text, "Neovim " .. tostring(vim.version()))
      ok(not text:find("ERROR", 1, true), "no errors in:\n" .. text)
      vim.cmd("bwipeout!")

      -- The claude CLI: found and its version shown; missing, a warning that says how to fix.
      local bin = h.tmpdir()
      local fake = bin .. "/claude"
      vim.fn.writefile({ "#!/bin/sh", 'echo "9.8.7 (Claude Code)"' }, fake)
      vim.fn.setfperm(fake, "rwxr-xr-x")
      local path = vim.env.PATH
      vim.env.PATH = bin .. ":" .. path
      vim.cmd("checkhealth claude_context")
      text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
      vim.cmd("bwipeout!")
      contains(text, fake .. " (PATH): 9.8.7 (Claude Code)")
      ok(not text:find("needed for the session hooks", 1, true), text)
      -- A CLI too old for the hooks' exec form: said, with how to fix it.
      vim.fn.writefile({ "#!/bin/sh", 'echo "2.1.100 (Claude Code)"' }, fake)
      vim.cmd("checkhealth claude_context")
      text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
      vim.cmd("bwipeout!")
      contains(text, "Claude Code 2.1.139 or newer is needed for the session hooks")
      contains(text, "sessions = { hooks = false }")
      vim.env.PATH = h.tmpdir() -- nothing named claude on it
      local home = vim.env.HOME
      vim.env.HOME = h.tmpdir() -- nor in ~/.local/bin or ~/.claude/local
      vim.cmd("checkhealth claude_context")
      text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
      vim.cmd("bwipeout!")
      vim.env.PATH = path
      vim.env.HOME = home
      if vim.fn.executable("/usr/local/bin/claude") == 0 and vim.fn.executable("/usr/bin/claude") == 0 then
        contains(text, "Claude CLI not found")
        -- The official installer first, npm second.
        local official = text:find("curl -fsSL https://claude.ai/install.sh | bash", 1, true)
        local npm = text:find("npm install -g @anthropic-ai/claude-code", 1, true)
        ok(official and npm and official < npm, text)
      end
    end,
  },
}
