"""End to end for people arriving from claudecode.nvim, with the real Claude Code CLI:

a second live lock file for the same project (as claudecode.nvim, installed beside this plugin,
writes it) sits in the CLI's config dir, and `autoConnectIde` makes the CLI look for an editor
by its folder: `:ClaudeContext open`, set up with claudecode.nvim's own option table, still
connects its terminal's CLI to this Neovim (the terminal names the bridge's port), never to the
decoy; setup() said once that there are two bridges.
"""

from __future__ import annotations

import json
import os
import socket
import threading

from conftest import WAIT, wait_until
from test_terminal_relay import descends_from, stub_env, terminal_text


class Decoy:
    """A listener on loopback that only counts the connections it gets (a bridge that is not ours)."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.done = False
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.done:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self.done = True
        self.thread.join(2)
        self.sock.close()


def write_decoy_lock(world, port: int) -> None:
    """The lock file claudecode.nvim writes, for the project, its editor alive (this process)."""
    ide = world.config_dir / "ide"
    ide.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(ide, 0o700)
    lock = ide / f"{port}.lock"
    lock.write_text(json.dumps({"pid": os.getpid(), "workspaceFolders": [str(world.project)], "ideName": "Neovim", "transport": "ws", "authToken": "decoy-token"}))
    os.chmod(lock, 0o600)


def messages(b) -> str:
    return b.lua("return vim.api.nvim_exec2('messages', { output = true }).output")


def test_open_connects_to_this_neovim_despite_a_second_lock_file(make_bridge, claude, model_stub, world):
    decoy = Decoy()
    try:
        write_decoy_lock(world, decoy.port)
        # Without the port, the CLI would pick an editor by its folder: both lock files match.
        world.set_config(autoConnectIde=True)
        # claudecode.nvim's options, as its README writes them (terminal_cmd, terminal.split_*,
        # diff_opts), beside this plugin's.
        opts = {
            "terminal_cmd": str(claude.exe),
            "env": stub_env(claude),
            "terminal": {"split_side": "left", "split_width_percentage": 0.4},
            "diff_opts": {"layout": "vertical", "open_in_new_tab": False},
            "handshake_timeout_ms": 15000,
        }
        b = make_bridge("nvim", setup_opts=opts)
        b.lua("vim.o.columns = 160; vim.o.lines = 50")
        # setup() said once that another bridge serves the project.
        wait_until(lambda: "two bridges for this project" in messages(b), WAIT, 0.2, "the warning")
        assert str(decoy.port) in messages(b)

        b.nvim.command("ClaudeContext open")
        job_pid = b.lua("return vim.fn.jobpid(require('claude_context.terminal')._state.job)")

        def connected():
            return [c for c in b.status()["clients"] if c.get("ide_connected_pid") and descends_from(c["ide_connected_pid"], job_pid)]

        try:
            ide = wait_until(connected, WAIT * 2, 0.2, "the CLI in the terminal to connect to this Neovim as its IDE")
        except BaseException:
            print("terminal:\n" + terminal_text(b)[-3000:])
            print("status:", b.status())
            raise
        assert ide[0]["surface"] == "ide" and ide[0]["name"] == "claude-code"
        assert decoy.connections == 0, "the CLI reached the other bridge"
        # The terminal is where claudecode.nvim's options put it: left, 40% of the columns.
        win = b.lua("return vim.fn.win_findbuf(require('claude_context.terminal')._state.buf)[1]")
        assert b.lua("return vim.api.nvim_win_get_position(...)[2]", win) == 0
        assert b.lua("return vim.api.nvim_win_get_width(...)", win) == 64
        b.nvim.command("ClaudeContext close")
        wait_until(lambda: not b.status()["clients"], WAIT, 0.2, "the CLI's connections to close")
        assert decoy.connections == 0
    finally:
        decoy.close()
