"""The Claude-session tools (execute_claude & co.) end to end: the bridge runs the real Claude
Code CLI, which talks to the loopback model stub. The stub's recorded requests show what the CLI
sent: earlier turns (continuity via --resume), the context file, a fresh conversation after
reset_session. Also: serialised concurrent calls, a timeout that leaves no CLI behind, no CLI
anywhere, history after restarting Neovim, and :ClaudeContext ask."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest
from websockets.sync.client import connect

from conftest import CLI_TIMEOUT, NvimBridge, ServeBridge, _pids_with_env, wait_until

AUTH = "x-claude-code-ide-authorization"


class Rpc:
    """A tiny MCP client over one WebSocket."""

    def __init__(self, bridge):
        self.conn = connect(bridge.url, additional_headers={AUTH: bridge.token}, proxy=None, open_timeout=10, max_size=None)
        self.next_id = 0

    def send(self, name, args):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": {"name": name, "arguments": args}}
        self.conn.send(json.dumps(msg))
        return self.next_id

    def recv(self, timeout=CLI_TIMEOUT):
        return json.loads(self.conn.recv(timeout))

    def tool(self, name, args=None, timeout=CLI_TIMEOUT):
        self.send(name, args or {})
        r = self.recv(timeout)
        assert "result" in r, r
        assert not r["result"].get("isError"), r
        return r["result"]["structuredContent"]

    def close(self):
        self.conn.close()


def cli_env(claude, with_cli_on_path=True) -> dict:
    """The stub's environment for the bridge (the CLI inherits it); `claude` on PATH or not."""
    env = claude.env()
    path = [p for p in env["PATH"].split(os.pathsep) if p and not (Path(p) / "claude").exists()]
    if with_cli_on_path:
        path.insert(0, str(claude.exe.parent))
    env["PATH"] = os.pathsep.join(path)
    return env


@pytest.fixture
def serve(serve_exe, world, claude):
    b = ServeBridge(serve_exe, world, world.project, extra_env=cli_env(claude))
    yield b
    b.stop()


@pytest.fixture
def rpc(serve):
    r = Rpc(serve)
    yield r
    r.close()


def cli_pids(world, bridge_pid):
    """Live processes of this test's world (its CLAUDE_CONFIG_DIR) other than the bridge."""
    pids = [p for p in _pids_with_env(f"CLAUDE_CONFIG_DIR={world.config_dir}") if p != bridge_pid]
    live = []
    for p in pids:
        try:
            stat = Path(f"/proc/{p}/stat").read_text()
        except OSError:
            continue
        if stat.rsplit(") ", 1)[-1][:1] not in ("Z", "X"):
            live.append(p)
    return live


def test_two_calls_continue_the_conversation(rpc, model_stub):
    model_stub.push({"text": "First answer: noted."}, {"text": "Second answer: PINEAPPLE."})
    r1 = rpc.tool("execute_claude", {"prompt": "Remember the word PINEAPPLE."})
    # The session server's fields (doc/protocol.md, Answers), plus tool_name.
    assert set(r1) == {"tool_name", "success", "prompt", "response", "execution_time", "timestamp", "error"}
    assert r1["tool_name"] == "execute_claude"
    assert r1["success"] is True, r1
    assert r1["response"] == "First answer: noted."
    assert r1["error"] is None and r1["prompt"] == "Remember the word PINEAPPLE."
    s1 = rpc.tool("get_current_session")
    assert s1["has_session"] is True and s1["session_id"]

    r2 = rpc.tool("execute_claude", {"prompt": "Which word did I ask you to remember?"})
    assert r2["success"] is True, r2
    assert r2["response"] == "Second answer: PINEAPPLE."
    reqs = model_stub.agent_requests()
    assert len(reqs) == 2
    # The second request carries the first turn: prompt and answer.
    second = reqs[1].all_text()
    assert "Remember the word PINEAPPLE." in second
    assert "First answer: noted." in second
    assert "Which word did I ask you to remember?" in second

    h = rpc.tool("get_execution_history", {"limit": 10})
    assert h["total_entries"] == 2
    assert [e["prompt"] for e in h["history"]] == ["Remember the word PINEAPPLE.", "Which word did I ask you to remember?"]
    assert h["history"][1]["resumed_session_id"] == s1["session_id"]
    assert h["current_session_id"] == rpc.tool("get_current_session")["session_id"]
    st = rpc.tool("get_execution_stats")
    assert (st["runs"], st["successes"], st["failures"]) == (2, 2, 0)
    assert st["input_tokens"] > 0 and st["output_tokens"] > 0


def test_context_file_reaches_the_stub(rpc, model_stub, world):
    (world.project / "docs").mkdir()
    (world.project / "docs" / "notes.md").write_text("The launch code is MARKER-4711.\n")
    model_stub.push({"text": "It mentions a launch code."})
    r = rpc.tool("execute_claude_with_context", {"prompt": "What does this file say?", "file_path": "docs/notes.md", "timeout": 120})
    assert r["success"] is True, r
    assert r["context_file"] == "docs/notes.md"
    assert r["response"] == "It mentions a launch code."
    text = model_stub.agent_requests()[-1].all_text()
    assert "MARKER-4711" in text
    assert "What does this file say?" in text
    # Outside the project root: the spec's error object, and the CLI never ran.
    n = len(model_stub.agent_requests())
    (world.root / "secret.txt").write_text("nope")
    bad = rpc.tool("execute_claude_with_context", {"prompt": "x", "file_path": "../secret.txt"})
    assert bad["success"] is False and bad["response"] is None
    assert "outside the project root" in bad["error"]
    assert bad["context_file"] == "../secret.txt"
    assert len(model_stub.agent_requests()) == n


def test_reset_session_starts_a_fresh_conversation(rpc, model_stub):
    model_stub.push({"text": "ok one"}, {"text": "ok two"})
    assert rpc.tool("execute_claude", {"prompt": "The secret is WORD-ALPHA."})["success"]
    old = rpc.tool("get_current_session")["session_id"]
    r = rpc.tool("reset_session")
    assert set(r) == {"tool_name", "success", "message", "old_session_id"}
    assert r["old_session_id"] == old
    assert rpc.tool("get_current_session") == {"tool_name": "get_current_session", "success": True, "session_id": None, "has_session": False}
    assert rpc.tool("execute_claude", {"prompt": "What is the secret?"})["success"]
    last = model_stub.agent_requests()[-1].all_text()
    assert "What is the secret?" in last
    assert "WORD-ALPHA" not in last
    assert rpc.tool("get_current_session")["session_id"] not in (None, old)


def test_concurrent_calls_are_serialised_and_the_second_resumes_the_first(rpc, serve, model_stub):
    model_stub.push({"text": "answer A"}, {"text": "answer B"})
    inflight, peak = [0], [0]
    lock = threading.Lock()

    def responder(req):
        # Count CLIs talking to the stub at once (the stub serves requests on threads).
        with lock:
            inflight[0] += 1
            peak[0] = max(peak[0], inflight[0])
        time.sleep(0.5)
        with lock:
            inflight[0] -= 1
        return None  # then the script answers

    model_stub.responder = responder
    # Two requests pipelined on one socket, and a third from another client at the same time.
    a = rpc.send("execute_claude", {"prompt": "Call A: say A."})
    b = rpc.send("execute_claude", {"prompt": "Call B: say B."})
    answers = {}
    for _ in range(2):
        m = rpc.recv()
        answers[m["id"]] = m["result"]["structuredContent"]
    assert answers[a]["success"] and answers[b]["success"], answers
    assert peak[0] == 1, "two CLI runs overlapped"
    reqs = model_stub.agent_requests()
    assert len(reqs) == 2
    # In call order, and the second carries the first conversation.
    assert "Call A" in reqs[0].all_text() and "Call B" not in reqs[0].all_text()
    assert "Call A: say A." in reqs[1].all_text() and "answer A" in reqs[1].all_text()
    assert answers[a]["response"] == "answer A" and answers[b]["response"] == "answer B"
    h = rpc.tool("get_execution_history")
    assert h["history"][1]["resumed_session_id"] == h["history"][0]["session_id"]


def test_timeout_returns_promptly_and_leaves_no_cli_behind(rpc, serve, model_stub, world):
    release, reached = threading.Event(), threading.Event()

    def slow(req):
        reached.set()
        release.wait(60)  # far longer than the timeout
        return {"text": "too late"}

    model_stub.responder = slow
    try:
        t0 = time.monotonic()
        r = rpc.tool("execute_claude", {"prompt": "Take your time.", "timeout": 2})
        took = time.monotonic() - t0
        assert r["success"] is False and r["response"] is None
        assert "timed out after 2 s" in r["error"], r["error"]
        assert took < 30, took  # bounded by the timeout, not by the stub's minute
        wait_until(lambda: not cli_pids(world, serve.pid), 10, what="the CLI's processes to be gone")
        # The CLI may still have been starting at 2 s: cover a CLI that is waiting on the slow
        # stub as well, and check the process probe sees it while it runs.
        reached.clear()
        rpc.send("execute_claude", {"prompt": "Take your time.", "timeout": 20})
        wait_until(reached.is_set, 20, what="the CLI to reach the stub")
        assert cli_pids(world, serve.pid), "the probe does not see the running CLI"
        r = rpc.recv()["result"]["structuredContent"]
        assert "timed out after 20 s" in r["error"], r["error"]
        wait_until(lambda: not cli_pids(world, serve.pid), 10, what="the CLI's processes to be gone")
    finally:
        release.set()
        model_stub.responder = None
    # The queue moves on.
    model_stub.push({"text": "after the timeout"})
    assert rpc.tool("execute_claude", {"prompt": "Again."})["response"] == "after the timeout"


def test_no_cli_anywhere(serve_exe, world, claude):
    if any(Path(p).exists() for p in ("/usr/local/bin/claude", "/usr/bin/claude")):
        pytest.skip("a system-wide claude exists on this machine")
    b = ServeBridge(serve_exe, world, world.project, extra_env=cli_env(claude, with_cli_on_path=False))
    try:
        rpc = Rpc(b)
        t = rpc.tool("test_claude_cli")
        assert t["success"] is False and t["path"] is None
        assert "Claude CLI not found" in t["error"] and "CLAUDE_PATH" in t["error"]
        r = rpc.tool("execute_claude", {"prompt": "hello"})
        assert r["success"] is False and r["response"] is None
        assert "npm install -g @anthropic-ai/claude-code" in r["error"]
        rpc.close()
    finally:
        b.stop()
    # CLAUDE_PATH finds it.
    env = cli_env(claude, with_cli_on_path=False)
    env["CLAUDE_PATH"] = str(claude.exe)
    b = ServeBridge(serve_exe, world, world.project, extra_env=env)
    try:
        rpc = Rpc(b)
        t = rpc.tool("test_claude_cli")
        assert t["success"] is True and t["source"] == "CLAUDE_PATH", t
        assert "Claude Code" in t["version"]
        rpc.close()
    finally:
        b.stop()


def nvim_with_cli(world, claude):
    env = cli_env(claude, with_cli_on_path=False)
    return NvimBridge(world, world.project, setup_opts={"claude": {"cmd": str(claude.exe)}}, extra_env=env)


def nvim_tool(b, name, args=None):
    r = b.lua(
        "local r, e = require('claude_context').call_tool_sync(...); return r or {error = e}",
        name,
        args or {},
        int(CLI_TIMEOUT * 1000),
    )
    assert not r.get("error") and not r.get("isError"), r
    return r["structuredContent"]


def test_history_survives_restarting_neovim(world, claude, model_stub):
    model_stub.push({"text": "Noted: the colour is TEAL."}, {"text": "It was TEAL."})
    b = nvim_with_cli(world, claude)
    try:
        r = nvim_tool(b, "execute_claude", {"prompt": "My favourite colour is TEAL."})
        assert r["success"], r
        sid = nvim_tool(b, "get_current_session")["session_id"]
        assert sid
    finally:
        b.stop()
    # One file per project root.
    state = list((world.home / ".local/state/nvim/claude-context/claude_sessions").glob("project-*.json"))
    assert len(state) == 1, list((world.home / ".local/state").rglob("*"))
    b = nvim_with_cli(world, claude)
    try:
        h = nvim_tool(b, "get_execution_history")
        assert h["total_entries"] == 1
        assert h["history"][0]["prompt"] == "My favourite colour is TEAL."
        assert h["history"][0]["response"] == "Noted: the colour is TEAL."
        assert h["current_session_id"] == sid
        # The conversation goes on after the restart.
        r = nvim_tool(b, "execute_claude", {"prompt": "What is my favourite colour?"})
        assert r["response"] == "It was TEAL."
        assert "My favourite colour is TEAL." in model_stub.agent_requests()[-1].all_text()
    finally:
        b.stop()


def test_ask_command_with_a_range(world, claude, model_stub):
    model_stub.push({"text": "## Explanation\n\nIt adds two numbers."})
    b = nvim_with_cli(world, claude)
    try:
        b.lua(
            """
            vim.cmd('edit ' .. vim.fn.fnameescape(...))
            vim.api.nvim_buf_set_lines(0, 0, -1, false, {'def add(a, b):', '    return a + b  # SUM-MARKER', 'print(add(1, 2))'})
            _G.cc_events = {}
            vim.api.nvim_create_autocmd('User', {pattern = 'ClaudeContextRun', callback = function(a) table.insert(_G.cc_events, a.data.status) end})
            vim.cmd('1,2ClaudeContext ask What does this do?')
            """,
            str(world.project / "add.py"),
        )
        wait_until(lambda: len(b.lua("return _G.cc_events")) == 2, CLI_TIMEOUT, 0.2, "the ask to finish")
        assert b.lua("return _G.cc_events") == ["running", "done"]
        text = model_stub.agent_requests()[-1].all_text()
        assert "What does this do?" in text and "SUM-MARKER" in text and "print(add(1, 2))" not in text
        buf = b.lua("return {vim.api.nvim_buf_get_name(0), vim.bo.filetype, vim.api.nvim_buf_get_lines(0, 0, -1, false)}")
        assert buf[0].startswith("claude-context://answer/") and buf[1] == "markdown"
        assert "It adds two numbers." in buf[2]
    finally:
        b.stop()
