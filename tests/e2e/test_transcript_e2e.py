"""End to end for the transcript, follow and usage (claude_context.transcript, .follow, .usage),
with the real CLI in the plugin's terminal (`:ClaudeContext open`: its hooks, its MCP server)
and the model stub, on every CLI of the matrix:

- with `follow` on, the stub's scripted `Read` (of a file, from line 3) shows that file at that
  line in the follow window, the person's window staying current; the trail has it (after a
  first turn: 2.1.197 skips the hook in a turn started before its state shows the bridge's MCP
  server connected);
- the session's transcript (found by its id in Claude Code's projects folder) shows the prompt
  as a heading, the answer, and the tool call;
- `usage()` has the session, with the cost Claude Code wrote in the conversation file when the
  CLI writes one (`cost-state`, 2.1.330 and newer), else none.
"""

from __future__ import annotations

import json
import re

import pytest

from conftest import REPO, WAIT, wait_until
from test_cli_interactive import READY
from test_terminal_relay import stub_env, terminal_text

RELAY = REPO / "lib/claude-context-mcp"


@pytest.fixture(autouse=True)
def _relay_built():
    if not RELAY.exists():
        pytest.fail(f"{RELAY} is missing: run `make build`")


def test_transcript_follow_and_usage_of_a_real_session(make_bridge, claude, model_stub, world):
    target = world.project / "notes.txt"
    target.write_text("".join(f"note line {i}\n" for i in range(1, 21)))
    terminal = {"args": ["--allowedTools", "Read"], "env": stub_env(claude), "side": "bottom", "size": 40}
    b = make_bridge("nvim", setup_opts={"claude": {"cmd": str(claude.exe)}, "terminal": terminal, "handshake_timeout_ms": 15000})
    b.lua("vim.o.columns = 160; vim.o.lines = 50")
    b.nvim.command("ClaudeContext open")
    try:
        wait_until(lambda: re.search(READY, terminal_text(b)), WAIT * 2, 0.2, "the CLI prompt")
    except BaseException:
        print("terminal:\n" + terminal_text(b)[-3000:])
        raise
    # The person works in another window; following is on.
    b.lua("vim.cmd.wincmd('p')")
    mine = b.lua("return vim.api.nvim_get_current_win()")
    assert b.lua("return require('claude_context').follow(true)") is True

    # A first turn without tools. Claude Code 2.1.197 runs the hook before a tool (an mcp_tool
    # hook, over the session's MCP connection) with the list of MCP servers its turn started
    # with: a turn started in the CLI's first second, before its own state shows the bridge's
    # server connected, skips it ("Hooks: mcp_tool hook skipped — MCP server 'claude-context'
    # not connected" in its --debug-file log), and that turn's tools are not followed. 2.1.330
    # and newer look the server up when the hook runs.
    model_stub.push({"text": "hello-7310"})
    job = b.lua("return require('claude_context.terminal')._state.job")
    b.lua("vim.fn.chansend(..., 'say hello')", job)
    wait_until(lambda: "say hello" in terminal_text(b), WAIT, 0.2, "the first prompt to show")
    b.lua("vim.fn.chansend(..., '\\r')", job)
    wait_until(lambda: "hello-7310" in terminal_text(b), WAIT * 2, 0.2, "the first answer")
    model_stub.push(
        {"text": "Reading.", "tool_use": {"name": "Read", "input": {"file_path": str(target), "offset": 3, "limit": 5}}},
        {"text": "answer-5521"},
    )
    b.lua("vim.fn.chansend(..., 'read the notes')", job)
    wait_until(lambda: "read the notes" in terminal_text(b), WAIT, 0.2, "the typed prompt to show")
    b.lua("vim.fn.chansend(..., '\\r')", job)
    try:
        wait_until(lambda: "answer-5521" in terminal_text(b), WAIT * 2, 0.2, "the answer on screen")
        wait_until(lambda: b.lua("return require('claude_context.follow').last"), WAIT, 0.1, "the follow window")
    except BaseException:
        print("terminal:\n" + terminal_text(b)[-3000:])
        print("trails:", b.lua("return require('claude_context.follow.trail').trails"))
        raise
    session = wait_until(lambda: (s := b.lua("return require('claude_context').status().sessions")) and s[0]["id"], WAIT, 0.1, "the session")
    shown = b.lua("return require('claude_context.follow').last")
    assert shown["file"] == str(target), shown
    assert shown["tool"] == "Read"
    assert shown["line"] == 3, shown
    assert shown["session"] == session
    assert b.lua("return vim.api.nvim_get_current_win()") == mine, "the person's window stays current"
    win = b.lua("return require('claude_context.follow').win")
    assert win != mine
    # No buffer had the file: a read-only view of it, read by a non-blocking open.
    assert b.lua("return vim.b[vim.api.nvim_win_get_buf(...)].claude_follow_file", win) == str(target)
    assert b.lua("return vim.api.nvim_win_get_cursor(...)[1]", win) == 3
    items = b.lua("return require('claude_context.follow').items(...)", session)
    assert [(i["filename"], i["lnum"]) for i in items] == [(str(target), 3)], items

    # The transcript, found by the session's id.
    b.lua("_G.tr_buf = require('claude_context').transcript(...)", session)
    text = lambda: "\n".join(b.lua("return vim.api.nvim_buf_get_lines(_G.tr_buf, 0, -1, false)"))
    try:
        wait_until(lambda: "answer-5521" in text(), WAIT, 0.1, "the answer in the transcript")
    except BaseException:
        print("transcript:\n" + text()[-3000:])
        print("state:", b.lua("local s = require('claude_context.transcript').bufs[_G.tr_buf]; return { err = s.error, path = s.path }"))
        raise
    lines = text().split("\n")
    assert "## read the notes" in lines, lines
    assert "▸ Read notes.txt:3" in lines, lines
    assert any(line.startswith("  ⎿ ") for line in lines), lines
    assert b.lua("return vim.api.nvim_buf_get_name(_G.tr_buf)") == f"claude-transcript://{session}"

    # What it cost, as the CLI wrote it.
    path = b.lua("return require('claude_context.transcript').bufs[_G.tr_buf].path")
    b.lua("_G.usage_done = false; require('claude_context.usage').refresh(function() _G.usage_done = true end)")
    wait_until(lambda: b.lua("return _G.usage_done"), WAIT, 0.1, "the usage read")
    entry = next(e for e in b.lua("return require('claude_context').usage()") if e["session"] == session)
    costs = [r for r in map(json.loads, open(path, encoding="utf-8", errors="replace")) if r.get("type") == "cost-state"]
    if costs:
        assert entry["cost_usd"] == pytest.approx(costs[-1]["totalCostUSD"]), entry
        assert "$" in b.lua("return require('claude_context.usage').statusline()")
    else:
        assert entry.get("cost_usd") is None, entry
