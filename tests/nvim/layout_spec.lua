-- The Lua modules depend on each other one way, as crates/core/tests/it/layout.rs holds the Rust
-- side to its layers. Each module of lua/claude_context belongs to one layer (LAYERS, bottom
-- first); a module may require modules of its own layer or below, never above (the entry
-- module's FORWARDS aside), and no module reaches itself again through what it requires: no
-- cycle, within a layer or through a forward. What counts is what a module loads:
-- `require("claude_context…")`, wherever it stands (at the top or inside a function), a
-- dynamic name by its constant part (`require("claude_context.ide." .. tool)` is
-- claude_context.ide). A look at `package.loaded[…]` loads nothing (it reads a module only when
-- something else loaded it) and does not count, nor does a require in a comment.
-- ARCHITECTURE.md describes the layers.
local h = require("helpers")
local eq, ok, contains = h.eq, h.ok, h.contains

---Bottom first. An entry names a module and everything below it ("claude_context.ide" is the
---ide layer's modules: claude_context.ide, claude_context.ide.diff.view, …); the most specific
---entry wins. "=claude_context" is the entry module alone.
local LAYERS = {
  {
    "base",
    -- The helpers' room: no plugin state.
    "claude_context.util",
    "claude_context.version",
    "claude_context.rpc",
    "claude_context.explorers",
    "claude_context.check_native",
    "claude_context.complete",
    "claude_context._native",
    -- Worktree names, and the project a worktree belongs to (no requires).
    "claude_context.agents.names",
    -- Other bridges serving the project (claudecode.nvim, other editors' lock files).
    "claude_context.bridges",
  },
  { "native", "claude_context.native", "claude_context.state" },
  { "config", "claude_context.config", "claude_context.cli" },
  -- What the bridge asks of the editor: the IDE tools, the code tools, the session states.
  -- (claude_context.follow.trail: each session's trail of tool calls, the bridge's tool_call requests.)
  {
    "ide",
    "claude_context.ide",
    "claude_context.code",
    "claude_context.sessions.state",
    "claude_context.sessions.plans",
    "claude_context.sessions.route",
    "claude_context.sessions.mark",
    "claude_context.follow.trail",
  },
  -- Checkpoints of Claude's turns (the bridge's messages, the review's source, rewind).
  { "checkpoints", "claude_context.checkpoints", "claude_context.review.source" },
  -- The bridge's life (start, stop, status), which the features call below the entry module.
  { "bridge", "claude_context.bridge" },
  { "api", "=claude_context", "claude_context.status" },
  { "terminal providers", "claude_context.terminal.providers" },
  {
    "features",
    "claude_context.terminal",
    "claude_context.sessions.hooks",
    -- Permission asks of every session without a terminal (background ones among them).
    "claude_context.sessions.permissions",
    "claude_context.ask",
    "claude_context.context",
    "claude_context.context_files",
    "claude_context.health",
    "claude_context.install",
    "claude_context.review",
    "claude_context.claude_plugin",
    "claude_context.agents",
    "claude_context.edit",
    "claude_context.transcript",
    "claude_context.follow",
    "claude_context.usage",
    "claude_context.conversations",
  },
  { "commands", "claude_context.commands", "claude_context.claudecode" },
}

---The entry module's functions that forward to a feature, loading it on first use (the public
---API names them on `require("claude_context")`): { [module] = { [feature] = true } }. A forward
---is a require like any other for the cycles: no feature requires the entry module.
local FORWARDS = {
  ["claude_context"] = {
    ["claude_context.agents"] = true,
    ["claude_context.agents.list"] = true,
    ["claude_context.agents.land"] = true,
    ["claude_context.agents.discard"] = true,
    ["claude_context.sessions.permissions"] = true,
    ["claude_context.edit"] = true,
    ["claude_context.transcript"] = true,
    ["claude_context.follow"] = true,
    ["claude_context.usage"] = true,
    ["claude_context.conversations"] = true,
  },
}

---The layer (index into LAYERS) of module `m`, or nil when no entry covers it.
local function layer_of(m)
  local best, best_len
  for i, l in ipairs(LAYERS) do
    for j = 2, #l do
      local e = l[j]
      local exact = e:sub(1, 1) == "="
      local name = exact and e:sub(2) or e
      if m == name or (not exact and vim.startswith(m, name .. ".")) then
        if not best_len or #name > best_len then
          best, best_len = i, #name
        end
      end
    end
  end
  return best
end

---The module a file under lua/ is.
local function module_of(rel)
  return (rel:gsub("%.lua$", ""):gsub("/init$", ""):gsub("/", "."))
end

---`text` without its comments (`--[[ … ]]`, `--[=[ … ]=]` and `-- …` to the end of the line).
---@param text string
---@return string
local function code_of(text)
  text = text:gsub("%-%-%[(=*)%[.-%]%1%]", "")
  return (text:gsub("%-%-[^\n]*", ""))
end

---The claude_context modules `text` requires (a dynamic name's constant part, its trailing dot
---dropped: `require("claude_context.ide." .. name)` is claude_context.ide). Comments are not
---read.
---@param text string
---@return string[]
local function requires(text)
  local out = {}
  for name in code_of(text):gmatch("require%(%s*[\"']([%w_%.]+)[\"']") do
    if name == "claude_context" or vim.startswith(name, "claude_context.") then
      out[#out + 1] = (name:gsub("%.$", ""))
    end
  end
  return out
end

---The layering faults of `files` ({ [module] = source text }): modules no layer covers, and
---requires of a module above the requirer's layer. Sorted, one line each.
---@param files table<string, string>
---@return string[]
local function faults(files)
  local out = {}
  for m, text in pairs(files) do
    local l = layer_of(m)
    if not l then
      out[#out + 1] = ("%s: in no layer (add it to LAYERS)"):format(m)
    else
      for _, dep in ipairs(requires(text)) do
        local dl = layer_of(dep)
        if dl and dl > l and not (FORWARDS[m] and FORWARDS[m][dep]) then
          out[#out + 1] = ("%s (%s) requires %s (%s, above it)"):format(m, LAYERS[l][1], dep, LAYERS[dl][1])
        end
      end
    end
  end
  table.sort(out)
  return out
end

---The module of `files` a required `name` loads: itself, or for a name no file is (a dynamic
---name's constant part), the nearest module above it; nil when none is.
---@param files table<string, string>
---@param name string
---@return string?
local function resolve(files, name)
  while name ~= "" and not files[name] do
    name = name:match("^(.*)%.[^.]*$") or ""
  end
  return name ~= "" and name or nil
end

---The cycles among `files` ({ [module] = source text }), every require counted (FORWARDS
---included): one line each, "cycle: a -> b -> a", from the first module of each strongly
---connected group (Tarjan's), along the shortest way back to it. Sorted.
---@param files table<string, string>
---@return string[]
local function cycles(files)
  local edges = {}
  local mods = vim.tbl_keys(files)
  table.sort(mods)
  for _, m in ipairs(mods) do
    local set = {}
    for _, dep in ipairs(requires(files[m])) do
      local d = resolve(files, dep)
      if d and d ~= m then
        set[d] = true
      end
    end
    edges[m] = vim.tbl_keys(set)
    table.sort(edges[m])
  end
  local index, low, on, stack, groups, n = {}, {}, {}, {}, {}, 0
  local function visit(v)
    n = n + 1
    index[v], low[v] = n, n
    stack[#stack + 1], on[v] = v, true
    for _, w in ipairs(edges[v]) do
      if not index[w] then
        visit(w)
        low[v] = math.min(low[v], low[w])
      elseif on[w] then
        low[v] = math.min(low[v], index[w])
      end
    end
    if low[v] == index[v] then
      local group = {}
      repeat
        local w = table.remove(stack)
        on[w] = nil
        group[w] = true
      until w == v
      if vim.tbl_count(group) > 1 then
        groups[#groups + 1] = group
      end
    end
  end
  for _, m in ipairs(mods) do
    if not index[m] then
      visit(m)
    end
  end
  local out = {}
  for _, group in ipairs(groups) do
    local members = vim.tbl_keys(group)
    table.sort(members)
    local start = members[1]
    -- Breadth first from the first member, inside the group, back to it.
    local from, queue, seen = {}, { start }, { [start] = true }
    local path
    while #queue > 0 and not path do
      local v = table.remove(queue, 1)
      for _, w in ipairs(edges[v]) do
        if w == start then
          path = { start }
          local back = {}
          local x = v
          while x ~= start do
            table.insert(back, 1, x)
            x = from[x]
          end
          vim.list_extend(path, back)
          path[#path + 1] = start
          break
        elseif group[w] and not seen[w] then
          seen[w], from[w] = true, v
          queue[#queue + 1] = w
        end
      end
    end
    out[#out + 1] = ("cycle: %s (among %s)"):format(table.concat(path, " -> "), table.concat(members, ", "))
  end
  table.sort(out)
  return out
end

---Every module of lua/claude_context: { [module] = text }.
local function tree()
  local root = vim.fn.fnamemodify(h.here, ":h:h") .. "/lua"
  local files = {}
  for name, t in vim.fs.dir(root .. "/claude_context", { depth = 10 }) do
    if t == "file" and name:match("%.lua$") then
      files[module_of("claude_context/" .. name)] = h.read(root .. "/claude_context/" .. name)
    end
  end
  return files
end

return {
  {
    "every Lua module is in a layer and requires nothing above it",
    function()
      local files = tree()
      ok(
        files["claude_context"] and files["claude_context.terminal.launch"] and files["claude_context.ide.diff.view"],
        "the tree is read"
      )
      eq({}, faults(files))
    end,
  },
  {
    "no Lua module reaches itself again through what it requires (lazy requires and forwards too)",
    function()
      local files = tree()
      ok(files["claude_context.bridge"] and files["claude_context.agents.shared"], "the tree is read")
      eq({}, cycles(files))
    end,
  },
  {
    "a cycle is a fault: within a layer, through a require inside a function, through a forward",
    function()
      local got = cycles({
        -- A parent and its child requiring each other, the child lazily: one layer, a cycle.
        ["claude_context.review"] = 'local view = require("claude_context.review.view")',
        ["claude_context.review.view"] = 'local function r() return require("claude_context.review") end',
        -- The entry module forwards to a feature (allowed by FORWARDS) that requires it back.
        ["claude_context"] = 'local function a() return require("claude_context.agents") end',
        ["claude_context.agents"] = 'local l = require("claude_context.agents.list")',
        ["claude_context.agents.list"] = "local function cc()\n  return require('claude_context')\nend",
      })
      eq({
        "cycle: claude_context -> claude_context.agents -> claude_context.agents.list -> claude_context (among claude_context, claude_context.agents, claude_context.agents.list)",
        "cycle: claude_context.review -> claude_context.review.view -> claude_context.review (among claude_context.review, claude_context.review.view)",
      }, got)
      -- A dynamic name counts by its constant part: the module above it.
      eq(
        {
          "cycle: claude_context.ide -> claude_context.ide.open_file -> claude_context.ide (among claude_context.ide, claude_context.ide.open_file)",
        },
        cycles({
          ["claude_context.ide"] = 'return require("claude_context.ide.open_file")',
          ["claude_context.ide.open_file"] = 'return require("claude_context.ide." .. name)',
        })
      )
      -- A look at package.loaded, a comment, a module requiring itself: no cycle.
      eq(
        {},
        cycles({
          ["claude_context"] = 'local function a() return require("claude_context.agents") end',
          ["claude_context.agents"] = table.concat({
            'local cc = package.loaded["claude_context"]',
            '-- require("claude_context").agents() lists them',
            '--[[ require("claude_context") ]]',
            'local self = require("claude_context.agents")',
          }, "\n"),
        })
      )
    end,
  },
  {
    "a module requiring one above its layer is a fault (and one outside every layer)",
    function()
      local files = {
        -- A deliberate violation: the configuration reaching up into the terminal.
        ["claude_context.config.terminal"] = 'local function f() return require("claude_context.terminal.sessions") end',
        -- And a provider reaching up into the launch path.
        ["claude_context.terminal.providers.none"] = "local launch = require('claude_context.terminal.launch')",
        ["claude_context.nowhere"] = "return {}",
      }
      local got = faults(files)
      eq(3, #got, vim.inspect(got))
      contains(
        got[1],
        "claude_context.config.terminal (config) requires claude_context.terminal.sessions (features, above it)"
      )
      contains(got[2], "claude_context.nowhere: in no layer")
      contains(
        got[3],
        "claude_context.terminal.providers.none (terminal providers) requires claude_context.terminal.launch (features, above it)"
      )
      -- Down and sideways are fine.
      eq(
        {},
        faults({
          ["claude_context.terminal.launch"] = 'require("claude_context.config.terminal") require("claude_context.terminal.sessions")',
        })
      )
    end,
  },
}
