"""Neither side waits, in a real TUI Neovim on a pseudo-terminal: the plugin's own
commands raise no hit-enter prompt, and the read-only IDE tools answer over the WebSocket while
the person sits at one. No CLI here: the tools are called by a Python WebSocket client.

The TUI is needed: a headless Neovim never shows a hit-enter prompt. Neovim is driven over its
--listen socket with the API's *fast* methods only (`nvim_get_mode`, `nvim_input`), which are
answered even at the prompt; anything else (exec_lua) is sent only when no prompt is up.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from websockets.sync.client import connect

from conftest import NVIM, REPO, attach_started, wait_until
from ptyproc import PtyProcess

AUTH = "x-claude-code-ide-authorization"
ROWS, COLS = 24, 100


class Tui:
    """A TUI Neovim (24×100) on a pty with the plugin set up; `nvim` is a pynvim session on its
    --listen socket."""

    def __init__(self, world, setup_opts=None):
        self.world = world
        self.sock = world.root / "tui.sock"
        self.log_file = world.root / "claude-context.log"
        env = world.base_env()
        native = os.environ.get("CLAUDE_CONTEXT_NATIVE")
        if native:
            env["CLAUDE_CONTEXT_NATIVE"] = native
        self.pty = PtyProcess(
            [str(NVIM), "--clean", "-u", str(REPO / "tests/minimal_init.lua"), "--listen", str(self.sock)],
            env=env,
            cwd=str(world.project),
            rows=ROWS,
            cols=COLS,
        )
        world.procs.ptys.append(self.pty)
        wait_until(lambda: self.sock.exists() or not self.pty.alive(), 30, what="nvim's socket")
        self.nvim = attach_started(self.sock, self.pty.alive)
        opts = {"log_file": str(self.log_file), "log_level": "debug"}
        opts.update(setup_opts or {})
        err = self.nvim.exec_lua(
            """
            local ok, err = pcall(require('claude_context').setup, ...)
            if not ok then return tostring(err) end
            if not require('claude_context').status() then return 'the bridge is not running' end
            """,
            opts,
        )
        if err:
            pytest.fail(f"setup() failed in the TUI Neovim (run `make build`?): {err}")
        st = self.nvim.exec_lua("return require('claude_context').status()")
        self.port = st["port"]
        self.token = json.loads(Path(st["lock_file"]).read_text())["authToken"]

    def mode(self) -> dict:
        return self.nvim.request("nvim_get_mode")

    def keys(self, keys: str) -> None:
        self.nvim.request("nvim_input", keys)

    def raise_prompt(self) -> None:
        """Raises a hit-enter prompt the way a person would (`:echo` of four lines)."""
        self.keys(':echo "a\\nb\\nc\\nd"<CR>')
        wait_until(lambda: self.mode()["blocking"], 10, what="the hit-enter prompt")
        assert self.mode()["mode"] == "r"

    def dismiss(self) -> None:
        self.keys("<CR>")
        wait_until(lambda: not self.mode()["blocking"], 10, what="the prompt to go away")

    def lua(self, code: str, *args):
        assert not self.mode()["blocking"], "exec_lua would wait at the prompt"
        return self.nvim.exec_lua(code, *args)

    def ws(self):
        return connect(
            f"ws://127.0.0.1:{self.port}",
            additional_headers={AUTH: self.token},
            proxy=None,
            open_timeout=10,
            max_size=None,
        )

    def stop(self) -> None:
        try:
            if self.mode()["blocking"]:
                self.dismiss()
            self.nvim.command("qa!")
        except Exception:
            pass
        self.pty.kill()


@pytest.fixture
def tui(world):
    t = Tui(world)
    yield t
    t.stop()


class Rpc:
    """JSON-RPC over one WebSocket; `tool` returns the CallToolResult (or raises on an error)."""

    def __init__(self, conn):
        self.conn = conn
        self.next_id = 0

    def call(self, method, params=None, timeout=30.0):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.conn.send(json.dumps(msg))
        while True:
            m = json.loads(self.conn.recv(timeout))
            if m.get("id") == self.next_id:
                return m

    def tool(self, name, args=None, timeout=30.0):
        m = self.call("tools/call", {"name": name, "arguments": args or {}}, timeout)
        assert "result" in m, m
        return m["result"]

    def tool_json(self, name, args=None, timeout=30.0):
        r = self.tool(name, args, timeout)
        assert not r.get("isError"), r
        return json.loads(r["content"][0]["text"])


# -- the plugin's own commands -----------------------------------------------------------------

COMMANDS = ["status", "info", "decision", "session", "mcp-command", ""]


@pytest.mark.parametrize("cmd", COMMANDS)
def test_commands_cause_no_hit_enter_prompt(tui, cmd):
    """Each multi-line command shows its output in a floating window (`q` closes it); Neovim is
    never left waiting at "Press ENTER"."""
    if cmd == "decision":
        # With an issue defined the status has many lines (without one it is a single line).
        tui.lua("require('claude_context').call_tool_sync('define_issue', {title = 'DB', description = 'which DB'})")
    tui.keys(f":ClaudeContext {cmd}<CR>".replace("  ", " "))

    def shown():
        m = tui.mode()
        if m["blocking"]:
            return "prompt"
        win = tui.nvim.exec_lua("local o = require('claude_context.util.output') return o.win or false")
        return win and "window"

    what = wait_until(shown, 20, what=f":ClaudeContext {cmd} to show something")
    assert what == "window", f":ClaudeContext {cmd} raised a hit-enter prompt"
    text = tui.lua("return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\\n')")
    assert text.strip(), "the window shows the output"
    assert tui.lua("return vim.api.nvim_win_get_config(0).relative") == "editor"
    tui.keys("q")
    wait_until(lambda: tui.lua("return vim.api.nvim_win_get_config(0).relative") == "", 10, what="q to close it")
    assert not tui.mode()["blocking"]


# -- read-only tools at a hit-enter prompt -----------------------------------------------------


def test_read_only_tools_answer_at_a_hit_enter_prompt(tui, world):
    """Claude Code's per-turn calls and the other read-only IDE tools answer from the bridge's
    snapshot while Neovim waits at "Press ENTER" (none of them needs the main thread)."""
    a, b = world.project / "a.txt", world.project / "b é.txt"
    a.write_text("one\ntwo\n")
    b.write_text("x\n")
    tui.lua(
        """
        local a, b = ...
        vim.cmd.edit(vim.fn.fnameescape(b))
        vim.api.nvim_buf_set_lines(0, 0, 0, false, { "new" })
        vim.cmd.edit(vim.fn.fnameescape(a))
        local ns = vim.api.nvim_create_namespace("nowait-test")
        vim.diagnostic.set(ns, 0, {
          { lnum = 1, col = 0, end_col = 3, message = "bad two", severity = vim.diagnostic.severity.WARN, source = "t" },
        })
        vim.api.nvim_win_set_cursor(0, { 2, 1 })
        require("claude_context.ide.selection").flush()
        """,
        str(a),
        str(b),
    )
    tui.raise_prompt()
    with tui.ws() as c:
        rpc = Rpc(c)
        # Bounded by the recv timeout: without the snapshot nothing answers until Enter.
        r = rpc.tool("closeAllDiffTabs", timeout=10)
        assert r["content"][0]["text"] == "CLOSED_0_DIFF_TABS"
        diags = rpc.tool_json("getDiagnostics", timeout=10)
        assert [d["uri"] for d in diags] == [f"file://{a}"]
        assert diags[0]["diagnostics"][0]["message"] == "bad two"
        assert diags[0]["diagnostics"][0]["severity"] == "Warning"
        assert diags[0]["diagnostics"][0]["range"]["end"] == {"line": 1, "character": 3}
        one = rpc.tool_json("getDiagnostics", {"uri": f"file://{a}"}, timeout=10)
        assert one[0]["uri"] == f"file://{a}" and len(one[0]["diagnostics"]) == 1
        tabs = {t["fileName"]: t for t in rpc.tool_json("getOpenEditors", timeout=10)["tabs"]}
        assert set(tabs) == {str(a), str(b)}
        assert tabs[str(a)]["isActive"] and not tabs[str(b)]["isActive"]
        assert tabs[str(b)]["isDirty"] and tabs[str(b)]["lineCount"] == 2
        assert tabs[str(a)]["languageId"] == "text" or tabs[str(a)]["languageId"] == "plaintext"
        dirty = rpc.tool_json("checkDocumentDirty", {"filePath": str(b)}, timeout=10)
        assert dirty == {"success": True, "filePath": str(b), "isDirty": True, "isUntitled": False}
        rel = rpc.tool_json("checkDocumentDirty", {"filePath": "a.txt"}, timeout=10)
        assert rel["success"] and rel["isDirty"] is False
        gone = rpc.tool_json("checkDocumentDirty", {"filePath": str(world.project / "nope")}, timeout=10)
        assert gone == {"success": False, "message": f"Document not open: {world.project / 'nope'}"}
        sel = rpc.tool_json("getLatestSelection", timeout=10)
        assert sel["success"] and sel["filePath"] == str(a)
        assert sel["selection"]["start"] == {"line": 1, "character": 1}
        folders = rpc.tool_json("getWorkspaceFolders", timeout=10)
        assert folders["rootPath"] == str(world.project)
    assert tui.mode()["blocking"], "the prompt was up all along"
    tui.dismiss()


def test_a_main_thread_tool_at_a_prompt_says_busy_and_a_retry_works(world):
    """openFile needs the main thread: at a prompt it answers after editor_wait_ms with an error
    that says why (and the log has it), does nothing later, and works once the prompt is gone."""
    t = Tui(world, {"editor_wait_ms": 300})
    try:
        c_file = world.project / "c.txt"
        c_file.write_text("c\n")
        t.raise_prompt()
        with t.ws() as c:
            rpc = Rpc(c)
            r = rpc.tool("openFile", {"filePath": str(c_file)}, timeout=20)
            assert r["isError"], r
            assert "Neovim is busy" in r["content"][0]["text"]
            assert "openFile" in r["content"][0]["text"]
            t.dismiss()
            # The abandoned request never runs: the file was not opened behind the person's back.
            time.sleep(0.5)
            assert t.lua("return vim.fn.bufnr(...)", str(c_file)) == -1
            r = rpc.tool("openFile", {"filePath": str(c_file)}, timeout=20)
            assert not r.get("isError"), r
            assert t.lua("return vim.api.nvim_buf_get_name(0)") == str(c_file)
        log = t.log_file.read_text()
        assert "could not start a request in time" in log and "openFile" in log
    finally:
        t.stop()


# -- trace logging -----------------------------------------------------------------------------


@pytest.mark.parametrize("level", ["trace", "debug"])
def test_trace_level_logs_each_request(make_bridge, level):
    """log_level = "trace" logs one line per request: method, tool, client, duration; below
    trace there is none."""
    b = make_bridge("nvim", setup_opts={"log_level": level})
    with connect(b.url, additional_headers={AUTH: b.token}, proxy=None, open_timeout=10) as c:
        rpc = Rpc(c)
        rpc.call("tools/list")
        rpc.tool("getWorkspaceFolders")
        rpc.call("tools/call", {"name": "not-a-tool-s3cr3t", "arguments": {}})
        rpc.call("s3cr3t-method")
    b.lua("require('claude_context').call_tool_sync('fs-get-project-info', {})")
    log = b.log_file.read_text()
    lines = [l for l in log.splitlines() if " request " in l and "ms=" in l]
    if level != "trace":
        assert lines == [], lines
        return
    ws_tool = [l for l in lines if "tool=getWorkspaceFolders" in l]
    assert ws_tool and "method=tools/call" in ws_tool[0] and "client=" in ws_tool[0], "\n".join(lines)
    assert any("method=tools/list" in l for l in lines), lines
    assert any("tool=fs-get-project-info" in l and "client=lua" in l for l in lines), lines
    # Names a client made up are not logged (it could send anything, even a secret).
    assert "s3cr3t" not in log
    assert any("tool=(unknown tool)" in l for l in lines) and any("method=(unknown method)" in l for l in lines), lines
