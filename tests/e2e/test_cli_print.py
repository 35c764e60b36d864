"""End to end in print mode: the real Claude Code CLI (`claude -p`) reaches the bridge through
`--mcp-config` (type ws + the token header) because the loopback model stub asks it to call the
bridge's tools; the test reads the `tool_result`s the CLI sent back to the stub."""

from __future__ import annotations

import json
import re
import subprocess

from conftest import CLI_TIMEOUT, REPO, wait_until

WF = "mcp__nvim__getWorkspaceFolders"
PI = "mcp__nvim__fs-get-project-info"


def tool_json(req, tool_use_id=None):
    """The JSON inside the (single) tool_result of a request's last user message."""
    results = req.tool_results()
    assert len(results) == 1, results
    if tool_use_id:
        assert results[0]["tool_use_id"] == tool_use_id
    assert not results[0].get("is_error"), results[0]
    (text,) = req.tool_result_texts()
    return json.loads(text)


def used_id(req):
    (block,) = [b for b in req.response["content"] if b["type"] == "tool_use"]
    return block["id"]


def test_tool_results_name_the_editor_cwd_and_follow_cd(bridge, claude, model_stub, world):
    model_stub.push(
        {"tool_use": {"name": WF, "input": {}}},
        {"tool_use": {"name": PI, "input": {}}},
        {"echo_tool_result": True},
    )
    r = claude.run("Which folder is the editor in?", bridge)
    out = r.json
    assert r.returncode == 0 and not out["is_error"], out
    reqs = model_stub.agent_requests()
    assert len(reqs) == 3, [q.path for q in reqs]
    assert WF in reqs[0].tool_names and PI in reqs[0].tool_names, reqs[0].tool_names

    wf = tool_json(reqs[1], used_id(reqs[0]))
    assert wf["success"] is True
    assert wf["rootPath"] == str(world.project)
    assert wf["folders"][0] == {"name": world.project.name, "uri": world.project.as_uri(), "path": str(world.project)}

    pi = tool_json(reqs[2], used_id(reqs[1]))
    assert pi["cwd"] == str(world.project)
    assert pi["project_root"] == str(world.project)
    assert pi["project_root_source"] == "cwd"
    assert pi["relative_cwd"] == "."
    # The stub's last answer echoed the tool result; the CLI printed it as the result.
    assert str(world.project) in out["result"]
    session = out["session_id"]

    # The editor changes directory; the same conversation asks again.
    other = world.root / "other project ü"
    other.mkdir()
    (other / ".git").mkdir()
    world.trust(other)
    bridge.cd(other)
    bridge.wait_folders(other)
    model_stub.reset()
    model_stub.push(
        {"tool_use": {"name": WF, "input": {}}},
        {"tool_use": {"name": PI, "input": {}}},
        {"echo_tool_result": True},
    )
    r = claude.run("And now?", bridge, resume=session)
    out2 = r.json
    assert r.returncode == 0 and not out2["is_error"], out2
    assert out2["session_id"]  # (a resumed print-mode run may get a new id; the history is what counts)
    reqs = model_stub.agent_requests()
    assert len(reqs) == 3
    # --resume: the first conversation's tool results travel along.
    history = reqs[0].all_text()
    assert "Which folder is the editor in?" in history
    assert json.dumps(str(world.project))[1:-1] in history
    wf = tool_json(reqs[1], used_id(reqs[0]))
    assert wf["rootPath"] == str(other)
    assert wf["folders"][0]["uri"] == other.as_uri()
    pi = tool_json(reqs[2], used_id(reqs[1]))
    assert pi["cwd"] == str(other)
    assert pi["project_root"] == str(other)
    assert pi["project_root_source"] == "git"


def test_tool_error_reaches_the_model(bridge, claude, model_stub, world):
    secret = world.root / "outside.txt"
    secret.write_text("do not read")
    model_stub.push(
        {"tool_use": {"name": "mcp__nvim__fs-read-file", "input": {"path": "../outside.txt"}}},
        {"echo_tool_result": True},
    )
    r = claude.run("Read the file outside", bridge)
    assert r.returncode == 0, r.stderr
    reqs = model_stub.agent_requests()
    assert len(reqs) == 2
    (res,) = reqs[1].tool_results()
    assert res.get("is_error") is True, res
    (text,) = reqs[1].tool_result_texts()
    assert "do not read" not in text
    assert str(world.project) in text  # the message names the root it must stay inside


def test_parallel_tool_calls_in_one_turn(bridge, claude, model_stub, world):
    (world.project / "a.txt").write_text("alpha\n")
    model_stub.push(
        {
            "text": "Looking at both.",
            "tool_use": [
                {"name": WF, "input": {}},
                {"name": "mcp__nvim__fs-read-file", "input": {"path": "a.txt"}},
                {"name": "mcp__nvim__fs-list-directory", "input": {"path": "."}},
            ],
        },
        {"echo_tool_result": True},
    )
    r = claude.run("Look around", bridge)
    assert r.returncode == 0 and not r.json["is_error"], r.stdout
    reqs = model_stub.agent_requests()
    assert len(reqs) == 2
    ids = [b["id"] for b in reqs[0].response["content"] if b["type"] == "tool_use"]
    results = {b["tool_use_id"]: b for b in reqs[1].tool_results()}
    assert sorted(results) == sorted(ids)
    texts = reqs[1].tool_result_texts()
    assert any(str(world.project) in t for t in texts)
    assert any("alpha" in t for t in texts)
    assert any("a.txt" in t for t in texts)


def test_cli_side_requests_do_not_consume_the_script(bridge, claude, model_stub):
    """Whatever the CLI sends besides its agent loop (titles, quota, summaries) is answered by the
    stub's side answers, so scripted turns land where the test expects them."""
    model_stub.push({"tool_use": {"name": WF, "input": {}}}, {"text": "done-marker"})
    r = claude.run("hi", bridge)
    assert r.json["result"] == "done-marker"
    wait_until(lambda: not model_stub.script, 5, what="the script to be consumed")
    side = [q for q in model_stub.requests if not q.is_agent]
    for q in side:
        assert not q.tool_results()


def test_mcp_list_connects_without_unknown_format_warnings(serve_bridge, claude, world):
    """`claude mcp list` with the plugin registered as `claude mcp add` does it (the
    claude-context-mcp relay, which finds the bridge by its lock file): it connects, and prints no
    `unknown format "uint64" ignored in schema…` line. 2.1.197 printed one per integer field of
    our output schemas while they carried schemars' formats (its `mcp list` shows nothing at all
    for a ws server, hence the relay)."""
    relay = REPO / "lib/claude-context-mcp"
    assert relay.exists(), f"{relay} is missing: run `make build`"
    env = claude.env()
    run = lambda *a: subprocess.run(  # noqa: E731
        [str(claude.exe), "mcp", *a], cwd=world.project, env=env, capture_output=True, text=True, timeout=CLI_TIMEOUT
    )
    added = run("add", "claude-context", "--", str(relay))
    assert added.returncode == 0, added.stdout + added.stderr
    p = run("list")
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    assert re.search(r"claude-context: .*claude-context-mcp\s+- . Connected", out), out
    assert "unknown format" not in out, out
