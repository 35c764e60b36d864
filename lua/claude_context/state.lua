---@mod claude_context.state The editor snapshot the bridge serves from
---
--- Collected on the main thread when something that affects it happens (DirChanged, WinEnter,
--- BufEnter, LspAttach, …) and pushed to the Rust side, so hot tools never wait for Neovim.

local M = {}

local uv = vim.uv or vim.loop

---@return table state { cwd, lsp_folders, lsp_root, nvim_version }
function M.collect()
  local folders, seen = {}, {}
  for _, c in ipairs(vim.lsp.get_clients()) do
    for _, f in ipairs(c.workspace_folders or {}) do
      local p = f.uri and vim.uri_to_fname(f.uri) or f.name
      if p and not seen[p] then
        seen[p] = true
        table.insert(folders, p)
      end
    end
  end
  local root
  for _, c in ipairs(vim.lsp.get_clients({ bufnr = 0 })) do
    if type(c.root_dir) == "string" then
      root = c.root_dir
      break
    end
  end
  local cwd = vim.fn.getcwd()
  if cwd == "" then
    cwd = nil
  end
  local v = vim.version()
  return {
    cwd = cwd,
    lsp_folders = folders,
    lsp_root = root,
    nvim_version = ("%d.%d.%d"):format(v.major, v.minor, v.patch),
  }
end

local pending = false

---Pushes the snapshot now.
function M.push()
  pending = false
  local ok, native = pcall(require("claude_context.native").load)
  if ok then
    native.update_state(vim.json.encode(M.collect()))
  end
end

---Coalesces several events in one tick into one push.
function M.schedule_push()
  if pending then
    return
  end
  pending = true
  vim.schedule(M.push)
end

M.uv = uv
return M
