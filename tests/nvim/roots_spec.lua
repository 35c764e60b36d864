-- What the model's door (/mcp) may reach, in a real Neovim: the project root, the working
-- directory and setup{workspace = {extra_roots}}. A language server attached to a buffer outside
-- the project (lua_ls on ~/.config/nvim/init.lua) is listed by getWorkspaceFolders on the IDE
-- door, but /mcp can neither make its folder a root nor read there unless
-- setup{workspace = {allow_lsp_roots = true}}; and the default root does not follow it.
local h = require("helpers")
local ws = h.load("wsclient")
local text_of = ws.text_of
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local cc = h.cc

local SECRET = "lsp-folder-secret"

local fake_lsp = h.fake_lsp

local project, outside, extra, client

--- Starts the bridge with `opts`, works in `project` with a buffer whose language server is
--- rooted `outside`, and connects a /mcp client.
local function start(opts)
  cc().stop({ silent = true })
  cc().setup(opts)
  vim.cmd.cd(project)
  vim.cmd.edit(outside .. "/init.lua")
  if not client or vim.lsp.get_client_by_id(client) == nil then
    client = fake_lsp(outside)
  end
  vim.lsp.buf_attach_client(0, client)
  require("claude_context.state").push()
  wait_for(function()
    local info = h.call("fs-get-project-info").structuredContent
    return vim.tbl_contains(
      vim.tbl_map(function(f)
        return f.path
      end, h.call("getWorkspaceFolders").structuredContent.folders),
      outside
    ) and info
  end, 3000, "the language server's folder in the snapshot")
  local m = ws.connect("/mcp")
  m:handshake(false)
  return m
end

return {
  {
    "setup{workspace} is checked: extra_roots absolute paths, allow_lsp_roots a boolean",
    function()
      local resolve = require("claude_context.config").resolve
      for _, bad in ipairs({
        { workspace = { extra_roots = { "relative/dir" } } },
        { workspace = { extra_roots = { 1 } } },
        { workspace = { extra_roots = "/abs" } },
        { workspace = { allow_lsp_roots = "yes" } },
      }) do
        local okk, err = pcall(resolve, bad)
        eq(false, okk, vim.inspect(bad))
        contains(err, "workspace.")
      end
      local cfg = resolve({ workspace = { extra_roots = { "~/notes" }, allow_lsp_roots = true } })
      local native = vim.json.decode(require("claude_context.config").to_native(cfg))
      eq({ vim.fs.normalize(vim.fn.expand("~/notes")) }, native.workspace.extra_roots)
      eq(true, native.workspace.allow_lsp_roots)
      eq(nil, vim.json.decode(require("claude_context.config").to_native(resolve({}))).workspace)
    end,
  },
  {
    "attack: /mcp cannot root into a language server's folder outside the project, nor read there",
    function()
      project, outside, extra = h.tmpdir(), h.tmpdir(), h.tmpdir()
      h.write(outside .. "/init.lua", "-- " .. SECRET .. "\n")
      h.write(extra .. "/notes.txt", "shared notes\n")
      local m = start({})
      -- The default root stays where Neovim works.
      local info = h.call("fs-get-project-info").structuredContent
      eq(project, info.project_root)
      local r = m:result("fs-set-project-root", { path = outside })
      eq(true, r.isError, vim.inspect(r))
      contains(text_of(r), "extra_roots")
      for _, c in ipairs({
        { "fs-read-file", { path = outside .. "/init.lua" } },
        { "openFile", { filePath = outside .. "/init.lua" } },
        { "getCurrentSelection", vim.empty_dict() },
      }) do
        local res = m:result(c[1], c[2])
        ok(not vim.json.encode(res):find(SECRET, 1, true), c[1] .. " leaked: " .. vim.inspect(res))
      end
      -- The IDE door still lists it (Claude Code's getWorkspaceFolders, as before).
      local listed = vim.tbl_map(function(f)
        return f.path
      end, h.call("getWorkspaceFolders").structuredContent.folders)
      ok(vim.tbl_contains(listed, outside), vim.inspect(listed))
      m:close()
    end,
  },
  {
    "setup{workspace = {extra_roots, allow_lsp_roots}}: the person's roots are reachable",
    function()
      local m = start({ workspace = { extra_roots = { extra } } })
      eq(false, m:result("fs-set-project-root", { path = extra }).isError)
      contains(text_of(m:result("fs-read-file", { path = "notes.txt" })), "shared notes")
      eq(true, m:result("fs-set-project-root", { path = outside }).isError)
      m:close()
      m = start({ workspace = { allow_lsp_roots = true } })
      eq(false, m:result("fs-set-project-root", { path = outside }).isError)
      contains(text_of(m:result("fs-read-file", { path = "init.lua" })), SECRET)
      m:close()
      cc().stop({ silent = true })
      cc().setup({})
    end,
  },
  {
    "the default root follows a language server rooted inside the working directory",
    function()
      local inner = project .. "/pkg"
      vim.fn.mkdir(inner, "p")
      h.write(inner .. "/main.lua", "return 1\n")
      vim.cmd.cd(project)
      vim.cmd.edit(inner .. "/main.lua")
      local id = fake_lsp(inner)
      require("claude_context.state").push()
      local info = wait_for(function()
        local i = h.call("fs-get-project-info").structuredContent
        return i.project_root_source == "lsp" and i
      end, 3000, "the inner language server's root")
      eq(inner, info.project_root)
      vim.lsp.stop_client(id, true)
    end,
  },
}
