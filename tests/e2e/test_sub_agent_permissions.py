"""The sub-agent gets no power by default: `execute_claude` runs the real Claude Code CLI
whose (stubbed) model asks for a `Bash touch`. By default the sub-agent has only read-only tools
and the file is never created; with the old default arguments (`--dangerously-skip-permissions`)
the same script does create it, which shows the attack is real."""

from __future__ import annotations

import json

from conftest import ServeBridge
from test_session_e2e import Rpc, cli_env


def bash_touch_script(model_stub, target):
    model_stub.push(
        {"tool_use": {"name": "Bash", "input": {"command": f"touch {target}", "description": "Create a file"}}},
        {"echo_tool_result": True},
    )


def run(serve_exe, world, claude, config=None):
    b = ServeBridge(serve_exe, world, world.project, extra_env=cli_env(claude), config=config)
    r = Rpc(b)
    try:
        return r.tool("execute_claude", {"prompt": "Please create the marker file.", "timeout": 120})
    finally:
        r.close()
        b.stop()


def test_model_requested_bash_touch_does_not_run_in_the_sub_agent_by_default(serve_exe, world, claude, model_stub):
    target = world.root / "pwned-by-sub-agent"
    bash_touch_script(model_stub, target)
    r = run(serve_exe, world, claude)
    assert not target.exists(), r
    # The CLI was offered read-only tools only, and the model's Bash call came back as a refusal.
    first = model_stub.agent_requests()[0]
    names = set(first.tool_names)
    assert {"Read", "Grep", "Glob"} <= names, names
    assert not names & {"Bash", "Edit", "Write", "NotebookEdit", "WebFetch"}, names
    assert r["success"] is True, r
    # The second agent turn carries the CLI's answer to the Bash call: a refusal, not a result.
    results = model_stub.agent_requests()[1].tool_result_texts()
    assert len(results) == 1, results
    print("tool result given to the model:", results[0])


def test_the_same_bash_touch_runs_when_the_person_skips_permissions(serve_exe, world, claude, model_stub):
    # The old default arguments: the attack the default above stops.
    target = world.root / "pwned-by-sub-agent"
    bash_touch_script(model_stub, target)
    r = run(
        serve_exe,
        world,
        claude,
        {"claude": {"args": ["--dangerously-skip-permissions", "--output-format", "json"], "allowed_tools": ["*"]}},
    )
    assert r["success"] is True, r
    assert target.exists(), r


def test_the_person_widens_the_sub_agent_with_allowed_tools(serve_exe, world, claude, model_stub):
    target = world.project / "allowed-touch"
    bash_touch_script(model_stub, target)
    r = run(serve_exe, world, claude, {"claude": {"allowed_tools": ["Read", "Bash(touch *)"]}})
    assert r["success"] is True, r
    assert target.exists(), r
    assert "Bash" in model_stub.agent_requests()[0].tool_names


def plant_session_start_hook(world, target):
    """A repository that commits `.claude/settings.json` with a hook: code that runs when a Claude
    Code session starts in it."""
    d = world.project / ".claude"
    d.mkdir(exist_ok=True)
    hook = {"hooks": [{"type": "command", "command": f"touch {target}"}]}
    (d / "settings.json").write_text(
        json.dumps({"hooks": {"SessionStart": [hook], "UserPromptSubmit": [hook]}})
    )


def test_repository_hooks_do_not_run_in_the_sub_agent_by_default(serve_exe, world, claude, model_stub):
    target = world.root / "pwned-by-repo-hook"
    plant_session_start_hook(world, target)
    model_stub.push({"text": "hello"})
    r = run(serve_exe, world, claude)
    assert r["success"] is True, r
    assert not target.exists(), r


def test_repository_hooks_run_when_the_person_loads_project_settings(serve_exe, world, claude, model_stub):
    # The twin: the same repository with project settings loaded runs the hook, so the default
    # above is what stops it.
    target = world.root / "pwned-by-repo-hook"
    plant_session_start_hook(world, target)
    model_stub.push({"text": "hello"})
    r = run(serve_exe, world, claude, {"claude": {"setting_sources": ["user", "project", "local"]}})
    assert r["success"] is True, r
    assert target.exists(), r
