-- Before the library exists: setup(), :ClaudeContext info / status / send / add and
-- :checkhealth all give the same message (what the loader tried, how to build), no traceback, no
-- ":ClaudeContext start", no doubled prefix. Then :ClaudeContext build installs the library
-- (from a loopback asset server) and the bridge starts without a restart.
local h = require("helpers")
local A = h.load("assets")
local eq, ok, contains = h.eq, h.ok, h.contains

-- The loader looks in an empty plugin directory.
local empty = h.tmpdir()
vim.env.CLAUDE_CONTEXT_NATIVE = nil
require("claude_context.native").root = empty

local notes = h.record_notify()

local function last_note()
  return notes[#notes] and notes[#notes].msg or nil
end

local function is_the_missing_message(msg, what)
  ok(msg, what .. ": no message")
  contains(msg, "the native library is not built", what)
  contains(msg, "tried lib/claude_context_native.", what)
  contains(msg, "target/release/", what)
  contains(msg, empty, what)
  contains(msg, ":Lazy build claude-context.nvim", what)
  contains(msg, "make", what)
  ok(not msg:find("stack traceback", 1, true), what .. ": no traceback: " .. msg)
  ok(not msg:find(":ClaudeContext start", 1, true), what .. ": does not point to :ClaudeContext start: " .. msg)
  ok(not msg:find("claude-context: claude-context:", 1, true), what .. ": one prefix: " .. msg)
  ok(not msg:find("\n", 1, true), what .. ": one line: " .. msg)
end

local file = h.tmpdir() .. "/a.txt"
h.write(file, "one\ntwo\n")

return {
  {
    "setup() without a library says what was tried and how to build",
    function()
      require("claude_context").setup({})
      eq(nil, require("claude_context").status())
      is_the_missing_message(last_note(), "setup")
      eq(vim.log.levels.ERROR, notes[#notes].level)
    end,
  },
  {
    ":ClaudeContext info, status, send, add and open say the same",
    function()
      local expected = require("claude_context.native").missing_message()
      h.clear(notes)
      vim.cmd("ClaudeContext info")
      is_the_missing_message(last_note(), "info")
      eq(expected, last_note())

      -- Never a hit-enter prompt (claude_context.util.output): one line through vim.notify, or a
      -- floating window when it does not fit the command line.
      h.clear(notes)
      local shown = vim.trim(h.shown("ClaudeContext status"))
      local msg = shown ~= "" and shown or last_note()
      is_the_missing_message(msg, "status")
      eq(expected, msg)

      vim.cmd.edit(vim.fn.fnameescape(file))
      h.clear(notes)
      vim.cmd("ClaudeContext send")
      is_the_missing_message(last_note(), "send")
      eq(expected, last_note())

      h.clear(notes)
      vim.cmd("ClaudeContext add " .. vim.fn.fnameescape(file) .. " 1 2")
      is_the_missing_message(last_note(), "add")
      eq(expected, last_note())

      -- :ClaudeContext open too: the same line, not "cannot start the bridge: claude-context: …".
      h.clear(notes)
      vim.cmd("ClaudeContext open")
      is_the_missing_message(last_note(), "open")
      eq(expected, last_note())
    end,
  },
  {
    ":checkhealth says what to do, without suggesting auto_start",
    function()
      vim.cmd("checkhealth claude_context")
      local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
      contains(text, "the native library is not built")
      contains(text, ":ClaudeContext build")
      contains(text, "verifies it against the checksum the plugin pins")
      ok(not text:find("auto_start = true", 1, true), "no auto_start = true advice:\n" .. text)
      ok(not text:find("stack traceback", 1, true), text)
      vim.cmd("bwipeout!")
    end,
  },
  {
    ":ClaudeContext build installs the library and the bridge starts without a restart",
    function()
      local srv = A.serve()
      A.publish(srv, A.version)
      A.pin(empty, A.version)
      vim.env.CLAUDE_CONTEXT_DOWNLOAD_URL = srv.url
      vim.env.CLAUDE_CONTEXT_CARGO = "/nonexistent/cargo"
      h.clear(notes)
      vim.cmd("ClaudeContext build")
      local done = h.wait_for(function()
        for _, n in ipairs(notes) do
          if n.msg:find("installed", 1, true) or n.msg:find("not installed", 1, true) then
            return n
          end
        end
      end, 60000, "the build's result")
      srv.stop()
      contains(done.msg, "installed the prebuilt library")
      contains(done.msg, "the bridge is running")
      local st = require("claude_context").status()
      ok(st, "the bridge runs")
      ok(vim.uv.fs_stat(st.lock_file), "its lock file exists")
      eq(
        empty .. "/lib/claude_context_native." .. require("claude_context.install").lib_ext(),
        require("claude_context.native").info.path
      )

      vim.cmd("checkhealth claude_context")
      local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
      contains(text, "origin: downloaded prebuilt v" .. A.version)
      contains(text, "(verified against pins/v" .. A.version .. ".sha256)")
      contains(text, require("claude_context.install").sha256_file(A.real_lib))
      vim.cmd("bwipeout!")
    end,
  },
}
