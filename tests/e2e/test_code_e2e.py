"""End to end: the model's code tools through `/mcp`. A real Neovim runs the person's language
server (python-lsp-server from .deps/lsp, `make deps`); the real CLI (`claude -p`, pinned and
newest) reaches the bridge's `/mcp` door through `--mcp-config`; the loopback model stub asks it
to call `lsp_references` on a file that is not open, and the test checks the locations in the
tool result against the server's own answer."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from conftest import REPO, wait_until

PYLSP = REPO / ".deps/lsp/venv/bin/pylsp"
REFS = "mcp__nvim__lsp_references"

SHAPES = """class Shape:
    def area(self):
        return 0


def total(shapes):
    return sum(s.area() for s in shapes)
"""

MAIN = """from shapes import Shape, total

print(total([Shape()]))
print(total([]))
"""


def setup_project(world, bridge):
    (world.project / ".git").mkdir(exist_ok=True)
    (world.project / "shapes.py").write_text(SHAPES)
    (world.project / "main.py").write_text(MAIN)
    (world.project / "start.py").write_text("x = 1\n")
    # The person's set-up: pylsp for Python; they open a file (the server starts) and close it.
    bridge.lua(
        """
        local pylsp, dir = ...
        vim.cmd("filetype on")
        vim.lsp.config("pylsp", { cmd = { pylsp }, filetypes = { "python" }, root_markers = { ".git" } })
        vim.lsp.enable("pylsp")
        vim.cmd.edit(dir .. "/start.py")
        """,
        str(PYLSP),
        str(world.project),
    )
    wait_until(
        lambda: bridge.lua("return #vim.lsp.get_clients({ bufnr = 0 })") > 0,
        60,
        what="pylsp attached",
    )
    bridge.lua("vim.cmd('bwipeout!')")


def server_references(world, bridge):
    """pylsp's own answer to the same question, as `path:line:col` (ASCII: units are characters)."""
    locs = bridge.lua(
        """
        local path = ...
        local buf = vim.fn.bufadd(path)
        vim.fn.bufload(buf)
        vim.wait(30000, function() return #vim.lsp.get_clients({ bufnr = buf }) > 0 end)
        local c = vim.lsp.get_clients({ bufnr = buf })[1]
        local r = c:request_sync("textDocument/references", {
          textDocument = { uri = vim.uri_from_fname(path) },
          position = { line = 2, character = 6 },
          context = { includeDeclaration = true },
        }, 30000, buf)
        vim.api.nvim_buf_delete(buf, { force = true })
        local out = {}
        for _, l in ipairs(r.result) do
          table.insert(out, { vim.uri_to_fname(l.uri), l.range.start.line + 1, l.range.start.character + 1 })
        end
        return out
        """,
        str(world.project / "main.py"),
    )
    return sorted(f"{p[len(str(world.project)) + 1:]}:{line}:{col}" for p, line, col in locs)


def places(text):
    """The answer's locations as `path:line:col`, and the line texts by `path:line`."""
    if text.startswith("{"):
        # The CLI hands the model the structuredContent when there is one (2.1.197 does).
        ans = json.loads(text)
        got = [f"{f['path']}:{l['line']}:{l['col']}" for f in ans["sections"][0]["files"] for l in f["locations"]]
        texts = {f"{f['path']}:{l['line']}": l["text"] for f in ans["sections"][0]["files"] for l in f["locations"]}
        return sorted(got), texts
    # The text: grouped by file, `path` then `line:col-end  | text`.
    got, texts, current = [], {}, None
    for line in text.splitlines():
        m = re.match(r"^  (\d+):(\d+)\S*\s+\| (.*)$", line)
        if m and current:
            got.append(f"{current}:{m.group(1)}:{m.group(2)}")
            texts[f"{current}:{m.group(1)}"] = m.group(3)
        elif line and not line.startswith(" ") and line.endswith(".py"):
            current = line
    return sorted(got), texts


def ask_references(nvim_bridge, claude, model_stub, world, args):
    """The model calls lsp_references with `args` through /mcp; returns the answer's text."""
    setup_project(world, nvim_bridge)
    cfg = world.root / "mcp-door.json"
    conf = nvim_bridge.mcp_config("nvim")
    conf["mcpServers"]["nvim"]["url"] = nvim_bridge.url + "/mcp"
    cfg.write_text(json.dumps(conf))
    model_stub.push({"tool_use": {"name": REFS, "input": args}}, {"echo_tool_result": True})
    r = claude.run("Where is total used?", None, args=("--mcp-config", str(cfg)))
    assert r.returncode == 0, r.stderr
    reqs = model_stub.agent_requests()
    assert len(reqs) == 2, [q.path for q in reqs]
    assert REFS in reqs[0].tool_names, reqs[0].tool_names
    for t in ("lsp_definition", "lsp_hover", "lsp_calls", "code_outline", "lsp_diagnostics"):
        assert f"mcp__nvim__{t}" in reqs[0].tool_names
    (res,) = reqs[1].tool_results()
    assert not res.get("is_error"), res
    return "\n".join(reqs[1].tool_result_texts())


def stop_servers(nvim_bridge):
    """The person's server goes with their editor."""
    nvim_bridge.lua("vim.lsp.stop_client(vim.lsp.get_clients(), true)")
    wait_until(lambda: nvim_bridge.lua("return #vim.lsp.get_clients()") == 0, 30, what="pylsp stopped")
    wait_until(lambda: "pylsp" not in children(nvim_bridge.pid), 30, what="pylsp's process gone")


def test_the_model_finds_references_through_mcp(nvim_bridge, claude, model_stub, world):
    if not PYLSP.exists():
        pytest.fail(f"python-lsp-server is not at {PYLSP} (run `make deps`)")
    args = {"file": "main.py", "line": 3, "text": "total", "include_declaration": True}
    text = ask_references(nvim_bridge, claude, model_stub, world, args)
    want = server_references(world, nvim_bridge)
    assert want == ["main.py:1:27", "main.py:3:7", "main.py:4:7", "shapes.py:6:5"], want
    got, texts = places(text)
    assert texts["shapes.py:6"] == "def total(shapes):", text
    assert got == want, text
    # The file was not open, and is not left open.
    assert nvim_bridge.lua("return vim.fn.bufnr(...)", str(world.project / "main.py")) == -1
    stop_servers(nvim_bridge)


def test_a_symbol_alone_with_pylsp_which_cannot_search_the_workspace(nvim_bridge, claude, model_stub, world):
    # pylsp has no workspace symbol search: the definition is found in the project's outline
    # (the files holding the name, parsed), then pylsp is asked there.
    if not PYLSP.exists():
        pytest.fail(f"python-lsp-server is not at {PYLSP} (run `make deps`)")
    text = ask_references(nvim_bridge, claude, model_stub, world, {"symbol": "total", "include_declaration": True})
    got, texts = places(text)
    assert got == server_references(world, nvim_bridge), text
    assert texts["shapes.py:6"] == "def total(shapes):", text
    for f in ("main.py", "shapes.py"):
        assert nvim_bridge.lua("return vim.fn.bufnr(...)", str(world.project / f)) == -1
    stop_servers(nvim_bridge)


def children(pid: int) -> str:
    return subprocess.run(["ps", "-o", "args=", "--ppid", str(pid)], capture_output=True, text=True).stdout
