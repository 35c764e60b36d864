---@mod claude_context.code.lsp The lsp_* tools' handlers: the person's own language servers
---
--- Each handler finds where the model means (a `symbol`, or a `file` + `line` + `column`/`text`),
--- asks the clients attached to that file (`vim.lsp` clients: the person's servers; none is ever
--- started here), and answers raw locations: absolute paths, 0-based positions in the client's
--- `offset_encoding`, and the line's text when a buffer holds the file (its unsaved state). The
--- bridge confines, converts to characters, groups and caps them
--- (crates/core/src/tools/code/mod.rs). Files that are not open are loaded into hidden buffers for
--- the time of the request (claude_context.code.task).

local task_mod = require("claude_context.code.task")

local M = {}

local SymbolKind = vim.lsp.protocol.SymbolKind

local function kind_name(k)
  return type(k) == "number" and (SymbolKind[k] or tostring(k)) or k
end

---`path` relative to the first root it lies under, for messages.
local function rel(path, roots)
  for _, r in ipairs(roots or {}) do
    local prefix = r:gsub("/+$", "") .. "/"
    if vim.startswith(path, prefix) then
      return path:sub(#prefix + 1)
    end
  end
  return path
end

---Loaded buffers by name, for the lines of locations.
local function loaded_by_name()
  local map = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) then
      local n = vim.api.nvim_buf_get_name(b)
      if n ~= "" then
        map[n] = b
      end
    end
  end
  return map
end

local function buf_line(buf, row)
  return vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1]
end

---A raw location for the bridge.
---@param bufs table<string, integer> loaded buffers by name
function M.raw(path, range, encoding, bufs, extra)
  local s, e = range.start, range["end"] or range.start
  local l = {
    path = path,
    line = s.line,
    character = s.character,
    end_line = e.line,
    end_character = e.character,
    encoding = encoding or "utf-16",
  }
  local b = bufs and bufs[path]
  if b then
    l.text = buf_line(b, s.line)
    if e.line ~= s.line then
      l.end_text = buf_line(b, e.line)
    end
  end
  for k, v in pairs(extra or {}) do
    l[k] = v
  end
  return l
end

---Byte column `col` of `text` in `encoding` units.
local function units(text, col, encoding)
  if encoding == "utf-8" then
    return col
  end
  local ok, n = pcall(vim.str_utfindex, text, encoding, col, false)
  if ok and type(n) == "number" then
    return n
  end
  local u32, u16 = vim.str_utfindex(text, col)
  return encoding == "utf-32" and u32 or u16
end

local function supports(client, method, buf)
  local ok, yes = pcall(client.supports_method, client, method, buf)
  if ok then
    return yes
  end
  ok, yes = pcall(client.supports_method, client, method)
  return ok and yes
end

local function names(clients)
  local out = {}
  for _, c in ipairs(clients) do
    table.insert(out, c.name)
  end
  return out
end

local function no_server(path, buf, roots)
  return ("no language server is attached to %s (filetype %q): the editor runs none for it, so "):format(
    rel(path, roots),
    buf and vim.bo[buf].filetype or "?"
  ) .. "the lsp_* tools cannot answer for it. code_outline gives its structure (tree-sitter) without a server."
end

---The clients attached to `buf` that support `method`, or the error.
local function clients_for(task, buf, path, method, roots)
  local attached = task:clients(buf)
  if #attached == 0 then
    return nil, no_server(path, buf, roots)
  end
  local out = {}
  for _, c in ipairs(attached) do
    if supports(c, method, buf) then
      table.insert(out, c)
    end
  end
  if #out == 0 then
    return nil,
      ("the language server%s attached to %s (%s) do%s not support %s"):format(
        #attached == 1 and "" or "s",
        rel(path, roots),
        table.concat(names(attached), ", "),
        #attached == 1 and "es" or "",
        method
      )
  end
  return out
end

---Flattens documentSymbol's answer (DocumentSymbol[] or SymbolInformation[]) into
---{ name, kind, detail, depth, range, sel, uri? }.
local function flatten(result, out, depth)
  out = out or {}
  depth = depth or 0
  for _, s in ipairs(result or {}) do
    if s.location then
      table.insert(out, {
        name = s.name,
        kind = kind_name(s.kind),
        detail = s.containerName,
        depth = depth,
        range = s.location.range,
        sel = s.location.range,
        uri = s.location.uri,
      })
    else
      table.insert(out, {
        name = s.name,
        kind = kind_name(s.kind),
        detail = s.detail,
        depth = depth,
        range = s.range,
        sel = s.selectionRange or s.range,
      })
      flatten(s.children, out, depth + 1)
    end
  end
  return out
end

---The buffer of `file` and the clients that list its symbols, or nil and why not.
---@return integer|nil buf, table|string clients_or_err
local function symbol_clients(task, file, roots)
  local buf, err = task:buffer(file)
  if not buf then
    return nil, err
  end
  local clients, cerr = clients_for(task, buf, file, "textDocument/documentSymbol", roots)
  if not clients then
    return nil, cerr
  end
  return buf, clients
end

---Client `c`'s symbols of `file` (shown in `buf`), flattened; or nil and the error.
local function document_symbols(task, c, file, buf)
  local rerr, result = task:request(c, "textDocument/documentSymbol", {
    textDocument = { uri = vim.uri_from_fname(file) },
  }, buf)
  if rerr then
    return nil, rerr
  end
  return flatten(result)
end

---The running clients that can search the workspace's symbols.
local function workspace_symbol_clients()
  return vim.tbl_filter(function(c)
    return supports(c, "workspace/symbol")
  end, vim.lsp.get_clients())
end

local function same_kind(want, got)
  return not want or want == "" or tostring(got):lower() == want:lower()
end

---Whether a symbol's name as a server reports it is `want` (`area`, `area()`, `Shape.area`).
local function same_name(want, got)
  if got == want then
    return true
  end
  got = tostring(got):gsub("%(.*%)$", "")
  if got == want then
    return true
  end
  local last = want:match("[^.:]+$")
  local tail = got:match("[^.:]+$")
  return last == want and tail == want
end

---Where the model means: a list of targets { buf, path, label, pos = fun(client) -> Position }.
---@return table[]? targets
---@return string? err
---@return string? note
function M.targets(task, p)
  local roots = p.roots
  if p.file and p.line then
    local buf, err = task:buffer(p.file)
    if not buf then
      return nil, err
    end
    local n = vim.api.nvim_buf_line_count(buf)
    if p.line > n then
      return nil, ("%s has %d lines; line %d is past its end"):format(rel(p.file, roots), n, p.line)
    end
    local row = p.line - 1
    local text = buf_line(buf, row) or ""
    local col
    if p.text and p.text ~= "" then
      local s = text:find(p.text, 1, true)
      if not s then
        return nil, ("%q is not on line %d of %s, which reads: %s"):format(p.text, p.line, rel(p.file, roots), text)
      end
      col = s - 1
    elseif p.column then
      local nchars = vim.fn.strchars(text)
      if p.column > nchars + 1 then
        return nil, ("line %d of %s has %d characters; column %d is past its end"):format(
          p.line,
          rel(p.file, roots),
          nchars,
          p.column
        )
      end
      col = vim.fn.byteidx(text, p.column - 1)
      if col < 0 then
        col = #text
      end
    elseif p.symbol and p.symbol ~= "" then
      local s = text:find(p.symbol, 1, true)
      if not s then
        return nil, ("%q is not on line %d of %s, which reads: %s"):format(p.symbol, p.line, rel(p.file, roots), text)
      end
      col = s - 1
    else
      col = (text:find("%S") or 1) - 1
    end
    local label = ("%s:%d:%d"):format(rel(p.file, roots), p.line, vim.fn.strchars(text:sub(1, col)) + 1)
    return {
      {
        buf = buf,
        path = p.file,
        label = label,
        pos = function(client)
          return { line = row, character = units(text, col, client.offset_encoding or "utf-16") }
        end,
      },
    }
  end
  -- A symbol by name: the file's symbols, or the workspace's.
  local sym = p.symbol
  local found = {}
  local workspace_errs
  if p.file then
    local buf, clients = symbol_clients(task, p.file, roots)
    if not buf then
      return nil, clients
    end
    for _, c in ipairs(clients) do
      local symbols, rerr = document_symbols(task, c, p.file, buf)
      if not symbols then
        return nil, rerr
      end
      for _, s in ipairs(symbols) do
        if same_name(sym, s.name) and same_kind(p.kind, s.kind) then
          table.insert(found, { path = p.file, start = s.sel.start, client = c, kind = s.kind, name = s.name })
        end
      end
    end
  else
    local clients = workspace_symbol_clients()
    if #clients == 0 then
      local running = names(vim.lsp.get_clients())
      return nil,
        ("no running language server can search the workspace's symbols%s: give the `file` where %q is defined or used (with it, its symbols are searched), or a `file` and `line`"):format(
          #running > 0 and (" (" .. table.concat(running, ", ") .. " cannot)") or " (none is running)",
          sym
        )
    end
    local errs = {}
    workspace_errs = errs
    for _, c in ipairs(clients) do
      local rerr, result = task:request(c, "workspace/symbol", { query = sym })
      if rerr then
        -- One server's failure (no project open yet) does not hide the others' symbols.
        table.insert(errs, ("%s: %s"):format(c.name, rerr:match("^[^\n]*")))
        result = nil
      end
      for _, s in ipairs(result ~= vim.NIL and result or {}) do
        local loc = s.location or {}
        if loc.uri and same_name(sym, s.name) and same_kind(p.kind, kind_name(s.kind)) then
          local path = vim.uri_to_fname(loc.uri)
          if task_mod.inside(path, roots) then
            local start = loc.range and loc.range.start or { line = 0, character = 0 }
            table.insert(found, { path = path, start = start, client = c, kind = kind_name(s.kind), name = s.name })
          end
        end
      end
    end
  end
  if #found == 0 then
    return nil,
      ("no symbol named %q%s found %s%s"):format(
        sym,
        p.kind and (" of kind " .. p.kind) or "",
        p.file and ("in " .. rel(p.file, roots)) or "in the workspace (inside the project)",
        workspace_errs and #workspace_errs > 0 and (" (" .. table.concat(workspace_errs, "; ") .. ")") or ""
      )
  end
  local targets, seen = {}, {}
  local note
  if #found > 10 then
    note = ("%d symbols are named %q; the first 10 are answered for (narrow with `file` or `kind`)"):format(#found, sym)
  elseif #found > 1 then
    note = ("%d symbols are named %q; all are answered for (narrow with `file` or `kind`)"):format(#found, sym)
  end
  for i = 1, math.min(#found, 10) do
    local f = found[i]
    local buf, err = task:buffer(f.path)
    if not buf then
      return nil, err
    end
    -- The name's own position: a workspace symbol's range may start at a keyword before it.
    local row = f.start.line
    local text = buf_line(buf, row) or ""
    local enc = f.client.offset_encoding or "utf-16"
    local bytecol = vim.str_byteindex and select(2, pcall(vim.str_byteindex, text, enc, f.start.character, false))
    if type(bytecol) ~= "number" then
      bytecol = f.start.character
    end
    local name = sym:match("[^.:]+$") or sym
    local s = text:find(name, bytecol + 1, true)
    local col = s and (s - 1) or bytecol
    local key = f.path .. ":" .. row .. ":" .. col
    if not seen[key] then
      seen[key] = true
      table.insert(targets, {
        buf = buf,
        path = f.path,
        row = row,
        col = col,
        name = f.name,
        kind = f.kind,
        width = s and #name or 0,
        label = ("%s %s at %s:%d:%d"):format(f.kind or "symbol", f.name, rel(f.path, roots), row + 1, vim.fn.strchars(text:sub(1, col)) + 1),
        pos = function(client)
          return { line = row, character = units(text, col, client.offset_encoding or "utf-16") }
        end,
      })
    end
  end
  return targets, nil, note
end

---Locations out of a definition-like answer (Location, Location[], LocationLink[]).
local function locations(result)
  if result == nil or result == vim.NIL then
    return {}
  end
  if result.uri or result.targetUri then
    result = { result }
  end
  local out = {}
  for _, l in ipairs(result) do
    if l.targetUri then
      table.insert(out, { uri = l.targetUri, range = l.targetSelectionRange or l.targetRange })
    elseif l.uri then
      table.insert(out, { uri = l.uri, range = l.range })
    end
  end
  return out
end

local function hover_text(c)
  if c == nil or c == vim.NIL then
    return nil
  end
  if type(c) == "string" then
    return c
  end
  if c.kind and c.value then
    return c.value
  end
  if c.language and c.value then
    return ("```%s\n%s\n```"):format(c.language, c.value)
  end
  if vim.islist(c) then
    local parts = {}
    for _, x in ipairs(c) do
      local t = hover_text(x)
      if t and t ~= "" then
        table.insert(parts, t)
      end
    end
    return table.concat(parts, "\n\n")
  end
end

---The tools that ask for locations at a position.
local position_methods = {
  lsp_definition = { "textDocument/definition", "definitions", "definition of" },
  lsp_references = { "textDocument/references", "references", "references of" },
  lsp_implementations = { "textDocument/implementation", "implementations", "implementations of" },
  lsp_type_definition = { "textDocument/typeDefinition", "type definitions", "type definition of" },
}

---Asks `method` at every target from every client that supports it; calls `each(client,
---target, result)`; returns (servers, err).
local function ask_all(task, p, targets, method, params_of, each)
  local servers, seen, errs = {}, {}, {}
  local asked = 0
  for _, t in ipairs(targets) do
    local clients, err = clients_for(task, t.buf, t.path, method, p.roots)
    if not clients then
      table.insert(errs, err)
    else
      for _, c in ipairs(clients) do
        local params = params_of(c, t)
        local rerr, result = task:request(c, method, params, t.buf)
        if rerr then
          return nil, rerr
        end
        asked = asked + 1
        if not seen[c.name] then
          seen[c.name] = true
          table.insert(servers, c.name)
        end
        each(c, t, result)
      end
    end
  end
  if asked == 0 then
    return nil, errs[1]
  end
  return servers
end

local function position_params(c, t)
  return { textDocument = { uri = vim.uri_from_fname(t.path) }, position = t.pos(c) }
end

local function describe(what, p, targets)
  if #targets == 1 then
    return ("%s %s"):format(what, p.symbol and (("`%s` (%s)"):format(p.symbol, targets[1].label)) or targets[1].label)
  end
  return ("%s `%s`"):format(what, p.symbol or "?")
end

for tool, spec in pairs(position_methods) do
  M[tool] = function(task, p)
    local targets, err, note = M.targets(task, p)
    if not targets then
      return nil, err
    end
    local method, title, what = spec[1], spec[2], spec[3]
    local items = {}
    local bufs
    if tool == "lsp_definition" and not p.line then
      -- A symbol found by name is its own definition: where the server declares it (asking
      -- go-to-definition there may jump elsewhere, to an overridden method).
      bufs = loaded_by_name()
      local servers = names(vim.lsp.get_clients({ bufnr = targets[1].buf }))
      for _, t in ipairs(targets) do
        local r = { start = { line = t.row, character = t.col }, ["end"] = { line = t.row, character = t.col + t.width } }
        table.insert(items, M.raw(t.path, r, "utf-8", bufs, { name = t.name, kind = t.kind }))
      end
      return {
        query = describe(what, p, targets),
        servers = servers,
        sections = { { title = title, items = items } },
        note = note,
      }
    end
    local results = {}
    local servers, aerr = ask_all(task, p, targets, method, function(c, t)
      local params = position_params(c, t)
      if tool == "lsp_references" then
        params.context = { includeDeclaration = p.include_declaration == true }
      end
      return params
    end, function(c, _, result)
      table.insert(results, { c, result })
    end)
    if not servers then
      return nil, aerr
    end
    bufs = loaded_by_name()
    for _, r in ipairs(results) do
      for _, l in ipairs(locations(r[2])) do
        task:check_slice()
        table.insert(items, M.raw(vim.uri_to_fname(l.uri), l.range, r[1].offset_encoding, bufs))
      end
    end
    return {
      query = describe(what, p, targets),
      servers = servers,
      sections = { { title = title, items = items } },
      note = note,
    }
  end
end

function M.lsp_hover(task, p)
  local targets, err, note = M.targets(task, p)
  if not targets then
    return nil, err
  end
  local parts = {}
  local servers, aerr = ask_all(task, p, targets, "textDocument/hover", position_params, function(_, t, result)
    local text = result and result ~= vim.NIL and hover_text(result.contents)
    if text and text ~= "" then
      table.insert(parts, (#targets > 1 and ("## " .. t.label .. "\n") or "") .. text)
    end
  end)
  if not servers then
    return nil, aerr
  end
  return {
    query = describe("hover of", p, targets),
    servers = servers,
    sections = {},
    hover = #parts > 0 and table.concat(parts, "\n\n") or "(the server has nothing to show here)",
    note = note,
  }
end

function M.lsp_calls(task, p)
  local targets, err, note = M.targets(task, p)
  if not targets then
    return nil, err
  end
  local prepared = {}
  local servers, aerr = ask_all(task, p, targets, "textDocument/prepareCallHierarchy", position_params, function(c, _, result)
    for _, item in ipairs(result ~= vim.NIL and result or {}) do
      table.insert(prepared, { c, item })
    end
  end)
  if not servers then
    return nil, aerr
  end
  if #prepared == 0 then
    return nil, ("the language server found no function or method at %s"):format(targets[1].label)
  end
  local incoming, outgoing = {}, {}
  local dir = p.direction or "both"
  local bufs = loaded_by_name()
  for i = 1, math.min(#prepared, 5) do
    local c, item = prepared[i][1], prepared[i][2]
    local enc = c.offset_encoding
    if dir ~= "outgoing" then
      local rerr, result = task:request(c, "callHierarchy/incomingCalls", { item = item })
      if rerr then
        return nil, rerr
      end
      for _, call in ipairs(result ~= vim.NIL and result or {}) do
        local from = call.from
        local path = vim.uri_to_fname(from.uri)
        -- Each call site, named after the caller.
        for _, r in ipairs(call.fromRanges or {}) do
          table.insert(incoming, M.raw(path, r, enc, bufs, { name = from.name, kind = kind_name(from.kind) }))
        end
        if #(call.fromRanges or {}) == 0 then
          table.insert(incoming, M.raw(path, from.selectionRange or from.range, enc, bufs, { name = from.name, kind = kind_name(from.kind) }))
        end
      end
    end
    if dir ~= "incoming" then
      local rerr, result = task:request(c, "callHierarchy/outgoingCalls", { item = item })
      if rerr then
        return nil, rerr
      end
      for _, call in ipairs(result ~= vim.NIL and result or {}) do
        local to = call.to
        table.insert(
          outgoing,
          M.raw(vim.uri_to_fname(to.uri), to.selectionRange or to.range, enc, bufs, { name = to.name, kind = kind_name(to.kind) })
        )
      end
    end
  end
  local sections = {}
  if dir ~= "outgoing" then
    table.insert(sections, { title = "incoming calls (the call sites, by caller)", items = incoming })
  end
  if dir ~= "incoming" then
    table.insert(sections, { title = "outgoing calls (the functions called, where they are defined)", items = outgoing })
  end
  return { query = describe("calls of", p, targets), servers = servers, sections = sections, note = note }
end

function M.lsp_symbols(task, p)
  local roots = p.roots
  if p.file then
    local buf, clients = symbol_clients(task, p.file, roots)
    if not buf then
      return nil, clients
    end
    local c = clients[1]
    local symbols, rerr = document_symbols(task, c, p.file, buf)
    if not symbols then
      return nil, rerr
    end
    local bufs = loaded_by_name()
    local items = {}
    for _, s in ipairs(symbols) do
      if same_kind(p.kind, s.kind) then
        task:check_slice()
        local path = s.uri and vim.uri_to_fname(s.uri) or p.file
        local r = { start = s.sel.start, ["end"] = s.range["end"] }
        table.insert(items, M.raw(path, r, c.offset_encoding, bufs, { name = s.name, kind = s.kind, detail = s.detail, depth = s.depth }))
      end
    end
    return {
      query = ("symbols of %s"):format(rel(p.file, roots)),
      servers = { c.name },
      sections = { { title = "symbols", items = items, ordered = true } },
    }
  end
  local clients = workspace_symbol_clients()
  if #clients == 0 then
    return nil,
      "no running language server can search the workspace's symbols; give a `file` to list its symbols"
  end
  local items, servers = {}, {}
  local bufs = loaded_by_name()
  for _, c in ipairs(clients) do
    local rerr, result = task:request(c, "workspace/symbol", { query = p.query })
    if rerr then
      return nil, rerr
    end
    table.insert(servers, c.name)
    for _, s in ipairs(result ~= vim.NIL and result or {}) do
      local loc = s.location or {}
      if loc.uri and same_kind(p.kind, kind_name(s.kind)) then
        task:check_slice()
        local range = loc.range or { start = { line = 0, character = 0 } }
        table.insert(
          items,
          M.raw(vim.uri_to_fname(loc.uri), range, c.offset_encoding, bufs, { name = s.name, kind = kind_name(s.kind), detail = s.containerName })
        )
      end
    end
  end
  return {
    query = ("workspace symbols matching %q"):format(p.query),
    servers = servers,
    sections = { { title = "symbols", items = items } },
  }
end

M.flatten = flatten
M.rel = rel
M.loaded_by_name = loaded_by_name

return M
