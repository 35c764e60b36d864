---@mod claude_context.code.defs Where a symbol is defined, from the project's own outline
---
--- Used when no running language server can search the workspace's symbols (pylsp): the bridge
--- hands the files of the project that hold the symbol's name (`candidates`: found by an
--- ignore-aware walk off the main thread, crates/core/src/tools/code/index.rs), each with its
--- stat key. Each is read off the main thread (libuv's pool) and parsed with tree-sitter
--- (asynchronously where Neovim parses in slices), its definitions walked in slices of at most
--- `task.slice_ms`; the definitions are cached per file by that stat key, so the next question
--- about an unchanged file parses nothing. A file held by a loaded buffer is parsed from the
--- buffer (its unsaved state). A file whose language has no tree-sitter parser is asked of the
--- language server attached to it (its document symbols), for a few files at most.

local A = require("claude_context.code.answer")
local nodes = require("claude_context.code.nodes")

local M = {}

---path -> { key = stat key, defs = { { name, kind, line, col } } }
M.cache = {}
---The most files whose document symbols are asked of a server when no parser covers them.
M.max_server_files = 20
---Where a slice ends (ms): its steps (a file read, parsed or matched) may take part of a ms
---each, so the slice stops short of `task.slice_ms`.
M.step_budget_ms = 0.5
---The largest file parsed.
M.max_bytes = 1024 * 1024

---The stat key of an `fstat`, as the bridge writes it (size:sec.nsec:ino).
local function key_of(st)
  return ("%d:%d.%d:%d"):format(st.size, st.mtime.sec, st.mtime.nsec or 0, st.ino or 0)
end

---The tree-sitter language for `path` (with its parser loaded), or nil.
local function lang_of(path, buf)
  local ft = buf and vim.bo[buf].filetype
  if not ft or ft == "" then
    ft = vim.filetype.match({ filename = path }) or ""
  end
  if ft == "" then
    return nil
  end
  local lang = vim.treesitter.language.get_lang(ft) or ft
  local ok, added = pcall(vim.treesitter.language.add, lang)
  return ok and added and lang or nil
end

---The text of `path`, read off the main thread; returns (text, key) or nil. With `want` (the
---bridge's stat key of the file it found), a file that is not that one (replaced, or reached
---through a directory swapped for a link since the bridge's no-follow walk) is not read.
local function read(task, path, want)
  local uv = vim.uv
  local flags = uv.constants.O_RDONLY + (uv.constants.O_NONBLOCK or 0) + (uv.constants.O_NOFOLLOW or 0)
  local _, fd = task:fs(uv.fs_open, path, flags, 0)
  if not fd then
    return nil
  end
  task.fds = task.fds or {}
  task.fds[fd] = true
  local _, st = task:fs(uv.fs_fstat, fd)
  local data
  if st and st.type == "file" and st.size <= M.max_bytes and (not want or key_of(st) == want) then
    local _, d = task:fs(uv.fs_read, fd, st.size, 0)
    data = d
  end
  task.fds[fd] = nil
  uv.fs_close(fd)
  if not data then
    return nil
  end
  return data, key_of(st)
end

---The root of a parse of `parser`, parsed asynchronously where Neovim can.
local function parse_root(task, parser)
  local trees = task:await(function(cb)
    local ok = pcall(parser.parse, parser, true, function(_, t)
      cb(t)
    end)
    if not ok then
      cb(parser:parse(true))
    end
  end)
  trees = trees or parser:trees()
  local tree = trees and (trees[1] or select(2, next(trees)))
  return tree and tree:root()
end

---The definitions of one parsed tree: { name, kind, line, col } at the name's own place.
---A definition tree-sitter found: its name, kind and where (0-based).
---@class claude_context.CodeDef
---@field name string
---@field kind string
---@field line integer
---@field col integer

local function walk(task, root, source)
  local defs = {}
  local stack = { { root, nil } }
  local n = 0
  while #stack > 0 do
    local top = table.remove(stack)
    local node, parent_kind = top[1], top[2]
    n = n + 1
    if n % 200 == 0 then
      task:check_slice(M.step_budget_ms)
    end
    local kind = nodes.kind_of(node:type())
    local child_parent = parent_kind
    if kind and kind ~= "heading" and nodes.defines(node, kind) then
      local name, at = nodes.name_of(node, source, kind)
      if name and name ~= "" and at then
        kind = nodes.member_kind(kind, parent_kind)
        local sr, sc = at:range()
        table.insert(defs, { name = name, kind = kind, line = sr, col = sc })
        child_parent = kind
      end
    end
    for i = node:named_child_count() - 1, 0, -1 do
      table.insert(stack, { node:named_child(i), child_parent })
    end
  end
  return defs
end

---The definitions of `source` (a buffer or a text) parsed by `parser` (when `ok`), kept in the
---cache under `key`; nil when it has no tree.
local function walk_cached(task, path, key, source, ok, parser)
  local root = ok and parser and parse_root(task, parser)
  if not root then
    return nil
  end
  local defs = walk(task, root, source)
  M.cache[path] = { key = key, defs = defs }
  return defs
end

---The definitions in `path` from tree-sitter (nil: unreadable; nil, true: no parser for its
---language). `bufs`: the loaded buffers by name (a buffer's unsaved state wins over the file).
---@return claude_context.CodeDef[]? defs
---@return boolean? no_parser
local function parsed(task, path, key, bufs)
  local buf = bufs[path]
  local c = M.cache[path]
  if not buf and c and key and c.key == key then
    return c.defs, c.no_parser
  end
  local lang = lang_of(path, buf)
  if not lang then
    if key and not buf then
      M.cache[path] = { key = key, no_parser = true }
    end
    return nil, true
  end
  if buf then
    local ck = "buf:" .. vim.api.nvim_buf_get_changedtick(buf)
    if c and c.key == ck then
      return c.defs
    end
    return walk_cached(task, path, ck, buf, pcall(vim.treesitter.get_parser, buf, lang, { error = false }))
  end
  task:check_slice(M.step_budget_ms)
  local text, k = read(task, path, key)
  if not text then
    return nil
  end
  return walk_cached(task, path, k, text, pcall(vim.treesitter.get_string_parser, text, lang))
end

---Whether `line` imports names (`import x`, `from m import x`, `import { x } from`), whose
---symbols a server may list though they are defined elsewhere.
local function imports(line)
  local t = line:gsub("^%s+", "")
  return t:match("^import[%s{(]") ~= nil or t:match("^from%s.*%simport[%s(]") ~= nil
end

---The definitions in `path` from the language server attached to it (its document symbols).
local function from_server(task, path, key, roots)
  local c = M.cache[path]
  if c and key and c.key == key and c.defs then
    return c.defs
  end
  local buf, clients = A.symbol_clients(task, path, roots)
  if not buf then
    return nil
  end
  local defs = {}
  for _, cl in ipairs(clients) do
    local symbols = A.document_symbols(task, cl, path, buf)
    for _, s in ipairs(symbols or {}) do
      local st = s.sel.start
      local text = A.buf_line(buf, st.line) or ""
      -- A name an import brings in (pylsp lists them) is defined elsewhere.
      if not imports(text) then
        local enc = cl.offset_encoding or "utf-16"
        local ok, col = pcall(vim.str_byteindex, text, enc, st.character, false)
        table.insert(defs, { name = s.name, kind = s.kind, line = st.line, col = ok and col or st.character })
      end
    end
  end
  if key and not vim.bo[buf].modified then
    M.cache[path] = { key = key, defs = defs }
  end
  return defs
end

---The definitions named `want` (of `kind`) in the bridge's candidates: a list of
---{ path, start = { line, character (bytes) }, enc = "utf-8", kind, name }, and a note.
---@param same_name fun(want: string, got: string): boolean
---@param skip (fun(path: string): boolean)? files left out (a searching server covers them)
function M.find(task, p, same_name, skip)
  local found, by_server = {}, {}
  local bufs = A.loaded_by_name()
  for _, cand in ipairs(p.candidates or {}) do
    if task.done then
      break
    end
    local defs, no_parser
    if not (skip and skip(cand.path)) then
      defs, no_parser = parsed(task, cand.path, cand.key, bufs)
    end
    if no_parser then
      table.insert(by_server, cand)
    end
    for _, d in ipairs(defs or {}) do
      if same_name(p.symbol, d.name) and A.same_kind(p.kind, d.kind) then
        table.insert(found, {
          path = cand.path,
          start = { line = d.line, character = d.col },
          enc = "utf-8",
          kind = d.kind,
          name = d.name,
        })
      end
    end
    task:check_slice(M.step_budget_ms)
  end
  local skipped = 0
  for i, cand in ipairs(by_server) do
    if i > M.max_server_files or task.done then
      skipped = #by_server - M.max_server_files
      break
    end
    for _, d in ipairs(from_server(task, cand.path, cand.key, p.roots) or {}) do
      if same_name(p.symbol, d.name) and A.same_kind(p.kind, d.kind) then
        table.insert(found, {
          path = cand.path,
          start = { line = d.line, character = d.col },
          enc = "utf-8",
          kind = d.kind,
          name = d.name,
        })
      end
    end
  end
  local how = #by_server > 0 and "tree-sitter and the servers' document symbols" or "tree-sitter"
  local note = ("found in the project's outline (%s, %d of %d files hold the name): no running language server searches the workspace's symbols"):format(
    how,
    #(p.candidates or {}),
    p.indexed_files or 0
  )
  if skipped > 0 or p.candidates_truncated then
    note = note .. "; some files were not looked at (narrow with `file`)"
  end
  return found, note
end

return M
