-- The Lua modules depend on each other one way, as crates/core/tests/it/layout.rs holds the Rust
-- side to its layers. Each module of lua/claude_context belongs to one layer (LAYERS, bottom
-- first); a module may require modules of its own layer or below, never above. What counts is
-- what a module loads: `require("claude_context…")`, wherever it stands (at the top or inside a
-- function). A look at `package.loaded[…]` loads nothing (it reads a module only when something
-- else loaded it) and does not count. ARCHITECTURE.md describes the layers.
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
---API names them on `require("claude_context")`): { [module] = { [feature] = true } }.
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

---The claude_context modules `text` requires (a dynamic name's constant part, its trailing dot
---dropped: `require("claude_context.ide." .. name)` is claude_context.ide).
local function requires(text)
  local out = {}
  for name in text:gmatch("require%(%s*[\"']([%w_%.]+)[\"']") do
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
