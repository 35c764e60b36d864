---@mod claude_context.agents.pickers.telescope The sessions picker in telescope.nvim
---
--- Over telescope's documented API for a picker of one's own: `pickers.new(opts, { finder =
--- finders.new_table{ results, entry_maker }, sorter, attach_mappings })`, `actions.select_default
--- :replace()`, `actions.state.get_selected_entry()`, `actions.close()`; a new list while it is
--- open: `actions.state.get_current_picker(bufnr):refresh(finder, { reset_prompt = false })`.

-- The picker plugin is optional (this module loads only when it is installed): the type checker
-- has not got it.
---@diagnostic disable: unresolved-require

local M = {}

---Whether telescope.nvim is installed.
---@return boolean
function M.available()
  return (pcall(require, "telescope.pickers"))
end

---@param p claude_context.AgentsPick
function M.pick(p)
  local pickers = require("telescope.pickers")
  local finders = require("telescope.finders")
  local conf = require("telescope.config").values
  local actions = require("telescope.actions")
  local state = require("telescope.actions.state")
  local opts = {}
  local function finder(entries)
    return finders.new_table({
      results = entries,
      entry_maker = function(e)
        local line = p.format(e)
        return { value = e, display = line, ordinal = line }
      end,
    })
  end
  local prompt_buf
  local previewer
  if p.preview then
    -- An entry's preview (the conversations picker): its lines, as Markdown.
    previewer = require("telescope.previewers").new_buffer_previewer({
      define_preview = function(self, entry)
        vim.api.nvim_buf_set_lines(self.state.bufnr, 0, -1, false, p.preview(entry.value))
        vim.bo[self.state.bufnr].filetype = "markdown"
      end,
    })
  end
  pickers
    .new(opts, {
      prompt_title = p.prompt,
      -- The keys above the list (the title stays short).
      results_title = require("claude_context.agents.pickers").keys_hint(p.keys),
      previewer = previewer,
      finder = finder(p.entries),
      sorter = conf.generic_sorter(opts),
      attach_mappings = function(bufnr, map)
        prompt_buf = bufnr
        vim.api.nvim_create_autocmd("BufWipeout", {
          buffer = bufnr,
          once = true,
          callback = function()
            p.closed()
          end,
        })
        local function chosen(run)
          return function()
            local sel = state.get_selected_entry()
            actions.close(bufnr)
            p.closed()
            if sel then
              run(sel.value)
            end
          end
        end
        actions.select_default:replace(chosen(p.default))
        for _, k in ipairs(p.keys) do
          map(
            { "i", "n" },
            k.key,
            chosen(function(e)
              p.action(k.action, e)
            end)
          )
        end
        return true
      end,
    })
    :find()
  return function(entries)
    if not (prompt_buf and vim.api.nvim_buf_is_valid(prompt_buf)) then
      return
    end
    local picker = state.get_current_picker(prompt_buf)
    if picker and picker.refresh then
      picker:refresh(finder(entries), { reset_prompt = false })
    end
  end
end

return M
