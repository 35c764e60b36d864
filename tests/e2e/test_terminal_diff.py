"""End to end, the diff bugs (garbled terminal, lost focus) with the real Claude Code CLI running in
`:ClaudeContext open`'s terminal: the person is in Claude's terminal (Terminal-Job mode) when
Claude proposes an edit. The diff opens without taking the cursor (the person stays in Claude's
terminal, in Terminal-Job mode), no tabline appears above Claude's window, and after the
rejection the CLI's screen says so once, with no fragments of an overwritten line."""

from __future__ import annotations

import re

from conftest import WAIT, wait_until
from test_terminal_relay import READY, descends_from, stub_env, terminal_text

VIEW = """
local _, v = next(require('claude_context.ide.diff').views)
if not v or not v.prop_win then return nil end
return { old = v.old_path, unfocused = v.unfocused == true,
  proposal = vim.api.nvim_buf_get_lines(v.prop_buf, 0, -1, false) }
"""


def test_a_diff_arriving_while_in_claudes_terminal_leaves_it_alone(make_bridge, claude, model_stub, world):
    f = world.project / "hello.txt"
    f.write_text("hello\nworld\n")
    terminal = {"args": [], "env": stub_env(claude), "side": "right", "size": 0.5}
    b = make_bridge("nvim", setup_opts={"claude": {"cmd": str(claude.exe)}, "terminal": terminal, "handshake_timeout_ms": 15000})
    b.lua("vim.o.columns = 200; vim.o.lines = 50")
    b.lua("vim.cmd.edit(vim.fn.fnameescape(...))", str(f))
    b.nvim.command("ClaudeContext open")
    job = b.lua("return require('claude_context.terminal')._state.job")
    job_pid = b.lua("return vim.fn.jobpid(...)", job)

    def ide():
        return [c for c in b.status()["clients"] if c.get("ide_connected_pid") and descends_from(c["ide_connected_pid"], job_pid)]

    try:
        wait_until(ide, WAIT * 2, 0.2, "the CLI in the terminal to connect as the IDE")
        wait_until(lambda: re.search(READY, terminal_text(b)), WAIT, 0.2, "the CLI prompt")
    except BaseException:
        print("terminal:\n" + terminal_text(b)[-3000:])
        raise
    assert b.lua("return vim.api.nvim_get_mode().mode") == "t", "auto_insert: typing to Claude"
    term_win = b.lua("return vim.api.nvim_get_current_win()")

    model_stub.push(
        {"tool_use": {"name": "Read", "input": {"file_path": str(f)}}},
        {"tool_use": {"name": "Edit", "input": {"file_path": str(f), "old_string": "world", "new_string": "there"}}},
        {"text": "edit-turn-done-2468"},
    )
    b.lua("vim.fn.chansend(..., 'change world to there')", job)
    wait_until(lambda: "change world to there" in terminal_text(b), WAIT, 0.2, "the typed prompt to show")
    b.lua("vim.fn.chansend(..., '\\r')", job)
    try:
        view = wait_until(lambda: b.lua(VIEW), WAIT * 2, 0.2, "the diff view in Neovim")
    except BaseException:
        print("terminal:\n" + terminal_text(b)[-3000:])
        raise
    assert view["proposal"] == ["hello", "there"]
    assert view["unfocused"] is True
    # The person is still typing to Claude, in Claude's window, with no tabline above it.
    assert b.lua("return vim.api.nvim_get_mode().mode") == "t"
    assert b.lua("return vim.api.nvim_get_current_win()") == term_win
    assert b.lua("return #vim.api.nvim_list_tabpages()") == 2
    assert b.lua("return vim.o.showtabline") == 0

    b.lua("vim.cmd('ClaudeContext reject')")
    # "User rejected update to …" up to 2.1.197; "Rejected update to …" since (2.1.330, 2.1.332).
    rejected = r"(?:User rejected|Rejected) update to hello\.txt"
    try:
        wait_until(lambda: re.search(rejected, terminal_text(b)), WAIT * 2, 0.2, "the rejection on Claude's screen")
    except BaseException:
        print("terminal:\n" + terminal_text(b)[-4000:])
        raise
    wait_until(lambda: b.lua("return #vim.api.nvim_list_tabpages()") == 1, WAIT, 0.2, "the diff tab to close")
    text = terminal_text(b)
    assert len(re.findall(rejected, text)) == 1, text[-3000:]
    assert not re.search(r"Upd(?:User|Rejected)", text), text[-3000:]
    assert b.lua("return vim.o.showtabline") == 1
    assert f.read_text() == "hello\nworld\n"
    b.nvim.command("ClaudeContext close")
