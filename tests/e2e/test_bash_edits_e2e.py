"""End to end for Bash edits named by their command, with the real CLI in the plugin's terminal and
the model stub: in a git checkout, a scripted turn runs `sed -i` through Bash. The session's
`--settings` turn on Claude Code's report of what a Bash call changed (`bashEditDiffEnabled`), the
hook after Bash sends it to the bridge, and the turn's change set names the command beside the
file's hunk, as the review view and its quickfix list show it.

A CLI older than 2.1.269 sends no report: skipped (its Bash edits are found by the turn's end
checkpoint as before; tests/e2e/test_review_e2e.py runs that on every CLI).
"""

from __future__ import annotations

import re
import subprocess

import pytest

from conftest import WAIT, wait_until
from test_cli_interactive import READY
from test_review_e2e import source
from test_terminal_relay import stub_env, terminal_text

# The first Claude Code whose Bash PostToolUse carries `tool_response.bashEditDiff`.
FIRST = (2, 1, 269)

SED = "sed -i 's/beta/BETA/' sedded.txt"


def version(text: str) -> tuple:
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


def git(project, *args):
    subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)


def turn_ended(b, files: list) -> bool:
    """Whether the last turn ended with `files` (absolute) as its checkpoints found them."""
    t = b.lua("return require('claude_context').turns()")
    return bool(t) and t[-1]["files"] == files and bool(t[-1].get("end_ms"))


def test_a_bash_edit_is_shown_with_its_command_beside_its_hunk(make_bridge, claude, model_stub, world):
    if version(claude.version) < FIRST:
        pytest.skip(f"Claude Code {claude.version} does not report what a Bash call changed (bashEditDiff needs 2.1.269 or newer)")
    sedded = world.project / "sedded.txt"
    sedded.write_text("alpha\nbeta\ngamma\n")
    git(world.project, "init", "-q")
    git(world.project, "add", "sedded.txt")
    git(world.project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    terminal = {"args": ["--allowedTools", "Bash(sed:*)"], "env": stub_env(claude), "side": "bottom", "size": 40}
    b = make_bridge("nvim", setup_opts={"claude": {"cmd": str(claude.exe)}, "terminal": terminal, "handshake_timeout_ms": 15000})
    b.lua("vim.o.columns = 200; vim.o.lines = 50")
    b.nvim.command("ClaudeContext open")
    wait_until(lambda: re.search(READY, terminal_text(b)), WAIT * 2, 0.2, "the CLI prompt")
    model_stub.push(
        {"tool_use": {"name": "Bash", "input": {"command": SED, "description": "edit with sed"}}},
        {"text": "turn-done-7340"},
    )
    job = b.lua("return require('claude_context.terminal')._state.job")
    b.lua("vim.fn.chansend(..., 'upper-case beta')", job)
    wait_until(lambda: "upper-case beta" in terminal_text(b), WAIT, 0.2, "the typed prompt to show")
    b.lua("vim.fn.chansend(..., '\\r')", job)
    try:
        wait_until(lambda: turn_ended(b, [str(sedded)]), WAIT * 3, 0.2, "the turn's file from its checkpoints")
    except BaseException:
        print("terminal:\n" + terminal_text(b)[-3000:])
        raise
    assert sedded.read_text() == "alpha\nBETA\ngamma\n"

    cs = source(b, "changeset", {"root": str(world.project)})
    (f,) = cs["files"]
    assert f["path"] == "sedded.txt" and not f.get("shared"), cs
    assert [c["command"] for c in f.get("commands", [])] == [SED], cs
    assert f["commands"][0]["hunks"][0]["new_start"] == 2, f["commands"]

    # The view: the command at the end of the hunk's `@@` line.
    b.nvim.command("ClaudeContext review")
    want = "@@ -2,1 +2,1 @@ pending  ← Bash: " + SED
    lines = wait_until(
        lambda: (v := b.lua("local v = require('claude_context.review.view').current; return v and v.ready and vim.api.nvim_buf_get_lines(v.buf, 0, -1, false)"))
        and want in v
        and v,
        WAIT,
        0.1,
        "the review view with the command",
    )
    assert sum(1 for line in lines if "← Bash:" in line) == 1, lines
