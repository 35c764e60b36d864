"""Runs a program on a pseudo-terminal (no tmux needed) and lets a test read its screen text."""

from __future__ import annotations

import fcntl
import os
import re
import signal
import struct
import subprocess
import termios
import threading
import time
from typing import Optional

_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC
    r"|\x1b[PX^_][^\x1b]*\x1b\\"  # DCS/SOS/PM/APC
    r"|\x1b[@-Z\\-_]"  # other two-byte escapes
    r"|[\x00-\x08\x0b-\x1f\x7f]"
)


_CUF = re.compile(r"\x1b\[(\d*)C")
_CHA = re.compile(r"\x1b\[\d*G")


def strip_ansi(s: str) -> str:
    """Removes escape sequences; cursor-forward (used by Ink for spaces) becomes spaces."""
    s = _CUF.sub(lambda m: " " * int(m.group(1) or 1), s)
    s = _CHA.sub(" ", s)
    return _ANSI.sub("", s)


class PtyProcess:
    """A child process whose stdin/stdout/stderr is a pty; output is collected by a thread."""

    def __init__(self, argv, env=None, cwd=None, rows: int = 50, cols: int = 160):
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.proc = subprocess.Popen(
            argv,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            cwd=cwd,
            start_new_session=True,  # own process group: kill() reaches its children too
            close_fds=True,
        )
        os.close(slave)
        self.fd = master
        self._buf = bytearray()
        self._lock = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                data = b""
            with self._lock:
                if not data:
                    self._eof = True
                    self._lock.notify_all()
                    return
                self._buf.extend(data)
                self._lock.notify_all()

    _eof = False

    @property
    def pid(self) -> int:
        return self.proc.pid

    def raw(self) -> str:
        with self._lock:
            return self._buf.decode("utf-8", "replace")

    def text(self) -> str:
        """Everything printed so far, escape sequences removed (cursor moves become nothing)."""
        return strip_ansi(self.raw())

    def write(self, s: str) -> None:
        os.write(self.fd, s.encode())

    def wait_for_text(self, pattern: str, timeout: float = 30.0, since: int = 0) -> Optional[re.Match]:
        """Waits until the (ANSI-stripped) output after offset `since` matches `pattern`."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                text = strip_ansi(self._buf.decode("utf-8", "replace"))[since:]
                m = rx.search(text)
                if m or self._eof:
                    return m
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._lock.wait(min(left, 0.5))

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self, grace: float = 3.0) -> None:
        """SIGTERM to the process group, then SIGKILL; always reaps the child and closes the pty."""
        if self.proc.poll() is None:
            for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
                try:
                    os.killpg(self.proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.proc.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        else:
            # The leader is gone; make sure no child of its group lingers.
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            os.close(self.fd)
        except OSError:
            pass
