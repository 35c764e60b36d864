"""End to end for checkpoints of a turn, with the real CLI in the plugin's terminal and the model
stub: a scripted turn Reads and Edits one file, Writes a new one and changes a third with Bash
(`sed -i`, behind the edit tools' hooks). Then `turns()` and `:ClaudeContext review quickfix`
list exactly those three files, `review.source.changeset` gives each one's text before and after,
`review reject` on the third file's changed line restores exactly that hunk on disk and `review
undo` re-applies it, a rewind of the last turn restores all three (the new one removed), and a
comment sent with `review send` reaches the session's next prompt.
"""

from __future__ import annotations

import re

import pytest

from conftest import REPO, WAIT, wait_until
from test_cli_interactive import READY
from test_terminal_relay import stub_env, terminal_text

RELAY = REPO / "lib/claude-context-mcp"

# Runs an asynchronous review.source function and waits for its callback (in Neovim).
AWAIT = """
local fn, opts = ...
local done, err, val
require('claude_context.review.source')[fn](opts, function(e, v) done, err, val = true, e, v end)
vim.wait(30000, function() return done end, 20)
return { done = done, err = err, val = val }
"""


@pytest.fixture(autouse=True)
def _relay_built():
    if not RELAY.exists():
        pytest.fail(f"{RELAY} is missing: run `make build`")


def source(b, fn, opts):
    r = b.lua(AWAIT, fn, opts)
    assert r["done"], f"{fn} did not answer"
    assert r.get("err") is None, r
    return r["val"]


def test_a_turn_with_edit_write_and_bash_is_listed_shown_and_rewound(make_bridge, claude, model_stub, world):
    edited, created, sedded = world.project / "edited.txt", world.project / "created.txt", world.project / "sedded.txt"
    edited.write_text("one\ntwo\n")
    sedded.write_text("alpha\nbeta\n")
    (world.project / "same.txt").write_text("untouched\n")
    terminal = {
        "args": ["--allowedTools", "Read", "Edit", "Write", "Bash(sed:*)"],
        "env": stub_env(claude),
        "side": "bottom",
        "size": 40,
    }
    b = make_bridge("nvim", setup_opts={"claude": {"cmd": str(claude.exe)}, "terminal": terminal, "handshake_timeout_ms": 15000})
    b.lua("vim.o.columns = 160; vim.o.lines = 50")
    b.nvim.command("ClaudeContext open")
    try:
        wait_until(lambda: re.search(READY, terminal_text(b)), WAIT * 2, 0.2, "the CLI prompt")
    except BaseException:
        print("terminal:\n" + terminal_text(b)[-3000:])
        raise
    model_stub.push(
        {"tool_use": {"name": "Read", "input": {"file_path": str(edited)}}},
        {"tool_use": {"name": "Edit", "input": {"file_path": str(edited), "old_string": "two", "new_string": "TWO"}}},
        {"tool_use": {"name": "Write", "input": {"file_path": str(created), "content": "brand new\n"}}},
        {"tool_use": {"name": "Bash", "input": {"command": f"sed -i 's/beta/BETA/' {sedded}", "description": "edit with sed"}}},
        {"text": "turn-done-5521"},
    )
    job = b.lua("return require('claude_context.terminal')._state.job")
    b.lua("vim.fn.chansend(..., 'change three files')", job)
    wait_until(lambda: "change three files" in terminal_text(b), WAIT, 0.2, "the typed prompt to show")
    b.lua("vim.fn.chansend(..., '\\r')", job)
    want = sorted(str(p) for p in (created, edited, sedded))
    try:
        turns = wait_until(
            lambda: (t := b.lua("return require('claude_context').turns()")) and sorted(t[-1]["files"]) == want and t,
            WAIT * 3,
            0.2,
            "the turn's three files from its checkpoints",
        )
    except BaseException:
        print("terminal:\n" + terminal_text(b)[-3000:])
        print("turns:", b.lua("return require('claude_context').turns()"))
        raise
    assert len(turns) == 1 and turns[0]["prompt"] == "change three files", turns
    assert edited.read_text() == "one\nTWO\n" and created.read_text() == "brand new\n" and sedded.read_text() == "alpha\nBETA\n"

    cs = source(b, "changeset", {"root": str(world.project)})
    files = {f["path"]: f for f in cs["files"]}
    assert sorted(files) == ["created.txt", "edited.txt", "sedded.txt"], cs
    assert (files["edited.txt"]["status"], files["edited.txt"]["before"], files["edited.txt"]["after"]) == ("modified", "one\ntwo\n", "one\nTWO\n")
    assert (files["created.txt"]["status"], files["created.txt"].get("before"), files["created.txt"]["after"]) == ("added", None, "brand new\n")
    assert (files["sedded.txt"]["before"], files["sedded.txt"]["after"]) == ("alpha\nbeta\n", "alpha\nBETA\n")
    assert cs["turns"][0]["terminal"] == "main"

    # The quickfix list: one entry per hunk, exactly the turn's three files (this also makes the
    # last turn's change set the active review, as `:ClaudeContext review` would).
    b.nvim.command("ClaudeContext review quickfix")
    qf = wait_until(
        lambda: b.lua("return vim.tbl_map(function(e) return vim.api.nvim_buf_get_name(e.bufnr) end, vim.fn.getqflist())"),
        WAIT,
        0.1,
        "the quickfix list",
    )
    assert sorted(set(qf)) == want and len(qf) == 3, qf

    # Reject the Bash-changed line from the file's ordinary buffer: that hunk only, on disk.
    b.lua("vim.cmd.edit(vim.fn.fnameescape(...)); vim.api.nvim_win_set_cursor(0, {2, 0})", str(sedded))
    b.nvim.command("ClaudeContext review reject not in upper case")
    b.lua("require('claude_context.review').flush(10000)")
    wait_until(lambda: sedded.read_text() == "alpha\nbeta\n", WAIT, 0.1, "the rejected hunk on disk")
    assert b.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == ["alpha", "beta"]
    assert edited.read_text() == "one\nTWO\n" and created.read_text() == "brand new\n"
    b.nvim.command("ClaudeContext review undo")
    b.lua("require('claude_context.review').flush(10000)")
    wait_until(lambda: sedded.read_text() == "alpha\nBETA\n", WAIT, 0.1, "the undone reject on disk")
    assert edited.read_text() == "one\nTWO\n" and created.read_text() == "brand new\n"

    report = source(b, "rewind", {"root": str(world.project), "n": 1})
    assert report["conflicts"] == [], report
    assert edited.read_text() == "one\ntwo\n"
    assert sedded.read_text() == "alpha\nbeta\n"
    assert not created.exists()
    assert (world.project / "same.txt").read_text() == "untouched\n"

    # A comment on a line, sent to the turn's Claude: its next prompt holds the comment and the
    # line's @-reference.
    b.lua("vim.cmd.edit(vim.fn.fnameescape(...)); vim.api.nvim_win_set_cursor(0, {2, 0})", str(edited))
    b.nvim.command("ClaudeContext review comment keep this line lower case please")
    seen = len(model_stub.agent_requests())
    model_stub.push({"text": "comments-read-8812"})
    b.nvim.command("ClaudeContext review send")
    try:
        req = wait_until(
            lambda: next(
                (r for r in model_stub.agent_requests()[seen:] if "keep this line lower case please" in r.all_text()), None
            ),
            WAIT * 2,
            0.2,
            "the comments to reach the model",
        )
    except BaseException:
        print("terminal:\n" + terminal_text(b)[-3000:])
        raise
    assert "@edited.txt#L2" in req.all_text(), req.all_text()[-2000:]
