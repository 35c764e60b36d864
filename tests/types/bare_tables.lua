-- Counts the LuaCATS annotations whose type says only `table` (`---@param x table`, `---@return
-- table[]`, `---@field f {a: table}`, `---@type table<string, table>`'s second one): a reader's
-- editor knows nothing of such a value. `make lint-types` runs it (nvim -l); it fails above MAX.
--   nvim -l tests/types/bare_tables.lua [--list] DIR...
local MAX = 20

---The type expression at the start of `s` (balanced brackets; `|`, `?` and a function's `: ret`
---continue it across spaces).
---@param s string
---@return string
local function type_expr(s)
  local depth, i, n = 0, 1, #s
  s = s:gsub("^%s+", "")
  n = #s
  while i <= n do
    local c = s:sub(i, i)
    if c:match("[%(%{%[<]") then
      depth = depth + 1
    elseif c:match("[%)%}%]>]") then
      depth = depth - 1
    elseif c:match("%s") and depth <= 0 then
      local rest = s:sub(i):match("^%s*(.)")
      local before = s:sub(1, i - 1):match("(%S)%s*$")
      if not (rest == "|" or before == "|" or before == ":" or (rest == ":" and s:sub(1, i - 1):match("%)$"))) then
        break
      end
    end
    i = i + 1
  end
  return s:sub(1, i - 1)
end

---The type of one annotation line, or nil when it has none.
---@param line string
---@return string?
local function type_of(line)
  local tag, rest = line:match("^%s*%-%-%-%s*@(%a+)%s+(.*)$")
  if tag == "param" or tag == "field" then
    -- The name: `x`, `x?`, `[1]`, `...`; a field may start with a visibility word.
    rest = rest:gsub("^private%s+", ""):gsub("^protected%s+", ""):gsub("^public%s+", "")
    local name = rest:match("^%[[^%]]*%]%??") or rest:match("^[%w_%.]+%??")
    if not name then
      return nil
    end
    return type_expr(rest:sub(#name + 1))
  elseif tag == "return" or tag == "type" then
    return type_expr(rest)
  end
  return nil
end

---Whether type `t` has a bare `table` in it (`table<K, V>` itself is not bare).
---@param t string
---@return boolean
local function bare(t)
  for pos in t:gmatch("()table") do
    local before = pos > 1 and t:sub(pos - 1, pos - 1) or ""
    local after = t:sub(pos + 5, pos + 5)
    if not before:match("[%w_%.]") and not after:match("[%w_%.<]") then
      return true
    end
  end
  return false
end

local list, dirs = false, {}
for _, a in ipairs(arg) do
  if a == "--list" then
    list = true
  else
    dirs[#dirs + 1] = a
  end
end
local found = {}
for _, dir in ipairs(dirs) do
  for _, file in ipairs(vim.fn.globpath(dir, "**/*.lua", false, true)) do
    local n = 0
    for line in io.lines(file) do
      n = n + 1
      local t = type_of(line)
      if t and bare(t) then
        found[#found + 1] = ("%s:%d: %s"):format(file, n, vim.trim(line))
      end
    end
  end
end
if list or #found > MAX then
  io.write(table.concat(found, "\n"), "\n")
end
io.write(("bare `table` annotations: %d (at most %d)\n"):format(#found, MAX))
os.exit(#found > MAX and 1 or 0)
