---@mod claude_context.config.review Options of the review of Claude's changes (`setup{review = …}`)
---
--- Defaults, checks and the LuaCATS class side by side (see :help claude-context-review).

local M = {}

---Keys of the review view (an empty string: no key).
---@class claude_context.ReviewKeys
---@field next_hunk string Next pending hunk (default "]c")
---@field prev_hunk string Previous pending hunk (default "[c")
---@field keep string Keep the hunk(s) under the cursor or the visual selection (default "a")
---@field reject string Reject the hunk(s) under the cursor or the visual selection (default "x")
---@field keep_file string Keep the file under the cursor (default "A")
---@field reject_file string Reject the file under the cursor (default "X")
---@field keep_all string Keep every pending hunk (default "gA")
---@field reject_all string Reject every pending hunk (default "gX")
---@field undo string Undo the last keep or reject (default "u")
---@field open string Open the file at that line; on the file list, go to its section (default "<CR>")
---@field close string Close the view (default "q")

---What setup() takes for claude_context.ReviewKeys: every field optional (the defaults fill the rest).
---@class claude_context.ReviewKeys.Partial
---@field next_hunk? string Next pending hunk (default "]c")
---@field prev_hunk? string Previous pending hunk (default "[c")
---@field keep? string Keep the hunk(s) under the cursor or the visual selection (default "a")
---@field reject? string Reject the hunk(s) under the cursor or the visual selection (default "x")
---@field keep_file? string Keep the file under the cursor (default "A")
---@field reject_file? string Reject the file under the cursor (default "X")
---@field keep_all? string Keep every pending hunk (default "gA")
---@field reject_all? string Reject every pending hunk (default "gX")
---@field undo? string Undo the last keep or reject (default "u")
---@field open? string Open the file at that line; on the file list, go to its section (default "<CR>")
---@field close? string Close the view (default "q")

---Options under `review` in setup() (see :help claude-context-review).
---@class claude_context.ReviewConfig
---@field auto_open boolean Open the review when a Claude turn ends (default false)
---@field signs boolean Signs on Claude's changed lines in ordinary buffers until kept (default true)
---@field sign_priority integer Priority of those signs (default 6, below gitsigns' and diagnostics')
---@field submit boolean `review send` presses Enter after the prompt (default true)
---@field context integer Unchanged lines shown above and below a hunk in the view (default 2)
---@field keys claude_context.ReviewKeys

---What setup() takes for claude_context.ReviewConfig: every field optional (the defaults fill the rest).
---@class claude_context.ReviewConfig.Partial
---@field auto_open? boolean Open the review when a Claude turn ends (default false)
---@field signs? boolean Signs on Claude's changed lines in ordinary buffers until kept (default true)
---@field sign_priority? integer Priority of those signs (default 6, below gitsigns' and diagnostics')
---@field submit? boolean `review send` presses Enter after the prompt (default true)
---@field context? integer Unchanged lines shown above and below a hunk in the view (default 2)
---@field keys? claude_context.ReviewKeys.Partial
M.defaults = {
  auto_open = false,
  signs = true,
  sign_priority = 6,
  submit = true,
  context = 2,
  keys = {
    next_hunk = "]c",
    prev_hunk = "[c",
    keep = "a",
    reject = "x",
    keep_file = "A",
    reject_file = "X",
    keep_all = "gA",
    reject_all = "gX",
    undo = "u",
    open = "<CR>",
    close = "q",
  },
}

---Validates `setup{review = …}` and merges it over the defaults.
---@param user claude_context.ReviewConfig.Partial?
---@return claude_context.ReviewConfig
function M.resolve(user)
  user = user or {}
  if type(user) ~= "table" then
    error(("claude-context: option review must be a table, got %s"):format(type(user)), 0)
  end
  for k in pairs(user) do
    if M.defaults[k] == nil then
      error(("claude-context: unknown option review.%s (see :help claude-context-review)"):format(tostring(k)), 0)
    end
  end
  if user.keys ~= nil then
    if type(user.keys) ~= "table" then
      error("claude-context: option review.keys must be a table", 0)
    end
    for k, v in pairs(user.keys) do
      if M.defaults.keys[k] == nil then
        error(
          ("claude-context: unknown option review.keys.%s (see :help claude-context-review-keys)"):format(tostring(k)),
          0
        )
      end
      if type(v) ~= "string" then
        error(("claude-context: option review.keys.%s must be a string"):format(k), 0)
      end
    end
  end
  local o = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), user)
  for _, k in ipairs({ "auto_open", "signs", "submit" }) do
    if type(o[k]) ~= "boolean" then
      error(("claude-context: option review.%s must be a boolean"):format(k), 0)
    end
  end
  if type(o.context) ~= "number" or o.context < 0 or o.context % 1 ~= 0 then
    error("claude-context: option review.context must be a whole number >= 0", 0)
  end
  if type(o.sign_priority) ~= "number" or o.sign_priority < 0 then
    error("claude-context: option review.sign_priority must be a number >= 0", 0)
  end
  return o
end

---The effective options (the defaults when the given ones are wrong: setup() reported that).
---@return claude_context.ReviewConfig
function M.options()
  local ok, o = pcall(M.resolve, require("claude_context.config").options.review)
  return ok and o or vim.deepcopy(M.defaults)
end

return M
