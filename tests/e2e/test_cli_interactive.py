"""End to end, interactive: the real Claude Code CLI on a pseudo-terminal finds the editor through
its lock file (as a terminal opened inside Neovim would: CLAUDE_CODE_SSE_PORT +
ENABLE_IDE_INTEGRATION), connects over WebSocket with the token, sends `ide_connected` with its
pid and asks for `tools/list`; the bridge's status shows both."""

from __future__ import annotations

import json
import re
import time

import pytest

from conftest import WAIT, wait_until

# The CLI's input prompt is ready (menus of first-run dialogs also use "❯", so not that).
# The CLI waits at its prompt: 2.1.197 shows "? for shortcuts" under it; 2.1.330 in its auto
# permission mode shows the mode and "(shift+tab to cycle)" instead.
READY = r"\? for shortcuts|shift\+tab to cycle"


def ide_env(bridge):
    return {"CLAUDE_CODE_SSE_PORT": bridge.port, "ENABLE_IDE_INTEGRATION": "true"}


def wait_connected(bridge, cli):
    def connected(c):
        return c.get("ide_connected_pid") == cli.pid and c.get("tools_listed")

    try:
        return bridge.wait_client(connected, timeout=WAIT * 2, what="the CLI's ide_connected and tools/list")
    except BaseException:
        print("CLI screen:\n" + cli.text()[-4000:])
        print("bridge status:", bridge.status())
        raise


def test_cli_discovers_the_editor_through_the_lock_file(bridge, claude, model_stub, world):
    cli = claude.interactive(env=ide_env(bridge), cwd=world.project)
    c = wait_connected(bridge, cli)
    assert c["name"] == "claude-code"
    assert c["version"] and c["version"].split(".")[0].isdigit()
    assert c["protocol_version"] == "2025-11-25"
    assert len(bridge.status()["clients"]) == 1  # one IDE connection, nothing else

    # A user turn goes to the stub and its answer reaches the screen.
    model_stub.push({"text": "stub-answer-4711"})
    assert cli.wait_for_text(READY, WAIT), cli.text()[-3000:]
    cli.write("say hi")
    wait_until(lambda: "say hi" in cli.text(), WAIT, what="the prompt to echo")
    cli.write("\r")
    req = model_stub.wait_for(lambda r: r.is_agent, WAIT)
    assert req is not None, cli.text()[-3000:]
    assert "say hi" in req.all_text()
    assert cli.wait_for_text("stub-answer-4711", WAIT), cli.text()[-3000:]
    # Side requests (2.1.197 asks for a session title as JSON) got schema-shaped answers and left
    # the script alone.
    for side in [r for r in model_stub.requests if not r.is_agent and r.body.get("output_config")]:
        answer = json.loads(side.response["content"][0]["text"])
        assert isinstance(answer, dict) and answer, answer

    # The CLI going away is seen by the bridge.
    cli.kill()
    wait_until(lambda: not bridge.status()["clients"], WAIT, what="the client to disconnect")


# How a CLI started outside Neovim's terminal is told to connect by itself (2.1.197 connects at
# start when any of these is set; without one, or with only ENABLE_IDE_INTEGRATION=true, it waits
# for /ide).
AUTO = {
    "config": ({"autoConnectIde": True}, {}, ()),
    "env": ({}, {"CLAUDE_CODE_AUTO_CONNECT_IDE": "true"}, ()),
    "flag": ({}, {}, ("--ide",)),
}


@pytest.mark.parametrize("kind,way", [("serve", "config"), ("serve", "env"), ("nvim", "flag"), ("nvim", "config")])
def test_cli_auto_connects_by_cwd_after_cd(make_bridge, claude, world, kind, way):
    """Without CLAUDE_CODE_SSE_PORT the CLI picks the editor whose lock file lists a workspace
    folder containing its cwd. After `:cd` the lock file must list the new directory, and only a
    CLI inside it connects."""
    bridge = make_bridge(kind)
    config, env, args = AUTO[way]
    world.set_config(**config)
    other = world.root / "moved here"
    (other / "sub").mkdir(parents=True)
    world.trust(other, other / "sub")
    bridge.cd(other)
    wait_until(
        lambda: json.loads(bridge.lock_file.read_text())["workspaceFolders"] == [str(other)],
        what="the lock file to list the new cwd",
    )
    outside = claude.interactive(args=args, env=env, cwd=world.project)  # the old cwd: no longer listed
    assert outside.wait_for_text(READY, WAIT), outside.text()[-3000:]
    inside = claude.interactive(args=args, env=env, cwd=other / "sub")
    c = wait_connected(bridge, inside)
    assert c["name"] == "claude-code"
    # The outside CLI had at least as long as the inside one to connect, and did not.
    assert [c["ide_connected_pid"] for c in bridge.status()["clients"]] == [inside.pid]


_CURSOR = re.compile(r"❯\s*(?:\d\.?\s*)?([A-Za-z]+)")


def menu_pick(cli, label: str, key: str, since: int) -> None:
    """Moves a menu's cursor onto `label` with `key`, then presses Enter.

    Keys sent while Ink is still mounting the menu are lost, and the screen is redrawn in parts,
    so: press, look at where the cursor was drawn last, press again until it is on `label`."""
    deadline = time.monotonic() + WAIT
    while True:
        found = _CURSOR.findall(cli.text()[since:])
        if found and found[-1] == label:
            break
        assert time.monotonic() < deadline, f"menu cursor never reached {label!r}:\n" + cli.text()[-3000:]
        mark = len(cli.text())
        cli.write(key)
        cli.wait_for_text(_CURSOR.pattern, 2.0, since=mark)
    cli.write("\r")


def test_ide_command_lists_neovim_and_connects(bridge, claude, world):
    """A CLI started without any hint connects through `/ide` (menu of the lock files it found)."""
    cli = claude.interactive(cwd=world.project)
    assert cli.wait_for_text(READY, WAIT), cli.text()[-3000:]
    cli.write("/ide")
    assert cli.wait_for_text("Manage IDE integrations", WAIT), cli.text()[-3000:]
    # Let the command menu settle: an Enter that comes first sends "/ide" to the model (2.1.330).
    time.sleep(0.5)
    mark = len(cli.text())
    cli.write("\r")
    # 2.1.197: "Select IDE" with "1. Neovim" and "2. None ✔" (the cursor on None); 2.1.330:
    # "Connect to an IDE" with "Neovim" and "✔ None". A Neovim names itself after its project
    # and pid, so two in one directory can be told apart.
    menu = r"(?:Select IDE|Connect to an IDE)[\s\S]*?(?:1\.\s*)?Neovim"
    assert cli.wait_for_text(menu, WAIT, since=mark), cli.text()[-3000:]
    if bridge.kind == "nvim":
        shown = re.escape(f"Neovim ({world.project.name}, pid {bridge.pid})")
        assert cli.wait_for_text(shown, WAIT, since=mark), cli.text()[-3000:]
    assert bridge.status()["clients"] == []
    menu_pick(cli, "Neovim", "\x1b[A", since=mark)  # up
    # Then it offers to turn on auto-connect (answered No to leave the config alone): 2.1.197
    # "enable auto-connect to IDE?", 2.1.330 "…your IDE automatically?" (cursor already on No).
    # An Enter sent while Ink is still mounting the question is lost: answer again until connected.
    deadline = time.monotonic() + WAIT
    answered = None
    while time.monotonic() < deadline:
        if any(c.get("ide_connected_pid") == cli.pid for c in bridge.status()["clients"]):
            break
        m = cli.wait_for_text(r"enable auto-connect to IDE\?|your IDE automatically\?", 0.5, since=mark)
        if m and (answered is None or time.monotonic() - answered > 3):
            menu_pick(cli, "No", "\x1b[B", since=m.start())  # down
            answered = time.monotonic()
    try:
        wait_connected(bridge, cli)
    except BaseException:
        print("CLI screen:\n" + cli.text()[-3000:])
        raise
    assert not json.loads((world.config_dir / ".claude.json").read_text()).get("autoConnectIde")
