-- Nothing the README leaves out is lost: every option (the defaults and the documented fields of
-- each config module) and every :ClaudeContext subcommand is documented in the README or in
-- :help (doc/claude-context.txt). The README stays a newcomer's read: 200 lines at most, and
-- every picture in it is one `make screenshots` makes from a real session (doc/screenshots/make.py).
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

---What doc/screenshots/make.py makes: `outputs` (its OUTPUTS, in order), `rendered` (the names
---some render() call writes: `out / "NAME.svg"`) and `max_bytes` (its MAX_BYTES).
---@return {outputs:string[], rendered:table<string,boolean>, max_bytes:integer?}
local function shots_made()
  local text = read("doc/screenshots/make.py")
  local list = text:match("\nOUTPUTS = %(([^)]*)%)")
  local outputs = {}
  for name in (list or ""):gmatch('"([%w_-]+)"') do
    outputs[#outputs + 1] = name
  end
  local rendered = {}
  for name in text:gmatch('out / "([%w_-]+)%.svg"') do
    rendered[name] = true
  end
  local a, b = text:match("\nMAX_BYTES = (%d+) %* (%d+)")
  return { outputs = outputs, rendered = rendered, max_bytes = a and tonumber(a) * tonumber(b) or nil }
end

local function stat(path)
  return vim.uv.fs_stat(root .. "/" .. path)
end

---What is wrong with the README's pictures: each one it shows must be made by make.py (one of
---its OUTPUTS, written by a render() call), be committed and be at most make.py's MAX_BYTES;
---make.py makes no picture the README does not show, and doc/screenshots holds no other.
---@param readme string[] the README's lines
---@param shots table see shots_made()
---@param files string[] the committed pictures (doc/screenshots/*.svg)
---@param stat_of fun(path:string):table?
---@return string[] problems, sorted
local function picture_problems(readme, shots, files, stat_of)
  local out, shown, made = {}, {}, {}
  for _, name in ipairs(shots.outputs) do
    made["doc/screenshots/" .. name .. ".svg"] = name
  end
  for _, l in ipairs(readme) do
    for pic in l:gmatch("!%b[]%(([^)%s]+)%)") do
      shown[pic] = true
      if not made[pic] then
        out[#out + 1] = pic .. ": the README shows a picture make.py does not make"
      else
        local st = stat_of(pic)
        if not st then
          out[#out + 1] = pic .. " is missing (run `make screenshots` and commit it)"
        elseif st.size > (shots.max_bytes or 0) then
          out[#out + 1] = ("%s is %d bytes (at most %d)"):format(pic, st.size, shots.max_bytes or 0)
        end
      end
    end
  end
  for pic, name in pairs(made) do
    if not shown[pic] then
      out[#out + 1] = pic .. ": make.py makes it (OUTPUTS) but the README does not show it"
    end
    if not shots.rendered[name] then
      out[#out + 1] = pic .. ": make.py's OUTPUTS names it but no render() writes it"
    end
  end
  for _, pic in ipairs(files) do
    if not made[pic] then
      out[#out + 1] = pic .. ": committed, but make.py does not make it"
    end
  end
  table.sort(out)
  return out
end

---The paths ARCHITECTURE.md names (in backquotes, with a `/`) that no file or folder of the
---checkout answers: `files` is every path of the checkout (relative, `/`-separated). A name is
---found where it is a path from the root, from one of the source roots, or the end of a path (a
---table row names `manager/` inside the `claude/` it just named); a Lua module may leave out
---`.lua` (`agents/names`). Placeholders (`<tool>`, `*`), the doors (`/mcp`) and MCP methods are
---not paths.
local function architecture_gaps(text, files)
  local METHODS = { ["tools/call"] = true, ["tools/list"] = true, ["prompts/get"] = true, ["prompts/list"] = true }
  local known = {}
  for _, f in ipairs(files) do
    local parts = vim.split(f, "/", { plain = true })
    for i = 1, #parts do
      local tail = table.concat(parts, "/", i)
      known[tail] = true
      for j = i, #parts - 1 do
        known[table.concat(parts, "/", i, j) .. "/"] = true
      end
    end
  end
  local function found(name)
    for _, cand in ipairs({ name, name .. ".lua", name .. "/init.lua", name .. ".rs", name .. "/mod.rs" }) do
      if known[cand] or known[cand .. "/"] then
        return true
      end
    end
    return false
  end
  local gaps, seen = {}, {}
  for name in text:gmatch("`([^`%s]+)`") do
    name = name:gsub("[,.:]$", "")
    local skip = not name:find("/", 1, true)
      or name:find("^/")
      or name:find("[<*]")
      or name:find("://", 1, true)
      or METHODS[name]
    if not skip and not seen[name] and not found(name) then
      seen[name] = true
      gaps[#gaps + 1] = name
    end
  end
  table.sort(gaps)
  return gaps
end

return {
  {
    "every path ARCHITECTURE.md names exists",
    function()
      local files = vim.fn.systemlist({ "git", "-C", root, "ls-files" })
      eq(0, vim.v.shell_error, "git ls-files")
      ok(#files > 100, "the checkout's files")
      eq({}, architecture_gaps(read("ARCHITECTURE.md"), files), "paths in ARCHITECTURE.md that do not exist")
      -- The check sees a stale name, and spares what is found another way.
      local fake = {
        "crates/core/src/hook/mod.rs",
        "crates/core/src/claude/manager/mod.rs",
        "lua/claude_context/agents/names.lua",
      }
      eq(
        { "crates/core/src/hook.rs", "lua/claude_context/gone.lua" },
        architecture_gaps(
          "`crates/core/src/hook.rs`, `manager/`, `agents/names`, `lua/claude_context/gone.lua`, `tools/call`, `ide/<tool>.lua`, `hook/mod.rs`.",
          fake
        )
      )
    end,
  },
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
    "the README is at most 200 lines",
    function()
      local lines = vim.fn.readfile(root .. "/README.md")
      ok(#lines <= 200, ("README.md has %d lines"):format(#lines))
    end,
  },
  {
    "every picture the README shows is made by make.py from a real session, is committed and is small",
    function()
      local shots = shots_made()
      ok(#shots.outputs >= 8, "make.py's OUTPUTS: " .. vim.inspect(shots.outputs))
      eq(300 * 1024, shots.max_bytes, "make.py's MAX_BYTES (it refuses a bigger picture)")
      local files = {}
      for _, f in ipairs(vim.fn.glob(root .. "/doc/screenshots/*.svg", false, true)) do
        files[#files + 1] = "doc/screenshots/" .. vim.fn.fnamemodify(f, ":t")
      end
      local readme = vim.fn.readfile(root .. "/README.md")
      eq({}, picture_problems(readme, shots, files, stat), "the README's pictures")
      -- The check sees each kind of gap: a picture missing, too big, not made by make.py, left
      -- out of the README, made but not committed, committed but made by no one.
      local fake = {
        outputs = { "a", "b", "c", "d" },
        rendered = { a = true, b = true, c = true },
        max_bytes = 300 * 1024,
      }
      local sizes =
        { ["doc/screenshots/a.svg"] = 10, ["doc/screenshots/b.svg"] = 301 * 1024, ["doc/screenshots/old.svg"] = 1 }
      local got = picture_problems(
        {
          "![A](doc/screenshots/a.svg) ![B](doc/screenshots/b.svg)",
          "![C](doc/screenshots/c.svg)",
          "![Old](doc/screenshots/old.svg) ![Elsewhere](doc/elsewhere.png)",
        },
        fake,
        { "doc/screenshots/a.svg", "doc/screenshots/b.svg", "doc/screenshots/old.svg" },
        function(path)
          return sizes[path] and { size = sizes[path] } or nil
        end
      )
      eq({
        "doc/elsewhere.png: the README shows a picture make.py does not make",
        "doc/screenshots/b.svg is 308224 bytes (at most 307200)",
        "doc/screenshots/c.svg is missing (run `make screenshots` and commit it)",
        "doc/screenshots/d.svg: make.py makes it (OUTPUTS) but the README does not show it",
        "doc/screenshots/d.svg: make.py's OUTPUTS names it but no render() writes it",
        "doc/screenshots/old.svg: committed, but make.py does not make it",
        "doc/screenshots/old.svg: the README shows a picture make.py does not make",
      }, got)
    end,
  },
}
