---@mod claude_context.code.outline `code_outline`: a file's structure from tree-sitter
---
--- The file's buffer is parsed when one holds it (its unsaved state), else the text the bridge
--- read (`params.source`), with a string parser: nothing is loaded. The tree is walked in
--- slices of at most `task.slice_ms`; every named node that defines a function, method, class,
--- struct, interface, enum, trait, impl, module or a Markdown heading is listed with its line
--- range and nesting depth. With no parser for the language, the language server's document
--- symbols stand in; with neither, the answer says so.

local buffers = require("claude_context.code.buffers")
local lsp = require("claude_context.code.lsp")
local nodes = require("claude_context.code.nodes")
local kind_of, name_of, defines = nodes.kind_of, nodes.name_of, nodes.defines

local M = {}

---The outline's raw items for the bridge.
local function walk(task, root, source, path, bufs)
  local items = {}
  local stack = { { root, 0, nil } }
  local n = 0
  while #stack > 0 do
    local top = table.remove(stack)
    local node, depth, parent_kind = top[1], top[2], top[3]
    n = n + 1
    if n % 200 == 0 then
      task:check_slice()
    end
    local kind = kind_of(node:type())
    local child_depth, child_parent = depth, parent_kind
    if kind and defines(node, kind) then
      local name = name_of(node, source, kind)
      if name and name ~= "" then
        kind = nodes.member_kind(kind, parent_kind)
        local sr, sc, er, ec = node:range()
        if kind == "heading" then
          er, ec = sr, #(vim.treesitter.get_node_text(node, source):match("^[^\n]*") or "")
        end
        table.insert(
          items,
          lsp.raw(
            path,
            { start = { line = sr, character = sc }, ["end"] = { line = er, character = ec } },
            "utf-8",
            bufs,
            {
              name = name,
              kind = kind,
              depth = depth,
            }
          )
        )
        child_depth, child_parent = depth + 1, kind
      end
    end
    -- Children pushed in reverse so they are visited in order.
    for i = node:named_child_count() - 1, 0, -1 do
      table.insert(stack, { node:named_child(i), child_depth, child_parent })
    end
  end
  return items
end

function M.code_outline(task, p)
  local path = p.file
  local buf = buffers.find_buf(path)
  if buf and not vim.api.nvim_buf_is_loaded(buf) then
    buf = nil
  end
  local ft = buf and vim.bo[buf].filetype
  if not ft or ft == "" then
    ft = vim.filetype.match({ filename = path }) or ""
  end
  local lang = ft ~= "" and (vim.treesitter.language.get_lang(ft) or ft) or nil
  local ok, added = false, nil
  if lang then
    ok, added = pcall(vim.treesitter.language.add, lang)
  end
  if not (ok and added) then
    local why = lang and ("no tree-sitter parser for %s is installed"):format(lang)
      or ("the file type of %s is not known"):format(lsp.rel(path, p.roots))
    -- A language server's symbols stand in, when one covers the file.
    local r, err = lsp.lsp_symbols(task, { file = path, roots = p.roots })
    if not r then
      return nil,
        ("%s (install one: :TSInstall or a parser package), and %s"):format(
          why,
          (err or ""):gsub("^no language server", "no language server")
        )
    end
    r.query = ("outline of %s"):format(lsp.rel(path, p.roots))
    r.note = why .. "; these are the language server's document symbols"
    return r
  end
  local parser, source
  if buf then
    local okp, pr = pcall(vim.treesitter.get_parser, buf, lang, { error = false })
    parser, source = okp and pr or nil, buf
  end
  if not parser then
    if not p.source then
      return nil, ("cannot read %s"):format(lsp.rel(path, p.roots))
    end
    source = p.source
    local okp, pr = pcall(vim.treesitter.get_string_parser, source, lang)
    if not okp then
      return nil, ("cannot parse %s: %s"):format(lsp.rel(path, p.roots), pr)
    end
    parser = pr
  end
  local trees = task:await(function(cb)
    -- Asynchronous where the Neovim parses in slices (0.11+), else at once.
    local okp = pcall(parser.parse, parser, true, function(_, t)
      cb(t)
    end)
    if not okp then
      cb(parser:parse(true))
    end
  end)
  trees = trees or parser:trees()
  local tree = trees and (trees[1] or select(2, next(trees)))
  if not tree then
    return nil, ("tree-sitter could not parse %s"):format(lsp.rel(path, p.roots))
  end
  local bufs = lsp.loaded_by_name()
  local items = walk(task, tree:root(), source, path, bufs)
  return {
    query = ("outline of %s"):format(lsp.rel(path, p.roots)),
    servers = { "tree-sitter " .. lang },
    sections = { { title = "definitions", items = items, ordered = true } },
  }
end

return M
