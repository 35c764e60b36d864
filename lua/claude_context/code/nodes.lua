---@mod claude_context.code.nodes What a tree-sitter node defines (the outline's and the definitions' walk)
---
--- A node type's kind (function, class, …, a Markdown heading), whether the node defines it,
--- and the name it gives. Pure: no parser is loaded here. code.outline lists these nodes for
--- `code_outline`, code.defs for the definitions of a name.

local M = {}

local WORDS =
  { "function", "method", "class", "struct", "interface", "enum", "trait", "impl", "union", "namespace", "module" }
local ENDINGS = { "_definition", "_declaration", "_item", "_specifier", "_statement" }

---The kind a node type defines, or nil.
---@param t string the node's type
---@return string?
function M.kind_of(t)
  if t == "atx_heading" or t == "setext_heading" then
    return "heading"
  end
  if t:find("call") or t:find("declarator") or t:find("parameter") or t:find("reference") then
    return nil
  end
  local ends = false
  for _, e in ipairs(ENDINGS) do
    if vim.endswith(t, e) then
      ends = true
      break
    end
  end
  if not ends and t ~= "local_function" then
    return nil
  end
  for _, w in ipairs(WORDS) do
    if t:find(w, 1, true) then
      if w == "namespace" then
        return "module"
      end
      return w
    end
  end
end

local function text_of(node, source)
  local ok, t = pcall(vim.treesitter.get_node_text, node, source)
  if not ok or not t then
    return nil
  end
  t = t:match("^[^\n]*"):gsub("^%s+", ""):gsub("%s+$", "")
  if #t > 80 then
    t = t:sub(1, 80) .. "…"
  end
  return t
end

---The name a definition node gives, and the node that holds it.
---@param node TSNode
---@param source integer|string a buffer or the text
---@param kind string
---@return string? name, TSNode? at
function M.name_of(node, source, kind)
  if kind == "heading" then
    local c = node:named_child(1) or node:named_child(0)
    return c and text_of(c, source), c
  end
  local n = node:field("name")[1]
  local d = node:field("declarator")[1]
  local hops = 0
  while not n and d and hops < 8 do
    local t = d:type()
    if t:find("identifier") or t == "operator_name" or t == "destructor_name" then
      n = d
      break
    end
    d = d:field("declarator")[1] or d:field("name")[1]
    hops = hops + 1
  end
  if n then
    return text_of(n, source), n
  end
  -- An anonymous function assigned to a name (Lua's `M.f = function() end`, `local f = function`).
  local p = node:parent()
  for _ = 1, 3 do
    if not p then
      break
    end
    local t = p:type()
    if t == "assignment_statement" or t == "variable_declaration" or t == "field" then
      local target = p:field("name")[1] or p:named_child(0)
      if t == "assignment_statement" or t == "variable_declaration" then
        target = p:named_child(0)
        if target and target:type() == "assignment_statement" then
          target = target:named_child(0)
        end
      end
      return target and text_of(target, source), target
    end
    p = p:parent()
  end
end

---The kinds a function defined inside them is a method of.
local MEMBER_OF = { class = true, struct = true, impl = true, trait = true, interface = true }

---A definition's kind where it stands: a function inside a class, struct, impl, trait or
---interface is a method.
---@param kind string
---@param parent_kind string?
---@return string
function M.member_kind(kind, parent_kind)
  if kind == "function" and MEMBER_OF[parent_kind or ""] then
    return "method"
  end
  return kind
end

---Needs a body to define something (C's `struct s *p` only names a type).
---@param node TSNode
---@param kind string?
---@return boolean
function M.defines(node, kind)
  local t = node:type()
  if vim.endswith(t, "_specifier") then
    return node:field("body")[1] ~= nil
  end
  return kind ~= nil
end

return M
