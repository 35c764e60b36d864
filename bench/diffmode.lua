-- What Vim's diff mode costs on Neovim's main thread, the reason big openDiff views are shown
-- inline (diff.diffmode_max_bytes): two buffers of N lines (~63 bytes each) differing in two
-- lines, `diffthis` in both windows, then `:diffupdate` (the whole diff again, as after a
-- change). Also `nvim_buf_set_lines` of the whole text and `vim.diff()` of the two texts.
--
--   .deps/venv/bin/nvim --headless --clean -l bench/diffmode.lua 100000 1000000
local uv = vim.uv
for _, a in ipairs(_G.arg) do
  local n = tonumber(a)
  local t = {}
  for i = 1, n do
    t[i] = ("line %d: the quick brown fox jumps over the lazy dog %d"):format(i, i * 7)
  end
  local old = table.concat(t, "\n") .. "\n"
  local old_lines = vim.split(old, "\n", { plain = true })
  t[math.floor(n / 2)] = "changed"
  table.insert(t, 10, "inserted")
  local new = table.concat(t, "\n") .. "\n"
  local function ms(f)
    local s = uv.hrtime()
    f()
    return (uv.hrtime() - s) / 1e6
  end
  local b1, b2 = vim.api.nvim_create_buf(false, true), vim.api.nvim_create_buf(false, true)
  local set = ms(function()
    vim.api.nvim_buf_set_lines(b1, 0, -1, false, old_lines)
  end)
  vim.api.nvim_buf_set_lines(b2, 0, -1, false, t)
  vim.cmd("tabnew")
  vim.api.nvim_win_set_buf(0, b1)
  vim.cmd("vsplit")
  vim.api.nvim_win_set_buf(0, b2)
  local this = ms(function()
    vim.cmd("windo diffthis")
  end)
  local upd = ms(function()
    vim.cmd("diffupdate")
  end)
  local vd = ms(function()
    vim.diff(old, new, { result_type = "indices" })
  end)
  io.stdout:write(
    ("%d lines, %.1f MB a side: set_lines %.0f ms, diffthis x2 %.0f ms, diffupdate %.0f ms, vim.diff %.0f ms\n"):format(
      n,
      #new / 1e6,
      set,
      this,
      upd,
      vd
    )
  )
  vim.cmd("tabclose!")
  vim.api.nvim_buf_delete(b1, { force = true })
  vim.api.nvim_buf_delete(b2, { force = true })
end
vim.cmd("qa!")
