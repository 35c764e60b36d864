"""Fixtures for the end-to-end tests: a temporary HOME and CLAUDE_CONFIG_DIR, the loopback model
stub, the real Claude Code CLI (print mode and on a pty), and the bridge — either the stand-alone
server (`crates/core/examples/serve.rs`, fast, for protocol tests) or a real headless Neovim with
the plugin set up (`tests/minimal_init.lua`, driven with pynvim over its --listen socket).

Environment overrides: CLAUDE_CONTEXT_TEST_CLAUDE (the `claude` executable),
CLAUDE_CONTEXT_TEST_CLAUDES (several, separated by os.pathsep: every test that runs the CLI runs
once per CLI, its pytest id naming the CLI's version, e.g. `[2.1.197-nvim]`; `make test-e2e` sets
the pinned one and the newest),
CLAUDE_CONTEXT_TEST_NVIM (the `nvim` executable), CLAUDE_CONTEXT_TEST_SERVE (a prebuilt `serve`
example; otherwise it is built with cargo once per session, in release unless
CLAUDE_CONTEXT_TEST_PROFILE=debug), CLAUDE_CONTEXT_NATIVE (the native library the Lua loader
should use; otherwise its own search list: lib/, target/release, target/debug),
CLAUDE_CONTEXT_TEST_CLI_TIMEOUT / CLAUDE_CONTEXT_TEST_TIMEOUT (seconds; a `claude -p` run / a whole
test), CLAUDE_CONTEXT_TEST_KEEP=1 (keep the temp dirs), CLAUDE_CONTEXT_TEST_ALLOW_STALE=1.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from model_stub import ModelStub  # noqa: E402
from ptyproc import PtyProcess  # noqa: E402

REPO = HERE.parents[1]
CLAUDE = Path(os.environ.get("CLAUDE_CONTEXT_TEST_CLAUDE") or REPO / ".deps/node_modules/.bin/claude")
NVIM = Path(os.environ.get("CLAUDE_CONTEXT_TEST_NVIM") or REPO / ".deps/venv/bin/nvim")

# Generous: the machine is small and shared. These bound hangs; they are not assertions on speed.
CLI_TIMEOUT = float(os.environ.get("CLAUDE_CONTEXT_TEST_CLI_TIMEOUT", "180"))
WAIT = 60.0
TEST_TIMEOUT = float(os.environ.get("CLAUDE_CONTEXT_TEST_TIMEOUT", "900"))

# The fake API key; the CLI remembers approval of a key by its last 20 characters.
API_KEY = "sk-ant-e2e-test-key-0123456789abcdef"


def cli_version(exe: Path) -> str:
    """The version of the Claude Code CLI at `exe`, from its package.json (no process started);
    `claude --version` when that is not found."""
    real = Path(os.path.realpath(exe))
    for d in real.parents:
        pj = d / "package.json"
        if pj.is_file():
            try:
                meta = json.loads(pj.read_text())
            except ValueError:
                break
            if meta.get("name") == "@anthropic-ai/claude-code" and meta.get("version"):
                return str(meta["version"])
            break
    try:
        out = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60).stdout
        return out.split()[0] if out.split() else exe.name
    except (OSError, subprocess.SubprocessError):
        return exe.name


def _clis() -> list:
    """The CLIs the tests run against: CLAUDE_CONTEXT_TEST_CLAUDES, else CLAUDE alone."""
    many = [Path(p) for p in os.environ.get("CLAUDE_CONTEXT_TEST_CLAUDES", "").split(os.pathsep) if p]
    return many or [CLAUDE]


CLIS = _clis()
CLI_IDS = [cli_version(p) for p in CLIS]


def wait_until(pred, timeout: float = WAIT, interval: float = 0.05, what: str = "condition"):
    """Polls `pred()` until it returns something truthy; returns it or fails the test."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = pred()
        if last:
            return last
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


def attach_started(sock: Path, alive):
    """A pynvim session on the Neovim listening on `sock`, once its startup is over (its `-u` file
    has run: the plugin is on the runtimepath). The socket exists a moment before Neovim listens
    on it (ConnectionRefusedError on a loaded machine), and requests are answered before the
    startup ends (a TUI Neovim answers them while it waits for the terminal's replies), where a
    `require` of the plugin fails."""
    import pynvim

    deadline = time.monotonic() + 30
    while True:
        try:
            nvim = pynvim.attach("socket", path=str(sock))
            break
        except ConnectionRefusedError:
            if time.monotonic() > deadline or not alive():
                raise
            time.sleep(0.1)
    wait_until(lambda: not alive() or nvim.eval("v:vim_did_enter") == 1, 30, 0.05, "Neovim's startup to end")
    return nvim


# --------------------------------------------------------------------------------------------
# Processes: everything a test starts is killed at teardown, even when the test fails; then any
# process still carrying the test's CLAUDE_CONFIG_DIR in its environment is killed too.
# --------------------------------------------------------------------------------------------


def _kill_group(p: subprocess.Popen, grace: float = 3.0) -> None:
    if p.poll() is None:
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(p.pid, sig)
            except (ProcessLookupError, PermissionError):
                break
            try:
                p.wait(wait)
                break
            except subprocess.TimeoutExpired:
                continue
    try:
        os.killpg(p.pid, signal.SIGKILL)  # stragglers of the group
    except (ProcessLookupError, PermissionError):
        pass


def _pids_with_env(marker: str) -> list:
    """Pids of live processes whose environment contains `marker` (Linux /proc only)."""
    out = []
    if not os.path.isdir("/proc"):
        return out
    needle = marker.encode()
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            with open(f"/proc/{d}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if needle in env:
            out.append(int(d))
    return out


class Procs:
    def __init__(self, marker: str):
        self.marker = marker
        self.popens: list = []
        self.ptys: list = []

    def cleanup(self) -> list:
        for p in reversed(self.ptys):
            p.kill()
        for p in reversed(self.popens):
            _kill_group(p)
        strays = _pids_with_env(self.marker)
        for pid in strays:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return strays


# --------------------------------------------------------------------------------------------
# The temporary world: HOME, CLAUDE_CONFIG_DIR, a project directory.
# --------------------------------------------------------------------------------------------


@dataclass
class World:
    root: Path
    home: Path
    config_dir: Path
    project: Path
    procs: Procs

    def base_env(self, **extra) -> dict:
        """A clean environment (nothing of the real user's), with the temp HOME and config dir."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "USER": os.environ.get("USER", "root"),
            "LANG": "C.UTF-8",
            "TERM": "xterm-256color",
            "TMPDIR": str(self.root / "tmp"),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local/share"),
            "XDG_STATE_HOME": str(self.home / ".local/state"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "CLAUDE_CONFIG_DIR": str(self.config_dir),
            # Loopback must never go through a proxy.
            "NO_PROXY": "127.0.0.1,localhost,::1",
            "no_proxy": "127.0.0.1,localhost,::1",
        }
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def set_config(self, **kv) -> None:
        """Sets top-level keys of the CLI's config ($CLAUDE_CONFIG_DIR/.claude.json)."""
        cfg_path = self.config_dir / ".claude.json"
        cfg = json.loads(cfg_path.read_text())
        cfg.update(kv)
        cfg_path.write_text(json.dumps(cfg, indent=2))

    def trust(self, *dirs: Path) -> None:
        """Marks directories as trusted in the CLI's config (no trust dialog there)."""
        cfg_path = self.config_dir / ".claude.json"
        cfg = json.loads(cfg_path.read_text())
        for d in dirs:
            cfg.setdefault("projects", {})[str(d)] = {
                "hasTrustDialogAccepted": True,
                "hasCompletedProjectOnboarding": True,
                "allowedTools": [],
            }
        cfg_path.write_text(json.dumps(cfg, indent=2))


def seed_cli_config(config_dir: Path, project: Path) -> None:
    """What the interactive CLI 2.1.197 needs to start straight at its prompt, offline.

    - `hasCompletedOnboarding`: without it the first run shows the theme picker and then checks
      connectivity to the real API host (not the stub: it fails offline and stops there).
    - `customApiKeyResponses.approved`: the last 20 characters of ANTHROPIC_API_KEY, else it asks
      whether to use the key from the environment.
    - `projects[<dir>].hasTrustDialogAccepted`: else it asks whether to trust the folder.
    Print mode (-p) needs none of this.
    """
    config_dir.mkdir(parents=True, exist_ok=True)
    cfg = {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "numStartups": 1,
        "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
        "projects": {},
    }
    (config_dir / ".claude.json").write_text(json.dumps(cfg, indent=2))


@pytest.fixture
def world(request):
    root = Path(tempfile.mkdtemp(prefix="cc-e2e-")).resolve()
    home, config_dir, project = root / "home", root / "claude-config", root / "project"
    for d in (home, project, root / "tmp"):
        d.mkdir(parents=True)
    seed_cli_config(config_dir, project)
    w = World(root=root, home=home, config_dir=config_dir, project=project, procs=Procs(f"CLAUDE_CONFIG_DIR={config_dir}"))
    w.trust(project)
    # Watchdog: a test stuck on a process that never answers (pynvim has no timeouts) gets its
    # processes killed, which turns the hang into an error.
    dog = threading.Timer(TEST_TIMEOUT, w.procs.cleanup)
    dog.daemon = True
    dog.start()
    yield w
    dog.cancel()
    strays = w.procs.cleanup()
    if strays:
        warnings.warn(f"killed {len(strays)} leftover process(es) of {request.node.name}: {strays}")
    if os.environ.get("CLAUDE_CONTEXT_TEST_KEEP"):
        print(f"kept {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def model_stub():
    stub = ModelStub().start()
    yield stub
    stub.stop()


# --------------------------------------------------------------------------------------------
# Bridges. Both kinds offer: port, token, pid, lock_file, cwd, status(), cd(dir), stop(),
# mcp_config(name) and url.
# --------------------------------------------------------------------------------------------


class Bridge:
    kind = "?"
    port: int
    token: str
    pid: int
    lock_file: Path

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def mcp_config(self, name: str = "nvim") -> dict:
        return {
            "mcpServers": {
                name: {
                    "type": "ws",
                    "url": self.url,
                    "headers": {"x-claude-code-ide-authorization": self.token},
                }
            }
        }

    def wait_client(self, pred, timeout: float = WAIT, what: str = "a client"):
        """Waits until status() lists a client satisfying `pred`; returns that client."""

        def find():
            for c in (self.status() or {}).get("clients", []):
                if pred(c):
                    return c
            return None

        return wait_until(find, timeout, 0.1, what)

    def wait_folders(self, first: Path, timeout: float = WAIT) -> list:
        return wait_until(
            lambda: (self.status() or {}).get("workspace_folders", [None])[:1] == [str(first)]
            and self.status()["workspace_folders"],
            timeout,
            what=f"workspace folders to start with {first}",
        )


def _cargo() -> str:
    return shutil.which("cargo") or str(Path.home() / ".cargo/bin/cargo")


@pytest.fixture(scope="session")
def serve_exe() -> Path:
    """The stand-alone server, built once per session (a no-op when it is up to date)."""
    pre = os.environ.get("CLAUDE_CONTEXT_TEST_SERVE")
    if pre:
        return Path(pre)
    # Release and --workspace by default: `make test-e2e` has just built the workspace in release,
    # and with the same feature unification every dependency is reused (`-p claude-context-core`
    # alone would unify features differently and rebuild a few dozen crates).
    profile = ["--release"] if os.environ.get("CLAUDE_CONTEXT_TEST_PROFILE", "release") == "release" else []
    r = subprocess.run(
        [_cargo(), "build", "--quiet", *profile, "--workspace", "--example", "serve", "--message-format=json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if r.returncode != 0:
        pytest.fail(f"cannot build the serve example:\n{r.stderr[-4000:]}")
    for line in r.stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == "serve" and msg.get("executable"):
            return Path(msg["executable"])
    pytest.fail("cargo built the serve example but did not say where")


class ServeBridge(Bridge):
    """crates/core/examples/serve.rs: the bridge without Neovim. Commands go over its stdin."""

    kind = "serve"

    def __init__(self, exe: Path, world: World, cwd: Path, extra_env: Optional[dict] = None, config: Optional[dict] = None):
        self.world = world
        env = world.base_env(**(extra_env or {}))
        self.proc = subprocess.Popen(
            [str(exe), "--cwd", str(cwd), *(["--config", json.dumps(config)] if config else [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            text=True,
            start_new_session=True,
        )
        world.procs.popens.append(self.proc)
        self._lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        line = self._line(30)
        if not line:
            self.proc.kill()
            pytest.fail(f"serve did not start: {self.proc.stderr.read()}")
        info = json.loads(line)
        self.port, self.token, self.pid = info["port"], info["token"], info["pid"]
        self.lock_file = Path(info["lock_file"])

    def _pump(self) -> None:
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put("")

    def _line(self, timeout: float) -> str:
        try:
            return self._lines.get(timeout=timeout)
        except queue.Empty:
            return ""

    def _cmd(self, line: str) -> dict:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        out = self._line(WAIT)
        if not out:
            raise RuntimeError(f"serve did not answer {line!r} (exit code {self.proc.poll()})")
        return json.loads(out)

    def status(self) -> Optional[dict]:
        if self.proc.poll() is not None:
            return None
        return self._cmd("status")

    def cd(self, d: Path) -> None:
        self._cmd(f"cd {d}")

    def stop(self) -> None:
        """Closes stdin: the server stops, removes its lock file and exits."""
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(30)


def _nvim_lua(nvim, code: str, *args):
    return nvim.exec_lua(code, *args)


_fresh_checked: set = set()


def _check_fresh(lib: Optional[str]) -> None:
    """Fails when the native library Neovim loaded is older than the Rust sources: the tests would
    otherwise exercise old code. (`make test-e2e` builds first; set
    CLAUDE_CONTEXT_TEST_ALLOW_STALE=1 to run anyway.)"""
    if not lib or lib in _fresh_checked or os.environ.get("CLAUDE_CONTEXT_TEST_ALLOW_STALE"):
        return
    _fresh_checked.add(lib)
    built = Path(lib).stat().st_mtime
    sources = [REPO / "Cargo.toml", REPO / "Cargo.lock"]
    for d in (REPO / "src", REPO / "crates/core/src"):
        sources.extend(d.rglob("*.rs"))
    newer = [str(p.relative_to(REPO)) for p in sources if p.exists() and p.stat().st_mtime > built]
    if newer:
        pytest.fail(f"{lib} is older than {', '.join(newer[:5])}: run `make build` (or set CLAUDE_CONTEXT_TEST_ALLOW_STALE=1)")


class NvimBridge(Bridge):
    """A real headless Neovim with the plugin set up, driven over its --listen socket."""

    kind = "nvim"

    def __init__(self, world: World, cwd: Path, setup_opts: Optional[dict] = None, extra_env: Optional[dict] = None):
        self.world = world
        self.sock = world.root / f"nvim-{len(world.procs.popens)}.sock"
        env = world.base_env(**(extra_env or {}))
        native = os.environ.get("CLAUDE_CONTEXT_NATIVE")
        if native:
            env["CLAUDE_CONTEXT_NATIVE"] = native
        self.log_file = world.root / f"claude-context-{len(world.procs.popens)}.log"
        self.proc = subprocess.Popen(
            [str(NVIM), "--headless", "--clean", "-u", str(REPO / "tests/minimal_init.lua"), "--listen", str(self.sock)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
        world.procs.popens.append(self.proc)
        wait_until(lambda: self.sock.exists() or self.proc.poll() is not None, 30, what="nvim's socket")
        if self.proc.poll() is not None:
            pytest.fail(f"nvim exited at start: {self.proc.stderr.read().decode(errors='replace')}")
        self.nvim = attach_started(self.sock, lambda: self.proc.poll() is None)
        opts = {"log_file": str(self.log_file), "log_level": "debug"}
        opts.update(setup_opts or {})
        err = self.nvim.exec_lua(
            """
            local ok, err = pcall(require('claude_context').setup, ...)
            if not ok then return tostring(err) end
            if not require('claude_context').status() then
              return 'setup() ran but the bridge is not running: ' .. vim.inspect(require('claude_context.native').info)
            end
            return nil
            """,
            opts,
        )
        if err:
            pytest.fail(f"claude_context.setup() failed in nvim (run `make build`?):\n{err}")
        _check_fresh(self.nvim.exec_lua("return require('claude_context.native').info.path"))
        st = self.status()
        self.port = st["port"]
        self.lock_file = Path(st["lock_file"])
        lock = json.loads(self.lock_file.read_text())
        self.token = lock["authToken"]
        self.pid = self.proc.pid

    def status(self) -> Optional[dict]:
        if self.proc.poll() is not None:
            return None
        return self.nvim.exec_lua("return require('claude_context').status()")

    def cd(self, d: Path) -> None:
        self.nvim.command(f"cd {self.nvim.funcs.fnameescape(str(d))}")

    def lua(self, code: str, *args):
        return self.nvim.exec_lua(code, *args)

    def stop(self) -> None:
        """Quits Neovim (VimLeavePre stops the bridge and removes the lock file)."""
        if self.proc.poll() is None:
            try:
                self.nvim.command("qa!")
            except Exception:
                pass  # the connection drops as Neovim exits
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                _kill_group(self.proc)
        try:
            self.nvim.close()
        except Exception:
            pass


@pytest.fixture
def serve_bridge(serve_exe, world):
    b = ServeBridge(serve_exe, world, world.project)
    yield b
    b.stop()


@pytest.fixture
def nvim_bridge(world):
    b = NvimBridge(world, world.project)
    yield b
    b.stop()


@pytest.fixture(params=["serve", "nvim"])
def bridge(request, world):
    """Both bridges in turn: the stand-alone server and the real Neovim plugin."""
    if request.param == "serve":
        b = ServeBridge(request.getfixturevalue("serve_exe"), world, world.project)
    else:
        b = NvimBridge(world, world.project)
    yield b
    b.stop()


@pytest.fixture
def make_bridge(world, request):
    """Factory for extra bridges: make_bridge(kind, cwd=None, **kw)."""
    made = []

    def make(kind: str, cwd: Optional[Path] = None, **kw):
        if kind == "serve":
            b = ServeBridge(request.getfixturevalue("serve_exe"), world, cwd or world.project, **kw)
        else:
            b = NvimBridge(world, cwd or world.project, **kw)
        made.append(b)
        return b

    yield make
    for b in made:
        b.stop()


# --------------------------------------------------------------------------------------------
# The Claude Code CLI.
# --------------------------------------------------------------------------------------------


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str

    @property
    def json(self) -> dict:
        try:
            return json.loads(self.stdout)
        except ValueError:
            raise AssertionError(f"claude printed no JSON (rc={self.returncode}):\nstdout: {self.stdout[-3000:]}\nstderr: {self.stderr[-3000:]}")


class Claude:
    """Runs the real CLI against the model stub, in the temp world. `exe` is the CLI of this
    test's param (see `cli_exe`), `version` its version."""

    def __init__(self, world: World, stub: ModelStub, exe: Path = CLAUDE):
        self.world, self.stub = world, stub
        self.exe = exe
        self.version = cli_version(exe)
        if not exe.exists():
            pytest.fail(f"the Claude Code CLI is not at {exe} (run `make deps`)")

    def env(self, **extra) -> dict:
        return self.world.base_env(
            ANTHROPIC_BASE_URL=self.stub.url,
            ANTHROPIC_API_KEY=API_KEY,
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1,
            DISABLE_AUTOUPDATER=1,
            # The interactive CLI otherwise tries to git-clone its plugin marketplace.
            CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL=1,
            IS_SANDBOX=1,  # we may run as root, where --dangerously-skip-permissions needs it
            # 2.1.330 defers MCP tools behind its ToolSearch tool (the model sees them only after
            # searching); the stub's scripts call them directly, as 2.1.197 lets a model do.
            ENABLE_TOOL_SEARCH="false",
            **extra,
        )

    def write_mcp_config(self, bridge: Bridge, name: str = "nvim") -> Path:
        p = self.world.root / f"mcp-{name}-{bridge.port}.json"
        p.write_text(json.dumps(bridge.mcp_config(name)))
        return p

    def run(
        self,
        prompt: str,
        bridge: Optional[Bridge] = None,
        name: str = "nvim",
        args: tuple = (),
        cwd: Optional[Path] = None,
        resume: Optional[str] = None,
        env: Optional[dict] = None,
        timeout: float = CLI_TIMEOUT,
    ) -> CliResult:
        """`claude -p <prompt> --output-format json` (with --mcp-config for `bridge`)."""
        argv = [str(self.exe), "-p", prompt, "--output-format", "json", "--dangerously-skip-permissions"]
        if bridge is not None:
            argv += ["--mcp-config", str(self.write_mcp_config(bridge, name))]
        if resume:
            argv += ["--resume", resume]
        argv += list(args)
        p = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env(**(env or {})),
            cwd=cwd or self.world.project,
            text=True,
            start_new_session=True,
        )
        self.world.procs.popens.append(p)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(p)
            out, err = p.communicate()
            pytest.fail(f"claude -p did not finish in {timeout:.0f}s\nstdout: {out[-3000:]}\nstderr: {err[-3000:]}")
        return CliResult(p.returncode, out, err)

    def interactive(self, args: tuple = (), cwd: Optional[Path] = None, env: Optional[dict] = None) -> PtyProcess:
        """The interactive CLI on a pseudo-terminal; killed at teardown."""
        p = PtyProcess([str(self.exe), *args], env=self.env(**(env or {})), cwd=str(cwd or self.world.project))
        self.world.procs.ptys.append(p)
        return p


@pytest.fixture(scope="session", params=CLIS, ids=CLI_IDS)
def cli_exe(request) -> Path:
    """Each CLI in turn (the pinned one and the newest under `make test-e2e`)."""
    return request.param


@pytest.fixture
def claude(world, model_stub, cli_exe):
    return Claude(world, model_stub, cli_exe)


def pytest_terminal_summary(terminalreporter):
    """Names each Claude Code CLI the tests ran against, with its own counts (the CLI's version
    is in the test id: `test_…[2.1.330-nvim]`); tests that start no CLI are counted apart."""
    counts = {v: [0, 0] for v in CLI_IDS}
    other = [0, 0]
    for outcome, slot in (("passed", 0), ("failed", 1), ("error", 1)):
        for rep in terminalreporter.stats.get(outcome, []):
            if getattr(rep, "when", "call") != "call" and outcome != "error":
                continue
            ids = getattr(rep, "nodeid", "")
            version = next((v for v in CLI_IDS if f"[{v}" in ids or f"-{v}]" in ids or f"-{v}-" in ids), None)
            (counts[version] if version else other)[slot] += 1
    for v in CLI_IDS:
        p, f = counts[v]
        terminalreporter.write_line(f"e2e with Claude Code {v}: {p} passed, {f} failed")
    terminalreporter.write_line(f"e2e without the CLI (protocol, relay, editor): {other[0]} passed, {other[1]} failed")
