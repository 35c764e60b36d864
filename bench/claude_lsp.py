"""Claude Code's own LSP tool (`LSP`, since 2.0.74) beside ours, with python-lsp-server.

Run with pytest (it borrows the e2e fixtures: a temporary HOME and config, the loopback model
stub, the CLIs of `make test-e2e`):

    CLAUDE_CONTEXT_TEST_CLAUDES=$PWD/.deps/claude-2.1.330/node_modules/.bin/claude \
      .deps/venv/bin/python -m pytest -q -s bench/claude_lsp.py

Claude Code runs language servers from plugins: a plugin directory (`--plugin-dir`) whose
`.lsp.json` maps `.py` to .deps/lsp's pylsp, with `ENABLE_LSP_TOOL=1`. The stub model calls
`LSP` with `findReferences` at `total`'s definition (twice), then `workspaceSymbol` for `total` (the only
operation without a position), and prints what came back and how long each call took (from the
stub's view: the answer to the tool_use turn to the next request carrying the result). Then the
same through our `/mcp` door (`lsp_references` at the same place, twice, then by `symbol` alone),
with the same pylsp run by Neovim as a person's set-up runs it (already running: the first
figure has no server start in it, unlike Claude Code's first).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests/e2e"))

from conftest import claude, cli_exe, model_stub, nvim_bridge, world  # noqa: E402,F401

PYLSP = REPO / ".deps/lsp/venv/bin/pylsp"
SHAPES = "class Shape:\n    def area(self):\n        return 0\n\n\ndef total(shapes):\n    return sum(s.area() for s in shapes)\n"
MAIN = "from shapes import Shape, total\n\nprint(total([Shape()]))\nprint(total([]))\n"


def test_claude_codes_lsp_tool(claude, model_stub, world):  # noqa: F811
    (world.project / ".git").mkdir(exist_ok=True)
    (world.project / "shapes.py").write_text(SHAPES)
    (world.project / "main.py").write_text(MAIN)
    plug = world.root / "pylsp-plugin"
    (plug / ".claude-plugin").mkdir(parents=True)
    (plug / ".claude-plugin/plugin.json").write_text(json.dumps({"name": "pylsp-bench", "version": "0.0.1"}))
    (plug / ".lsp.json").write_text(json.dumps({"python": {"command": str(PYLSP), "extensionToLanguage": {".py": "python"}}}))
    shapes = str(world.project / "shapes.py")
    ops = [
        {"operation": "findReferences", "filePath": shapes, "line": 6, "character": 5},
        {"operation": "findReferences", "filePath": shapes, "line": 6, "character": 5},
        {"operation": "workspaceSymbol", "filePath": shapes, "line": 1, "character": 1, "query": "total"},
    ]
    for op in ops:
        model_stub.push({"tool_use": {"name": "LSP", "input": op}})
    model_stub.push({"echo_tool_result": True})
    r = claude.run("Where is total used?", None, args=("--plugin-dir", str(plug)), env={"ENABLE_LSP_TOOL": "1"})
    reqs = model_stub.agent_requests()
    print(f"\nclaude {claude.version}: exit {r.returncode}; {len(reqs)} model requests; LSP offered: {'LSP' in reqs[0].tool_names}")
    for i, op in enumerate(ops):
        if i + 1 >= len(reqs):
            break
        took = (reqs[i + 1].time - reqs[i].time) * 1000
        texts = "\n".join(reqs[i + 1].tool_result_texts())[:400].replace("\n", " | ")
        print(f"{op['operation']}: {took:.0f} ms (model turn included): {texts}")


def timed(model_stub, claude, cli_args, env, calls):
    """Runs the stub's `calls` (tool name, input) in one `claude -p`; prints each one's time."""
    for name, args in calls:
        model_stub.push({"tool_use": {"name": name, "input": args}})
    model_stub.push({"echo_tool_result": True})
    r = claude.run("Where is total used?", None, args=cli_args, env=env)
    reqs = model_stub.agent_requests()
    print(f"\nclaude {claude.version}: exit {r.returncode}; {len(reqs)} model requests")
    for i, (name, args) in enumerate(calls):
        if i + 1 >= len(reqs):
            break
        took = (reqs[i + 1].time - reqs[i].time) * 1000
        texts = "\n".join(reqs[i + 1].tool_result_texts())[:300].replace("\n", " | ")
        print(f"{name} {json.dumps(args)}: {took:.0f} ms: {texts}")


def test_ours(nvim_bridge, claude, model_stub, world):  # noqa: F811
    (world.project / ".git").mkdir(exist_ok=True)
    (world.project / "shapes.py").write_text(SHAPES)
    (world.project / "main.py").write_text(MAIN)
    (world.project / "start.py").write_text("x = 1\n")
    nvim_bridge.lua(
        """
        local pylsp, dir = ...
        vim.cmd("filetype on")
        vim.lsp.config("pylsp", { cmd = { pylsp }, filetypes = { "python" }, root_markers = { ".git" } })
        vim.lsp.enable("pylsp")
        vim.cmd.edit(dir .. "/start.py")
        vim.wait(60000, function() return #vim.lsp.get_clients({ bufnr = 0 }) > 0 end, 10)
        """,
        str(PYLSP),
        str(world.project),
    )
    cfg = world.root / "mcp-door.json"
    conf = nvim_bridge.mcp_config("nvim")
    conf["mcpServers"]["nvim"]["url"] = nvim_bridge.url + "/mcp"
    cfg.write_text(json.dumps(conf))
    at = {"file": "shapes.py", "line": 6, "column": 5, "include_declaration": True}
    refs = "mcp__nvim__lsp_references"
    timed(
        model_stub,
        claude,
        ("--mcp-config", str(cfg)),
        {},
        [(refs, at), (refs, at), (refs, {"symbol": "total", "include_declaration": True})],
    )
