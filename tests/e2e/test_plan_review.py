"""End to end for plan review in Neovim, with the real CLI in the plugin's terminal (started in
plan mode by `:ClaudeContext open`, which adds the PreToolUse hook of ExitPlanMode) and the model
stub:

- a scripted `ExitPlanMode` opens the plan in a Markdown buffer;
- an edit written with `:w` reaches Claude's next request (the stub's recorded request) as the
  tool's error, with the diff of the plan against the edit: Claude is to revise;
- the revised plan, written unchanged with `:w`, is approved: the tool succeeds and Claude
  proceeds (out of plan mode);
- an `AskUserQuestion` is answered through `vim.ui.select` and the answer is the tool's result.
"""

from __future__ import annotations

import re
import time

import pytest

from conftest import REPO, WAIT, wait_until
from model_stub import block_text
from test_cli_interactive import READY
from test_terminal_relay import stub_env, terminal_text

RELAY = REPO / "lib/claude-context-mcp"

PLAN = "# Plan\n\n1. Read the parser.\n2. Rename it to reader.\n"
COMMENT = "> Keep the old name as an alias, please."
REVISED = "# Plan\n\n1. Read the parser.\n2. Rename it to reader, keeping parser as an alias.\n"


@pytest.fixture(autouse=True)
def _relay_built():
    if not RELAY.exists():
        pytest.fail(f"{RELAY} is missing: run `make build`")


def plan_buffer(b):
    return b.lua(
        "for _, x in ipairs(vim.api.nvim_list_bufs()) do"
        " if vim.api.nvim_buf_is_loaded(x) and vim.api.nvim_buf_get_name(x):match('^claude%-plan://') then return x end end"
        " return nil"
    )


def exit_plan_mode_result(model_stub, after: int):
    """The first agent request after the `after` first ones that answers an ExitPlanMode call."""

    def find():
        for r in model_stub.agent_requests()[after:]:
            if r.tool_results() and ids_of_exit_plan_mode(r) & {b.get("tool_use_id") for b in r.tool_results()}:
                return r
        return None

    return find


def ids_of_exit_plan_mode(req) -> set:
    """The ids of the ExitPlanMode calls in a request's conversation."""
    ids = set()
    for m in req.messages:
        for b in m.get("content") or [] if isinstance(m.get("content"), list) else []:
            if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == "ExitPlanMode":
                ids.add(b.get("id"))
    return ids


def exit_plan_mode_results(req) -> list:
    ids = ids_of_exit_plan_mode(req)
    return [b for b in req.tool_results() if b.get("tool_use_id") in ids]


def test_a_plan_is_revised_then_approved_in_neovim(make_bridge, claude, model_stub, world):
    terminal = {
        "args": ["--permission-mode", "plan"],
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

    # As Claude does in plan mode: the plan goes to the plan file the CLI named in its plan-mode
    # reminder, then ExitPlanMode (whose input the CLI fills with the file's text).
    plan_file = {}

    def write(text):
        def spec(req):
            m = re.search(r"(/[^\s`'\"]*/plans/[^\s`'\"]+\.md)", req.system_text() + "\n" + req.all_text())
            assert m, "the plan-mode reminder names the plan file"
            plan_file["path"] = m.group(1)
            return {"tool_use": {"name": "Write", "input": {"file_path": m.group(1), "content": text}}}

        return spec

    model_stub.push(
        write(PLAN),
        {"tool_use": {"name": "ExitPlanMode", "input": {}}},
        lambda req: {"tool_use": {"name": "Read", "input": {"file_path": plan_file["path"]}}},
        write(REVISED),
        {"tool_use": {"name": "ExitPlanMode", "input": {}}},
        {"text": "proceeding-5521"},
    )
    before = len(model_stub.agent_requests())
    job = b.lua("return require('claude_context.terminal')._state.job")
    b.lua("vim.fn.chansend(..., 'plan the rename')", job)
    wait_until(lambda: "plan the rename" in terminal_text(b), WAIT, 0.2, "the typed prompt to show")
    b.lua("vim.fn.chansend(..., '\\r')", job)

    # The plan opens in Neovim.
    try:
        buf = wait_until(lambda: plan_buffer(b), WAIT * 2, 0.2, "the plan buffer")
    except BaseException:
        print("terminal:\n" + terminal_text(b)[-3000:])
        raise
    assert b.lua("return vim.bo[...].filetype", buf) == "markdown"
    lines = b.lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", buf)
    assert "\n".join(lines) + "\n" == PLAN, lines
    # The session waits for the person while the plan is open: the hook before every tool,
    # which Claude Code runs beside the review's own, does not make it look working.
    time.sleep(1)
    states = [s["state"] for s in b.lua("return require('claude_context').status().sessions")]
    assert states == ["waiting"], states
    # A comment written into it, then :w: Claude is told to revise, with the diff.
    b.lua("vim.api.nvim_set_current_buf(...)", buf)
    b.lua("vim.api.nvim_buf_set_lines(..., 4, 4, false, { [[" + COMMENT + "]] })", buf)
    b.nvim.command("write")
    try:
        req = wait_until(exit_plan_mode_result(model_stub, before), WAIT * 2, 0.2, "Claude's next request")
    except BaseException:
        print("terminal:\n" + terminal_text(b)[-3000:])
        raise
    result = exit_plan_mode_results(req)[0]
    text = block_text(result)
    assert result.get("is_error") is True, result
    assert "+" + COMMENT in text, text
    assert "ExitPlanMode" in text, text
    assert COMMENT in text.split("The plan as they left it:")[-1], text

    # The revised plan opens; written unchanged, it is approved and Claude proceeds.
    seen = len(model_stub.agent_requests())
    buf2 = wait_until(lambda: (x := plan_buffer(b)) and x != buf and x, WAIT * 2, 0.2, "the revised plan")
    lines = b.lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", buf2)
    assert "\n".join(lines) + "\n" == REVISED, lines
    b.lua("vim.api.nvim_set_current_buf(...)", buf2)
    b.nvim.command("write")
    try:
        req = wait_until(exit_plan_mode_result(model_stub, seen), WAIT * 2, 0.2, "the request after the approval")
    except BaseException:
        print("terminal:\n" + terminal_text(b)[-3000:])
        raise
    result = exit_plan_mode_results(req)[0]
    assert not result.get("is_error"), result
    assert "approved" in block_text(result).lower(), result
    wait_until(lambda: "proceeding-5521" in terminal_text(b), WAIT, 0.2, "Claude to proceed")
    assert plan_buffer(b) is None
    decided = [d["decision"] for d in b.lua("return require('claude_context.sessions.plans').decided")]
    assert decided == ["revise", "approve"], decided

    b.nvim.command("ClaudeContext close")


def test_a_question_is_answered_in_neovim(make_bridge, claude, model_stub, world):
    """AskUserQuestion goes to vim.ui.select (here a stand-in that picks the second option);
    the answer reaches Claude's next request as the tool's result."""
    terminal = {"args": [], "env": stub_env(claude), "side": "bottom", "size": 40}
    b = make_bridge("nvim", setup_opts={"claude": {"cmd": str(claude.exe)}, "terminal": terminal, "handshake_timeout_ms": 15000})
    b.lua("vim.o.columns = 160; vim.o.lines = 50")
    b.lua(
        "_G.asked = {}; vim.ui.select = function(items, opts, on_choice)"
        " table.insert(_G.asked, opts.prompt); on_choice(items[2], 2) end"
    )
    b.nvim.command("ClaudeContext open")
    try:
        wait_until(lambda: re.search(READY, terminal_text(b)), WAIT * 2, 0.2, "the CLI prompt")
    except BaseException:
        print("terminal:\n" + terminal_text(b)[-3000:])
        raise
    question = {
        "question": "Which name should the parser get?",
        "header": "Name",
        "multiSelect": False,
        "options": [
            {"label": "reader", "description": "short"},
            {"label": "tokenizer", "description": "precise"},
        ],
    }
    model_stub.push({"tool_use": {"name": "AskUserQuestion", "input": {"questions": [question]}}}, {"text": "answered-8812"})
    before = len(model_stub.agent_requests())
    job = b.lua("return require('claude_context.terminal')._state.job")
    b.lua("vim.fn.chansend(..., 'ask me')", job)
    wait_until(lambda: "ask me" in terminal_text(b), WAIT, 0.2, "the typed prompt to show")
    b.lua("vim.fn.chansend(..., '\\r')", job)

    def answered():
        for r in model_stub.agent_requests()[before:]:
            for t in r.tool_results():
                return t
        return None

    try:
        result = wait_until(answered, WAIT * 2, 0.2, "the answer in Claude's next request")
    except BaseException:
        print("terminal:\n" + terminal_text(b)[-3000:])
        raise
    assert not result.get("is_error"), result
    assert "tokenizer" in block_text(result), result
    assert "Which name should the parser get?" in b.lua("return _G.asked[1]")
    wait_until(lambda: "answered-8812" in terminal_text(b), WAIT, 0.2, "Claude to go on")
    b.nvim.command("ClaudeContext close")
