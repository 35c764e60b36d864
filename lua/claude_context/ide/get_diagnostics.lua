-- getDiagnostics {uri?}: vim.diagnostic entries as [{uri, diagnostics = [{message, severity,
-- range, source, code}]}]. URIs are "file://" .. path, unencoded, as Claude Code compares them;
-- a requested uri is echoed unchanged.
local util = require("claude_context.ide.util")

local function of_buf(buf, uri)
  local out = require("claude_context.ide.snapshot").diagnostics_of(buf)
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
