-- openFile {filePath, startLine?, endLine?, startText?, endText?, selectToEndOfLine,
-- makeFrontmost}: answers {filePath, languageId, lineCount}; crates/core/src/tools/ide/open_file.rs
-- shapes the protocol's answer.
local util = require("claude_context.ide.util")
local files = require("claude_context.ide.files")
local slices = require("claude_context.ide.slices")

---Shows a selection from `s` to the exclusive end `e` ({row 1-based, col 0-based}) in `win`.
local function select(win, buf, s, e)
  -- The inclusive end for Visual mode: the byte before the exclusive end.
  local er, ec = e[1], e[2] - 1
  if ec < 0 then
    if er > s[1] then
      er = er - 1
      ec = math.max(#(vim.api.nvim_buf_get_lines(buf, er - 1, er, false)[1] or "") - 1, 0)
    else
      ec = 0
    end
  end
  vim.api.nvim_buf_set_mark(buf, "<", s[1], s[2], {})
  vim.api.nvim_buf_set_mark(buf, ">", er, ec, {})
  vim.api.nvim_win_set_cursor(win, s)
  if vim.api.nvim_get_current_win() == win then
    -- Visual mode stays on once this event is done. `gv` takes the last Visual mode's kind:
    -- make it characterwise.
    vim.cmd("normal! gv")
    if vim.api.nvim_get_mode().mode ~= "v" then
      vim.cmd("normal! v")
    end
  end
end

---The listed buffer of `path`, loaded (or nil and the answer's error). The path is the model's:
---Neovim never opens it (`:edit` stats, then opens by path: a FIFO swapped in between would hold
---the editor); claude_context.ide.files reads it without waiting and judges the open
---descriptor (only a regular file of a sane size).
---@param path string absolute
---@return integer? buf, string? err
local function load(path)
  local buf = util.find_buf(path)
  if buf and vim.api.nvim_buf_is_loaded(buf) and vim.fn.isdirectory(path) == 1 then
    return nil, "Not a file: " .. path
  end
  local loaded, why, missing = files.load_buffer(path, { buf = buf })
  if not loaded then
    return nil, missing and ("File not found: " .. path) or ("openFile: " .. tostring(why))
  end
  return loaded
end

return require("claude_context.ide").deferred(function(params, respond)
  if type(params.filePath) ~= "string" or params.filePath == "" then
    return respond(nil, "openFile: filePath must be a non-empty string")
  end
  local path = util.abspath(params.filePath)
  local buf, err = load(path)
  if not buf then
    return respond(nil, err)
  end
  local result = function()
    return { filePath = path, languageId = util.language_id(buf), lineCount = vim.api.nvim_buf_line_count(buf) }
  end
  if params.makeFrontmost == false then
    return respond(result())
  end

  local win = util.editor_win_for_open()
  vim.api.nvim_set_current_win(win)
  if vim.api.nvim_win_get_buf(win) ~= buf then
    vim.api.nvim_win_set_buf(win, buf)
  end
  local mode = vim.api.nvim_get_mode().mode
  if mode:sub(1, 1) ~= "n" then
    vim.cmd("stopinsert")
  end

  local count = vim.api.nvim_buf_line_count(buf)
  local function clamp(l)
    return math.max(1, math.min(count, math.floor(l)))
  end
  ---Selects from `s` to the exclusive end `e` (or goes to `s`) and answers.
  local function finish(s, e)
    if not (vim.api.nvim_win_is_valid(win) and vim.api.nvim_buf_is_valid(buf)) then
      return respond(nil, "openFile: the window or buffer went away meanwhile")
    end
    if vim.api.nvim_win_get_buf(win) ~= buf then
      return respond(result()) -- the person moved on: leave their window alone
    end
    if s and e and params.selectToEndOfLine then
      e = { e[1], #(vim.api.nvim_buf_get_lines(buf, e[1] - 1, e[1], false)[1] or "") }
    end
    if s and e and (e[1] > s[1] or e[2] > s[2]) then
      select(win, buf, s, e)
    elseif s then
      vim.api.nvim_win_set_cursor(win, s)
    end
    respond(result())
  end
  if type(params.startText) == "string" and params.startText ~= "" then
    return slices.find_text(buf, params.startText, 1, 0, function(s, e)
      if s and type(params.endText) == "string" and params.endText ~= "" then
        return slices.find_text(buf, params.endText, e[1], e[2], function(_, e2)
          finish(s, e2 or e)
        end)
      end
      finish(s, e)
    end)
  elseif type(params.startLine) == "number" then
    local sl = clamp(params.startLine)
    local el = type(params.endLine) == "number" and clamp(params.endLine) or sl
    if el < sl then
      sl, el = el, sl
    end
    if params.endLine == nil then
      return finish({ sl, 0 }, nil) -- one line: just go there
    end
    return finish({ sl, 0 }, { el, #(vim.api.nvim_buf_get_lines(buf, el - 1, el, false)[1] or "") })
  end
  finish(nil, nil)
end)
