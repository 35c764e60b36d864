---@mod claude_context.code.lsp The lsp_* tools' handlers: the person's own language servers
---
--- Each handler finds where the model means (a `symbol`, or a `file` + `line` + `column`/`text`),
--- asks the clients attached to that file (`vim.lsp` clients: the person's servers; none is ever
--- started here), and answers raw locations: absolute paths, 0-based positions in the client's
--- `offset_encoding`, and the line's text when a buffer holds the file (its unsaved state). The
--- bridge confines, converts to characters, groups and caps them
--- (crates/core/src/tools/code/answer.rs). Where the model means: claude_context.code.locate; what
--- the handlers share: claude_context.code.answer.

local A = require("claude_context.code.answer")
local locate = require("claude_context.code.locate")
local raw = A.raw

local M = {}

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
    local clients, err = A.clients_for(task, t.buf, t.path, method, p.roots)
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

---A handler of the tools that take where the model means: `fn(task, p, targets, note)` runs
---once the targets are found (claude_context.code.locate).
local function at_targets(fn)
  return function(task, p)
    local targets, err, note = locate.targets(task, p)
    if not targets then
      return locate.failed(err)
    end
    return fn(task, p, targets, note)
  end
end

---A symbol found by name is its own definition: where the server declares it (asking
---go-to-definition there may jump elsewhere, to an overridden method). Returns (items, servers).
local function declared(targets)
  local bufs, items = A.loaded_by_name(), {}
  for _, t in ipairs(targets) do
    local r = { start = { line = t.row, character = t.col }, ["end"] = { line = t.row, character = t.col + t.width } }
    table.insert(items, raw(t.path, r, "utf-8", bufs, { name = t.name, kind = t.kind }))
  end
  return items, A.names(vim.lsp.get_clients({ bufnr = targets[1].buf }))
end

---The locations the servers answer `method` with at the targets: (items, servers), or nil and
---the error.
local function located(task, p, targets, method, references)
  local results = {}
  local servers, aerr = ask_all(task, p, targets, method, function(c, t)
    local params = position_params(c, t)
    if references then
      params.context = { includeDeclaration = p.include_declaration == true }
    end
    return params
  end, function(c, _, result)
    table.insert(results, { c, result })
  end)
  if not servers then
    return nil, aerr
  end
  local bufs, items = A.loaded_by_name(), {}
  for _, r in ipairs(results) do
    for _, l in ipairs(locations(r[2])) do
      task:check_slice()
      table.insert(items, raw(vim.uri_to_fname(l.uri), l.range, r[1].offset_encoding, bufs))
    end
  end
  return items, servers
end

for tool, spec in pairs(position_methods) do
  M[tool] = at_targets(function(task, p, targets, note)
    local method, title, what = spec[1], spec[2], spec[3]
    local items, servers
    if tool == "lsp_definition" and not p.line then
      items, servers = declared(targets)
    else
      items, servers = located(task, p, targets, method, tool == "lsp_references")
      if not items then
        return nil, servers
      end
    end
    return {
      query = describe(what, p, targets),
      servers = servers,
      sections = { { title = title, items = items } },
      note = note,
    }
  end)
end

M.lsp_hover = at_targets(function(task, p, targets, note)
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
end)

---Asks client `c` for the incoming or outgoing calls (`method`) of call hierarchy item `item`;
---calls `each(call)` for each; returns the error, if any.
local function each_call(task, c, item, method, each)
  local rerr, result = task:request(c, method, { item = item })
  if rerr then
    return rerr
  end
  for _, call in ipairs(result ~= vim.NIL and result or {}) do
    each(call)
  end
end

M.lsp_calls = at_targets(function(task, p, targets, note)
  local prepared = {}
  local servers, aerr = ask_all(
    task,
    p,
    targets,
    "textDocument/prepareCallHierarchy",
    position_params,
    function(c, _, result)
      for _, item in ipairs(result ~= vim.NIL and result or {}) do
        table.insert(prepared, { c, item })
      end
    end
  )
  if not servers then
    return nil, aerr
  end
  if #prepared == 0 then
    return nil, ("the language server found no function or method at %s"):format(targets[1].label)
  end
  local incoming, outgoing = {}, {}
  local dir = p.direction or "both"
  local bufs = A.loaded_by_name()
  for i = 1, math.min(#prepared, 5) do
    local c, item = prepared[i][1], prepared[i][2]
    local enc = c.offset_encoding
    if dir ~= "outgoing" then
      local err = each_call(task, c, item, "callHierarchy/incomingCalls", function(call)
        local from = call.from
        local path = vim.uri_to_fname(from.uri)
        -- Each call site, named after the caller.
        for _, r in ipairs(call.fromRanges or {}) do
          table.insert(incoming, raw(path, r, enc, bufs, { name = from.name, kind = A.kind_name(from.kind) }))
        end
        if #(call.fromRanges or {}) == 0 then
          table.insert(
            incoming,
            raw(path, from.selectionRange or from.range, enc, bufs, { name = from.name, kind = A.kind_name(from.kind) })
          )
        end
      end)
      if err then
        return nil, err
      end
    end
    if dir ~= "incoming" then
      local err = each_call(task, c, item, "callHierarchy/outgoingCalls", function(call)
        local to = call.to
        table.insert(
          outgoing,
          raw(
            vim.uri_to_fname(to.uri),
            to.selectionRange or to.range,
            enc,
            bufs,
            { name = to.name, kind = A.kind_name(to.kind) }
          )
        )
      end)
      if err then
        return nil, err
      end
    end
  end
  local sections = {}
  if dir ~= "outgoing" then
    table.insert(sections, { title = "incoming calls (the call sites, by caller)", items = incoming })
  end
  if dir ~= "incoming" then
    table.insert(
      sections,
      { title = "outgoing calls (the functions called, where they are defined)", items = outgoing }
    )
  end
  return { query = describe("calls of", p, targets), servers = servers, sections = sections, note = note }
end)

function M.lsp_symbols(task, p)
  local roots = p.roots
  if p.file then
    local buf, clients = A.symbol_clients(task, p.file, roots)
    if not buf then
      return nil, clients
    end
    local c = clients[1]
    local symbols, rerr = A.document_symbols(task, c, p.file, buf)
    if not symbols then
      return nil, rerr
    end
    local bufs = A.loaded_by_name()
    local items = {}
    for _, s in ipairs(symbols) do
      if A.same_kind(p.kind, s.kind) then
        task:check_slice()
        local path = s.uri and vim.uri_to_fname(s.uri) or p.file
        local r = { start = s.sel.start, ["end"] = s.range["end"] }
        table.insert(
          items,
          raw(path, r, c.offset_encoding, bufs, { name = s.name, kind = s.kind, detail = s.detail, depth = s.depth })
        )
      end
    end
    return {
      query = ("symbols of %s"):format(A.rel(p.file, roots)),
      servers = { c.name },
      sections = { { title = "symbols", items = items, ordered = true } },
    }
  end
  local clients = A.workspace_symbol_clients()
  if #clients == 0 then
    return nil, "no running language server can search the workspace's symbols; give a `file` to list its symbols"
  end
  local items, servers = {}, {}
  local bufs = A.loaded_by_name()
  for _, c in ipairs(clients) do
    local symbols, rerr = A.workspace_symbols(task, c, p.query, p.kind)
    if not symbols then
      return nil, rerr
    end
    table.insert(servers, c.name)
    for _, s in ipairs(symbols) do
      table.insert(
        items,
        raw(s.path, s.range, c.offset_encoding, bufs, { name = s.name, kind = s.kind, detail = s.detail })
      )
    end
  end
  return {
    query = ("workspace symbols matching %q"):format(p.query),
    servers = servers,
    sections = { { title = "symbols", items = items } },
  }
end

M.targets = locate.targets
M.raw = A.raw
M.flatten = A.flatten
M.rel = A.rel
M.loaded_by_name = A.loaded_by_name

return M
