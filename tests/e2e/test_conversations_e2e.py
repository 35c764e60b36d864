"""Conversations end to end, on every CLI of the matrix: a conversation the real Claude Code CLI
made (print mode, against the model stub, two prompts) is listed by
`require("claude_context").conversations()` with its first prompt, title and prompt count, is
found by a query, and `:ClaudeContext resume <id>` resumes it in the plugin's terminal: the CLI
there sends the model the earlier prompt with the new one."""

from __future__ import annotations

import re

from conftest import WAIT, wait_until
from test_terminal_relay import READY, stub_env, terminal_text

LIST = """
local opts = ...
local got, err
require('claude_context').conversations(opts, function(l, e) got, err = l, e end)
vim.wait(20000, function() return got ~= nil end, 20)
return { list = got, err = err }
"""


def make_conversation(claude, model_stub):
    model_stub.push({"text": "Noted: the colour is TEAL-4711."}, {"text": "Still TEAL-4711."})
    r = claude.run("Remember my colour, TEAL-4711.")
    assert r.returncode == 0, r.stderr[-2000:]
    sid = r.json["session_id"]
    r = claude.run("What was my colour?", resume=sid)
    assert r.returncode == 0, r.stderr[-2000:]
    return sid


def test_a_real_conversation_is_listed_found_and_resumed(make_bridge, claude, model_stub, world):
    sid = make_conversation(claude, model_stub)
    terminal = {"args": [], "env": stub_env(claude), "side": "right", "size": 0.5}
    b = make_bridge("nvim", setup_opts={"claude": {"cmd": str(claude.exe)}, "terminal": terminal, "handshake_timeout_ms": 15000})
    b.lua("vim.o.columns = 200; vim.o.lines = 50")
    r = b.lua(LIST, {})
    assert r.get("err") is None, r
    by = {c["id"]: c for c in r["list"]}
    assert sid in by, r
    c = by[sid]
    assert c["first_prompt"] == "Remember my colour, TEAL-4711.", c
    assert c["last_prompt"] == "What was my colour?", c
    assert c["prompts"] == 2, c
    # No title record in print mode (or the stub's title where a CLI asks for one): the first prompt.
    assert c["title"] in ("Remember my colour, TEAL-4711.", "Stub title"), c
    assert c["cwd"] == str(world.project), c
    assert c["bytes"] > 0 and c["updated_ms"] >= (c["started_ms"] or 0)
    # A query finds it by the model's words, and not by words nobody wrote.
    q = b.lua(LIST, {"query": "still teal-4711"})
    assert [x["id"] for x in q["list"]] == [sid], q
    assert q["list"][0]["matches"][0]["role"] == "assistant"
    assert b.lua(LIST, {"query": "no such words anywhere"})["list"] == []

    # Resumed in the plugin's terminal: the CLI sends the model the earlier conversation.
    model_stub.push({"text": "resumed-answer-1357"})
    b.nvim.command(f"ClaudeContext resume {sid}")
    job = b.lua("return require('claude_context.terminal')._state.job")
    cmd = b.lua("return require('claude_context.terminal')._state.cmd")
    assert "--resume" in cmd and sid in cmd, cmd
    try:
        wait_until(lambda: re.search(READY, terminal_text(b)), WAIT * 2, 0.2, "the CLI prompt")
        b.lua("vim.fn.chansend(..., 'and now?')", job)
        wait_until(lambda: "and now?" in terminal_text(b), WAIT, 0.2, "the typed prompt to show")
        b.lua("vim.fn.chansend(..., '\\r')", job)
        wait_until(lambda: "resumed-answer-1357" in terminal_text(b), WAIT * 2, 0.2, "the answer")
    except BaseException:
        print("terminal:\n" + terminal_text(b)[-3000:])
        raise
    sent = model_stub.agent_requests()[-1].all_text()
    assert "Remember my colour, TEAL-4711." in sent and "and now?" in sent
    b.nvim.command("ClaudeContext close")
