"""Protocol tests from another process (Python `websockets`), against both bridges: the
stand-alone server and the real Neovim plugin. No CLI here."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from conftest import wait_until

AUTH = "x-claude-code-ide-authorization"
SUPPORTED = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]


def ws(bridge, token=None, headers=None, **kw):
    h = {AUTH: bridge.token if token is None else token}
    h.update(headers or {})
    # proxy=None: websockets >= 15 would otherwise honour a proxy from the environment.
    return connect(bridge.url, additional_headers=h, proxy=None, open_timeout=10, max_size=None, **kw)


class Rpc:
    """A tiny JSON-RPC client over one socket."""

    def __init__(self, conn):
        self.conn = conn
        self.next_id = 0

    def call(self, method, params=None, timeout=30):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.conn.send(json.dumps(msg))
        return self.recv(timeout)

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.conn.send(json.dumps(msg))

    def recv(self, timeout=30):
        return json.loads(self.conn.recv(timeout))

    def tool(self, name, args=None):
        return self.call("tools/call", {"name": name, "arguments": args or {}})


@pytest.fixture
def rpc(bridge):
    with ws(bridge) as c:
        yield Rpc(c)


# -- handshake --------------------------------------------------------------------------------


def test_handshake_without_token_is_refused(bridge):
    with pytest.raises(InvalidStatus) as e:
        connect(bridge.url, proxy=None, open_timeout=10)
    assert e.value.response.status_code == 401


def test_handshake_with_wrong_token_is_refused(bridge):
    wrong = ("0" if bridge.token[0] != "0" else "1") + bridge.token[1:]
    for t in (wrong, bridge.token[:-1], bridge.token + "0", "", bridge.token.upper() + "x"):
        with pytest.raises(InvalidStatus) as e:
            ws(bridge, token=t)
        assert e.value.response.status_code == 401, t


def test_handshake_with_origin_is_refused_even_with_the_token(bridge):
    for origin in ("http://localhost:3000", "null", "https://example.invalid"):
        with pytest.raises(InvalidStatus) as e:
            ws(bridge, origin=origin)
        assert e.value.response.status_code == 403, origin
    # And nothing of these attempts counts as a client.
    assert bridge.status()["clients"] == []


def test_handshake_offers_mcp_subprotocol(bridge):
    with ws(bridge, subprotocols=["mcp"]) as c:
        assert c.subprotocol == "mcp"
        assert Rpc(c).call("ping")["result"] == {}


# -- initialize and errors ----------------------------------------------------------------------


@pytest.mark.parametrize("version", SUPPORTED)
def test_initialize_echoes_supported_versions(rpc, version):
    r = rpc.call(
        "initialize",
        {"protocolVersion": version, "capabilities": {"roots": {}, "elicitation": {}}, "clientInfo": {"name": "pytest", "version": "1"}},
    )["result"]
    assert r["protocolVersion"] == version
    assert "tools" in r["capabilities"]
    assert r["serverInfo"]["name"]


def test_initialize_unknown_version_gets_latest(rpc, bridge):
    r = rpc.call("initialize", {"protocolVersion": "1999-01-01", "capabilities": {}, "clientInfo": {"name": "odd", "version": "0"}})
    assert r["result"]["protocolVersion"] == "2025-11-25"
    c = bridge.wait_client(lambda c: c.get("name") == "odd", what="the client in status")
    assert c["protocol_version"] == "2025-11-25"


def test_malformed_json_gets_parse_error_and_connection_goes_on(rpc):
    for bad in ("{", "not json", '{"jsonrpc": "2.0", "id": 1, "method": "ping"', "\u00ff\u00fe"):
        rpc.conn.send(bad)
        r = rpc.recv()
        assert r["error"]["code"] == -32700, bad
        assert r["id"] is None
    assert rpc.call("ping")["result"] == {}


def test_unknown_method(rpc):
    r = rpc.call("no/such/method")
    assert r["error"]["code"] == -32601
    assert "no/such/method" in r["error"]["message"]
    assert rpc.call("ping")["result"] == {}


def test_invalid_params(rpc):
    assert rpc.call("tools/call", {"arguments": {}})["error"]["code"] == -32602  # no name
    assert rpc.call("tools/call", {"name": 5})["error"]["code"] == -32602
    assert rpc.call("tools/call", {"name": "getWorkspaceFolders", "arguments": [1]})["error"]["code"] == -32602
    assert rpc.call("tools/call", [1, 2])["error"]["code"] == -32602
    r = rpc.tool("fs-read-file", {"path": 5})
    assert r["error"]["code"] == -32602, r
    r = rpc.tool("fs-read-file", {})
    assert r["error"]["code"] == -32602, r


def test_unknown_tool(rpc):
    r = rpc.tool("noSuchTool")
    assert r["error"]["code"] == -32602
    assert "noSuchTool" in r["error"]["message"]


def test_invalid_requests(rpc):
    rpc.conn.send(json.dumps({"id": 1, "method": "ping"}))  # no jsonrpc
    assert rpc.recv()["error"]["code"] == -32600
    rpc.conn.send("[]")
    assert rpc.recv()["error"]["code"] == -32600
    rpc.conn.send(json.dumps([{"jsonrpc": "2.0", "id": "a", "method": "ping"}, {"jsonrpc": "2.0", "id": "b", "method": "nope"}]))
    batch = {m["id"]: m for m in rpc.recv()}
    assert batch["a"]["result"] == {}
    assert batch["b"]["error"]["code"] == -32601


# -- tools ------------------------------------------------------------------------------------------


def test_tools_list_has_schemas(rpc):
    tools = {t["name"]: t for t in rpc.call("tools/list")["result"]["tools"]}
    for name in ("getWorkspaceFolders", "fs-get-project-info", "fs-read-file", "fs-list-directory", "fs-write-file"):
        assert name in tools, sorted(tools)
        assert tools[name]["inputSchema"]["type"] == "object"
        assert tools[name]["description"]
    for name in ("getWorkspaceFolders", "fs-get-project-info"):
        assert tools[name]["outputSchema"]["type"] == "object", tools[name]


# The formats JSON Schema 2020-12 defines: anything else is what Claude Code 2.1.197's
# `claude mcp list` printed an `unknown format` line for.
STANDARD_FORMATS = {
    "date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname", "ipv4", "ipv6",
    "uri", "uri-reference", "iri", "iri-reference", "uuid", "uri-template", "json-pointer",
    "relative-json-pointer", "regex",
}


def _formats(v, at=""):
    if isinstance(v, dict):
        if isinstance(v.get("format"), str):
            yield at, v["format"]
        for k, c in v.items():
            yield from _formats(c, f"{at}/{k}")
    elif isinstance(v, list):
        for i, c in enumerate(v):
            yield from _formats(c, f"{at}/{i}")


def test_every_tool_schema_is_valid_json_schema_with_standard_formats(rpc):
    """Each tool's inputSchema/outputSchema passes the JSON Schema 2020-12 meta-schema (the
    version MCP names), uses no format a validator does not know, and compiles."""
    from jsonschema import Draft202012Validator, FormatChecker

    tools = rpc.call("tools/list")["result"]["tools"]
    assert len(tools) > 20
    known = set(FormatChecker().checkers) | STANDARD_FORMATS
    problems = []
    for t in tools:
        for key in ("inputSchema", "outputSchema"):
            schema = t.get(key)
            if schema is None:
                continue
            for err in Draft202012Validator(Draft202012Validator.META_SCHEMA).iter_errors(schema):
                problems.append(f"{t['name']} {key}: {err.message}")
            problems += [f"{t['name']} {key}{at}: unknown format {f!r}" for at, f in _formats(schema) if f not in known]
            Draft202012Validator(schema, format_checker=FormatChecker())  # compiles
    assert problems == [], "\n".join(problems)


def test_tool_results_have_text_and_structured_content(rpc, bridge, world):
    for name in ("getWorkspaceFolders", "fs-get-project-info"):
        r = rpc.tool(name)["result"]
        assert r.get("isError") in (None, False), r
        assert r["content"][0]["type"] == "text"
        assert json.loads(r["content"][0]["text"]) == r["structuredContent"]
    wf = rpc.tool("getWorkspaceFolders")["result"]["structuredContent"]
    assert wf["success"] is True
    assert wf["rootPath"] == str(world.project)
    assert wf["folders"][0] == {"name": world.project.name, "uri": world.project.as_uri(), "path": str(world.project)}
    pi = rpc.tool("fs-get-project-info")["result"]["structuredContent"]
    assert pi["cwd"] == str(world.project)
    assert pi["project_root"] == str(world.project)
    assert pi["project_root_source"] == "cwd"


def test_tool_aliases(rpc, world):
    for alias in ("fs_get_project_info", "fs.project-info", "project-info"):
        r = rpc.tool(alias)["result"]
        assert r["structuredContent"]["cwd"] == str(world.project), alias


def test_failing_tool_is_an_error_result(rpc, world):
    r = rpc.tool("fs-read-file", {"path": "no-such-file.txt"})["result"]
    assert r["isError"] is True
    assert "no-such-file.txt" in r["content"][0]["text"]
    r = rpc.tool("fs-read-file", {"path": "../../etc/passwd"})["result"]
    assert r["isError"] is True
    assert str(world.project) in r["content"][0]["text"]  # names the root it stays inside


def test_files_round_trip_inside_the_root(rpc, world):
    r = rpc.tool("fs-write-file", {"path": "sub/hello.txt", "content": "héllo\n"})["result"]
    assert not r.get("isError"), r
    assert (world.project / "sub/hello.txt").read_text() == "héllo\n"
    r = rpc.tool("fs-read-file", {"path": "sub/hello.txt"})["result"]
    assert "héllo" in r["content"][0]["text"]
    r = rpc.tool("fs-list-directory", {"path": "sub"})["result"]
    assert "hello.txt" in r["content"][0]["text"]


def test_cwd_change_reaches_tools_and_lock_file(rpc, bridge, world):
    other = world.root / "other dir ü"
    other.mkdir()
    bridge.cd(other)
    bridge.wait_folders(other)
    wf = rpc.tool("getWorkspaceFolders")["result"]["structuredContent"]
    assert wf["rootPath"] == str(other)
    assert wf["folders"][0]["uri"] == other.as_uri()  # percent-encoded
    wait_until(
        lambda: json.loads(bridge.lock_file.read_text())["workspaceFolders"][:1] == [str(other)],
        what="the lock file to follow the cwd",
    )


# -- clients ------------------------------------------------------------------------------------------


def test_several_clients_at_once(bridge, world):
    n = 6
    conns = [ws(bridge) for _ in range(n)]
    try:
        rpcs = [Rpc(c) for c in conns]
        for i, r in enumerate(rpcs):
            r.call("initialize", {"protocolVersion": SUPPORTED[i % 4], "capabilities": {}, "clientInfo": {"name": f"c{i}", "version": "1"}})
        errors = []

        def hammer(r, i):
            try:
                for k in range(30):
                    res = r.tool("getWorkspaceFolders")
                    assert res["id"] == r.next_id
                    assert res["result"]["structuredContent"]["rootPath"] == str(world.project)
            except Exception as e:  # reported below
                errors.append((i, repr(e)))

        threads = [threading.Thread(target=hammer, args=(r, i)) for i, r in enumerate(rpcs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert not errors
        st = bridge.status()
        names = sorted(c["name"] for c in st["clients"])
        assert names == sorted(f"c{i}" for i in range(n))
        # One client leaving does not disturb the others.
        conns[0].close()
        bridge.wait_client(lambda c: True, what="clients")
        wait_until(lambda: len(bridge.status()["clients"]) == n - 1, what="a client to leave")
        assert rpcs[1].call("ping")["result"] == {}
    finally:
        for c in conns:
            c.close()


def test_pipelined_requests_all_answered(rpc):
    n = 200
    for i in range(n):
        rpc.conn.send(json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "getWorkspaceFolders"}}))
    ids = sorted(rpc.recv()["id"] for _ in range(n))
    assert ids == list(range(n))


def test_status_records_ide_connected_and_tools_list(rpc, bridge):
    rpc.call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "claude-code", "version": "x"}})
    rpc.notify("notifications/initialized")
    rpc.notify("ide_connected", {"pid": 31337})
    c = bridge.wait_client(lambda c: c.get("ide_connected_pid") == 31337, what="ide_connected in status")
    assert not c["tools_listed"]
    rpc.call("tools/list")
    bridge.wait_client(lambda c: c.get("tools_listed"), what="tools_listed in status")


# -- lock file --------------------------------------------------------------------------------------------


def test_lock_file(bridge, world):
    lf = bridge.lock_file
    assert lf.parent == world.config_dir / "ide"
    assert lf.name == f"{bridge.port}.lock"
    assert stat.S_IMODE(lf.stat().st_mode) == 0o600
    assert stat.S_IMODE(lf.parent.stat().st_mode) == 0o700
    data = json.loads(lf.read_text())
    assert set(data) >= {"pid", "workspaceFolders", "ideName", "transport", "authToken"}
    assert data["pid"] == bridge.pid
    assert data["workspaceFolders"] == [str(world.project)]
    # Neovim names itself after the project and its pid (two in one directory differ in /ide);
    # the stand-alone server keeps the plain default. Both mark the file as Neovim's.
    assert data["ideName"] == (f"Neovim ({world.project.name}, pid {bridge.pid})" if bridge.kind == "nvim" else "Neovim")
    assert data["ideKind"] == "Neovim"
    assert data["transport"] == "ws"
    assert data["authToken"] == bridge.token
    assert len(data["authToken"]) == 32 and int(data["authToken"], 16) >= 0  # 128 bits, hex
    leftovers = [p.name for p in lf.parent.iterdir() if p.name != lf.name]
    assert leftovers == []  # the atomic write left no temp file
    with ws(bridge) as c:
        Rpc(c).call("ping")
    bridge.stop()
    wait_until(lambda: not lf.exists(), 30, what="the lock file to be removed")


def test_two_bridges_at_once(bridge, make_bridge, world):
    other = world.root / "second"
    other.mkdir()
    b2 = make_bridge(bridge.kind, cwd=other)
    assert b2.port != bridge.port
    assert b2.token != bridge.token
    locks = sorted(p.name for p in (world.config_dir / "ide").iterdir())
    assert locks == sorted([f"{bridge.port}.lock", f"{b2.port}.lock"])
    with ws(b2) as c:
        r = Rpc(c).tool("getWorkspaceFolders")["result"]["structuredContent"]
        assert r["rootPath"] == str(other)
    with pytest.raises(InvalidStatus):
        ws(b2, token=bridge.token)  # tokens are per bridge


def test_stale_lock_file_of_dead_editor_is_cleaned(make_bridge, world):
    ide = world.config_dir / "ide"
    ide.mkdir(mode=0o700, exist_ok=True)
    # A pid that cannot be alive: above the kernel's pid_max.
    stale = ide / "12345.lock"
    stale.write_text(json.dumps({"pid": 2**22 + 7, "workspaceFolders": ["/x"], "ideName": "Neovim", "transport": "ws", "authToken": "0" * 32}))
    os.chmod(stale, 0o600)
    b = make_bridge("serve")
    assert not stale.exists()
    assert b.lock_file.exists()


@pytest.mark.parametrize("kind", ["nvim"])
def test_nvim_stop_command_removes_lock_file(make_bridge, kind):
    b = make_bridge(kind)
    lf = b.lock_file
    assert lf.exists()
    b.nvim.command("ClaudeContext stop")
    wait_until(lambda: not lf.exists(), 30, what="the lock file to be removed by :ClaudeContext stop")
    assert b.lua("return require('claude_context').status()") is None
    b.nvim.command("ClaudeContext start")
    st = b.status()
    assert st and st["running"]
    assert Path(st["lock_file"]).exists()
