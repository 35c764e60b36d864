"""End to end for "Claude in a terminal" with the real Claude Code CLI and a real Neovim:

- `claude -p` started outside Neovim reaches the plugin's tools through the `claude-context-mcp`
  relay (`{"command": "lib/claude-context-mcp"}`), which finds the editor by its lock file;
- `:ClaudeContext open` runs the CLI in a terminal with `--mcp-config=<file>`: in print mode the
  model gets the tools; interactively the CLI connects both as the IDE (`ide_connected`) and as
  the MCP server "claude-context", and a typed prompt reaches a tool.
"""

from __future__ import annotations

import json
import re

import pytest

from conftest import REPO, WAIT, wait_until
from test_cli_interactive import READY

RELAY = REPO / "lib/claude-context-mcp"
WF = "mcp__claude-context__getWorkspaceFolders"


@pytest.fixture(autouse=True)
def _relay_built():
    if not RELAY.exists():
        pytest.fail(f"{RELAY} is missing: run `make build`")


def relay_config(world) -> str:
    p = world.root / "relay-mcp.json"
    p.write_text(json.dumps({"mcpServers": {"claude-context": {"command": str(RELAY)}}}))
    return str(p)


def assert_mcp_door_tools(names: list) -> None:
    """What the model sees of the plugin: its tools (the IDE's getDiagnostics among them), never
    the diff plumbing Claude Code drives over its IDE connection."""
    ours = [n for n in names if n.startswith("mcp__claude-context__")]
    assert "mcp__claude-context__getDiagnostics" in ours, ours
    assert "mcp__claude-context__read_context" in ours, ours
    for plumbing in ("openDiff", "close_tab", "closeAllDiffTabs"):
        assert f"mcp__claude-context__{plumbing}" not in ours, ours


def tool_result_json(req) -> dict:
    results = req.tool_results()
    assert len(results) == 1, results
    assert not results[0].get("is_error"), results[0]
    (text,) = req.tool_result_texts()
    return json.loads(text)


def test_print_mode_through_claude_context_mcp(nvim_bridge, claude, model_stub, world):
    """`claude mcp add claude-context -- lib/claude-context-mcp`, as a print-mode config: started in
    a subdirectory of Neovim's workspace, the relay finds that Neovim and the model's tool call
    returns the editor's cwd."""
    sub = world.project / "src" / "deep"
    sub.mkdir(parents=True)
    model_stub.push({"tool_use": {"name": WF, "input": {}}}, {"echo_tool_result": True})
    r = claude.run("Where is the editor?", args=("--mcp-config", relay_config(world)), cwd=sub)
    out = r.json
    assert r.returncode == 0 and not out["is_error"], (out, r.stderr[-2000:])
    reqs = model_stub.agent_requests()
    assert len(reqs) == 2, [q.tool_names for q in reqs]
    assert WF in reqs[0].tool_names, reqs[0].tool_names
    assert_mcp_door_tools(reqs[0].tool_names)
    wf = tool_result_json(reqs[1])
    assert wf["success"] is True
    assert wf["rootPath"] == str(world.project)
    assert wf["folders"][0]["path"] == str(world.project)
    assert str(world.project) in out["result"]
    # The relay was a client of the bridge and left when the CLI exited.
    wait_until(lambda: not nvim_bridge.status()["clients"], WAIT, what="the relay to disconnect")


def test_relay_without_an_editor_leaves_the_cli_working(claude, model_stub, world):
    """No Neovim: the relay fails at start (its message names the lock dir), the CLI carries on
    without the server's tools."""
    model_stub.push({"text": "no-editor-answer"})
    r = claude.run("hello", args=("--mcp-config", relay_config(world)))
    out = r.json
    assert r.returncode == 0, r.stderr[-2000:]
    assert out["result"] == "no-editor-answer"
    (req,) = model_stub.agent_requests()
    assert not [t for t in req.tool_names if t.startswith("mcp__claude-context__")], req.tool_names


def stub_env(claude) -> dict:
    full = claude.env()
    keys = ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_AUTOUPDATER", "IS_SANDBOX", "ENABLE_TOOL_SEARCH")
    env = {k: str(full[k]) for k in keys}
    # The interactive CLI otherwise tries to git-clone its plugin marketplace from the network.
    env["CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL"] = "1"
    return env


def test_open_in_print_mode_gives_the_model_the_tools(make_bridge, claude, model_stub, world):
    """`:ClaudeContext open` with `args = {"-p", …}`: the prompt after `--mcp-config=<file>` is still
    the prompt (the option takes several values), and the model's tool call reaches the bridge."""
    b = make_bridge(
        "nvim",
        setup_opts={
            "claude": {"cmd": str(claude.exe)},
            "terminal": {
                "args": ["-p", "Which folder?", "--output-format", "json", "--dangerously-skip-permissions"],
                "env": stub_env(claude),
            }
        },
    )
    model_stub.push({"tool_use": {"name": WF, "input": {}}}, {"echo_tool_result": True})
    b.nvim.command("ClaudeContext open")
    req = model_stub.wait_for(lambda r: r.is_agent and bool(r.tool_results()), WAIT * 2)
    screen = b.lua("local s = require('claude_context.terminal')._state; return s.buf and table.concat(vim.api.nvim_buf_get_lines(s.buf, 0, -1, false), '\\n') or ''")
    assert req is not None, screen[-3000:]
    wf = tool_result_json(req)
    assert wf["rootPath"] == str(world.project)
    # The argv had the file, never the token.
    argv = b.lua("return require('claude_context.terminal')._state.cmd")
    assert argv[1].startswith("--mcp-config="), argv
    assert not any(b.token in a for a in argv)
    assert "Which folder?" in model_stub.agent_requests()[0].all_text()
    assert_mcp_door_tools(model_stub.agent_requests()[0].tool_names)


def descends_from(pid: int, ancestor: int) -> bool:
    """Whether `pid` is `ancestor` or below it (the CLI may run its work in a child process)."""
    for _ in range(16):
        if pid == ancestor:
            return True
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
        if pid <= 1:
            return False
    return False


def terminal_text(b) -> str:
    return b.lua(
        "local s = require('claude_context.terminal')._state;"
        " return s.buf and vim.api.nvim_buf_is_valid(s.buf) and"
        " table.concat(vim.api.nvim_buf_get_lines(s.buf, 0, -1, false), '\\n') or ''"
    ).rstrip()


def test_open_interactive_connects_as_ide_and_as_mcp_server(make_bridge, claude, model_stub, world):
    # Interactive mode asks before running a tool; this one is allowed up front.
    terminal = {"args": ["--allowedTools", WF], "env": stub_env(claude), "side": "bottom", "size": 40}
    # The CLI opens its MCP connection while still busy starting up: on a loaded machine its
    # handshake can take longer than the default handshake_timeout_ms (5 s), and the CLI does not
    # retry a failed MCP server (the IDE link, made later, would still work).
    b = make_bridge("nvim", setup_opts={"claude": {"cmd": str(claude.exe)}, "terminal": terminal, "handshake_timeout_ms": 15000})
    b.lua("vim.o.columns = 160; vim.o.lines = 50")
    b.nvim.command("ClaudeContext open")
    job_pid = b.lua("return vim.fn.jobpid(require('claude_context.terminal')._state.job)")

    def connected():
        clients = b.status()["clients"]
        ide = [c for c in clients if c.get("ide_connected_pid") and descends_from(c["ide_connected_pid"], job_pid)]
        mcp = [c for c in clients if not c.get("ide_connected_pid") and c.get("tools_listed")]
        return (ide, mcp) if ide and mcp else None

    try:
        ide, mcp = wait_until(connected, WAIT * 2, 0.2, "the CLI in the terminal to connect as IDE and MCP server")
    except BaseException:
        print("terminal:\n" + terminal_text(b)[-3000:])
        print("status:", b.status())
        raise
    assert ide[0]["name"] == "claude-code" and mcp[0]["name"] == "claude-code"
    # Each came in by its own door: the lock file's URL, and /mcp from the --mcp-config file.
    assert ide[0]["surface"] == "ide" and mcp[0]["surface"] == "mcp", (ide, mcp)

    # A prompt typed into the terminal; the model calls the plugin's tool.
    wait_until(lambda: re.search(READY, terminal_text(b)), WAIT, 0.2, "the CLI prompt")
    model_stub.push({"tool_use": {"name": WF, "input": {}}}, {"text": "answered-9321"})
    job = b.lua("return require('claude_context.terminal')._state.job")
    b.lua("vim.fn.chansend(..., 'where am i')", job)
    wait_until(lambda: "where am i" in terminal_text(b), WAIT, 0.2, "the typed prompt to show")
    b.lua("vim.fn.chansend(..., '\\r')", job)
    req = model_stub.wait_for(lambda r: r.is_agent and bool(r.tool_results()), WAIT * 2)
    assert req is not None, terminal_text(b).rstrip()[-3000:]
    assert tool_result_json(req)["rootPath"] == str(world.project)
    wait_until(lambda: "answered-9321" in terminal_text(b), WAIT, 0.2, "the answer on screen")

    # Closing the terminal ends the CLI: both of its connections go.
    b.nvim.command("ClaudeContext close")
    wait_until(lambda: not b.status()["clients"], WAIT, 0.2, "the CLI's connections to close")


DIFF_VIEW = """
local _, v = next(require('claude_context.ide.diff').views)
if not v or not v.prop_buf or not vim.api.nvim_buf_is_valid(v.prop_buf) then return nil end
-- The view is listed as it starts; its buffers are filled in later turns, and it is shown last.
if not v.tab then return nil end
return { old = v.old_path, proposal = vim.api.nvim_buf_get_lines(v.prop_buf, 0, -1, false) }
"""


def test_open_shows_the_edit_as_a_diff_in_neovim(make_bridge, claude, model_stub, world):
    """`:ClaudeContext open` starts the CLI in a permission mode that asks before an edit
    (terminal.permission_mode, default "default"), so the edit opens as a diff in Neovim even with
    Claude Code 2.1.330, which would otherwise start in auto mode and write the file unasked."""
    f = world.project / "hello.txt"
    f.write_text("hello\nworld\n")
    terminal = {"env": stub_env(claude), "side": "bottom", "size": 40}
    b = make_bridge("nvim", setup_opts={"claude": {"cmd": str(claude.exe)}, "terminal": terminal, "handshake_timeout_ms": 15000})
    b.lua("vim.o.columns = 160; vim.o.lines = 50")
    b.lua("vim.cmd.edit(vim.fn.fnameescape(...))", str(f))
    b.nvim.command("ClaudeContext open")
    argv = b.lua("return require('claude_context.terminal')._state.cmd")
    assert "--permission-mode=default" in argv, argv
    job_pid = b.lua("return vim.fn.jobpid(require('claude_context.terminal')._state.job)")
    wait_until(
        lambda: any(c.get("ide_connected_pid") and descends_from(c["ide_connected_pid"], job_pid) for c in b.status()["clients"]),
        WAIT * 2,
        0.2,
        "the CLI in the terminal to connect as the IDE",
    )
    wait_until(lambda: re.search(READY, terminal_text(b)), WAIT, 0.2, "the CLI prompt")
    model_stub.push(
        {"tool_use": {"name": "Read", "input": {"file_path": str(f)}}},
        {"tool_use": {"name": "Edit", "input": {"file_path": str(f), "old_string": "world", "new_string": "there"}}},
        {"text": "edit-done-2468"},
    )
    job = b.lua("return require('claude_context.terminal')._state.job")
    b.lua("vim.fn.chansend(..., 'change world to there')", job)
    wait_until(lambda: "change world to there" in terminal_text(b), WAIT, 0.2, "the typed prompt to show")
    b.lua("vim.fn.chansend(..., '\\r')", job)
    try:
        view = wait_until(lambda: b.lua(DIFF_VIEW), WAIT * 2, 0.2, "the diff view in Neovim")
    except BaseException:
        print("terminal:\n" + terminal_text(b)[-3000:], "\nfile:", f.read_text())
        raise
    assert view["old"] == str(f) and view["proposal"] == ["hello", "there"], view
    assert f.read_text() == "hello\nworld\n", "nothing is written before the person decides"
    b.nvim.command("ClaudeContext accept")
    wait_until(lambda: f.read_text() == "hello\nthere\n", WAIT, 0.2, "the CLI to write the accepted edit")
    wait_until(lambda: "edit-done-2468" in terminal_text(b), WAIT, 0.2, "the turn to finish")
    b.nvim.command("ClaudeContext close")
