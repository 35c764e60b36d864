-- bench/edit.py --trace: every main-thread slice of an edit, timed apart, to find which one holds
-- the editor. Loaded into the Neovim under test (after bench/edit.py's 1 ms ticker, GAPS); it
-- wraps, for the duration of the run:
--   * the edit's own steps (claude_context.edit.* functions: the prompt built, the stream's
--     writes, the old lines removed, the hunks' diff and paint);
--   * every callback given to vim.schedule (the stream's decoding slices among them), named by
--     where it was defined;
--   * tree-sitter's parse (LanguageTree:parse), where it runs;
--   * each redraw (a decoration provider's on_start .. on_end);
--   * each Lua garbage-collection cycle (a sentinel's __gc: a point, not a span).
-- Each entry: name, start and end (vim.uv.hrtime()), the process's CPU time in it (os.clock()).
-- `report(ms)` lists the ticker's gaps of at least `ms` with every entry that overlaps them.
local uv = vim.uv
local T = { entries = {}, gaps = {}, on = false }

local function add(name, t0, t1, c0, c1)
  if T.on then
    T.entries[#T.entries + 1] = { name = name, t0 = t0, t1 = t1, cpu = (c1 - c0) * 1000 }
  end
end

local function wrap(tbl, key, name)
  local f = tbl[key]
  if type(f) ~= "function" then
    return
  end
  tbl[key] = function(...)
    local t0, c0 = uv.hrtime(), os.clock()
    local r = { f(...) }
    add(name, t0, uv.hrtime(), c0, os.clock())
    return unpack(r, 1, table.maxn(r))
  end
end

function T.install()
  local edit_mods = {
    ["claude_context.edit.live"] = { "start", "append", "settle", "revert", "paint" },
    ["claude_context.edit.hunks"] = { "show", "diff", "act" },
    ["claude_context.edit.prompt"] = { "build" },
    ["claude_context.edit.process"] = { "send" },
    ["claude_context.edit"] = { "edit" },
  }
  for mod, fns in pairs(edit_mods) do
    local m = require(mod)
    for _, fn in ipairs(fns) do
      wrap(m, fn, (mod:gsub("^claude_context%.", "")) .. "." .. fn)
    end
  end
  local ok, LT = pcall(require, "vim.treesitter.languagetree")
  if ok then
    wrap(LT, "parse", "treesitter.parse")
  end
  local schedule = vim.schedule
  vim.schedule = function(fn)
    local info = debug.getinfo(fn, "S")
    local name = "schedule " .. info.short_src:gsub(".*/lua/", "") .. ":" .. info.linedefined
    return schedule(function()
      local t0, c0 = uv.hrtime(), os.clock()
      fn()
      add(name, t0, uv.hrtime(), c0, os.clock())
    end)
  end
  local r0, rc0
  vim.api.nvim_set_decoration_provider(vim.api.nvim_create_namespace("bench_edit_trace"), {
    on_start = function()
      r0, rc0 = uv.hrtime(), os.clock()
    end,
    on_end = function()
      if r0 then
        add("redraw", r0, uv.hrtime(), rc0, os.clock())
      end
      r0 = nil
    end,
  })
  local function sentinel()
    local p = newproxy(true)
    getmetatable(p).__gc = function()
      local t, c = uv.hrtime(), os.clock()
      add("gc cycle (point)", t, t, c, c)
      sentinel()
    end
  end
  sentinel()
  -- The ticker's gaps, with their ends.
  local last, last_cpu = uv.hrtime(), os.clock()
  uv.new_timer():start(1, 1, function()
    local now, cpu = uv.hrtime(), os.clock()
    if T.on and now - last > 2e6 then
      T.gaps[#T.gaps + 1] = { t0 = last, t1 = now, cpu = (cpu - last_cpu) * 1000 }
    end
    last, last_cpu = now, cpu
  end)
end

function T.start()
  T.entries, T.gaps, T.on = {}, {}, true
end

---The gaps of at least `ms`, longest first (at most `n`), each with what ran in it.
function T.report(ms, n)
  T.on = false
  table.sort(T.gaps, function(a, b)
    return a.t1 - a.t0 > b.t1 - b.t0
  end)
  local out = {}
  for i, g in ipairs(T.gaps) do
    if i > n or (g.t1 - g.t0) / 1e6 < ms then
      break
    end
    local inside = {}
    for _, e in ipairs(T.entries) do
      if e.t1 >= g.t0 and e.t0 <= g.t1 then
        inside[#inside + 1] = e
      end
    end
    -- CPU time in the gap that no traced step accounts for (the outermost steps' CPU taken off).
    local traced = 0
    for _, e in ipairs(inside) do
      local nested = false
      for _, o in ipairs(inside) do
        if o ~= e and o.t0 <= e.t0 and o.t1 >= e.t1 and (o.t1 - o.t0) > (e.t1 - e.t0) then
          nested = true
        end
      end
      traced = traced + (nested and 0 or e.cpu)
    end
    out[#out + 1] = ("  gap %.2f ms wall, %.2f ms CPU (%.2f ms of it in no traced step)"):format(
      (g.t1 - g.t0) / 1e6,
      g.cpu,
      math.max(0, g.cpu - traced)
    )
    for _, e in ipairs(inside) do
      out[#out + 1] = ("    %-40s %7.2f ms wall %7.2f ms CPU"):format(e.name, (e.t1 - e.t0) / 1e6, e.cpu)
    end
  end
  -- The longest entry of each name over the whole edit (CPU).
  local worst = {}
  for _, e in ipairs(T.entries) do
    local w = worst[e.name]
    if not w or e.cpu > w.cpu then
      worst[e.name] = { cpu = e.cpu, wall = (e.t1 - e.t0) / 1e6, n = (w and w.n or 0) + 1 }
    else
      w.n = w.n + 1
    end
  end
  local names = vim.tbl_keys(worst)
  table.sort(names, function(a, b)
    return worst[a].cpu > worst[b].cpu
  end)
  local kb = collectgarbage("count")
  local c0 = os.clock()
  collectgarbage("collect")
  out[#out + 1] = ("  Lua heap %.0f KB; a full collection of it %.2f ms CPU"):format(kb, (os.clock() - c0) * 1000)
  out[#out + 1] = "  longest of each (CPU, its wall, how many):"
  for _, k in ipairs(names) do
    out[#out + 1] = ("    %-40s %7.2f ms CPU %7.2f ms wall  x%d"):format(k, worst[k].cpu, worst[k].wall, worst[k].n)
  end
  return table.concat(out, "\n")
end

_G.bench_trace = T
return T
