"""End to end with the real interactive Claude Code CLI connected to a real Neovim as its IDE
(model stubbed on loopback):

* the model asks for `mcp__ide__getDiagnostics` and receives the diagnostics set in a buffer;
* the model edits a file: the CLI shows the proposal through `openDiff` in Neovim, the person
  edits the proposal and accepts it there, and the CLI writes what was accepted (the buffer
  reloads); a rejected proposal leaves the file alone.
"""

from __future__ import annotations

import json
import time

from conftest import WAIT, wait_until
from test_cli_interactive import READY, ide_env, wait_connected

# A tool permission prompt of the CLI (answered "1. Yes" with Enter when it shows up).
PERMISSION = r"Do you want to (?:proceed|make this edit)"


def send_prompt(cli, text: str) -> None:
    assert cli.wait_for_text(READY, WAIT), cli.text()[-3000:]
    cli.write(text)
    wait_until(lambda: text in cli.text(), WAIT, what="the prompt to echo")
    cli.write("\r")


def start_cli(nvim_bridge, claude, world):
    # As :ClaudeContext open starts it (terminal.permission_mode): Claude Code 2.1.330 would
    # otherwise start in auto mode and apply edits without showing the diff.
    cli = claude.interactive(args=("--permission-mode", "default"), env=ide_env(nvim_bridge), cwd=world.project)
    wait_connected(nvim_bridge, cli)
    return cli


def wait_ide_tools_offered(cli, model_stub, tool: str, tries: int = 6) -> None:
    """The CLI asks the bridge for its tools (`tools/list`, which wait_connected sees) and offers
    them to the model a moment later: under load a prompt sent in between goes out without
    them. Warm-up turns (answered with text) until a request offers `tool`."""
    for i in range(tries):
        seen = len(model_stub.agent_requests())
        model_stub.push({"text": f"warm-answer-{i}"})
        send_prompt(cli, f"warm up {i}")
        req = wait_until(
            lambda: (model_stub.agent_requests()[seen:] or [None])[0], WAIT, 0.1, what="a warm-up request"
        )
        assert cli.wait_for_text(f"warm-answer-{i}", WAIT), cli.text()[-3000:]
        if tool in req.tool_names:
            return
        time.sleep(0.5)
    raise AssertionError(f"the CLI never offered {tool} to the model: {req.tool_names}")


def test_model_reads_diagnostics_set_in_a_buffer(nvim_bridge, claude, model_stub, world):
    src = world.project / "app.py"
    src.write_text("x = 1\nprint(y)\n")
    nvim_bridge.lua(
        """
        vim.cmd.edit(vim.fn.fnameescape(...))
        local ns = vim.api.nvim_create_namespace('e2e')
        vim.diagnostic.set(ns, 0, {
          { lnum = 1, col = 6, end_col = 7, message = "undefined name 'y'",
            severity = vim.diagnostic.severity.ERROR, source = 'pyflakes', code = 'F821' },
        })
        """,
        str(src),
    )
    cli = start_cli(nvim_bridge, claude, world)
    wait_ide_tools_offered(cli, model_stub, "mcp__ide__getDiagnostics")
    warm = len(model_stub.agent_requests())
    model_stub.push(
        {"tool_use": {"name": "mcp__ide__getDiagnostics", "input": {}}},
        {"text": "diagnostics-read-1234"},
    )
    send_prompt(cli, "what is wrong in app.py")

    def tool_result():
        for r in model_stub.agent_requests()[warm:]:
            if r.tool_results():
                return r
        if cli.wait_for_text(PERMISSION, 0.2):
            cli.write("\r")
        return None

    req = wait_until(tool_result, WAIT * 2, 0.2, what="the tool result to reach the model")
    first = model_stub.agent_requests()[warm]
    assert "mcp__ide__getDiagnostics" in first.tool_names, first.tool_names
    text = req.tool_result_texts()[0]
    assert "undefined name 'y'" in text, text
    files = json.loads(text[text.index("[") : text.rindex("]") + 1])
    assert files == [
        {
            "uri": f"file://{src}",
            "diagnostics": [
                {
                    "message": "undefined name 'y'",
                    "severity": "Error",
                    "range": {"start": {"line": 1, "character": 6}, "end": {"line": 1, "character": 7}},
                    "source": "pyflakes",
                    "code": "F821",
                }
            ],
        }
    ], files
    assert cli.wait_for_text("diagnostics-read-1234", WAIT), cli.text()[-3000:]


VIEWS = """
local views = require('claude_context.ide.diff').views
local name, v = next(views)
if not v or not v.prop_buf or not vim.api.nvim_buf_is_valid(v.prop_buf) then return nil end
-- The view is listed as it starts; its buffers are filled in later turns, and it is shown last.
if not v.tab then return nil end
return { name = name, old = v.old_path, proposal = vim.api.nvim_buf_get_lines(v.prop_buf, 0, -1, false) }
"""


def edit_through_diff(nvim_bridge, claude, model_stub, world, decide: str, expect: str):
    f = world.project / "hello.txt"
    f.write_text("hello\nworld\n")
    nvim_bridge.lua("vim.cmd.edit(vim.fn.fnameescape(...))", str(f))
    cli = start_cli(nvim_bridge, claude, world)
    model_stub.push(
        {"tool_use": {"name": "Read", "input": {"file_path": str(f)}}},
        {"tool_use": {"name": "Edit", "input": {"file_path": str(f), "old_string": "world", "new_string": "there"}}},
        {"text": "edit-turn-done-5678"},
    )
    send_prompt(cli, "change world to there")
    try:
        view = wait_until(lambda: nvim_bridge.lua(VIEWS), WAIT * 2, 0.2, what="the diff view in Neovim")
    except BaseException:
        print("CLI screen:\n" + cli.text()[-4000:])
        raise
    assert view["old"] == str(f)
    assert view["proposal"] == ["hello", "there"]
    assert "hello.txt" in view["name"]
    nvim_bridge.lua(decide)
    assert cli.wait_for_text(expect, WAIT * 2), cli.text()[-3000:]
    # Claude Code closed the view (close_tab) or it closed on the decision: nothing is left.
    wait_until(lambda: nvim_bridge.lua("return next(require('claude_context.ide.diff').views) == nil"), WAIT, what="the view to close")
    return f, cli


def test_edit_accepted_in_neovim_with_the_persons_changes(nvim_bridge, claude, model_stub, world):
    accept = """
    local _, v = next(require('claude_context.ide.diff').views)
    vim.api.nvim_buf_set_lines(v.prop_buf, 0, 1, false, { 'HELLO' })
    vim.cmd('ClaudeContext accept')
    """
    f, _ = edit_through_diff(nvim_bridge, claude, model_stub, world, accept, "edit-turn-done-5678")
    wait_until(lambda: f.read_text() == "HELLO\nthere\n", WAIT, what=f"the CLI to write the accepted text (has {f.read_text()!r})")
    lines = wait_until(
        lambda: nvim_bridge.lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, -1, false)", str(f)) == ["HELLO", "there"],
        WAIT,
        what="the buffer to reload",
    )
    assert lines


def test_edit_rejected_in_neovim_leaves_the_file(nvim_bridge, claude, model_stub, world):
    # The CLI treats a rejection in the IDE as the person refusing the edit: it stops the turn.
    f, _ = edit_through_diff(nvim_bridge, claude, model_stub, world, "vim.cmd('ClaudeContext reject')", r"(?:User r|R)ejected update to hello\.txt")
    assert f.read_text() == "hello\nworld\n"
