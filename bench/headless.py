"""A headless Neovim with this checkout's test init, listening on a socket in `tmp`, for the
benches that drive the plugin over RPC (bench/code_intel.py, bench/symbols.py)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NVIM = REPO / ".deps/venv/bin/nvim"


def start(tmp: Path, cwd: Path):
    """Starts it in `cwd` (its state, data and HOME under `tmp`, its socket `tmp/nvim.sock`);
    returns the process and a pynvim session attached to it."""
    import pynvim

    sock = tmp / "nvim.sock"
    env = dict(os.environ, XDG_STATE_HOME=str(tmp / "state"), XDG_DATA_HOME=str(tmp / "data"), HOME=str(tmp))
    proc = subprocess.Popen(
        [str(NVIM), "--headless", "--clean", "-u", str(REPO / "tests/minimal_init.lua"), "--listen", str(sock)],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(300):
        if sock.exists():
            break
        time.sleep(0.1)
    return proc, pynvim.attach("socket", path=str(sock))


def stop(proc) -> None:
    """Ends it: SIGTERM, then SIGKILL after 10 s."""
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
