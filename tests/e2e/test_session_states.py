"""End to end for session states from Claude Code's hooks, with the real CLI in the plugin's
terminal (`:ClaudeContext open`, which adds `--settings` with the hooks) and the model stub:

- a turn goes `working`, then `done` (the person looks elsewhere: notified), as seen through
  `status().sessions`, with the file its Write changed, in `turns()` too;
- the person's own hook (in their user settings) still runs beside the plugin's;
- a tool that needs a permission puts the session in `waiting`; allowed, Claude goes on and the
  session is `working` again (the hook before its next tool), then `done`.
"""

from __future__ import annotations

import json
import re

import pytest

from conftest import REPO, WAIT, wait_until
from test_cli_interactive import READY
from test_terminal_relay import stub_env, terminal_text

RELAY = REPO / "lib/claude-context-mcp"

EVENTS = """
_G.session_events = {}
vim.api.nvim_create_autocmd('User', { pattern = 'ClaudeContextSessionState', callback = function(ev)
  table.insert(_G.session_events, { id = ev.data.id, state = ev.data.state, event = ev.data.event })
end })
"""


@pytest.fixture(autouse=True)
def _relay_built():
    if not RELAY.exists():
        pytest.fail(f"{RELAY} is missing: run `make build`")


def sessions(b) -> list:
    return b.lua("return require('claude_context').status().sessions")


def one_session(b):
    s = sessions(b)
    return s[0] if len(s) == 1 else None


def test_a_session_goes_working_then_done_then_waiting(make_bridge, claude, model_stub, world):
    # The person's own hook, in their user settings: it must keep running beside the plugin's.
    marker = world.root / "user-hook-ran"
    (world.config_dir / "settings.json").write_text(
        json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": f"touch {marker}"}]}]}})
    )
    note = world.project / "note.txt"
    terminal = {"args": ["--allowedTools", "Write"], "env": stub_env(claude), "side": "bottom", "size": 40}
    b = make_bridge("nvim", setup_opts={"claude": {"cmd": str(claude.exe)}, "terminal": terminal, "handshake_timeout_ms": 15000})
    b.lua("vim.o.columns = 160; vim.o.lines = 50")
    b.lua(EVENTS)
    b.nvim.command("ClaudeContext open")
    argv = b.lua("return require('claude_context.terminal')._state.cmd")
    assert any(a.startswith("--settings=") for a in argv), argv
    assert not any(b.token in a for a in argv), "no token on the command line"
    try:
        wait_until(lambda: re.search(READY, terminal_text(b)), WAIT * 2, 0.2, "the CLI prompt")
    except BaseException:
        print("terminal:\n" + terminal_text(b)[-3000:])
        raise
    # The person looks at another window while Claude works.
    b.lua("vim.cmd.wincmd('p')")
    assert not b.lua("return vim.b.claude_context_terminal == true")

    model_stub.push(
        {"tool_use": {"name": "Write", "input": {"file_path": str(note), "content": "hello\n"}}},
        {"text": "turn-one-7731"},
    )
    job = b.lua("return require('claude_context.terminal')._state.job")
    b.lua("vim.fn.chansend(..., 'write a note')", job)
    wait_until(lambda: "write a note" in terminal_text(b), WAIT, 0.2, "the typed prompt to show")
    b.lua("vim.fn.chansend(..., '\\r')", job)
    try:
        done = wait_until(lambda: (s := one_session(b)) and s["state"] == "done" and s, WAIT * 2, 0.2, "the session to be done")
    except BaseException:
        print("terminal:\n" + terminal_text(b)[-3000:])
        print("sessions:", sessions(b), "events:", b.lua("return _G.session_events"))
        raise
    assert note.read_text() == "hello\n"
    assert done["name"] == "main", done
    assert done["prompt"] == "write a note", done
    assert done["files"] == [str(note)], done
    assert done["files_changed"] == 1
    # The list above is the library's, which knows "done" as the hook arrives; the event fires
    # when the main thread takes the change from the bridge, a moment later on a loaded machine.
    states = wait_until(
        lambda: (st := [e["state"] for e in b.lua("return _G.session_events")]) and "done" in st and st,
        WAIT, 0.1, "the done event")
    assert "working" in states and states.index("working") < states.index("done"), states
    turns = b.lua("return require('claude_context').turns()")
    assert len(turns) == 1 and turns[0]["files"] == [str(note)] and turns[0]["prompt"] == "write a note", turns
    assert turns[0]["session"] == done["id"]
    # Nobody looked: the finish was notified.
    notified = b.lua("return require('claude_context.sessions.state').notified")
    assert any(n["state"] == "done" and "write a note" in n["message"] for n in notified), notified
    assert marker.exists(), "the person's own UserPromptSubmit hook ran too"
    wait_until(lambda: "turn-one-7731" in terminal_text(b), WAIT, 0.2, "the answer on screen")

    # A tool that needs the person's permission: waiting.
    model_stub.push(
        {"tool_use": {"name": "Bash", "input": {"command": "touch made-by-bash.txt", "description": "Make a file"}}},
        {"tool_use": {"name": "Read", "input": {"file_path": str(note)}}},
        {"text": "turn-two-done"},
    )
    b.lua("vim.fn.chansend(..., 'run a command')", job)
    wait_until(lambda: "run a command" in terminal_text(b), WAIT, 0.2, "the second prompt to show")
    b.lua("vim.fn.chansend(..., '\\r')", job)
    try:
        waiting = wait_until(lambda: (s := one_session(b)) and s["state"] == "waiting" and s, WAIT * 2, 0.2, "the session to wait")
    except BaseException:
        print("terminal:\n" + terminal_text(b)[-3000:])
        print("sessions:", sessions(b), "events:", b.lua("return _G.session_events"))
        raise
    assert "Bash" in (waiting.get("waiting_for") or ""), waiting
    assert waiting["prompt"] == "run a command"
    notified = b.lua("return require('claude_context.sessions.state').notified")
    assert any(n["state"] == "waiting" for n in notified), notified

    # The person allows it ("1. Yes"): Claude goes on to its next tool, whose hook (the one
    # before every tool) shows the session working again, then done.
    wait_until(lambda: "1. Yes" in terminal_text(b), WAIT, 0.2, "the permission dialog")
    b.lua("_G.session_events = {}")

    # The CLI ignores keys for a moment after it shows the dialog (against a stray key press):
    # "1" again every second until the dialog is gone.
    def allow():
        if "Do you want to proceed?" not in terminal_text(b):
            return True
        b.lua("vim.fn.chansend(..., '1')", job)
        return False

    wait_until(allow, WAIT, 1.0, "the dialog to take the answer")
    try:
        wait_until(lambda: (s := one_session(b)) and s["state"] == "done" and s, WAIT * 2, 0.2, "the second turn to be done")
    except BaseException:
        print("terminal:\n" + terminal_text(b)[-3000:])
        print("sessions:", sessions(b), "events:", b.lua("return _G.session_events"))
        raise
    assert (world.project / "made-by-bash.txt").exists()
    states = [e["state"] for e in b.lua("return _G.session_events")]
    assert states[:2] == ["working", "done"], states

    b.nvim.command("ClaudeContext close")
