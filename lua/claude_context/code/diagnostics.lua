---@mod claude_context.code.diagnostics `lsp_diagnostics`: diagnostics of files open or not
---
--- An open file answers its `vim.diagnostic` entries at once. A file no buffer holds is loaded
--- into a hidden buffer (the person's servers attach as when they open it), and its first
--- `DiagnosticChanged` awaited until the deadline (`timeout_ms`); then the buffer is unloaded.
--- All the files are loaded first and awaited together, under one deadline.

local buffers = require("claude_context.code.buffers")
local answer = require("claude_context.code.answer")

local M = {}

local SEVERITY = { "Error", "Warning", "Info", "Hint" }

---Loads `files` (hidden buffers for those not open) and waits, under one deadline, for every
---file loaded here to get its diagnostics (or for no server to attach). Returns (bufs by path,
---waiting: buf -> path, got: buf -> true) or raises the error.
local function load_and_wait(task, files, timeout)
  local bufs, waiting, got = {}, {}, {}
  local group = vim.api.nvim_create_augroup("ClaudeContextCodeDiag" .. tostring(task), { clear = true })
  local ok, err = pcall(function()
    for _, path in ipairs(files) do
      local pre = buffers.find_buf(path)
      local was_loaded = pre and vim.api.nvim_buf_is_loaded(pre)
      local buf, berr = task:buffer(path)
      if not buf then
        error(berr, 0)
      end
      bufs[path] = buf
      if not was_loaded then
        waiting[buf] = path
        vim.api.nvim_create_autocmd("DiagnosticChanged", {
          group = group,
          buffer = buf,
          callback = function()
            got[buf] = true
          end,
        })
      end
    end
    local deadline = vim.uv.now() + timeout
    local attach_deadline = vim.uv.now() + buffers.quick_attach_ms
    while not task.done do
      local pending = false
      for buf in pairs(waiting) do
        if not got[buf] then
          local attached = #vim.lsp.get_clients({ bufnr = buf }) > 0
          if attached or vim.uv.now() < attach_deadline then
            pending = true
          end
        end
      end
      if not pending or vim.uv.now() >= deadline then
        break
      end
      task:sleep(25)
    end
  end)
  pcall(vim.api.nvim_del_augroup_by_id, group)
  if not ok then
    error(err, 0)
  end
  return bufs, waiting, got
end

---One diagnostic as a raw location.
local function item(d, name, loaded)
  return answer.raw(
    name,
    {
      start = { line = d.lnum, character = d.col },
      ["end"] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col },
    },
    "utf-8",
    loaded,
    {
      severity = SEVERITY[d.severity] or tostring(d.severity),
      message = d.message,
      source = d.source,
      code = d.code,
    }
  )
end

---The answer's note: files with none, files no server covers, files a server was late for.
local function note_of(s, timeout)
  local notes = {}
  if #s.clean > 0 then
    table.insert(notes, "no diagnostics in " .. table.concat(s.clean, ", "))
  end
  if #s.none > 0 then
    table.insert(
      notes,
      "no language server is attached to "
        .. table.concat(s.none, ", ")
        .. " (no diagnostics; code_outline works without a server)"
    )
  end
  if #s.late > 0 then
    table.insert(
      notes,
      ("the server published nothing within %d ms for %s (raise timeout_ms)"):format(
        timeout,
        table.concat(s.late, ", ")
      )
    )
  end
  return #notes > 0 and table.concat(notes, "; ") or nil
end

function M.lsp_diagnostics(task, p)
  local files = {}
  if p.file then
    table.insert(files, p.file)
  end
  vim.list_extend(files, p.files or {})
  local timeout = math.min(tonumber(p.timeout_ms) or 5000, 30000)
  local ok, bufs, waiting, got = pcall(load_and_wait, task, files, timeout)
  if not ok then
    return nil, bufs
  end
  local loaded = answer.loaded_by_name()
  local items, servers, seen = {}, {}, {}
  local s = { none = {}, late = {}, clean = {} }
  for _, path in ipairs(files) do
    local buf = bufs[path]
    local clients = vim.lsp.get_clients({ bufnr = buf })
    for _, c in ipairs(clients) do
      if not seen[c.name] then
        seen[c.name] = true
        table.insert(servers, c.name)
      end
    end
    local is_late = waiting[buf] and not got[buf]
    if #clients == 0 then
      table.insert(s.none, answer.rel(path, p.roots))
    elseif is_late then
      table.insert(s.late, answer.rel(path, p.roots))
    end
    local ds = vim.diagnostic.get(buf)
    if #ds == 0 and #clients > 0 and not is_late then
      table.insert(s.clean, answer.rel(path, p.roots))
    end
    for _, d in ipairs(ds) do
      task:check_slice()
      table.insert(items, item(d, loaded[path] and path or vim.api.nvim_buf_get_name(buf), loaded))
    end
  end
  return {
    query = ("diagnostics of %s"):format(#files == 1 and answer.rel(files[1], p.roots) or (#files .. " files")),
    servers = servers,
    sections = { { title = "diagnostics", items = items } },
    note = note_of(s, timeout),
  }
end

return M
