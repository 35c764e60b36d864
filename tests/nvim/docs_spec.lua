-- Nothing the README leaves out is lost: every option (the defaults and the documented fields of
-- each config module) and every :ClaudeContext subcommand is documented in the README or in
-- :help (doc/claude-context.txt). The README stays a newcomer's read: 200 lines at most.
local h = require("helpers")
local eq, ok = h.eq, h.ok

local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h")

local function read(path)
  return table.concat(vim.fn.readfile(root .. "/" .. path), "\n")
end

---Every option name: the keys of each config module's defaults (one level into tables) and the
---fields of its option classes, with the module it comes from.
local function options()
  local out = {}
  local function add(name, where)
    if type(name) == "string" and name:match("^[%a_][%w_]*$") then
      out[name] = out[name] or where
    end
  end
  for _, f in ipairs(vim.fn.glob(root .. "/lua/claude_context/config/*.lua", false, true)) do
    local name = vim.fn.fnamemodify(f, ":t:r")
    local where = "config/" .. name .. ".lua"
    for _, line in ipairs(vim.fn.readfile(f)) do
      add(line:match("^%-%-%-@field ([%w_]+)"), where)
    end
    local mod = require(name == "init" and "claude_context.config" or ("claude_context.config." .. name))
    for k, v in pairs(type(mod.defaults) == "table" and mod.defaults or {}) do
      add(k, where)
      if type(v) == "table" and not vim.islist(v) then
        for k2 in pairs(v) do
          add(k2, where)
        end
      end
    end
  end
  return out
end

---Whether `text` documents option `name`: `name = …`, `` `name` ``, or `section.name`.
local function documents_option(text, name)
  return text:find("%f[%w_]" .. name .. "%s*=") ~= nil
    or text:find("`" .. name .. "`", 1, true) ~= nil
    or text:find("%." .. name .. "%f[^%w_]") ~= nil
    or text:find("{" .. name .. "}", 1, true) ~= nil
end

return {
  {
    "every option is documented in the README or in :help",
    function()
      local text = read("README.md") .. "\n" .. read("doc/claude-context.txt")
      local missing = {}
      for name, where in pairs(options()) do
        if not documents_option(text, name) then
          table.insert(missing, ("%s (%s)"):format(name, where))
        end
      end
      table.sort(missing)
      eq({}, missing, "options documented in neither README.md nor doc/claude-context.txt")
      -- The check sees a real gap: an option nobody documented.
      ok(not documents_option(text, "no_such_option_documented"), "the check finds a missing option")
    end,
  },
  {
    "every :ClaudeContext subcommand is documented in the README or in :help",
    function()
      local readme, help = read("README.md"), read("doc/claude-context.txt")
      local missing = {}
      for _, name in ipairs(require("claude_context.commands").names()) do
        local tag = "*:ClaudeContext-" .. name .. "*"
        local said = "ClaudeContext " .. name
        if not (help:find(tag, 1, true) or help:find(said, 1, true) or readme:find(said, 1, true)) then
          table.insert(missing, name)
        end
      end
      eq({}, missing, "subcommands documented in neither README.md nor doc/claude-context.txt")
    end,
  },
  {
    "the README is at most 200 lines and every picture it shows is in the repository and small",
    function()
      local lines = vim.fn.readfile(root .. "/README.md")
      ok(#lines <= 200, ("README.md has %d lines"):format(#lines))
      for _, l in ipairs(lines) do
        for pic in l:gmatch("%((doc/[^)]+%.svg)%)") do
          local st = vim.uv.fs_stat(root .. "/" .. pic)
          ok(st ~= nil, pic .. " exists")
          ok(st.size <= 300 * 1024, ("%s is %d bytes (at most 300 KB)"):format(pic, st.size))
        end
      end
    end,
  },
}
