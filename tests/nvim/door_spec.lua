-- The trust boundary of the IDE tools in a real Neovim, with real WebSocket clients
-- on both doors (tests/nvim/ws_client.py): the IDE door (the lock file's URL: Claude Code) and
-- /mcp (the model's tools).
-- * /mcp: openFile of a secret outside the project (directly, by `..`, through a symlink) is
--   refused, so getCurrentSelection cannot return its text (the reported leak); a file outside
--   the person opened is neither reported by the selection tools nor listed by getOpenEditors.
-- * selection_changed and at_mentioned never reach /mcp, even when it sends ide_connected.
-- * Only regular files are opened or read: openFile / openDiff of a FIFO are refused at once
--   (the FIFO is never opened: a writer waiting on it stays blocked), so are devices and a
--   1 TiB sparse file.
local h = require("helpers")
local ws = h.load("wsclient")
local text_of = ws.text_of
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local cc = h.cc

local messages = h.record_notify()

local SECRET = "SECRET-KEY-MATERIAL"
local dir, home, secret, inside
local IDE, MCP

---Everything the client was sent (since message `from`), as one string.
local function everything(c, from)
  return vim.json.encode(vim.list_slice(c.messages, from or 1))
end

---A process writing to the FIFO `path`: it stays blocked as long as nobody opens it to read.
local function writer(path)
  return vim.system({ "sh", "-c", "echo from-the-fifo > '" .. path .. "'" })
end

---Whether a FIFO's writer (or reader) still waits (it ends once someone opens the other end).
local function still_blocked(proc)
  vim.wait(300)
  return not proc:is_closing()
end

return {
  {
    "setup: a project, a secret outside it, a link from inside pointing out, two clients",
    function()
      cc().setup({})
      dir = h.tmpdir()
      home = h.tmpdir()
      vim.cmd.cd(dir)
      secret = home .. "/id_rsa"
      h.write(secret, SECRET .. "\nline two\nline three\n")
      inside = dir .. "/inside.txt"
      h.write(inside, "alpha\nbeta\n")
      assert(vim.uv.fs_symlink(home, dir .. "/homelink"))
      assert(vim.uv.fs_symlink(secret, dir .. "/keylink"))
      IDE = ws.connect()
      IDE:handshake(true)
      MCP = ws.connect("/mcp")
      MCP:handshake(true) -- it claims to be an IDE too: it must not be treated as one
      wait_for(function()
        return #cc().status().clients == 2
      end, 5000, "both clients")
      local surfaces = vim.tbl_map(function(c)
        return c.surface
      end, cc().status().clients)
      table.sort(surfaces)
      eq({ "ide", "mcp" }, surfaces)
    end,
  },
  {
    "attack: through /mcp, openFile(secret outside) then getCurrentSelection never returns the secret",
    function()
      vim.cmd.edit(inside)
      for _, p in ipairs({
        secret,
        dir .. "/../" .. vim.fs.basename(home) .. "/id_rsa",
        dir .. "/keylink",
        "homelink/id_rsa",
        "/etc/passwd",
      }) do
        local r = MCP:result("openFile", { filePath = p, startLine = 1, endLine = 3 })
        eq(true, r.isError, p .. ": " .. vim.inspect(r))
        contains(text_of(r), "outside the project", p)
        local s = MCP:result("getCurrentSelection")
        ok(not text_of(s):find(SECRET, 1, true), p .. ": the secret leaked: " .. text_of(s))
        if vim.api.nvim_get_mode().mode ~= "n" then
          vim.cmd("normal! \27")
        end
      end
      eq(-1, vim.fn.bufnr(secret), "the secret was never loaded into a buffer")
      eq(inside, vim.api.nvim_buf_get_name(0), "the editor still shows the project file")
      -- A file inside opens as before, relative paths from the project root.
      local r = MCP:result("openFile", { filePath = "inside.txt", startLine = 2, endLine = 2 })
      eq(false, r.isError, vim.inspect(r))
      eq("Opened file: " .. inside, text_of(r))
      ok(not everything(MCP):find(SECRET, 1, true), "nothing the /mcp client got holds the secret")
    end,
  },
  {
    "attack: a secret the person opened outside: /mcp gets no selection of it and no editor for it; the IDE door does",
    function()
      local from = #MCP.messages + 1
      vim.cmd.edit(secret)
      vim.cmd("normal! ggVj")
      eq("V", vim.api.nvim_get_mode().mode)
      local s = MCP:result("getCurrentSelection")
      local v = vim.json.decode(text_of(s))
      eq(false, v.success)
      contains(v.message, "outside the project")
      vim.cmd("normal! \27") -- leaving Visual mode records it as the latest selection
      local l = vim.json.decode(text_of(MCP:result("getLatestSelection")))
      eq(false, l.success)
      contains(l.message, "outside the project")
      local e = vim.json.decode(text_of(MCP:result("getOpenEditors")))
      local names = vim.tbl_map(function(t)
        return t.fileName
      end, e.tabs)
      eq({ inside }, names)
      -- Diagnostics quote code: those of a file outside are left out.
      local ns = vim.api.nvim_create_namespace("door_spec")
      vim.diagnostic.set(
        ns,
        vim.fn.bufnr(secret),
        { { lnum = 0, col = 0, message = SECRET .. " is a key", severity = 1 } }
      )
      vim.diagnostic.set(ns, vim.fn.bufnr(inside), { { lnum = 0, col = 0, message = "inside note", severity = 2 } })
      local d = text_of(MCP:result("getDiagnostics"))
      contains(d, "inside note")
      ok(not everything(MCP):find(SECRET, 1, true), "nothing the /mcp client got holds the secret")
      ok(not everything(MCP, from):find("id_rsa", 1, true), "the secret's name was not reported either")

      -- Claude Code's own connection (the IDE door) is unchanged.
      local si = vim.json.decode(text_of(IDE:result("getLatestSelection")))
      eq(true, si.success)
      contains(si.text, SECRET)
      eq(2, #vim.json.decode(text_of(IDE:result("getOpenEditors"))).tabs)
      contains(text_of(IDE:result("getDiagnostics")), SECRET)
      vim.diagnostic.reset(ns)
      vim.cmd.edit(inside)
    end,
  },
  {
    "attack: selection_changed and at_mentioned never reach /mcp, even after its ide_connected",
    function()
      if vim.api.nvim_get_mode().mode ~= "n" then
        vim.cmd("normal! \27")
      end
      vim.cmd.edit(inside)
      vim.api.nvim_win_set_cursor(0, { 2, 1 })
      vim.api.nvim_exec_autocmds("CursorMoved", {})
      IDE:wait_for(function(m)
        return m.method == "selection_changed" and m.params.selection.start.line == 1
      end, "selection_changed on the IDE door")
      local okm, msg = require("claude_context.ide.mentions").mention(inside, 0, 1)
      ok(okm, msg)
      IDE:wait_for(function(m)
        return m.method == "at_mentioned" and m.params.filePath == inside
      end, "at_mentioned on the IDE door")
      vim.wait(300)
      MCP:sync("n1")
      eq({}, MCP:notifications("selection_changed"))
      eq({}, MCP:notifications("at_mentioned"))
    end,
  },
  {
    "attack: openFile of a FIFO is refused at once, without opening it; the editor stays responsive",
    function()
      local fifo = dir .. "/pipe"
      vim.fn.system({ "mkfifo", fifo })
      eq(0, vim.v.shell_error)
      local w = writer(fifo)
      local r = h.call("openFile", { filePath = fifo })
      eq(true, r.isError, vim.inspect(r))
      contains(text_of(r), "FIFO")
      -- Over /mcp too (the FIFO is inside the project: the Lua check refuses it).
      local rm = MCP:result("openFile", { filePath = fifo, makeFrontmost = false })
      eq(true, rm.isError, vim.inspect(rm))
      contains(text_of(rm), "FIFO")
      ok(still_blocked(w), "nobody opened the FIFO (its writer still waits)")
      eq(-1, vim.fn.bufnr(fifo), "no buffer for the FIFO")
      -- Responsive: an ordinary call right after is answered.
      eq(false, h.call("getOpenEditors").isError)
      w:kill(9)
      w:wait()
    end,
  },
  {
    "attack: openDiff whose old file is a FIFO is refused at once, without opening it",
    function()
      local fifo = dir .. "/pipe2"
      vim.fn.system({ "mkfifo", fifo })
      eq(0, vim.v.shell_error)
      local w = writer(fifo)
      local box = {}
      cc().call_tool("openDiff", {
        old_file_path = fifo,
        new_file_path = fifo,
        new_file_contents = "new\n",
        tab_name = "fifo diff",
      }, function(r)
        box.result = r
      end)
      local r = h.decided(box, 5000, "openDiff's answer")
      eq(true, r.isError, vim.inspect(r))
      contains(text_of(r), "FIFO")
      ok(still_blocked(w), "nobody opened the FIFO (its writer still waits)")
      eq(nil, require("claude_context.ide.diff").views["fifo diff"])
      w:kill(9)
      w:wait()
    end,
  },
  {
    "attack: saveDocument of a buffer whose file became a FIFO is refused without opening it",
    function()
      local f = dir .. "/swapped.txt"
      h.write(f, "one\n")
      vim.cmd.edit(f)
      vim.api.nvim_buf_set_lines(0, 0, -1, false, { "changed" })
      os.remove(f)
      vim.fn.system({ "mkfifo", f })
      eq(0, vim.v.shell_error)
      local reader = vim.system({ "cat", f })
      local r = h.call("saveDocument", { filePath = f })
      local v = vim.json.decode(text_of(r))
      eq(false, v.saved, vim.inspect(v))
      contains(v.message, "FIFO")
      ok(still_blocked(reader), "nobody opened the FIFO (its reader still waits)")
      eq(true, vim.bo.modified, "the buffer keeps its changes")
      reader:kill(9)
      reader:wait()
      vim.cmd("bwipeout!")
    end,
  },
  {
    "attack: a 1 TiB sparse file and a device are refused by openDiff and openFile",
    function()
      local big = dir .. "/huge.log"
      vim.fn.system({ "truncate", "-s", "1T", big })
      eq(1024 ^ 4, vim.uv.fs_stat(big).size)
      local box = {}
      cc().call_tool("openDiff", {
        old_file_path = big,
        new_file_path = big,
        new_file_contents = "small\n",
        tab_name = "huge diff",
      }, function(r)
        box.result = r
      end)
      local r = h.decided(box, 5000, "openDiff's answer")
      eq(true, r.isError, vim.inspect(r))
      contains(text_of(r), "67108864 byte limit")
      r = h.call("openFile", { filePath = big, makeFrontmost = false })
      eq(true, r.isError, vim.inspect(r))
      contains(text_of(r), "67108864 bytes")
      eq(-1, vim.fn.bufnr(big))
      r = h.call("openFile", { filePath = "/dev/zero" })
      eq(true, r.isError, vim.inspect(r))
      contains(text_of(r), "character device")
      -- files.read_lines reads at most the cap even when the size said less (it is checked on
      -- the open descriptor, not from the path).
      local small = dir .. "/small.txt"
      h.write(small, string.rep("x", 100))
      local lines, err = require("claude_context.ide.files").read_lines(small, 10)
      eq(nil, lines)
      contains(err, "more than the 10 bytes")
      lines = require("claude_context.ide.files").read_lines(small, 100)
      eq({ string.rep("x", 100) }, lines)
    end,
  },
  {
    "teardown",
    function()
      IDE:close()
      MCP:close()
      cc().stop()
    end,
  },
}
