-- What bench/edit.py used to charge the 2,000-line edit with: Neovim alone (no plugin: run it
-- with `nvim --clean`), a Lua buffer's text replaced with 20,000 lines, then the main loop's
-- blocks over 16 ms for 3 s (a libuv timer ticking every 1 ms), with tree-sitter on (the Lua
-- ftplugin starts it) and off.
--
--     .deps/venv/bin/nvim --headless --clean -c 'luafile bench/edit_treesitter.lua'
local uv = vim.uv
local blocks = {}
local last = uv.hrtime()
uv.new_timer():start(1, 1, function()
  local now = uv.hrtime()
  if (now - last) / 1e6 > 16 then
    blocks[#blocks + 1] = ("%.1f"):format((now - last) / 1e6)
  end
  last = now
end)
local runs = { { "tree-sitter on", true }, { "tree-sitter off", false } }
local function run(i)
  if i > #runs then
    return vim.cmd("qa!")
  end
  vim.cmd("enew!")
  vim.bo.filetype = "lua"
  if not runs[i][2] then
    vim.treesitter.stop()
  end
  blocks = {}
  vim.api.nvim_buf_set_lines(
    0,
    0,
    -1,
    false,
    vim.tbl_map(function(n)
      return "line " .. n
    end, vim.fn.range(1, 20000))
  )
  vim.defer_fn(function()
    io.stderr:write(("%s: blocks over 16 ms in the 3 s after: %s\n"):format(runs[i][1], table.concat(blocks, ", ")))
    run(i + 1)
  end, 3000)
end
vim.defer_fn(function()
  run(1)
end, 100)
