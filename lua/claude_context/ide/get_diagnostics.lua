-- getDiagnostics {uri?}: vim.diagnostic entries as [{uri, diagnostics = [{message, severity,
-- range, source, code}]}]. URIs are "file://" .. path, unencoded, as Claude Code compares them;
-- a requested uri is echoed unchanged.
local util = require("claude_context.ide.util")

local SEVERITY = { "Error", "Warning", "Info", "Hint" }

local function convert(buf, d)
  local function line(l)
    return vim.api.nvim_buf_get_lines(buf, l, l + 1, false)[1] or ""
  end
  local el = d.end_lnum or d.lnum
  local ec = d.end_col or d.col
  return {
    message = tostring(d.message),
    severity = SEVERITY[d.severity] or "Error",
    range = {
      start = { line = d.lnum, character = util.u16(line(d.lnum), d.col or 0) },
      ["end"] = { line = el, character = util.u16(line(el), ec or 0) },
    },
    source = type(d.source) == "string" and d.source or nil,
    code = (type(d.code) == "string" or type(d.code) == "number") and d.code or nil,
  }
end

local function of_buf(buf, uri)
  local ds = vim.diagnostic.get(buf)
  table.sort(ds, function(a, b)
    if a.lnum ~= b.lnum then
      return a.lnum < b.lnum
    end
    return (a.col or 0) < (b.col or 0)
  end)
  local out = {}
  for _, d in ipairs(ds) do
    table.insert(out, convert(buf, d))
  end
  return { uri = uri or ("file://" .. vim.api.nvim_buf_get_name(buf)), diagnostics = out }
end

return function(params, respond)
  if params.uri ~= nil and type(params.uri) ~= "string" then
    return respond(nil, "getDiagnostics: uri must be a string")
  end
  if params.uri then
    local buf = util.buf_for_uri(params.uri)
    if not buf then
      return respond({})
    end
    return respond({ of_buf(buf, params.uri) })
  end
  local files = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and util.is_file_buf(b) and #vim.diagnostic.get(b) > 0 then
      table.insert(files, of_buf(b))
    end
  end
  table.sort(files, function(a, b)
    return a.uri < b.uri
  end)
  respond(files)
end
