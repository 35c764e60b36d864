#!/usr/bin/env python3
"""Pictures of the real thing, for the README: `make screenshots`.

Drives a real Neovim (its TUI, inside tmux) with this checkout loaded and the real Claude Code CLI
in the plugin's terminal, against the loopback model stub of the end-to-end tests
(tests/e2e/model_stub.py: nothing reaches the network). Each picture is the tmux pane captured
with its colours (`tmux capture-pane -e -p`) and rendered to SVG by `rich`.

    .deps/venv/bin/python doc/screenshots/make.py [--out doc/screenshots] [--keep]

The project is ~/demo in a temporary HOME (so no path of this machine shows). The session: the
model proposes an edit, which opens as a diff in Neovim (diff.svg); the diff is accepted and the
turn ends (terminal.svg); the turn is reviewed (review.svg). A function is rewritten in place
(`:'<,'>ClaudeContext edit`, the answer streamed into the buffer as hunks: edit.svg). Next the model asks the person's
language server (python-lsp-server from .deps/lsp) through the plugin's code tools where
`read_tokens` is defined and used; Claude's transcript (ctrl+o) shows the calls and their answers
(code.svg). A second session, in plan mode, proposes a plan (plan.svg); while it waits the
statusline shows both sessions' states (statusline.svg). Then the memory bank the model reads for
the branch (memory.svg). Last, two background sessions started with `:ClaudeContext new`
(`claude --bg --worktree`, on Claude Code's own service, which this script ends by pid at the
end) and the picker `:ClaudeContext agents` with every session of the project and its state
(agents.svg), and `:ClaudeContext conversations` with every conversation those sessions wrote and
the first one's preview (conversations.svg).

The pictures show the newest Claude Code in .deps (`make screenshots` installs npm's `latest`
there first) and snacks.nvim's picker, from a checkout in .reference/snacks.nvim (git-ignored: no
package registry has it; the script says how to get it when it is missing).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests/e2e"))

import pynvim  # noqa: E402
from cc_service import Service  # noqa: E402
from model_stub import ModelStub, schema_example  # noqa: E402

API_KEY = "sk-ant-screenshots-0123456789abcdef"
NVIM = Path(os.environ.get("CLAUDE_CONTEXT_TEST_NVIM") or REPO / ".deps/venv/bin/nvim")
COLS, ROWS = 140, 38
READY = r"\? for shortcuts|shift\+tab to cycle"
WAIT = 90.0
MAX_BYTES = 300 * 1024
PYLSP = REPO / ".deps/lsp/venv/bin/pylsp"
# The picker most people have, snacks.nvim's, from a checkout beside this one (git-ignored: no
# package registry has it).
SNACKS = REPO / ".reference/snacks.nvim"
SNACKS_HOW = "git clone https://github.com/folke/snacks.nvim .reference/snacks.nvim"
# Every picture this script makes, in the order it makes them (tests/nvim/docs_spec.lua checks the
# README shows only these).
OUTPUTS = ("diff", "terminal", "review", "edit", "code", "plan", "statusline", "memory", "agents", "conversations")
# The background sessions of agents.svg: name, prompt.
AGENTS = (("doc-total", "document that total skips operators"), ("add-test", "add a test for read_tokens"))

PARSER = '''"""A tiny tokenizer for the examples."""

import re

TOKEN = re.compile(r"\\s*(?:(\\d+)|(.))")


def parse(text):
    """Split text into numbers and operators."""
    tokens = []
    for number, op in TOKEN.findall(text):
        if number:
            tokens.append(int(number))
        elif op.strip():
            tokens.append(op)
    return tokens


def total(text):
    return sum(t for t in parse(text) if isinstance(t, int))
'''

# The prompts of the conversations conversations.svg lists.
PROMPTS = ("rename parse to read_tokens", "plan the rename for the callers", *(p for _, p in AGENTS))

# A tab page's label: its window's file name, or the whole name of a buffer that is no file
# (claude-plan://…); Neovim's own tabline shortens every directory of a name ("c//18a6af0b").
TABLINE = """
function _G.shots_tabline()
  local out = {}
  for i, t in ipairs(vim.api.nvim_list_tabpages()) do
    local win = vim.api.nvim_tabpage_get_win(t)
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      win = vim.tbl_filter(function(w)
        return vim.api.nvim_win_get_config(w).relative == ''
      end, vim.api.nvim_tabpage_list_wins(t))[1] or win
    end
    local name = vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win))
    name = name:find('://', 1, true) and name or vim.fn.fnamemodify(name, ':t')
    local hl = t == vim.api.nvim_get_current_tabpage() and '%#TabLineSel#' or '%#TabLine#'
    out[#out + 1] = ('%s %d %s '):format(hl, i, (name == '' and '[No Name]' or name):gsub('%%', '%%%%'))
  end
  return table.concat(out) .. '%#TabLineFill#'
end
vim.o.tabline = '%!v:lua.shots_tabline()'
"""

# What edit.svg's answer makes of read_tokens.
EDITED = (
    "def read_tokens(text: str) -> list[int | str]:",
    '    """Split text into numbers and operators, in order."""',
    "    return [int(n) if n else op for n, op in TOKEN.findall(text) if n or op.strip()]",
)

PLAN = """# Plan: rename parse to read_tokens

1. Rename `parse` to `read_tokens` in src/parser.py.
2. Keep `parse` as an alias, so callers keep working.
3. Update `total` to call `read_tokens`.
4. Add a test for `read_tokens("1 + 2")`.
"""


def cli_version(cli: Path) -> tuple:
    """The version of the Claude Code CLI at `cli` (its package's), as numbers; () when unknown."""
    pkg = cli.parent.parent / "@anthropic-ai/claude-code/package.json"
    try:
        return tuple(int(x) for x in json.loads(pkg.read_text())["version"].split("-")[0].split("."))
    except (OSError, ValueError, KeyError):
        return ()


def newest_claude() -> Path:
    """The CLI the pictures show: CLAUDE_CONTEXT_SHOTS_CLAUDE (the Makefile's npm `latest`), else the
    newest one `make deps` and `make test-e2e` installed into .deps."""
    given = os.environ.get("CLAUDE_CONTEXT_SHOTS_CLAUDE")
    if given:
        return Path(given).absolute()
    deps = REPO / ".deps"
    found = [*deps.glob("claude-latest/*/node_modules/.bin/claude"), *deps.glob("claude-*/node_modules/.bin/claude")]
    found.append(deps / "node_modules/.bin/claude")
    return max((c for c in found if c.exists()), key=cli_version, default=deps / "node_modules/.bin/claude")


CLAUDE = newest_claude()


def wait_until(pred, timeout=WAIT, what="condition", interval=0.2):
    end = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > end:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(interval)


class Session:
    """The temporary world, the model stub, tmux and the Neovim inside it."""

    def __init__(self, keep: bool):
        self.keep = keep
        self.root = Path(tempfile.mkdtemp(prefix="cc-shots-")).resolve()
        # The project is ~/demo: Claude Code shows it so, and no path of this machine shows.
        self.home, self.config = self.root / "home", self.root / "claude"
        self.project = self.home / "demo"
        for d in (self.home, self.config, self.project / "src", self.root / "tmp"):
            d.mkdir(parents=True)
        (self.project / "src/parser.py").write_text(PARSER)
        (self.project / "README.md").write_text("# calc\n\nA tiny calculator.\n")
        bank = self.project / "docs/branch-memory-bank/main"
        bank.mkdir(parents=True)
        (bank / "branchContext.md").write_text("# Branch context\n\nMake the tokenizer's names say what they do.\n")
        (bank / "activeContext.md").write_text("# Active context\n\n- `parse` is being renamed to `read_tokens`.\n- Callers keep `parse` as an alias for one release.\n")
        (bank / "systemPatterns.md").write_text("# System patterns\n\nOne module per concern; names are verbs for functions.\n")
        (bank / "progress.md").write_text("# Progress\n\n- [x] Outline of src/parser.py\n- [ ] Rename and alias\n- [ ] Test for `read_tokens`\n")
        glob = self.project / "docs/global-memory-bank"
        glob.mkdir(parents=True)
        (glob / "tech-stack.md").write_text("# Tech stack\n\nPython 3.11, no dependencies; tests with pytest.\n")
        for args in (["init", "-q", "-b", "main"], ["add", "."], ["-c", "user.name=A", "-c", "user.email=a@b", "commit", "-q", "-m", "start"]):
            subprocess.run(["git", *args], cwd=self.project, check=True)
        cfg = {
            "hasCompletedOnboarding": True,
            "theme": "dark",
            "numStartups": 1,
            "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
            "projects": {
                str(d): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True, "allowedTools": []}
                for d in [self.project, *(self.project / ".claude/worktrees" / n for n, _ in AGENTS)]
            },
        }
        (self.config / ".claude.json").write_text(json.dumps(cfg))
        self.stub = ModelStub().start()
        self.sock = str(self.root / "nvim.sock")
        self.tmux = ["tmux", "-L", f"cc-shots-{os.getpid()}", "-f", "/dev/null"]
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "USER": os.environ.get("USER", "root"),
            "LANG": "C.UTF-8",
            "TERM": "tmux-256color",
            "COLORTERM": "truecolor",
            "TMPDIR": str(self.root / "tmp"),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local/share"),
            "XDG_STATE_HOME": str(self.home / ".local/state"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "CLAUDE_CONFIG_DIR": str(self.config),
            "NO_PROXY": "127.0.0.1,localhost,::1",
            "no_proxy": "127.0.0.1,localhost,::1",
        }
        self.claude_env = {
            "ANTHROPIC_BASE_URL": self.stub.url,
            "ANTHROPIC_API_KEY": API_KEY,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
            "IS_SANDBOX": "1",
            "ENABLE_TOOL_SEARCH": "false",
        }
        nvim = [str(NVIM), "--clean", "-u", str(REPO / "tests/minimal_init.lua"), "--listen", self.sock, "src/parser.py"]
        cmd = [*self.tmux, "new-session", "-d", "-s", "shots", "-x", str(COLS), "-y", str(ROWS), "-c", str(self.project)]
        # Neovim's environment has the stub's too: Claude Code's background service, which
        # `:ClaudeContext new` starts, inherits it.
        for k, v in {**self.env, **self.claude_env}.items():
            cmd += ["-e", f"{k}={v}"]
        subprocess.run([*cmd, *nvim], check=True, env=self.env)
        subprocess.run([*self.tmux, "set", "-g", "status", "off"], check=True)
        # Else Claude Code, which sees it runs inside tmux, adds a hint about it to its screen.
        subprocess.run([*self.tmux, "set", "-g", "focus-events", "on"], check=True)
        wait_until(lambda: Path(self.sock).exists(), 30, "Neovim's socket")
        self.nvim = pynvim.attach("socket", path=self.sock)

    def lua(self, code, *args):
        return self.nvim.exec_lua(code, *args)

    def close(self):
        try:
            subprocess.run([*self.tmux, "kill-server"], check=False)
        finally:
            # The background service outlives Neovim (it is Claude Code's own daemon): ended here,
            # by pid, with its socket directories.
            Service(self.config).end()
            self.stub.stop()
            if self.keep:
                print(f"kept {self.root}")
            else:
                shutil.rmtree(self.root, ignore_errors=True)

    def terminal_text(self):
        return self.lua(
            "local s = require('claude_context.terminal')._state;"
            " return s.buf and vim.api.nvim_buf_is_valid(s.buf) and"
            " table.concat(vim.api.nvim_buf_get_lines(s.buf, 0, -1, false), '\\n') or ''"
        )

    def type_prompt(self, text):
        job = self.lua("return require('claude_context.terminal')._state.job")
        self.lua("vim.fn.chansend(...)", job, text)
        wait_until(lambda: text in self.terminal_text(), WAIT, f"the prompt {text!r} to show")
        self.lua("vim.fn.chansend(..., '\\r')", job)
        # Back to the code, as a person would after asking: Claude's diff takes the cursor then.
        self.nvim.input("<C-\\><C-n><C-w>p")

    def send_terminal(self, keys):
        job = self.lua("return require('claude_context.terminal')._state.job")
        self.lua("vim.fn.chansend(...)", job, keys)

    def terminal_screen(self):
        """The last screen of Claude's terminal (its scrollback left out)."""
        return "\n".join(self.terminal_text().split("\n")[-ROWS:])

    def repaint(self):
        """Claude Code draws its screen again (ctrl+l): a window resized while the CLI drew (a diff's
        or the review's tab) leaves stale cells behind in Neovim's terminal."""
        self.send_terminal("\x0c")
        time.sleep(1.5)

    def focus_terminal(self):
        self.lua("local b = require('claude_context.terminal')._state.buf; vim.api.nvim_set_current_win(vim.fn.win_findbuf(b)[1])")

    def terminal_from(self, text):
        """Claude's terminal window scrolled so that the last line holding `text` is its first
        (`text` nil: its last line, where the window follows the output again); whether it was
        found."""
        return self.lua(
            "local text = ...; text = text ~= vim.NIL and text or nil; local b = require('claude_context.terminal')._state.buf;"
            " local lines = vim.api.nvim_buf_get_lines(b, 0, -1, false); local at, found = #lines, text == nil;"
            " for i = #lines, 1, -1 do if text and lines[i]:find(text, 1, true) then at, found = i, true; break end end;"
            " for _, w in ipairs(vim.fn.win_findbuf(b)) do"
            " vim.api.nvim_win_call(w, function() if text then vim.fn.winrestview({ topline = at, lnum = at, col = 0 })"
            " else vim.api.nvim_win_set_cursor(0, { at, 0 }); vim.cmd('normal! zb') end end) end;"
            " return found",
            text,
        )

    def transcript_from(self, text):
        """Claude Code's transcript scrolled with its own keys (newer CLIs draw it on the alternate
        screen, its start above the window): a half page up (ctrl+u) until `text` shows, then a
        line down (j) until it is the first line."""
        def row():
            return next((i for i, line in enumerate(self.terminal_screen().split("\n")) if text in line), None)

        for _ in range(12):
            if row() is not None:
                break
            self.send_terminal("\x15")
            time.sleep(0.8)
        for _ in range(ROWS):
            at = row()
            if at is None or at == 0:
                break
            self.send_terminal("j")
            time.sleep(0.3)

    def agent_state(self, name):
        """The state `:ClaudeContext agents` shows for session `name`, read afresh."""
        self.lua("require('claude_context.agents.list').refresh()")
        for e in self.lua("return require('claude_context').agents()"):
            if e.get("name") == name:
                return e.get("state")
        return None

    def picker_open(self, source):
        """Whether snacks.nvim's picker of `source` is open."""
        return self.lua("return #Snacks.picker.get({ source = ... }) > 0", source)

    def close_pickers(self):
        self.lua("for _, p in ipairs(Snacks.picker.get()) do p:close() end; vim.cmd('stopinsert')")
        wait_until(lambda: self.lua("return #Snacks.picker.get() == 0"), WAIT, "the pickers closed")

    def capture(self, first=None, last=None):
        """The pane's text with its colours (rows `first`..`last`, 0-based, negative from the end)."""
        cmd = [*self.tmux, "capture-pane", "-e", "-p", "-t", "shots"]
        if first is not None:
            cmd += ["-S", str(first if first >= 0 else ROWS + first)]
        if last is not None:
            cmd += ["-E", str(last if last >= 0 else ROWS + last)]
        return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout

    def redraw(self):
        # The statusline says "busy" for a moment after Claude's terminal printed: let it settle.
        try:
            wait_until(lambda: "busy" not in self.lua("return require('claude_context.status').text()"), 4, "idle")
        except TimeoutError:
            pass
        self.nvim.command("echo '' | redraw!")
        time.sleep(0.8)


MADE: list = []


def render(ansi: str, title: str, path: Path) -> None:
    """The captured pane as an SVG picture (rich's terminal export)."""
    from rich.console import Console
    from rich.text import Text

    console = Console(record=True, width=COLS, file=io.StringIO(), force_terminal=True, color_system="truecolor")
    lines = ansi.rstrip("\n").split("\n")
    for line in lines:
        console.print(Text.from_ansi(line), no_wrap=True, crop=True, overflow="crop")
    # Spaces kept as they are in every renderer (librsvg trims a text's leading ones otherwise).
    svg = console.export_svg(title=title).replace("<svg ", '<svg xml:space="preserve" ', 1)
    path.write_text(svg)
    MADE.append(path.stem)
    size = path.stat().st_size
    print(f"{path}: {len(lines)} rows, {size // 1024} KB")
    if size > MAX_BYTES:
        raise SystemExit(f"{path} is {size} bytes, over {MAX_BYTES}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(REPO / "doc/screenshots"))
    ap.add_argument("--keep", action="store_true", help="keep the temporary world")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for need, how in ((PYLSP, "make deps"), (CLAUDE, "make deps"), (NVIM, "make deps")):
        if not need.exists():
            raise SystemExit(f"{need} is missing: run `{how}` (or `make screenshots`, which runs it)")
    if not (SNACKS / "lua/snacks/init.lua").exists():
        raise SystemExit(
            f"snacks.nvim is missing ({SNACKS}): the pictures show its picker, and no package registry has it."
            f" Get it with `{SNACKS_HOW}` (the folder is git-ignored), then run `make screenshots` again."
        )
    print(f"Claude Code {'.'.join(map(str, cli_version(CLAUDE))) or '(version unknown)'}: {CLAUDE}")
    s = Session(a.keep)
    try:
        run(s, out)
        if sorted(MADE) != sorted(OUTPUTS):
            raise SystemExit(f"made {MADE}, but OUTPUTS says {list(OUTPUTS)}")
    except BaseException:
        try:
            print("terminal:\n" + s.terminal_text()[-3000:], file=sys.stderr)
            print("screen:\n" + s.capture(), file=sys.stderr)
        except Exception:
            pass
        raise
    finally:
        s.close()
    return 0


def title(req):
    """The model's answer to Claude Code's title request (when the CLI asks one): the prompt the
    conversation began with, as a title, rather than the stub's "Stub title"."""
    fmt = ((req.body or {}).get("output_config") or {}).get("format") or {}
    text = req.all_text()
    prompts = [p for p in PROMPTS if p in text]
    if not prompts:
        return None
    name = prompts[0][0].upper() + prompts[0][1:]
    if fmt.get("type") == "json_schema":
        return {"text": json.dumps(schema_example(fmt.get("schema"), name))}
    return {"text": name}


def run(s: Session, out: Path) -> None:
    s.stub.side_responder = title
    # snacks.nvim's picker, set up as its README says: `sessions.picker = "auto"` finds it.
    s.lua("vim.opt.rtp:append(...); require('snacks').setup({ picker = { enabled = true, prompt = '> ' } })", str(SNACKS))
    s.lua(TABLINE)
    code_tools = ",".join(f"mcp__claude-context__{t}" for t in ("lsp_definition", "lsp_references"))
    terminal = {
        "args": ["--allowedTools", code_tools],
        "env": s.claude_env,
        "side": "right",
        "size": 0.5,
    }
    s.lua(
        "require('claude_context').setup(...)",
        {
            "terminal": terminal,
            "claude": {"cmd": str(CLAUDE)},
            "handshake_timeout_ms": 15000,
            "review": {"auto_open": False},
            # The keys this script sends are not a person typing: a diff takes the cursor.
            "diff": {"typing_ms": 0},
        },
    )
    s.lua(
        "vim.o.statusline = [[ %f %m%= %{v:lua.require'claude_context.status'.text()}"
        "   %{v:lua.require'claude_context.sessions.state'.statusline()} ]]"
        "; vim.o.laststatus = 3; vim.o.number = true; vim.o.signcolumn = 'yes'"
    )
    # The person's language server for Python, as they would configure it.
    s.lua(
        "vim.lsp.config('pylsp', { cmd = { ... }, filetypes = { 'python' }, root_markers = { '.git' } });"
        " vim.lsp.enable('pylsp')",
        str(PYLSP),
    )
    wait_until(lambda: s.lua("return #vim.lsp.get_clients({ bufnr = 0 })") > 0, WAIT, "pylsp attached")
    s.nvim.command("ClaudeContext open")
    wait_until(lambda: re.search(READY, s.terminal_text()), WAIT, "the CLI prompt")

    # Turn 1: an edit proposed as a diff.
    parser = str(s.project / "src/parser.py")

    def edit(_req):
        return {
            "text": "`parse` is used by `total` only. Renaming it, keeping an alias:",
            "tool_use": {
                "name": "Edit",
                "input": {
                    "file_path": parser,
                    "old_string": 'def parse(text):\n    """Split text into numbers and operators."""',
                    "new_string": 'def read_tokens(text):\n    """Split text into numbers and operators, in order."""',
                },
            },
        }

    s.stub.push(
        {"text": "Reading it first.", "tool_use": {"name": "Read", "input": {"file_path": parser}}},
        edit,
        {"tool_use": {"name": "Edit", "input": {"file_path": parser, "old_string": "for t in parse(text)", "new_string": "for t in read_tokens(text)"}}},
        {"text": "Renamed `parse` to `read_tokens` and updated `total`."},
    )
    s.type_prompt("rename parse to read_tokens")
    def diff_open():
        return s.lua("local _, v = next(require('claude_context.ide.diff').views); return v and v.prop_win and true or nil")

    wait_until(diff_open, WAIT, "the first diff")
    time.sleep(1.5)
    s.redraw()
    render(s.capture(), "A proposed edit, file against proposal: :w accepts, :q rejects", out / "diff.svg")
    s.nvim.command("ClaudeContext accept")
    wait_until(lambda: not diff_open(), WAIT, "the first diff to close")
    wait_until(diff_open, WAIT, "the second diff")
    time.sleep(0.5)
    s.nvim.command("ClaudeContext accept")
    wait_until(lambda: "Renamed parse" in s.terminal_text() or "Renamed `parse`" in s.terminal_text(), WAIT, "the end of the turn")
    wait_until(lambda: [t for t in s.lua("return require('claude_context').turns()") if t.get("end_ms")], WAIT, "the turn recorded")
    s.lua("vim.cmd('tabonly'); vim.cmd.edit(vim.fn.fnameescape(...)); vim.cmd('checktime')", parser)
    time.sleep(1.5)
    s.repaint()
    s.redraw()
    render(s.capture(), "Claude's terminal beside the code, connected to Neovim", out / "terminal.svg")

    # The review of that turn.
    s.nvim.command("ClaudeContext review")
    time.sleep(2.5)
    s.redraw()
    render(s.capture(), ":ClaudeContext review: the turn's files, hunk by hunk", out / "review.svg")
    s.lua("pcall(vim.cmd, 'ClaudeContext review close'); vim.cmd('tabonly')")

    # Edit in place: read_tokens rewritten, the answer streamed into the buffer as hunks.
    s.stub.push({"text": "Here it is:\n```python\n" + "\n".join(EDITED) + "\n```\n", "pieces": "lines", "delay": 0.05})
    s.lua(
        "vim.fn.win_gotoid(vim.fn.bufwinid(vim.fn.bufnr(...))); vim.cmd('tab split | normal! gg');"
        " local a = vim.fn.search('^def read_tokens'); local b = vim.fn.search('return tokens');"
        " vim.cmd(a .. ',' .. b .. 'ClaudeContext edit use a comprehension and type hints')",
        parser,
    )
    wait_until(lambda: s.lua("return require('claude_context.edit.hunks').active[vim.api.nvim_get_current_buf()] ~= nil"), WAIT, "the edit's hunks")
    time.sleep(1.0)
    s.redraw()
    render(s.capture(), ":'<,'>ClaudeContext edit: Claude's change streamed into the buffer, hunk by hunk (a keeps, x rejects)", out / "edit.svg")
    s.lua("require('claude_context.edit.hunks').act(vim.api.nvim_get_current_buf(), 'reject_all'); vim.cmd('silent update | tabclose')")

    # Turn 2: the code tools, asked from Claude's terminal. The model's answer is made from the
    # tools' real answers (pylsp's).
    s.focus_terminal()
    s.repaint()

    def where(req):
        d, r = (json.loads(t) for t in req.tool_result_texts(last_only=False)[-2:])
        at = [f"{f['path']}:{loc['line']}" for f in d["sections"][0]["files"] for loc in f["locations"]]
        used = [f"{f['path']}:{loc['line']}" for f in r["sections"][0]["files"] for loc in f["locations"]]
        return {"text": f"`read_tokens`: defined at {', '.join(at)}, used at {', '.join(used)}."}

    where_args = {"symbol": "read_tokens", "file": "src/parser.py"}
    s.stub.push(
        {"text": "Asking your language server.", "tool_use": {"name": "mcp__claude-context__lsp_definition", "input": where_args}},
        {"tool_use": {"name": "mcp__claude-context__lsp_references", "input": where_args}},
        where,
    )
    s.type_prompt("where is read_tokens used?")
    wait_until(lambda: "`read_tokens`: defined at" in s.terminal_text() or "read_tokens: defined at" in s.terminal_text(), WAIT, "the answer from the code tools")
    # Claude Code folds a tool's call and answer; its transcript (ctrl+o) shows them.
    s.send_terminal("\x0f")
    wait_until(lambda: "ctrl+o to toggle" in s.terminal_screen(), WAIT, "the transcript")
    time.sleep(1.0)
    if not s.terminal_from("lsp_references (MCP)"):
        s.terminal_from(None)
        s.transcript_from("lsp_references (MCP)")
    s.redraw()
    render(s.capture(), "The model asks your language server: lsp_definition, lsp_references (Claude's transcript, ctrl+o)", out / "code.svg")
    s.send_terminal("\x0f")
    wait_until(lambda: "ctrl+o to toggle" not in s.terminal_screen(), WAIT, "the transcript closed")
    s.terminal_from(None)

    # A second session in plan mode.
    s.lua("require('claude_context.config').options.terminal.args = { '--permission-mode', 'plan' }")
    s.nvim.command("ClaudeContext sessions planner")
    wait_until(lambda: re.search(READY, s.terminal_text()), WAIT, "the planner's prompt")

    plan_file = {}

    def write(req):
        m = re.search(r"(/[^\s`'\"]*/plans/[^\s`'\"]+\.md)", req.system_text() + "\n" + req.all_text())
        if not m:
            raise RuntimeError("the plan-mode reminder names no plan file")
        plan_file["path"] = m.group(1)
        return {"tool_use": {"name": "Write", "input": {"file_path": m.group(1), "content": PLAN}}}

    s.stub.push(write, {"tool_use": {"name": "ExitPlanMode", "input": {}}})
    s.type_prompt("plan the rename for the callers")
    wait_until(
        lambda: s.lua(
            "for _, x in ipairs(vim.api.nvim_list_bufs()) do"
            " if vim.api.nvim_buf_is_loaded(x) and vim.api.nvim_buf_get_name(x):match('^claude%-plan://') then return x end end"
        ),
        WAIT,
        "the plan buffer",
    )
    time.sleep(1.5)
    s.redraw()
    render(s.capture(), "Plan review: :w approves, an edited plan goes back to Claude", out / "plan.svg")
    render(s.capture(-2, -1), "The statusline: the bridge and the sessions' states", out / "statusline.svg")

    # The memory bank the model reads: `:ClaudeContext context main`.
    s.nvim.command("tab ClaudeContext context main")
    time.sleep(1.5)
    s.redraw()
    render(s.capture(), ":ClaudeContext context: the memory bank Claude reads for this branch", out / "memory.svg")

    # Background sessions in worktrees: `:ClaudeContext new NAME PROMPT`, one after the other
    # (the stub answers them in order). Edits are accepted there; a command asks the person.
    s.lua("vim.cmd('tabclose | tabfirst'); local t = require('claude_context.config').options.terminal; t.args = {}; t.permission_mode = 'acceptEdits'")
    (doc_name, doc_prompt), (test_name, test_prompt) = AGENTS
    doc_wt = s.project / ".claude/worktrees" / doc_name
    s.stub.push(
        {"tool_use": {"name": "Read", "input": {"file_path": str(doc_wt / "src/parser.py")}}},
        {
            "tool_use": {
                "name": "Edit",
                "input": {
                    "file_path": str(doc_wt / "src/parser.py"),
                    "old_string": "def total(text):\n",
                    "new_string": 'def total(text):\n    """The sum of the numbers in text; operators are skipped."""\n',
                },
            }
        },
        {"text": "`total` documents that it skips operators."},
    )
    s.nvim.command(f"ClaudeContext new {doc_name} {doc_prompt}")
    wait_until(lambda: s.agent_state(doc_name) == "done", WAIT * 3, f"{doc_name} done", interval=2)

    test_wt = s.project / ".claude/worktrees" / test_name
    s.stub.push(
        {
            "tool_use": {
                "name": "Write",
                "input": {
                    "file_path": str(test_wt / "tests/test_parser.py"),
                    "content": 'from src.parser import read_tokens\n\n\ndef test_read_tokens():\n    assert read_tokens("1 + 2") == [1, "+", 2]\n',
                },
            }
        },
        {"tool_use": {"name": "Bash", "input": {"command": "python -m pytest -q tests", "description": "Run the tests"}}},
        {"text": "The test passes."},
    )
    s.nvim.command(f"ClaudeContext new {test_name} {test_prompt}")
    wait_until(lambda: s.agent_state(test_name) == "waiting", WAIT * 3, f"{test_name} waiting", interval=2)
    time.sleep(1.0)
    s.redraw()
    # The picker (snacks.nvim's), typed as a person would.
    s.nvim.input(":ClaudeContext agents\r")
    wait_until(lambda: s.picker_open("claude_context_agents"), WAIT, "the agents picker")
    time.sleep(1.5)
    render(s.capture(), ":ClaudeContext agents: every Claude session of the project, background ones in their worktrees", out / "agents.svg")
    s.close_pickers()

    # Every conversation of the project (its worktrees' too); the first session's previewed, its
    # line reached with <Down> as a person would.
    s.nvim.input(":ClaudeContext conversations\r")
    wait_until(lambda: s.picker_open("conversations"), WAIT, "the conversations picker")
    at = wait_until(
        lambda: s.lua(
            "for i, it in ipairs(Snacks.picker.get({ source = 'conversations' })[1]:items()) do"
            " if (it.entry.first_prompt or ''):find('rename parse', 1, true) then return i end end"
        ),
        WAIT,
        "the first session's conversation listed",
    )
    s.nvim.input("<Down>" * (at - 1))
    time.sleep(1.5)
    s.redraw()
    render(s.capture(), ":ClaudeContext conversations: every conversation of the project, with what was said", out / "conversations.svg")
    s.close_pickers()


if __name__ == "__main__":
    sys.exit(main())
