---@mod claude_context.config.claudecode_keys claudecode.nvim's option names, and what the report says of them
---
--- The keys only claudecode.nvim has (they say a `setup()` table is theirs), the keys both plugins
--- share, why a key has no equivalent here, and their defaults where they differ from ours:
--- data claude_context.config.claudecode translates with.

local M = {}

---Top-level keys only claudecode.nvim has (its lua/claudecode/config.lua and the aliases its
---setup() forwards to the terminal).
M.TOP = {
  "terminal_cmd",
  "env",
  "track_selection",
  "focus_after_send",
  "visual_demotion_delay_ms",
  "connection_wait_delay",
  "connection_timeout",
  "queue_timeout",
  "diff_opts",
  "models",
  "cwd",
  "git_repo_cwd",
  "cwd_provider",
}

---Keys of `terminal` only claudecode.nvim has (its lua/claudecode/terminal.lua).
M.TERMINAL = {
  "split_side",
  "split_width_percentage",
  "diff_split_width_percentage",
  "provider_opts",
  "auto_close",
  "snacks_win_opts",
  "show_native_term_exit_tip",
  "fix_streamed_paste",
  "cwd",
  "git_repo_cwd",
  "cwd_provider",
  "terminal_cmd",
}

---Keys both plugins have, with the same meaning: listed in the report, kept as they are.
M.SAME_TOP = { "port_range", "auto_start", "log_level" }
M.SAME_TERMINAL = { "auto_insert", "env", "provider" }

---Why a key has no equivalent here (the report's words).
M.WHY = {
  cwd = "Claude's terminal starts in Neovim's working directory (:cd, :tcd); the project the tools serve is `project_root`",
  visual_demotion_delay_ms = "a Visual selection is sent once the cursor rests (`ide.selection_debounce_ms`) and :'<,'>ClaudeContext send takes the range itself",
  connection_wait_delay = "@-mentions made while no Claude is connected are sent as soon as one is (kept `ide.mention_queue_ms`)",
  connection_timeout = "no wait for a connection here: an @-mention waits in the queue (`ide.mention_queue_ms`)",
  diff_split_width_percentage = "this plugin never resizes Claude's terminal while a diff is open",
  auto_resize_terminal = "this plugin never resizes Claude's terminal while a diff is open",
  auto_close = "nothing to set: a clean exit closes the terminal here, a failure keeps it open to show why",
  show_native_term_exit_tip = "no tip is shown here",
  fix_streamed_paste = "a paste into Claude's terminal is always gathered and sent whole here, on every Neovim version",
  hide_terminal_in_new_tab = "a diff's own tab page (diff.tab = \"new\") never shows Claude's terminal here",
  on_new_file_reject = "a rejected new file leaves no window behind here",
  legacy = "a legacy key claudecode.nvim accepted and ignored",
  provider_table = "a provider table has another interface here: { open = function(cmd, env, cwd, events) … } (:help claude-context-providers)",
  external_fn = 'a function cannot be translated: set terminal.external_cmd, a list of words with a "{cmd}" element',
  external_str = "only a command of plain words with %s as whole words can be translated: set terminal.external_cmd",
  snacks_other = "only position, width, height and border of snacks_win_opts carry over",
}

---claudecode.nvim's defaults where they differ from this plugin's, so that its table gives what
---it gave there: a terminal 30% wide, snacks.nvim's when set up, diffs in the current tab page.
M.THEIR_DEFAULTS = {
  { "terminal.split_width_percentage", "terminal.size", 0.30 },
  { "terminal.provider", "terminal.provider", "auto" },
  { "diff_opts.open_in_new_tab", "diff.tab", "current" },
}

return M
