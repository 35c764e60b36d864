---@mod claude_context.explorers The node under the cursor (or selected) in file explorers
---
--- `:ClaudeContext add` without a path, in an explorer window, @-mentions the file or directory
--- under the cursor, or every node of the Visual selection. Each explorer is asked through the
--- functions it documents for this:
---   nvim-tree   require("nvim-tree.api").tree.get_node_under_cursor() → node.absolute_path
---   neo-tree    require("neo-tree.sources.manager").get_state(source).tree:get_node(lnum) → node.path
---   oil.nvim    require("oil").get_entry_on_line(buf, lnum), require("oil").get_current_dir(buf)
---   mini.files  MiniFiles.get_fs_entry(buf, lnum) → entry.path
---   netrw       b:netrw_curdir and netrw#Call("NetrwGetWord") on each line
---   snacks      Snacks.picker.get() → picker:selected({ fallback = true }) → item.file (+ item.cwd)

local M = {}

local function join(dir, name)
  if name:sub(1, 1) == "/" then
    return name
  end
  return (dir:gsub("/$", "")) .. "/" .. name
end

---Runs `fn(lnum)` with the cursor on each line of l1..l2 (explorers whose API reads the cursor);
---puts the cursor back.
local function each_line(l1, l2, fn)
  local win = vim.api.nvim_get_current_win()
  local pos = vim.api.nvim_win_get_cursor(win)
  local out = {}
  for l = l1, l2 do
    pcall(vim.api.nvim_win_set_cursor, win, { l, 0 })
    local ok, p = pcall(fn, l)
    if ok and p then
      table.insert(out, p)
    end
  end
  pcall(vim.api.nvim_win_set_cursor, win, pos)
  return out
end

---@class claude_context.Explorer
---@field name string shown in messages
---@field module string? the module that must load (absent: "not installed")
---@field paths fun(buf: integer, l1: integer, l2: integer, mod: any): string[]

---@type table<string, claude_context.Explorer>
M.by_filetype = {
  NvimTree = {
    name = "nvim-tree",
    module = "nvim-tree.api",
    paths = function(_, l1, l2, api)
      return each_line(l1, l2, function()
        local node = api.tree.get_node_under_cursor()
        return node and node.absolute_path
      end)
    end,
  },
  ["neo-tree"] = {
    name = "neo-tree",
    module = "neo-tree.sources.manager",
    paths = function(buf, l1, l2, manager)
      local source = vim.b[buf].neo_tree_source or "filesystem"
      local state = manager.get_state(source)
      local out = {}
      for l = l1, l2 do
        local node = state and state.tree and state.tree:get_node(l)
        if node and node.path then
          table.insert(out, node.path)
        end
      end
      return out
    end,
  },
  oil = {
    name = "oil.nvim",
    module = "oil",
    paths = function(buf, l1, l2, oil)
      local dir = oil.get_current_dir(buf)
      local out = {}
      for l = l1, l2 do
        local e = dir and oil.get_entry_on_line(buf, l)
        if e and e.name and e.name ~= ".." then
          table.insert(out, join(dir, e.name))
        end
      end
      return out
    end,
  },
  minifiles = {
    name = "mini.files",
    paths = function(buf, l1, l2)
      local mf = rawget(_G, "MiniFiles")
      if not mf then
        error("mini.files is not set up (no MiniFiles global)", 0)
      end
      local out = {}
      for l = l1, l2 do
        local e = mf.get_fs_entry(buf, l)
        if e and e.path then
          table.insert(out, e.path)
        end
      end
      return out
    end,
  },
  netrw = {
    name = "netrw",
    paths = function(buf, l1, l2)
      local dir = vim.b[buf].netrw_curdir
      if not dir then
        error("netrw has no b:netrw_curdir here", 0)
      end
      return each_line(l1, l2, function()
        local word = vim.fn["netrw#Call"]("NetrwGetWord")
        if type(word) ~= "string" or word == "" or word == "../" or word == "./" then
          return nil
        end
        return join(dir, word)
      end)
    end,
  },
  snacks_picker_list = {
    name = "snacks.nvim",
    paths = function()
      local snacks = rawget(_G, "Snacks")
      if not (snacks and snacks.picker and snacks.picker.get) then
        error("snacks.nvim is not set up (no Snacks.picker)", 0)
      end
      local out = {}
      for _, picker in ipairs(snacks.picker.get() or {}) do
        for _, item in ipairs(picker:selected({ fallback = true }) or {}) do
          local f = item.file
          if f then
            table.insert(out, item.cwd and join(item.cwd, f) or f)
          end
        end
      end
      return out
    end,
  },
}
M.by_filetype.snacks_picker_input = M.by_filetype.snacks_picker_list

---The explorer of `buf`, if it is one.
---@param buf integer
---@return claude_context.Explorer?
function M.of(buf)
  return M.by_filetype[vim.bo[buf].filetype]
end

---The module explorer `ex` works through (nil when it names none), or nil and why not (`ex` nil:
---the buffer is no explorer's; or the explorer is not installed).
---@param ex claude_context.Explorer?
---@return table<string, any>? module, string? err the explorer plugin's module (its own API)
local function load_module(ex)
  if not ex then
    return nil, "not a file explorer buffer"
  end
  if not ex.module then
    return nil
  end
  local ok, m = pcall(require, ex.module)
  if not ok then
    return nil, ("%s is not installed (require(%q) failed)"):format(ex.name, ex.module)
  end
  return m
end

---The paths the person means in explorer buffer `buf`: the range's nodes, or the node under the
---cursor. Errors name the explorer (not installed, nothing under the cursor).
---@param buf integer
---@param l1 integer? 1-based
---@param l2 integer?
---@return string[]? paths, string? err
function M.paths(buf, l1, l2)
  local ex = M.of(buf)
  local mod, err = load_module(ex)
  if err then
    return nil, err
  end
  local cur = vim.api.nvim_win_get_cursor(0)[1]
  local ok, paths = pcall(ex.paths, buf, l1 or cur, l2 or l1 or cur, mod)
  if not ok then
    return nil, ("%s: %s"):format(ex.name, tostring(paths))
  end
  local seen, out = {}, {}
  for _, p in ipairs(paths) do
    p = vim.fs.normalize(p)
    if not seen[p] then
      seen[p] = true
      table.insert(out, p)
    end
  end
  if #out == 0 then
    return nil, ("%s: no file or directory under the cursor"):format(ex.name)
  end
  return out
end

return M
