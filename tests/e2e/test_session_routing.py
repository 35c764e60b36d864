"""End to end for routing with the real CLI: two Claude sessions in two tab pages
(`terminal.per_tab`), each started by `:ClaudeContext open` in its tab; an @-mention made in a tab
goes to that tab's Claude only (the CLI puts it in its prompt), and the message names the
session that got it.
"""

from __future__ import annotations

import re

import pytest

from conftest import REPO, WAIT, wait_until
from test_cli_interactive import READY
from test_terminal_relay import stub_env

RELAY = REPO / "lib/claude-context-mcp"


@pytest.fixture(autouse=True)
def _relay_built():
    if not RELAY.exists():
        pytest.fail(f"{RELAY} is missing: run `make build`")


def text_of(b, name: str) -> str:
    return b.lua(
        "local s = require('claude_context.terminal.sessions').by_name[...];"
        " return s and s.buf and vim.api.nvim_buf_is_valid(s.buf) and"
        " table.concat(vim.api.nvim_buf_get_lines(s.buf, 0, -1, false), '\\n') or ''",
        name,
    ).rstrip()


def ide_pids(b) -> list:
    return [c["ide_connected_pid"] for c in b.status()["clients"] if c.get("ide_connected_pid")]


def test_two_tabs_get_their_own_mentions(make_bridge, claude, model_stub, world):
    (world.project / "alpha.txt").write_text("a\nb\nc\n")
    (world.project / "beta.txt").write_text("x\ny\nz\n")
    terminal = {"args": [], "env": stub_env(claude), "side": "right", "size": 90, "per_tab": True}
    b = make_bridge("nvim", setup_opts={"claude": {"cmd": str(claude.exe)}, "terminal": terminal, "handshake_timeout_ms": 15000})
    b.lua("vim.o.columns = 200; vim.o.lines = 50")
    b.nvim.command("ClaudeContext open")
    first = b.lua("return require('claude_context.terminal.sessions').name")
    b.nvim.command("tabnew")
    b.nvim.command("ClaudeContext open")
    second = b.lua("return require('claude_context.terminal.sessions').name")
    assert first != second, (first, second)
    for name in (first, second):
        try:
            wait_until(lambda: re.search(READY, text_of(b, name)), WAIT * 2, 0.2, f"the CLI prompt of {name}")
        except BaseException:
            print(f"{name}:\n" + text_of(b, name)[-3000:])
            raise
    wait_until(lambda: len(ide_pids(b)) >= 2, WAIT * 2, 0.2, "both CLIs connected as IDE clients")

    # In the second tab: its Claude gets the mention.
    b.nvim.command("wincmd p")
    b.nvim.command(f"edit {world.project / 'beta.txt'}")
    ok, msg = b.lua("return { require('claude_context.ide.mentions').mention(vim.fn.expand('%:p'), 1, 2) }")
    assert ok, msg
    assert f"to Claude in {second}" in msg, msg
    wait_until(lambda: "beta.txt" in text_of(b, second), WAIT, 0.2, "the mention in the second tab's prompt")

    # In the first tab: its own Claude gets the other mention.
    b.nvim.command("tabprevious")
    b.nvim.command("wincmd p")
    b.nvim.command(f"edit {world.project / 'alpha.txt'}")
    ok, msg = b.lua("return { require('claude_context.ide.mentions').mention(vim.fn.expand('%:p'), 0, 0) }")
    assert ok, msg
    assert f"to Claude in {first}" in msg, msg
    wait_until(lambda: "alpha.txt" in text_of(b, first), WAIT, 0.2, "the mention in the first tab's prompt")

    # Each got its own only.
    assert "alpha.txt" not in text_of(b, second), text_of(b, second)[-2000:]
    assert "beta.txt" not in text_of(b, first), text_of(b, first)[-2000:]
