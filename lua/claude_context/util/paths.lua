---@mod claude_context.util.paths A path as the person reads it
---
--- Paths are bytes: nothing here normalises or expands them (`vim.fs.relpath` would expand a
--- `$HOME` in a file's name); a path is shortened only by a root it lies under.

local M = {}

---`path` relative to `root` when it lies under it (`root` with or without trailing slashes),
---else `path` as it is.
---@param path string
---@param root string?
---@return string
function M.relative(path, root)
  if not root or root == "" then
    return path
  end
  local prefix = root:gsub("/+$", "") .. "/"
  if #path > #prefix and path:sub(1, #prefix) == prefix then
    return path:sub(#prefix + 1)
  end
  return path
end

return M
