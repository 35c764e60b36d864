"""Edit in place (:ClaudeContext edit) end to end: a headless Neovim runs the real Claude Code CLI
as its warm stream-json process, against the loopback model stub. The answer's fenced block
streams into the buffer as a diff in place; the second edit reuses the process; an answer without
a block changes nothing; a cancel halfway leaves the buffer as it was; a process killed halfway
is told and the next edit starts a new one; the person's typing while it streams wins. What the
CLI sent shows
the prompt (range, path, CLAUDE.md) and the tools it offered the model (the read tools only)."""

from __future__ import annotations

import os
import signal

from conftest import CLI_TIMEOUT, wait_until
from test_session_e2e import nvim_with_cli

SOURCE = ["local M = {}", "", "function M.add(a, b)", "  return a + b -- ADD-MARKER", "end", "", "return M"]


def open_source(world, b):
    (world.project / "CLAUDE.md").write_text("Project rule: EDIT-RULE-MARKER.\n")
    path = world.project / "m.lua"
    path.write_text("\n".join(SOURCE) + "\n")
    b.lua("vim.cmd('edit ' .. vim.fn.fnameescape(...))", str(path))


def edit_and_wait(b, cmd):
    b.lua(
        """
        _G.edit_done = false
        vim.api.nvim_create_autocmd('User', {pattern = 'ClaudeContextEdit', once = false, callback = function(a)
          if a.data.state == 'done' then _G.edit_done = true end
        end})
        vim.cmd(...)
        """,
        cmd,
    )
    wait_until(lambda: b.lua("return _G.edit_done"), CLI_TIMEOUT, 0.1, "the edit to end")


def lines(b):
    return b.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")


def test_edit_streams_in_place_and_the_process_stays_warm(world, claude, model_stub):
    new = ["function M.add(a, b)", "  -- sums two numbers", "  return a + b", "end"]
    model_stub.push(
        {"text": "Here is the change:\n```lua\n" + "\n".join(new) + "\n```\n", "pieces": "lines", "delay": 0.05},
        {"text": "```lua\nreturn M -- done\n```"},
    )
    b = nvim_with_cli(world, claude)
    try:
        open_source(world, b)
        edit_and_wait(b, "3,5ClaudeContext edit document it")
        assert lines(b) == SOURCE[:2] + new + SOURCE[5:]
        assert b.lua("return require('claude_context.edit.hunks').active[vim.api.nvim_get_current_buf()] ~= nil")
        b.lua("require('claude_context.edit.hunks').act(vim.api.nvim_get_current_buf(), 'keep_all')")
        req = model_stub.agent_requests()[-1]
        text = req.all_text()
        assert "Instruction: document it" in text and "ADD-MARKER" in text
        assert "File: m.lua (language: lua)" in text and "EDIT-RULE-MARKER" in text
        assert set(req.tool_names) <= {"Read", "Grep", "Glob"}, req.tool_names
        # The second edit: the same process answers.
        edit_and_wait(b, "$ClaudeContext edit mark the end")
        st = b.lua("return require('claude_context.edit').state()")
        assert st["starts"] == 1 and st["edits"] == 2 and st["state"] == "ready", st
        assert lines(b)[-1] == "return M -- done"
        # u undoes the whole second edit at once.
        b.lua("require('claude_context.edit.hunks').act(vim.api.nvim_get_current_buf(), 'keep_all'); vim.cmd('silent undo')")
        assert lines(b) == SOURCE[:2] + new + SOURCE[5:]
        # Nothing was written to the file: the buffer holds the change, unsaved.
        assert (world.project / "m.lua").read_text() == "\n".join(SOURCE) + "\n"
    finally:
        b.stop()


def test_no_change_and_cancel_halfway(world, claude, model_stub):
    slow = "```lua\n" + "\n".join(f"-- slow {i}" for i in range(40)) + "\n```\n"
    model_stub.push({"text": "These lines are fine as they are."}, {"text": slow, "pieces": "lines", "delay": 0.5}, {"text": "```lua\nlocal M = { edited = true }\n```"})
    b = nvim_with_cli(world, claude)
    try:
        open_source(world, b)
        b.lua("_G.notes = {}; vim.notify = function(m) table.insert(_G.notes, m) end")
        edit_and_wait(b, "1ClaudeContext edit nothing")
        assert lines(b) == SOURCE
        assert any("no change" in n for n in b.lua("return _G.notes"))
        assert b.lua("return vim.bo.modified") is False
        # Cancel once the first lines showed.
        b.lua("vim.cmd('3,5ClaudeContext edit slowly')")
        wait_until(lambda: "-- slow 1" in lines(b), CLI_TIMEOUT, 0.1, "the first lines")
        b.lua("vim.cmd('ClaudeContext cancel')")
        assert lines(b) == SOURCE
        assert b.lua("return vim.bo.modified") is False
        # The next edit still works (a fresh warm process took over).
        edit_and_wait(b, "1ClaudeContext edit mark it")
        assert lines(b)[0] == "local M = { edited = true }"
    finally:
        b.stop()


def test_a_dead_process_is_told_and_restarted_on_the_next_edit(world, claude, model_stub):
    """The real CLI killed while its answer streams: the buffer as it was, a message that says it
    ended; the next edit starts a new process and says so."""
    slow = "```lua\n" + "\n".join(f"-- slow {i}" for i in range(40)) + "\n```\n"
    model_stub.push({"text": slow, "pieces": "lines", "delay": 0.5}, {"text": "```lua\nlocal M = { revived = true }\n```"})
    b = nvim_with_cli(world, claude)
    try:
        open_source(world, b)
        b.lua("_G.notes = {}; vim.notify = function(m) table.insert(_G.notes, m) end")
        b.lua(
            """
            _G.edit_done = false
            vim.api.nvim_create_autocmd('User', {pattern = 'ClaudeContextEdit', callback = function(a)
              if a.data.state == 'done' then _G.edit_done = true end
            end})
            vim.cmd('3,5ClaudeContext edit slowly')
            """
        )
        wait_until(lambda: "-- slow 1" in lines(b), CLI_TIMEOUT, 0.1, "the first lines")
        pid = b.lua("return require('claude_context.edit').state().pid")
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: b.lua("return _G.edit_done"), CLI_TIMEOUT, 0.1, "the edit to end")
        assert lines(b) == SOURCE
        assert b.lua("return vim.bo.modified") is False
        notes = b.lua("return _G.notes")
        assert any("ended (exit code" in n and "the next edit starts a new one" in n for n in notes), notes
        assert b.lua("return require('claude_context.edit').state().state") == "stopped"
        b.lua("_G.notes = {}")
        edit_and_wait(b, "1ClaudeContext edit revive it")
        assert lines(b)[0] == "local M = { revived = true }"
        assert any("a new one was started for this edit" in n for n in b.lua("return _G.notes"))
        st = b.lua("return require('claude_context.edit').state()")
        assert st["starts"] == 2 and st["state"] == "ready", st
    finally:
        b.stop()


def test_typing_while_the_answer_streams(world, claude, model_stub):
    """The person types while the real CLI's answer streams: above the range, the answer goes on
    where the range now is; inside it, the answer is refused and their text is kept."""
    slow = ["-- slow %d" % i for i in range(12)]
    model_stub.push(
        {"text": "```lua\n" + "\n".join(slow) + "\n```\n", "pieces": "lines", "delay": 0.4},
        {"text": "```lua\n" + "\n".join(slow) + "\n```\n", "pieces": "lines", "delay": 0.4},
    )
    b = nvim_with_cli(world, claude)
    try:
        open_source(world, b)
        b.lua("_G.notes = {}; vim.notify = function(m) table.insert(_G.notes, m) end")
        start = """
            _G.edit_done = false
            vim.api.nvim_create_autocmd('User', {pattern = 'ClaudeContextEdit', callback = function(a)
              if a.data.state == 'done' then _G.edit_done = true end
            end})
            vim.cmd(...)
            """
        # Above the range: rebased.
        b.lua(start, "3,5ClaudeContext edit slowly")
        wait_until(lambda: "-- slow 1" in lines(b), CLI_TIMEOUT, 0.1, "the first lines")
        b.lua("vim.api.nvim_buf_set_lines(0, 0, 0, false, { '-- typed above' })")
        wait_until(lambda: b.lua("return _G.edit_done"), CLI_TIMEOUT, 0.1, "the edit to end")
        assert lines(b) == ["-- typed above"] + SOURCE[:2] + slow + SOURCE[5:]
        b.lua("require('claude_context.edit.hunks').act(vim.api.nvim_get_current_buf(), 'keep_all')")
        # Inside the range (its old line, still shown below the new ones): refused.
        before = lines(b)
        b.lua(start, "$ClaudeContext edit slowly")
        wait_until(lambda: "-- slow 1" in lines(b)[len(before) - 1 :], CLI_TIMEOUT, 0.1, "the first lines")
        b.lua("vim.api.nvim_buf_set_lines(0, -2, -1, false, { 'return M -- mine' })")
        wait_until(lambda: b.lua("return _G.edit_done"), CLI_TIMEOUT, 0.1, "the edit to end")
        assert lines(b) == before[:-1] + ["return M -- mine"]
        assert any("edit refused" in n for n in b.lua("return _G.notes")), b.lua("return _G.notes")
    finally:
        b.stop()
