---@mod claude_context.code.answer What the lsp_* handlers share: clients, symbols, raw locations
---
--- The clients attached to a buffer that support a method (or the clear error when none does),
--- a file's document symbols flattened, and raw locations for the bridge: absolute paths,
--- 0-based positions in the client's `offset_encoding`, and the line's text when a buffer holds
--- the file (its unsaved state). The bridge confines, converts to characters, groups and caps
--- them (crates/core/src/tools/code/answer.rs).

local M = {}

local SymbolKind = vim.lsp.protocol.SymbolKind

local function kind_name(k)
  return type(k) == "number" and (SymbolKind[k] or tostring(k)) or k
end

---`path` relative to the first root it lies under, for messages.
local function rel(path, roots)
  for _, r in ipairs(roots or {}) do
    local shown = require("claude_context.util.paths").relative(path, r)
    if shown ~= path then
      return shown
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
local function raw(path, range, encoding, bufs, extra)
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

---Client `c`'s workspace symbols matching `query`, of `kind` (any when nil): { path, range,
---name, kind, detail }; or nil and the error.
local function workspace_symbols(task, c, query, kind)
  local rerr, result = task:request(c, "workspace/symbol", { query = query })
  if rerr then
    return nil, rerr
  end
  local out = {}
  for _, s in ipairs(result ~= vim.NIL and result or {}) do
    local loc = s.location or {}
    if loc.uri and same_kind(kind, kind_name(s.kind)) then
      task:check_slice()
      local range = loc.range or { start = { line = 0, character = 0 } }
      table.insert(out, {
        path = vim.uri_to_fname(loc.uri),
        range = range,
        name = s.name,
        kind = kind_name(s.kind),
        detail = s.containerName,
      })
    end
  end
  return out
end

M.kind_name = kind_name
M.rel = rel
M.loaded_by_name = loaded_by_name
M.buf_line = buf_line
M.units = units
M.supports = supports
M.names = names
M.no_server = no_server
M.clients_for = clients_for
M.flatten = flatten
M.symbol_clients = symbol_clients
M.document_symbols = document_symbols
M.workspace_symbol_clients = workspace_symbol_clients
M.same_kind = same_kind
M.workspace_symbols = workspace_symbols
M.raw = raw

return M
