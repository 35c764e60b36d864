"""Claude Code's background service of one isolated run (its own CLAUDE_CONFIG_DIR): found by its
processes and ended by pid, for the end-to-end tests, `make screenshots` and `make bench`. The
service (`claude daemon run`, its helpers `--bg-pty-host`/`--bg-spare` and its sessions) outlives
whatever started it; nothing of it may be left behind."""

from __future__ import annotations

import os
import shutil
import signal
import time


class Service:
    """What one run's service is made of: `pids` and socket directories `dirs`, gathered over the
    run with `note()` (a session may end before the run does), ended by `end()`."""

    def __init__(self, config_dir):
        self.marker = f"CLAUDE_CONFIG_DIR={config_dir}".encode()
        self.pids: set[int] = set()
        self.dirs: set[str] = set()

    def note(self):
        """Adds the service's processes running now (every `claude` process with this run's
        config dir; not the Neovims, whose stop is their owner's) and their socket directories
        (/tmp/cc-daemon-<uid>/<id>, from their argv)."""
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open(f"/proc/{d}/environ", "rb") as f:
                    if self.marker not in f.read().split(b"\0"):
                        continue
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    cmd = f.read().split(b"\0")
            except OSError:
                continue
            if os.path.basename(cmd[0]).startswith(b"claude"):
                self.pids.add(int(d))
            for a in cmd:
                a = a.decode(errors="replace")
                if "/cc-daemon-" in a:
                    parts = a.split("/")
                    i = next(i for i, x in enumerate(parts) if x.startswith("cc-daemon-"))
                    self.dirs.add("/".join(parts[: i + 2]))
        return self

    def running(self) -> list[int]:
        """The service's processes running now."""
        return sorted(Service(self.marker.decode().split("=", 1)[1]).note().pids)

    def end(self):
        """Kills what `note()` found and what runs now, by pid, until nothing of it runs (a helper
        the service was starting meanwhile included), then removes its socket directories."""
        for _ in range(5):
            self.note()
            alive = [p for p in self.pids if os.path.exists(f"/proc/{p}")]
            if not alive:
                break
            for pid in alive:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.2)
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)
