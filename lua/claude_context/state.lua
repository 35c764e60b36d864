---@mod claude_context.state The editor snapshot the bridge serves from
---
--- Collected on the main thread when something that affects it happens (DirChanged, WinEnter,
--- BufEnter, LspAttach, …) and pushed to the Rust side, so hot tools never wait for Neovim.

local M = {}

local uv = vim.uv or vim.loop

---@return {cwd: string?, lsp_folders: string[], lsp_root: string?, nvim_version: string} state
function M.collect()
  local folders, seen = {}, {}
  local root
  -- No LSP client can exist before `vim.lsp` is loaded, and loading it is a cost at start-up:
  -- look at clients only when something else already loaded it (LspAttach pushes again later).
  local lsp = package.loaded["vim.lsp"]
  if lsp then
    for _, c in ipairs(lsp.get_clients()) do
      for _, f in ipairs(c.workspace_folders or {}) do
        local p = f.uri and vim.uri_to_fname(f.uri) or f.name
        if p and not seen[p] then
          seen[p] = true
          table.insert(folders, p)
        end
      end
    end
    for _, c in ipairs(lsp.get_clients({ bufnr = 0 })) do
      if type(c.root_dir) == "string" then
        root = c.root_dir
        break
      end
    end
  end
  local cwd = vim.fn.getcwd()
  if cwd == "" then
    cwd = nil
  end
  return {
    cwd = cwd,
    lsp_folders = folders,
    lsp_root = root,
    nvim_version = M.nvim_version(),
  }
end

local nvim_version

---`major.minor.patch` of this Neovim, computed once. `vim.version()` goes through
---`vim.fn.api_info()` (slow, and it would run on every BufEnter); `:version`'s first line is
---far cheaper.
---@return string
function M.nvim_version()
  if not nvim_version then
    local ok, out = pcall(vim.api.nvim_exec2, "version", { output = true })
    nvim_version = ok and out.output:match("NVIM v(%d+%.%d+%.%d+)") or nil
    if not nvim_version then
      local v = vim.version()
      nvim_version = ("%d.%d.%d"):format(v.major, v.minor, v.patch)
    end
  end
  return nvim_version
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
