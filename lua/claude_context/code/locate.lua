---@mod claude_context.code.locate Where the model means, for the lsp_* handlers
---
--- A `file` + 1-based `line` + `column` (characters) or `text` on that line, or a `symbol` by
--- name (in a `file`'s symbols, else the workspace's), optionally of a `kind`: turned into
--- targets (a buffer and a position in each client's own offset encoding). Files that are not
--- open are loaded into hidden buffers for the time of the request (claude_context.code.buffers).

local task_mod = require("claude_context.code.task")
local A = require("claude_context.code.answer")

local rel = A.rel

local M = {}

---What `targets` answers as its error when the bridge must send the files that hold a symbol's
---name (no running server searches the workspace): the handler answers `{ need_candidates =
---true }` and is asked again with `candidates` (claude_context.code.defs).
M.NEED = {}

---What a handler answers when `targets` failed with `err`.
function M.failed(err)
  if err == M.NEED then
    return { need_candidates = true }
  end
  return nil, err
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

---The running clients that cannot search the workspace's symbols.
local function blind_clients()
  return vim.tbl_filter(function(c)
    return not A.supports(c, "workspace/symbol") and not (c.is_stopped and c:is_stopped())
  end, vim.lsp.get_clients())
end

---Whether a client that searches the workspace (one of `clients`) serves `path`'s filetype.
local function searched(path, clients)
  local ft = vim.filetype.match({ filename = path })
  for _, c in ipairs(clients) do
    local fts = c.config and c.config.filetypes
    if ft and fts and vim.tbl_contains(fts, ft) then
      return true
    end
  end
  return false
end

---A symbol by name in the workspace: the servers' workspace symbol search, and the project's
---outline (claude_context.code.defs) where a running server cannot search or none found it.
---Returns (found, nil, errs, note), or (nil, err): `M.NEED` when the bridge must send the files
---that hold the name first.
function M.in_workspace(task, p)
  local sym, roots = p.symbol, p.roots
  local clients = A.workspace_symbol_clients()
  local outline = #clients == 0 or #blind_clients() > 0
  if outline and p.candidates == nil then
    return nil, M.NEED
  end
  local found, errs, note = {}, {}, nil
  for _, c in ipairs(clients) do
    local symbols, rerr = A.workspace_symbols(task, c, sym, p.kind)
    if rerr then
      -- One server's failure (no project open yet) does not hide the others' symbols.
      table.insert(errs, ("%s: %s"):format(c.name, rerr:match("^[^\n]*")))
    end
    for _, s in ipairs(symbols or {}) do
      if same_name(sym, s.name) and task_mod.inside(s.path, roots) then
        table.insert(found, { path = s.path, start = s.range.start, client = c, kind = s.kind, name = s.name })
      end
    end
  end
  if #found == 0 and p.candidates == nil then
    -- None found it: the outline may (a definition the servers do not index).
    return nil, M.NEED
  end
  if p.candidates then
    -- The files holding the name that no searching server covers: their definitions (the
    -- filter runs in the outline's slices: a file type match per file).
    local skip = #clients > 0 and function(path)
      return searched(path, clients)
    end or nil
    local more
    more, note = require("claude_context.code.defs").find(task, p, same_name, skip)
    vim.list_extend(found, more)
  end
  return found, nil, errs, note
end

---The byte column where `needle` starts on `text` (line `p.line` of `where`), or nil and why not.
local function find_on(needle, p, where, text)
  local s = text:find(needle, 1, true)
  if not s then
    return nil, ("%q is not on line %d of %s, which reads: %s"):format(needle, p.line, where, text)
  end
  return s - 1
end

---The byte column `p` means on `text` (line `p.line` of `p.file`): its `text`, `column`
---(characters) or `symbol`, else the line's first non-blank; or nil and why not.
local function column_on(p, text)
  local where = rel(p.file, p.roots)
  if p.text and p.text ~= "" then
    return find_on(p.text, p, where, text)
  elseif p.column then
    local nchars = vim.fn.strchars(text)
    if p.column > nchars + 1 then
      return nil, ("line %d of %s has %d characters; column %d is past its end"):format(p.line, where, nchars, p.column)
    end
    local col = vim.fn.byteidx(text, p.column - 1)
    return col < 0 and #text or col
  elseif p.symbol and p.symbol ~= "" then
    return find_on(p.symbol, p, where, text)
  end
  return (text:find("%S") or 1) - 1
end

---A target's position for a client: byte column `col` of `text` (line `row`) in the client's
---offset encoding.
local function position_at(text, row, col)
  return function(client)
    return { line = row, character = A.units(text, col, client.offset_encoding or "utf-16") }
  end
end

---The one target of a `file` + `line` (+ `column`, `text` or `symbol`).
local function at_line(task, p)
  local buf, err = task:buffer(p.file)
  if not buf then
    return nil, err
  end
  local n = vim.api.nvim_buf_line_count(buf)
  if p.line > n then
    return nil, ("%s has %d lines; line %d is past its end"):format(rel(p.file, p.roots), n, p.line)
  end
  local row = p.line - 1
  local text = A.buf_line(buf, row) or ""
  local col, cerr = column_on(p, text)
  if not col then
    return nil, cerr
  end
  local label = ("%s:%d:%d"):format(rel(p.file, p.roots), p.line, vim.fn.strchars(text:sub(1, col)) + 1)
  return {
    {
      buf = buf,
      path = p.file,
      label = label,
      pos = position_at(text, row, col),
    },
  }
end

---The symbols named `p.symbol` (of `p.kind`) in `p.file`'s document symbols.
local function in_file(task, p)
  local buf, clients = A.symbol_clients(task, p.file, p.roots)
  if not buf then
    return nil, clients
  end
  local found = {}
  for _, c in ipairs(clients) do
    local symbols, rerr = A.document_symbols(task, c, p.file, buf)
    if not symbols then
      return nil, rerr
    end
    for _, s in ipairs(symbols) do
      if same_name(p.symbol, s.name) and A.same_kind(p.kind, s.kind) then
        table.insert(found, { path = p.file, start = s.sel.start, client = c, kind = s.kind, name = s.name })
      end
    end
  end
  return found
end

---The answer's note on several symbols of the name (and where they were found).
local function note_of(found, sym, outline_note)
  local note = outline_note
  if #found > 10 then
    note = ("%d symbols are named %q; the first 10 are answered for (narrow with `file` or `kind`)"):format(#found, sym)
  elseif #found > 1 then
    note = ("%d symbols are named %q; all are answered for (narrow with `file` or `kind`)"):format(#found, sym)
  end
  if outline_note and note ~= outline_note then
    note = note .. "; " .. outline_note
  end
  return note
end

---The target of one symbol found (at its name's own position: a workspace symbol's range may
---start at a keyword before it), or nil and why not.
local function target_of(task, p, f)
  local buf, err = task:buffer(f.path)
  if not buf then
    return nil, err
  end
  local row = f.start.line
  local text = A.buf_line(buf, row) or ""
  local enc = f.enc or f.client.offset_encoding or "utf-16"
  local bytecol = vim.str_byteindex and select(2, pcall(vim.str_byteindex, text, enc, f.start.character, false))
  if type(bytecol) ~= "number" then
    bytecol = f.start.character
  end
  local name = p.symbol:match("[^.:]+$") or p.symbol
  local s = text:find(name, bytecol + 1, true)
  local col = s and (s - 1) or bytecol
  return {
    buf = buf,
    path = f.path,
    row = row,
    col = col,
    name = f.name,
    kind = f.kind,
    width = s and #name or 0,
    label = ("%s %s at %s:%d:%d"):format(
      f.kind or "symbol",
      f.name,
      rel(f.path, p.roots),
      row + 1,
      vim.fn.strchars(text:sub(1, col)) + 1
    ),
    pos = position_at(text, row, col),
  }
end

---Where the model means: a list of targets.
---@return {buf: integer, path: string, label: string, pos: fun(client: vim.lsp.Client): claude_context.Position?}[]? targets
---@return string? err
---@return string? note
function M.targets(task, p)
  if p.file and p.line then
    return at_line(task, p)
  end
  -- A symbol by name: the file's symbols, or the workspace's.
  local sym = p.symbol
  local found, ferr, workspace_errs, outline_note
  if p.file then
    found, ferr = in_file(task, p)
  else
    found, ferr, workspace_errs, outline_note = M.in_workspace(task, p)
  end
  if not found then
    return nil, ferr
  end
  if #found == 0 then
    return nil,
      ("no symbol named %q%s found %s%s"):format(
        sym,
        p.kind and (" of kind " .. p.kind) or "",
        p.file and ("in " .. rel(p.file, p.roots)) or "in the workspace (inside the project)",
        workspace_errs and #workspace_errs > 0 and (" (" .. table.concat(workspace_errs, "; ") .. ")")
          or outline_note and (" (" .. outline_note .. "; it finds functions, classes and the like: for another symbol give the `file` where it is defined or used)")
          or ""
      )
  end
  local targets, seen = {}, {}
  for i = 1, math.min(#found, 10) do
    local t, err = target_of(task, p, found[i])
    if not t then
      return nil, err
    end
    local key = t.path .. ":" .. t.row .. ":" .. t.col
    if not seen[key] then
      seen[key] = true
      table.insert(targets, t)
    end
  end
  return targets, nil, note_of(found, sym, outline_note)
end

return M
