---@mod claude_context.terminal.providers Where Claude's terminal runs
---
--- Every provider has the same shape; `terminal.provider` picks one (a name, or a table of your
--- own: |claude-context-providers|). The built-in ones are `native` (a window of this Neovim),
--- `snacks` (snacks.nvim's terminal), `external` (a launcher such as tmux) and `none` (nothing is
--- started; you run claude yourself). A table of your own goes through `custom`.

---What a terminal provider does.
---@class claude_context.TerminalProvider
---@field open fun(cmd: string[], env: table<string,string>, cwd: string, events: claude_context.TerminalEvents?): integer?, integer?
---Starts `cmd` with `env` added to Neovim's environment in `cwd`, in a terminal buffer it shows;
---returns the buffer and its job id (nothing when `detached`). Raises an error with a message
---for the person when it cannot.
---@field show (fun(buf: integer))? Shows the hidden terminal (default: the built-in window)
---@field hide (fun(buf: integer))? Hides it (default: closes its windows)
---@field detached boolean? Claude runs outside this Neovim: `open` returns no buffer

---What the job reports to the terminal (a provider that starts the job itself may call them).
---@class claude_context.TerminalEvents
---@field on_output fun() The job printed something
---@field on_exit fun(job: integer, code: integer) The job ended

local M = {}

---The provider `opts.provider` names ("auto": snacks.nvim when it is set up, else native).
---@param opts claude_context.TerminalConfig
---@return claude_context.TerminalProvider
function M.resolve(opts)
  local p = opts.provider
  if type(p) == "table" then
    return require("claude_context.terminal.providers.custom").new(p)
  end
  if p == "auto" then
    p = require("claude_context.terminal.providers.snacks").available() and "snacks" or "native"
  end
  return require("claude_context.terminal.providers." .. p).new(opts)
end

return M
