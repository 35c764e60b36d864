-- Neovims are told apart in Claude Code's /ide: the lock file's ideName carries the project's
-- name and the pid by default (setup{ide = {name = …}} changes it), and ideKind marks the file
-- as Neovim's whatever the name, so stale files of renamed Neovims are still cleaned up.
local h = require("helpers")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local cc = h.cc

local lock_dir = vim.env.CLAUDE_CONFIG_DIR .. "/ide"

local function lock_of(pid)
  for _, f in ipairs(vim.fn.glob(lock_dir .. "/*.lock", false, true)) do
    local l = h.read_json(f)
    if l.pid == pid then
      return l, f
    end
  end
end

return {
  {
    "two Neovims in one directory get different ideNames: the project and the pid",
    function()
      local proj = h.tmpdir() .. "/my-project"
      vim.fn.mkdir(proj, "p")
      vim.cmd.cd(vim.fn.fnameescape(proj))
      cc().setup({})
      local flag = h.tmpdir() .. "/go"
      local job = vim.system({
        vim.v.progpath,
        "--headless",
        "--clean",
        "-u",
        require("claude_context.native").plugin_root() .. "/tests/minimal_init.lua",
        "-c",
        "lua require('claude_context').setup({})",
        "-c",
        ("lua vim.wait(20000, function() return vim.uv.fs_stat(%q) ~= nil end, 20)"):format(flag),
        "-c",
        "qa",
      }, { env = { CLAUDE_CONFIG_DIR = vim.env.CLAUDE_CONFIG_DIR }, cwd = proj })
      local other = wait_for(function()
        return lock_of(job.pid)
      end, 10000, "the second Neovim's lock file")
      local mine = lock_of(vim.fn.getpid())
      eq(("Neovim (my-project, pid %d)"):format(vim.fn.getpid()), mine.ideName)
      eq(("Neovim (my-project, pid %d)"):format(job.pid), other.ideName)
      ok(mine.ideName ~= other.ideName, "told apart")
      eq("Neovim", mine.ideKind)
      eq("Neovim", other.ideKind)
      vim.fn.writefile({}, flag)
      job:wait(10000)
    end,
  },
  {
    "ide.name is configurable ({project}, {pid}, {servername}); project_root names the project",
    function()
      local root = h.tmpdir() .. "/the-root"
      vim.fn.mkdir(root, "p")
      cc().stop({ silent = true })
      cc().setup({ project_root = root, ide = { name = "nvim {project} @ {servername} #{pid} {unknown}" } })
      local l = lock_of(vim.fn.getpid())
      eq(("nvim the-root @ %s #%d {unknown}"):format(vim.v.servername, vim.fn.getpid()), l.ideName)
      eq("Neovim", l.ideKind, "still marked as Neovim's")
      -- Control characters become spaces (one line in Claude Code's menu).
      cc().stop({ silent = true })
      cc().setup({ ide = { name = "a\nb" } })
      eq("a b", lock_of(vim.fn.getpid()).ideName)
      local okc, err = pcall(cc().setup, { ide = { name = "  " } })
      eq(false, okc)
      contains(err, "ide.name")
    end,
  },
  {
    "a renamed Neovim's stale lock file is still cleaned at start; another IDE's is kept",
    function()
      cc().stop({ silent = true })
      vim.fn.mkdir(lock_dir, "p")
      local function write(name, t)
        local f = assert(io.open(lock_dir .. "/" .. name, "w"))
        f:write(
          vim.json.encode(
            vim.tbl_extend(
              "force",
              { pid = 2147483632, workspaceFolders = { "/w" }, transport = "ws", authToken = "t" },
              t
            )
          )
        )
        f:close()
      end
      write("11.lock", { ideName = "my renamed nvim", ideKind = "Neovim" })
      write("12.lock", { ideName = "Neovim (x, pid 2147483632)", ideKind = "Something else" })
      cc().setup({})
      ok(not vim.uv.fs_stat(lock_dir .. "/11.lock"), "the renamed Neovim's dead lock file was kept")
      ok(vim.uv.fs_stat(lock_dir .. "/12.lock"), "another IDE's lock file was removed")
      os.remove(lock_dir .. "/12.lock")
    end,
  },
}
