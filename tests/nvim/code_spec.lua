-- The code tools (lsp_*, code_outline) against real language servers from the registries:
-- python-lsp-server (PyPI) and typescript-language-server (npm), both installed into .deps/lsp
-- by `make deps`. Each answer is checked against the server's own answer to the same question,
-- asked directly in the same spec; the files asked about are not open (loaded out of sight and
-- unloaded after); a symbol with several definitions; a file no server covers. A fake server
-- (in-process, `cmd` a function) that never answers shows the timeout and that a cancelled
-- request is cancelled at the server (`$/cancelRequest`). The /mcp door: a file outside the
-- project is refused, a location outside (the standard library) comes without its text.
local h = require("helpers")
local root = vim.fn.fnamemodify(h.here, ":h:h")
local ws = h.load("wsclient")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local cc = h.cc

local LSP = root .. "/.deps/lsp"
local PYLSP = LSP .. "/venv/bin/pylsp"
local TSLS = LSP .. "/node_modules/.bin/typescript-language-server"

local dir, MCP
local fake = { cancelled = {}, requests = {} }

local function write(rel, text)
  local p = dir .. "/" .. rel
  vim.fn.mkdir(vim.fs.dirname(p), "p")
  h.write(p, text)
  return p
end

local function sc(r)
  ok(not r.isError, "the tool failed: " .. vim.inspect(r.content))
  return r.structuredContent
end

---Every location of an answer's section as "path:line:col" (sorted).
local function places(ans, section)
  local out = {}
  for _, f in ipairs(ans.sections[section or 1].files) do
    for _, l in ipairs(f.locations) do
      table.insert(out, ("%s:%d:%d"):format(f.path, l.line, l.col))
    end
  end
  table.sort(out)
  return out
end

---The server's own answer, as "path:line:col" (the files here are ASCII: UTF-16 units are
---characters).
local function server_places(locs)
  local out = {}
  for _, l in ipairs(locs) do
    local uri = l.targetUri or l.uri
    local r = l.targetSelectionRange or l.range
    local path = vim.uri_to_fname(uri)
    path = path:sub(1, #dir + 1) == dir .. "/" and path:sub(#dir + 2) or path
    table.insert(out, ("%s:%d:%d"):format(path, r.start.line + 1, r.start.character + 1))
  end
  table.sort(out)
  return out
end

---Asks the server named `name` directly, about `path` (opened for the question, then closed).
local function ask(name, path, method, params)
  local buf = vim.fn.bufadd(path)
  vim.fn.bufload(buf)
  local client = wait_for(function()
    return vim.lsp.get_clients({ bufnr = buf, name = name })[1]
  end, 20000, name .. " attached to " .. path)
  params.textDocument = { uri = vim.uri_from_fname(path) }
  local r = client:request_sync(method, params, 20000, buf)
  ok(r and not r.err, method .. ": " .. vim.inspect(r))
  vim.api.nvim_buf_delete(buf, { force = true })
  return r.result
end

local function not_loaded(path)
  wait_for(function()
    return vim.fn.bufloaded(path) == 0
  end, 3000, path .. " unloaded")
  eq(-1, vim.fn.bufnr(path), path .. " left no buffer behind")
end

---Starts a request that loads `path` and waits until its fill is under way; returns its cancel.
local function start_fill(path)
  local started = false
  local cancel = require("claude_context.code.task").run(function(t)
    started = true
    t:buffer(path)
    return {}
  end, function() end)
  wait_for(function()
    return started and vim.fn.bufloaded(path) == 1
  end, 10000, "the fill of " .. path .. " under way")
  return cancel
end

---Runs a request that gets `path`'s buffer and holds it: `got(t, buf, err)` runs once it has it
---(`t` is the request's task, also given to `started(t)` before it asks). Returns the function
---that lets the request end.
local function hold_buffer(path, got, started)
  local released = false
  require("claude_context.code.task").run(function(t)
    if started then
      started(t)
    end
    got(t, t:buffer(path))
    while not released do
      t:sleep(10)
    end
    return {}
  end, function() end)
  return function()
    released = true
  end
end

local n = 0
local function mcp_call(name, args)
  n = n + 1
  local id = "m" .. n
  MCP:call(id, name, args)
  local m = MCP:wait_for(function(m)
    return m.id == id
  end, name .. " answer", 30000)
  ok(m.result, "no result: " .. vim.inspect(m))
  return m.result
end

return {
  {
    "setup: a Python and a TypeScript project, their servers running, no file of theirs open",
    function()
      ok(
        vim.fn.executable(PYLSP) == 1 and vim.fn.executable(TSLS) == 1,
        "run `make deps` (.deps/lsp: pylsp, typescript-language-server)"
      )
      dir = h.tmpdir()
      cc().setup({ project_root = dir })
      -- The machine running the specs is shared and slow: the servers get time.
      require("claude_context.code.task").request_timeout_ms = 30000
      vim.cmd.cd(dir)
      vim.cmd("filetype on")
      write(".git/HEAD", "ref: refs/heads/main\n")
      write(
        "py/shapes.py",
        table.concat({
          "class Shape:",
          "    def area(self):",
          "        return 0",
          "",
          "",
          "class Square(Shape):",
          "    def __init__(self, side):",
          "        self.side = side",
          "",
          "    def area(self):",
          "        return self.side * self.side",
          "",
          "",
          "def total(shapes):",
          "    return sum(s.area() for s in shapes)",
          "",
        }, "\n")
      )
      write(
        "py/main.py",
        table.concat({
          "import os",
          "from shapes import Square, total",
          "",
          "print(total([Square(2), Square(3)]))",
          "print(total([]), os.getcwd())",
          "",
        }, "\n")
      )
      write("py/broken.py", "def f():\n    return nope\n")
      write("py/start.py", "x = 1\n")
      write("ts/tsconfig.json", '{"compilerOptions": {"strict": true, "target": "es2020"}, "include": ["*.ts"]}\n')
      write(
        "ts/shapes.ts",
        table.concat({
          "export interface Shape {",
          "  area(): number;",
          "}",
          "",
          "export class Circle implements Shape {",
          "  constructor(public r: number) {}",
          "  area(): number {",
          "    return 3 * this.r * this.r;",
          "  }",
          "}",
          "",
          "export class Rect implements Shape {",
          "  constructor(public w: number, public h: number) {}",
          "  area(): number {",
          "    return this.w * this.h;",
          "  }",
          "}",
          "",
          "export function sum(shapes: Shape[]): number {",
          "  return shapes.reduce((t, s) => t + s.area(), 0);",
          "}",
          "",
        }, "\n")
      )
      write(
        "ts/main.ts",
        table.concat({
          'import { Circle, Rect, sum } from "./shapes";',
          "",
          "const c = new Circle(1);",
          "export const all = sum([c, new Rect(2, 3)]);",
          "",
        }, "\n")
      )
      write("ts/start.ts", "export const x = 1;\n")
      write(
        "notes/tool.lua",
        "local M = {}\n\nfunction M.run()\n  return 1\nend\n\nlocal function helper() end\n\nreturn M\n"
      )
      vim.lsp.config("pylsp", { cmd = { PYLSP }, filetypes = { "python" }, root_markers = { ".git" } })
      vim.lsp.config(
        "tsls",
        { cmd = { TSLS, "--stdio" }, filetypes = { "typescript" }, root_markers = { "tsconfig.json" } }
      )
      vim.lsp.enable({ "pylsp", "tsls" })
      -- The person opens a file of each language (their servers start), and closes the Python one
      -- (tsserver only knows a project while one of its files is open).
      for _, f in ipairs({ "py/start.py", "ts/start.ts" }) do
        vim.cmd.edit(dir .. "/" .. f)
        wait_for(function()
          return #vim.lsp.get_clients({ bufnr = 0 }) > 0
        end, 30000, "a server for " .. f)
      end
      vim.cmd("bwipeout! " .. vim.fn.bufnr(dir .. "/py/start.py"))
      -- tsserver has loaded its project once it answers about the open file.
      local ts = vim.lsp.get_clients({ name = "tsls" })[1]
      local r = ts:request_sync("workspace/symbol", { query = "Circle" }, 60000)
      ok(r and r.result, "tsserver ready: " .. vim.inspect(r))
      eq(2, #vim.lsp.get_clients())
      for _, f in ipairs({ "py/shapes.py", "py/main.py", "ts/shapes.ts", "ts/main.ts" }) do
        eq(-1, vim.fn.bufnr(dir .. "/" .. f), f .. " is not open")
      end
      MCP = ws.connect("/mcp")
      MCP:handshake(false)
    end,
  },
  {
    "lsp_references (pylsp, file not open): the server's own answer, as path:line:col with the text; unloaded after",
    function()
      local main = dir .. "/py/main.py"
      local r = h.call("lsp_references", { file = "py/main.py", line = 4, text = "total", include_declaration = true })
      local ans = sc(r)
      eq({ "pylsp" }, ans.servers)
      not_loaded(main)
      local want = server_places(ask("pylsp", main, "textDocument/references", {
        position = { line = 3, character = 6 },
        context = { includeDeclaration = true },
      }))
      eq(want, places(ans))
      ok(#want >= 3, vim.inspect(want))
      local text = r.content[1].text
      contains(text, "py/shapes.py\n  14:5-10  | def total(shapes):")
      contains(text, "4:7-12  | print(total([Square(2), Square(3)]))")
      -- Capped, with the count of the rest.
      local capped = sc(
        h.call(
          "lsp_references",
          { file = "py/main.py", line = 4, text = "total", include_declaration = true, limit = 1 }
        )
      )
      eq(#want, capped.sections[1].total)
      eq(#want - 1, capped.sections[1].more)
      not_loaded(main)
    end,
  },
  {
    "lsp_definition by symbol and file: several definitions (two `area` methods) are all answered, as the server answers each",
    function()
      local shapes = dir .. "/py/shapes.py"
      local ans = sc(h.call("lsp_definition", { symbol = "area", file = "py/shapes.py" }))
      eq({ "py/shapes.py:10:9", "py/shapes.py:2:9" }, places(ans), vim.inspect(ans))
      contains(ans.note, "2 symbols are named")
      -- Where the server's own document symbols put them.
      local want = {}
      for _, s in
        ipairs(require("claude_context.code.lsp").flatten(ask("pylsp", shapes, "textDocument/documentSymbol", {})))
      do
        if s.name == "area" then
          local line = vim.fn.readfile(shapes)[s.sel.start.line + 1]
          table.insert(
            want,
            ("py/shapes.py:%d:%d"):format(s.sel.start.line + 1, line:find("area", s.sel.start.character + 1, true))
          )
        end
      end
      table.sort(want)
      eq(want, places(ans))
      -- By kind: only the class.
      local cls = sc(h.call("lsp_definition", { symbol = "Square", file = "py/shapes.py", kind = "class" }))
      eq({ "py/shapes.py:6:7" }, places(cls))
      not_loaded(shapes)
    end,
  },
  {
    "a symbol alone with pylsp (no workspace symbol search): found in the project's outline, then the server asked there",
    function()
      local shapes = dir .. "/py/shapes.py"
      -- (tsserver can search, but finds no `total` inside the project.)
      local def = sc(h.call("lsp_definition", { symbol = "total" }))
      eq({ "py/shapes.py:14:5" }, places(def), vim.inspect(def))
      contains(def.note, "project's outline")
      local refs = sc(h.call("lsp_references", { symbol = "total", include_declaration = true }))
      eq({ "pylsp" }, refs.servers)
      local want = server_places(ask("pylsp", shapes, "textDocument/references", {
        position = { line = 13, character = 4 },
        context = { includeDeclaration = true },
      }))
      eq(want, places(refs))
      ok(#want >= 3, vim.inspect(want))
      -- Both Python `area` methods (the outline) and the TypeScript ones (tsserver's search).
      eq(
        { "py/shapes.py:10:9", "py/shapes.py:2:9", "ts/shapes.ts:14:3", "ts/shapes.ts:2:3", "ts/shapes.ts:7:3" },
        places(sc(h.call("lsp_definition", { symbol = "area" })))
      )
      -- By kind, the class only.
      eq({ "py/shapes.py:6:7" }, places(sc(h.call("lsp_definition", { symbol = "Square", kind = "class" }))))
      not_loaded(shapes)
      -- A name that is no definition anywhere: the answer says where it looked.
      local r = h.call("lsp_definition", { symbol = "nowhere_at_all" })
      eq(true, r.isError, vim.inspect(r))
      contains(r.content[1].text, "nowhere_at_all")
    end,
  },
  {
    "a symbol alone in a language no server runs for: tree-sitter's outline, cached per file by its stat",
    function()
      local tool = dir .. "/notes/tool.lua"
      local defs = require("claude_context.code.defs")
      local ans = sc(h.call("lsp_definition", { symbol = "helper" }))
      eq({ "notes/tool.lua:7:16" }, places(ans), vim.inspect(ans))
      contains(ans.note, "tree-sitter")
      local cached = defs.cache[tool]
      ok(cached and cached.key:match("^%d+:%d+%.%d+:%d+$"), vim.inspect(cached))
      -- Unchanged: the same entry (not parsed again); changed on disk: parsed again.
      sc(h.call("lsp_definition", { symbol = "helper" }))
      ok(rawequal(cached, defs.cache[tool]), "parsed again though unchanged")
      h.write(tool, "local M = {}\n\nfunction M.run()\n  return 1\nend\n\n\nlocal function helper() end\n\nreturn M\n")
      eq({ "notes/tool.lua:8:16" }, places(sc(h.call("lsp_definition", { symbol = "helper" }))))
      ok(not rawequal(cached, defs.cache[tool]), "a changed file is parsed again")
      -- A file that is not the one the bridge found (its stat key differs: replaced, or reached
      -- through a directory swapped for a link since) is not read.
      defs.cache[tool] = nil
      local got
      require("claude_context.code.task").run(function(task)
        return (
          defs.find(
            task,
            { symbol = "helper", roots = { dir }, candidates = { { path = tool, key = "1:2.3:4" } } },
            function(a, b)
              return a == b
            end
          )
        )
      end, function(r)
        got = r
      end)
      wait_for(function()
        return got
      end, 5000, "the outline's answer")
      eq({}, got)
      eq(nil, defs.cache[tool])
      -- `M.run`, an assigned function, by its last name.
      eq({ "notes/tool.lua:3:12" }, places(sc(h.call("lsp_definition", { symbol = "run" }))))
      not_loaded(tool)
      h.write(tool, "local M = {}\n\nfunction M.run()\n  return 1\nend\n\nlocal function helper() end\n\nreturn M\n")
    end,
  },
  {
    "lsp_hover and lsp_symbols (pylsp): the server's own hover text and document symbols",
    function()
      local shapes = dir .. "/py/shapes.py"
      local ans = sc(h.call("lsp_hover", { file = "py/shapes.py", line = 14, column = 5 }))
      local want = ask("pylsp", shapes, "textDocument/hover", { position = { line = 13, character = 4 } })
      local v = want.contents.value or want.contents
      eq(v, ans.hover)
      contains(ans.hover, "total(shapes)")
      local syms = sc(h.call("lsp_symbols", { file = "py/shapes.py" }))
      local got = {}
      for _, l in ipairs(syms.sections[1].files[1].locations) do
        table.insert(got, l.name .. "@" .. l.line)
      end
      local theirs = ask("pylsp", shapes, "textDocument/documentSymbol", {})
      local exp = {}
      for _, s in ipairs(require("claude_context.code.lsp").flatten(theirs)) do
        table.insert(exp, s.name .. "@" .. (s.sel.start.line + 1))
      end
      table.sort(got)
      table.sort(exp)
      eq(exp, got)
      not_loaded(shapes)
    end,
  },
  {
    "tsserver: workspace symbol with several definitions, implementations, type definition, calls, each as the server answers",
    function()
      local shapes, main = dir .. "/ts/shapes.ts", dir .. "/ts/main.ts"
      -- `area` is defined three times (the interface's and two classes').
      local defs = sc(h.call("lsp_definition", { symbol = "area", kind = "method" }))
      local d = places(defs)
      ok(vim.tbl_contains(d, "ts/shapes.ts:7:3") and vim.tbl_contains(d, "ts/shapes.ts:14:3"), vim.inspect(d))
      contains(defs.note, "symbols are named")
      local impl = sc(h.call("lsp_implementations", { file = "ts/shapes.ts", line = 1, text = "Shape" }))
      eq(
        server_places(ask("tsls", shapes, "textDocument/implementation", { position = { line = 0, character = 17 } })),
        places(impl)
      )
      eq({ "ts/shapes.ts:12:14", "ts/shapes.ts:5:14" }, places(impl))
      local td = sc(h.call("lsp_type_definition", { file = "ts/main.ts", line = 4, text = "c," }))
      eq(
        server_places(ask("tsls", main, "textDocument/typeDefinition", { position = { line = 3, character = 25 } })),
        places(td)
      )
      eq({ "ts/shapes.ts:5:14" }, places(td))
      local calls = sc(h.call("lsp_calls", { symbol = "sum", file = "ts/shapes.ts", direction = "incoming" }))
      local item =
        ask("tsls", shapes, "textDocument/prepareCallHierarchy", { position = { line = 18, character = 16 } })[1]
      local tsls = vim.lsp.get_clients({ name = "tsls" })[1]
      local inc = tsls:request_sync("callHierarchy/incomingCalls", { item = item }, 20000)
      local want = {}
      for _, call in ipairs(inc.result) do
        for _, fr in ipairs(call.fromRanges) do
          table.insert(want, { uri = call.from.uri, range = fr })
        end
      end
      eq(server_places(want), places(calls))
      eq({ "ts/main.ts:4:20" }, places(calls))
      local refs = sc(h.call("lsp_references", { symbol = "Circle", kind = "class" }))
      local rw = server_places(ask("tsls", shapes, "textDocument/references", {
        position = { line = 4, character = 13 },
        context = { includeDeclaration = false },
      }))
      eq(rw, places(refs))
      for _, f in ipairs({ shapes, main }) do
        not_loaded(f)
      end
    end,
  },
  {
    "a file no server covers: a clear answer that offers code_outline; code_outline works there (tree-sitter)",
    function()
      local r = h.call("lsp_references", { file = "notes/tool.lua", line = 3, text = "run" })
      eq(true, r.isError)
      contains(r.content[1].text, "no language server is attached to notes/tool.lua")
      contains(r.content[1].text, "code_outline")
      not_loaded(dir .. "/notes/tool.lua")
      local o = sc(h.call("code_outline", { file = "notes/tool.lua" }))
      eq({ "tree-sitter lua" }, o.servers)
      local got = {}
      for _, l in ipairs(o.sections[1].files[1].locations) do
        table.insert(got, ("%s %s %d-%d"):format(l.kind, l.name, l.line, l.end_line))
      end
      eq({ "function M.run 3-5", "function helper 7-7" }, got)
      eq(-1, vim.fn.bufnr(dir .. "/notes/tool.lua"), "the outline loads nothing")
    end,
  },
  {
    "code_outline of Python: the bundled parser, or the language server's symbols when there is none (said so)",
    function()
      local o = sc(h.call("code_outline", { file = "py/shapes.py" }))
      local names = {}
      for _, l in ipairs(o.sections[1].files[1].locations) do
        table.insert(names, l.name)
      end
      ok(vim.tbl_contains(names, "Square") and vim.tbl_contains(names, "total"), vim.inspect(names))
      if not vim.treesitter.language.add("python") then
        contains(o.note, "no tree-sitter parser for python")
        eq({ "pylsp" }, o.servers)
      end
      not_loaded(dir .. "/py/shapes.py")
    end,
  },
  {
    "lsp_diagnostics of a file that is not open: the server's diagnostics, then the buffer is gone",
    function()
      local ans = sc(h.call("lsp_diagnostics", { files = { "py/broken.py", "py/shapes.py" }, timeout_ms = 20000 }))
      local f = ans.sections[1].files[1]
      eq("py/broken.py", f.path)
      local found = false
      for _, l in ipairs(f.locations) do
        if l.message:find("undefined name 'nope'", 1, true) then
          found = true
          eq(2, l.line)
          eq(12, l.col)
          eq("    return nope", l.text)
        end
      end
      ok(found, vim.inspect(f))
      contains(ans.note or "", "no diagnostics in py/shapes.py")
      not_loaded(dir .. "/py/broken.py")
      not_loaded(dir .. "/py/shapes.py")
    end,
  },
  {
    "a file the person has open stays open, and its unsaved state is what is answered",
    function()
      local main = dir .. "/py/main.py"
      vim.cmd.edit(main)
      local buf = vim.api.nvim_get_current_buf()
      wait_for(function()
        return #vim.lsp.get_clients({ bufnr = buf }) > 0
      end, 20000, "pylsp on main.py")
      vim.api.nvim_buf_set_lines(buf, -1, -1, false, { "unsaved = total([Square(9)])" })
      local ans = sc(h.call("lsp_references", { file = "py/main.py", line = 4, text = "total" }))
      local found
      for _, f in ipairs(ans.sections[1].files) do
        for _, l in ipairs(f.locations) do
          if f.path == "py/main.py" and l.line == 6 then
            found = l
          end
        end
      end
      ok(found, "the unsaved line is among the references: " .. vim.inspect(ans))
      eq("unsaved = total([Square(9)])", found.text)
      eq(11, found.col)
      eq(true, vim.api.nvim_buf_is_loaded(buf), "still loaded")
      eq(true, vim.bo[buf].modified, "the person's change is still there")
      eq(buf, vim.api.nvim_get_current_buf())
      vim.cmd("bwipeout! " .. buf)
    end,
  },
  {
    "/mcp: the same tools; a file outside is refused; a location outside (the stdlib) has no text",
    function()
      local r = mcp_call("lsp_references", { file = "py/main.py", line = 4, text = "total" })
      eq(false, r.isError, vim.inspect(r))
      local outside = h.tmpdir() .. "/x.py"
      h.write(outside, "SECRET = 1\n")
      r = mcp_call("lsp_references", { file = outside, line = 1, column = 1 })
      eq(true, r.isError)
      contains(r.content[1].text, "outside the project")
      eq(-1, vim.fn.bufnr(outside), "never loaded")
      r = mcp_call("lsp_definition", { file = "py/main.py", line = 5, text = "getcwd" })
      eq(false, r.isError, vim.inspect(r))
      local f = r.structuredContent.sections[1].files[1]
      eq(false, f.inside)
      eq(nil, f.locations[1].text)
      ok(vim.startswith(f.path, "/"), f.path)
      contains(r.content[1].text, "text withheld")
    end,
  },
  {
    "a server that never answers: the request times out with a message; a cancelled one is cancelled at the server",
    function()
      vim.filetype.add({ extension = { fake = "fakelang" } })
      vim.lsp.config("fake", {
        filetypes = { "fakelang" },
        root_markers = { ".git" },
        cmd = h.fake_lsp_cmd({
          capabilities = { referencesProvider = true, textDocumentSync = 1 },
          silent = true,
          requests = fake.requests,
          cancelled = fake.cancelled,
        }),
      })
      vim.lsp.enable("fake")
      local f = write("x/a.fake", "alpha beta\n")
      vim.cmd.edit(f)
      wait_for(function()
        return vim.lsp.get_clients({ bufnr = 0, name = "fake" })[1]
      end, 5000, "the fake server")
      vim.cmd("bwipeout!")
      local task = require("claude_context.code.task")
      task.request_timeout_ms = 300
      local r = h.call("lsp_references", { file = "x/a.fake", line = 1, text = "beta" })
      eq(true, r.isError)
      contains(r.content[1].text, "did not answer textDocument/references within")
      wait_for(function()
        return #fake.cancelled == 1
      end, 3000, "the timed-out request cancelled at the server")
      not_loaded(f)
      task.request_timeout_ms = 60000
      local asked = #fake.requests
      MCP:call(77, "lsp_references", { file = "x/a.fake", line = 1, text = "beta" })
      wait_for(function()
        return #fake.requests > asked and fake.requests[#fake.requests] == "textDocument/references"
      end, 5000, "the request at the server")
      MCP:send({
        jsonrpc = "2.0",
        method = "notifications/cancelled",
        params = { requestId = 77, reason = "interrupted" },
      })
      wait_for(function()
        return #fake.cancelled == 2
      end, 5000, "the cancelled request cancelled at the server")
      not_loaded(f)
      task.request_timeout_ms = 30000
    end,
  },
  {
    "a file not open is read off the main thread and loaded a slice at a time (the editor runs between)",
    function()
      local task = require("claude_context.code.task")
      local lines = {}
      for i = 1, 60000 do
        lines[i] = ("line %d %s"):format(i, ("x"):rep(40))
      end
      local f = write("big/data.txt", table.concat(lines, "\n") .. "\n")
      local done, got, early = false, nil, nil
      local partial = 0
      -- Between two loop iterations: how often the buffer is seen loaded in part.
      local function tick()
        if done then
          return
        end
        local b = vim.fn.bufnr(f)
        if b > 0 and vim.api.nvim_buf_is_loaded(b) then
          local n = vim.api.nvim_buf_line_count(b)
          if n > 1 and n < #lines then
            partial = partial + 1
          end
        end
        vim.defer_fn(tick, 0)
      end
      task.run(function(t)
        local buf, err = t:buffer(f)
        ok(buf, err)
        got = {
          lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false),
          modified = vim.bo[buf].modified,
          modifiable = vim.bo[buf].modifiable,
          ft = vim.bo[buf].filetype,
        }
        done = true
        return {}
      end, function() end)
      -- Queued after the task's first slice: with a load in one go it would run after the
      -- whole file was in the buffer.
      vim.schedule(function()
        early = not done
      end)
      tick()
      wait_for(function()
        return done
      end, 30000, "the load")
      eq(true, early, "a callback queued with the request ran before the load had finished")
      ok(partial >= 2, ("the buffer was seen filled in part %d times during the load of a 3 MB file"):format(partial))
      eq(#lines, #got.lines)
      eq(lines, got.lines)
      eq({ false, true, "text" }, { got.modified, got.modifiable, got.ft })
      not_loaded(f)
    end,
  },
  {
    "a file loaded out of sight keeps its line endings, a missing last newline and its text",
    function()
      local task = require("claude_context.code.task")
      local f = write("big/dos.txt", "one\r\ntwo é\r\nthree")
      local got
      task.run(function(t)
        local buf, err = t:buffer(f)
        ok(buf, err)
        got = {
          vim.api.nvim_buf_get_lines(buf, 0, -1, false),
          vim.bo[buf].fileformat,
          vim.bo[buf].endofline,
          vim.bo[buf].modified,
        }
        return {}
      end, function() end)
      wait_for(function()
        return got
      end, 10000, "the load")
      eq({ { "one", "two é", "three" }, "dos", false, false }, got)
      not_loaded(f)
    end,
  },
  {
    "two requests for the same file not open share its hidden buffer: both see it whole",
    function()
      local task = require("claude_context.code.task")
      local f = dir .. "/big/data.txt"
      local want = #vim.fn.readfile(f)
      local got = {}
      for i = 1, 2 do
        task.run(function(t)
          local buf, err = t:buffer(f)
          ok(buf, err)
          got[i] = { buf, vim.api.nvim_buf_line_count(buf) }
          return {}
        end, function() end)
      end
      wait_for(function()
        return got[1] and got[2]
      end, 30000, "both loads")
      eq(got[1][1], got[2][1], "one buffer")
      eq({ want, want }, { got[1][2], got[2][2] })
      not_loaded(f)
    end,
  },
  {
    "a request waiting for another's load, cancelled before the load began, loads the file itself",
    function()
      local task = require("claude_context.code.task")
      local buffers = require("claude_context.code.buffers")
      local f = dir .. "/big/data.txt"
      local want = #vim.fn.readfile(f)
      local cancel_first, got
      -- The first request marks the file as loading and yields before the load (its own slice).
      cancel_first = task.run(function(t)
        t:buffer(f)
        return {}
      end, function() end)
      -- The second runs in the slice after: it waits for the first; the third cancels the first.
      task.run(function(t)
        local buf, err = t:buffer(f)
        got = { buf, err, buf and vim.api.nvim_buf_line_count(buf) }
        return {}
      end, function() end)
      task.run(function()
        ok(buffers.loading[vim.fn.bufnr(f)], "the first request's load is under way")
        cancel_first()
        return {}
      end, function() end)
      wait_for(function()
        return got
      end, 20000, "the second request's answer")
      eq({ true, want }, { got[1] ~= nil, got[3] }, got[2])
      not_loaded(f)
    end,
  },
  {
    "a request waiting for another's fill is woken when it ends, never polls; cancelled halfway, the waiter loads the file",
    function()
      local buffers = require("claude_context.code.buffers")
      local f = dir .. "/big/data.txt"
      local want = #vim.fn.readfile(f)
      for _, existing in ipairs({ false, true }) do
        if existing then
          vim.fn.bufadd(f) -- a buffer the person has, not loaded: unloaded again, never deleted
        end
        local waiter, got, users
        local cancel_first = start_fill(f)
        local buf = vim.fn.bufnr(f)
        local release = hold_buffer(f, function(_, b, err)
          got = { b, err, b and vim.api.nvim_buf_line_count(b) }
          users = b and buffers.hidden[b] and buffers.hidden[b].users
        end, function(t)
          waiter = t
        end)
        wait_for(function()
          return buffers.waiting[buf] ~= nil
        end, 5000, "the second request waiting for the fill")
        eq(nil, next(waiter.timers), "no timer while it waits")
        cancel_first()
        wait_for(function()
          return got
        end, 20000, "the waiting request's answer")
        eq({ true, want, 1 }, { got[1] ~= nil, got[3], users }, got[2])
        release()
        wait_for(function()
          return vim.fn.bufloaded(f) == 0
        end, 5000, "the hidden buffer unloaded")
        eq(existing, vim.fn.bufexists(f) == 1, "the person's buffer kept, a created one gone")
        pcall(vim.cmd.bwipeout, f)
      end
    end,
  },
  {
    "a hidden buffer gets the running server attached directly; shown in a window, its FileType autocommands run then",
    function()
      local f = write("py/shown.py", "x = 1\n")
      local fired = 0
      local au = vim.api.nvim_create_autocmd("FileType", {
        pattern = "python",
        callback = function(a)
          if vim.api.nvim_buf_get_name(a.buf) == f then
            fired = fired + 1
          end
        end,
      })
      local loaded, attached
      local release = hold_buffer(f, function(t, buf, err)
        ok(buf, err)
        attached = #t:clients(buf)
        loaded = buf
      end)
      wait_for(function()
        return loaded
      end, 20000, "the load")
      eq({ 1, 0 }, { attached, fired }, "pylsp attached, no FileType for a buffer nobody sees")
      vim.cmd("sbuffer " .. loaded)
      wait_for(function()
        return fired == 1
      end, 5000, "FileType once the buffer is shown")
      vim.cmd("close")
      release()
      vim.api.nvim_del_autocmd(au)
      wait_for(function()
        return not require("claude_context.code.buffers").hidden[loaded]
      end, 5000, "the request ended")
      pcall(vim.api.nvim_buf_delete, loaded, { force = true })
    end,
  },
  {
    "a load cancelled halfway leaves no buffer behind",
    function()
      local f = dir .. "/big/data.txt"
      local cancel = start_fill(f)
      ok(require("claude_context.code.buffers").loading[vim.fn.bufnr(f)], "still loading")
      cancel()
      not_loaded(f)
      local r = h.call("code_outline", { file = "big/dos.txt" })
      ok(r, "the tools still answer")
    end,
  },
}
