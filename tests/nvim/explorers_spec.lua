-- :ClaudeContext add in file explorers: the node under the cursor, or the Visual selection of
-- nodes, @-mentioned to a connected Claude Code (a test client). netrw is the real one (it
-- ships with Neovim); nvim-tree, neo-tree, oil.nvim, mini.files and snacks.nvim cannot be
-- installed here: test doubles that follow each one's documented API stand in for them, and the
-- explorer absent gives a clean message.
local h = require("helpers")
local ws = h.load("wsclient")
local eq, ok, contains, wait_for = h.eq, h.ok, h.contains, h.wait_for
local cc = h.cc

local messages = h.record_notify()

local dir, A
local files = { "alpha.txt", "beta.txt", "gamma.txt" }

---The paths mentioned since `from` (an index into the client's messages).
local function mentioned_since(from, n)
  wait_for(function()
    return #A:notifications("at_mentioned") >= from + n
  end, 5000, n .. " mention(s)")
  local out = {}
  for i, m in ipairs(A:notifications("at_mentioned")) do
    if i > from then
      table.insert(out, m.params.filePath)
    end
  end
  return out
end

---A scratch buffer with filetype `ft` listing the file names, shown in the current window.
local function explorer_buf(ft)
  local b = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(b, 0, -1, false, files)
  vim.api.nvim_win_set_buf(0, b)
  vim.bo[b].filetype = ft
  return b
end

local function count()
  return #A:notifications("at_mentioned")
end

return {
  {
    "setup: a project with three files and a connected Claude Code",
    function()
      cc().setup({})
      dir = h.tmpdir()
      vim.cmd.cd(dir)
      for _, f in ipairs(files) do
        h.write(dir .. "/" .. f, f .. "\n")
      end
      A = ws.connect()
      A:handshake(true)
      wait_for(function()
        local st = cc().status()
        return st and st.ide_clients == 1
      end, 5000, "the client")
    end,
  },
  {
    "netrw (the real one): the file under the cursor, and a Visual range of two",
    function()
      vim.cmd("Explore " .. vim.fn.fnameescape(dir))
      eq("netrw", vim.bo.filetype)
      local lnum = vim.fn.search("^beta\\.txt", "n")
      ok(lnum > 0, "beta.txt listed: " .. table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "|"))
      vim.api.nvim_win_set_cursor(0, { lnum, 0 })
      local from = count()
      vim.cmd("ClaudeContext add")
      eq({ dir .. "/beta.txt" }, mentioned_since(from, 1))
      local a = vim.fn.search("^alpha\\.txt", "n")
      from = count()
      vim.cmd(("%d,%dClaudeContext add"):format(a, a + 1))
      eq({ dir .. "/alpha.txt", dir .. "/beta.txt" }, mentioned_since(from, 2))
      eq(lnum, vim.api.nvim_win_get_cursor(0)[1], "the cursor is put back")
    end,
  },
  {
    "nvim-tree absent: a clean message; present (api.tree.get_node_under_cursor): node and range",
    function()
      explorer_buf("NvimTree")
      vim.api.nvim_win_set_cursor(0, { 2, 0 })
      h.clear(messages)
      vim.cmd("ClaudeContext add")
      contains(messages[#messages].msg, "nvim-tree is not installed")
      eq(vim.log.levels.ERROR, messages[#messages].level)
      package.preload["nvim-tree.api"] = function()
        return {
          tree = {
            get_node_under_cursor = function()
              local l = vim.api.nvim_win_get_cursor(0)[1]
              return { absolute_path = dir .. "/" .. vim.api.nvim_get_current_line(), name = "line " .. l }
            end,
          },
        }
      end
      local from = count()
      vim.cmd("ClaudeContext add")
      eq({ dir .. "/beta.txt" }, mentioned_since(from, 1))
      from = count()
      vim.cmd("2,3ClaudeContext add")
      eq({ dir .. "/beta.txt", dir .. "/gamma.txt" }, mentioned_since(from, 2))
    end,
  },
  {
    "neo-tree (manager.get_state(source).tree:get_node(lnum)): absent, then node and range",
    function()
      local b = explorer_buf("neo-tree")
      h.clear(messages)
      vim.cmd("ClaudeContext add")
      contains(messages[#messages].msg, "neo-tree is not installed")
      package.preload["neo-tree.sources.manager"] = function()
        return {
          get_state = function(source)
            assert(source == "filesystem", source)
            return {
              tree = {
                get_node = function(_, l)
                  l = l or vim.api.nvim_win_get_cursor(0)[1]
                  return { path = dir .. "/" .. vim.api.nvim_buf_get_lines(b, l - 1, l, false)[1], type = "file" }
                end,
              },
            }
          end,
        }
      end
      vim.api.nvim_win_set_cursor(0, { 3, 0 })
      local from = count()
      vim.cmd("ClaudeContext add")
      eq({ dir .. "/gamma.txt" }, mentioned_since(from, 1))
      from = count()
      vim.cmd("1,2ClaudeContext add")
      eq({ dir .. "/alpha.txt", dir .. "/beta.txt" }, mentioned_since(from, 2))
    end,
  },
  {
    "oil.nvim (get_current_dir, get_entry_on_line): absent, then node and range",
    function()
      local b = explorer_buf("oil")
      h.clear(messages)
      vim.cmd("ClaudeContext add")
      contains(messages[#messages].msg, "oil.nvim is not installed")
      package.preload["oil"] = function()
        return {
          get_current_dir = function(buf)
            assert(buf == b)
            return dir .. "/"
          end,
          get_entry_on_line = function(buf, l)
            return { name = vim.api.nvim_buf_get_lines(buf, l - 1, l, false)[1], type = "file", id = l }
          end,
        }
      end
      vim.api.nvim_win_set_cursor(0, { 1, 0 })
      local from = count()
      vim.cmd("ClaudeContext add")
      eq({ dir .. "/alpha.txt" }, mentioned_since(from, 1))
      from = count()
      vim.cmd("%ClaudeContext add")
      eq({ dir .. "/alpha.txt", dir .. "/beta.txt", dir .. "/gamma.txt" }, mentioned_since(from, 3))
    end,
  },
  {
    "mini.files (MiniFiles.get_fs_entry): absent, then node",
    function()
      explorer_buf("minifiles")
      h.clear(messages)
      vim.cmd("ClaudeContext add")
      contains(messages[#messages].msg, "mini.files is not set up")
      _G.MiniFiles = {
        get_fs_entry = function(buf, l)
          return {
            fs_type = "file",
            name = "x",
            path = dir .. "/" .. vim.api.nvim_buf_get_lines(buf, l - 1, l, false)[1],
          }
        end,
      }
      vim.api.nvim_win_set_cursor(0, { 2, 0 })
      local from = count()
      vim.cmd("ClaudeContext add")
      eq({ dir .. "/beta.txt" }, mentioned_since(from, 1))
      _G.MiniFiles = nil
    end,
  },
  {
    "snacks explorer/pickers (Snacks.picker.get, picker:selected{fallback}): absent, then the selection",
    function()
      explorer_buf("snacks_picker_list")
      h.clear(messages)
      vim.cmd("ClaudeContext add")
      contains(messages[#messages].msg, "snacks.nvim is not set up")
      local picker = {
        selected = function(self, opts)
          assert(opts and opts.fallback == true)
          return self.items
        end,
        items = { { file = "gamma.txt", cwd = dir }, { file = dir .. "/alpha.txt" } },
      }
      _G.Snacks = { picker = {
        get = function()
          return { picker }
        end,
      } }
      local from = count()
      vim.cmd("ClaudeContext add")
      eq({ dir .. "/gamma.txt", dir .. "/alpha.txt" }, mentioned_since(from, 2))
      _G.Snacks = nil
    end,
  },
  {
    "outside an explorer, :ClaudeContext add without a path says how to use it",
    function()
      vim.cmd("enew")
      h.clear(messages)
      vim.cmd("ClaudeContext add")
      contains(messages[#messages].msg, "usage")
      contains(messages[#messages].msg, "file explorer")
      A:close()
    end,
  },
}
