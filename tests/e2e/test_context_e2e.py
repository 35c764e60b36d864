"""End to end with the real Claude Code CLI (print mode, loopback model stub): the model asks for
the context tools — read_context, get_current_status and friends — and the test checks the
tool_results the CLI sent back to the model. Runs against both bridges (serve and Neovim)."""

from __future__ import annotations

import json

RC = "mcp__nvim__read_context"
ST = "mcp__nvim__get_current_status"
DI = "mcp__nvim__define_issue"
RO = "mcp__nvim__register_options"
WB = "mcp__nvim__write_branch_memory_bank"
RB = "mcp__nvim__read_branch_memory_bank"
SE = "mcp__nvim__search_documents_by_tags"

BRANCH = "feature/e2e"


def results_of(req):
    """(is_error, text) of each tool_result in a request's last user message, in order."""
    texts = req.tool_result_texts()
    res = req.tool_results()
    assert len(texts) == len(res), res
    return [(bool(r.get("is_error")), t) for r, t in zip(res, texts)]


def seed_bank(project):
    docs = project / "docs"
    b = docs / "branch-memory-bank" / "feature-e2e"
    b.mkdir(parents=True)
    (b / "activeContext.md").write_text(
        "# アクティブコンテキスト\n\ntags: #core #active-context\n\n## 現在の作業\nE2E テストを書いている\n",
        encoding="utf-8",
    )
    g = docs / "global-memory-bank"
    g.mkdir(parents=True)
    (g / "architecture.md").write_text(
        "# Architecture\n\ntags: #core #architecture\n\nRust core, Lua shell.\n", encoding="utf-8"
    )
    (g / "notes.md").write_text("# Notes\n\ntags: #note\n\nnot a core file\n", encoding="utf-8")


def test_cli_reads_the_context_and_the_decision_status(bridge, claude, model_stub, world):
    seed_bank(world.project)
    model_stub.push(
        {
            "tool_use": [
                # Japanese asked for by name: without `language` the tools speak the editor's
                # language (English here), not the original servers' Japanese.
                {"name": RC, "input": {"branch": BRANCH, "language": "ja"}},
                {"name": ST, "input": {}},
            ]
        },
        {
            "tool_use": [
                {"name": DI, "input": {"title": "DB選定", "description": "どのDBを使うか", "constraints": ["予算内"]}},
            ]
        },
        {"tool_use": {"name": RO, "input": {"options": ["PostgreSQL", {"text": "SQLite", "supplementaryInfo": "組み込み"}, "MySQL"]}}},
        {"tool_use": {"name": ST, "input": {}}},
        {"text": "done"},
    )
    r = claude.run("Load the project context", bridge)
    out = r.json
    assert r.returncode == 0 and not out["is_error"], out
    reqs = model_stub.agent_requests()
    assert len(reqs) == 5, [q.path for q in reqs]
    for name in (RC, ST, DI, RO, "mcp__nvim__read_rules", "mcp__nvim__get_recent_branches", "mcp__nvim__reset"):
        assert name in reqs[0].tool_names, reqs[0].tool_names

    (rc_err, rc_text), (st_err, st_text) = results_of(reqs[1])
    assert not rc_err, rc_text
    ctx = json.loads(rc_text)
    assert list(ctx) == ["rules", "branchMemory", "globalMemory", "notes"], list(ctx)
    assert "メモリバンクのルール" in ctx["rules"]["content"]
    doc = ctx["branchMemory"]["activeContext.md"]
    assert doc["path"] == "activeContext.md"
    assert doc["tags"] == ["core", "active-context"]
    assert "E2E テストを書いている" in doc["content"]
    assert doc["lastModified"].endswith("Z")
    assert list(ctx["globalMemory"]) == ["architecture.md"]  # notes.md is not a core file
    assert any("progress.md" in n for n in ctx["notes"]), ctx["notes"]
    # No issue yet: not an error; the CLI hands the model the structured content (
    # get_current_status has an outputSchema), which says so verbatim with null data.
    assert not st_err
    st0 = json.loads(st_text)
    assert st0["message"] == "課題が定義されていません" and st0["issue"] is None, st0

    # With structuredContent, the CLI (2.1.197) hands the model that JSON rather than the text.
    ((di_err, di_text),) = results_of(reqs[2])
    assert not di_err, di_text
    issue = json.loads(di_text)
    assert issue["title"] == "DB選定" and issue["constraints"] == ["予算内"], issue
    assert len(issue["id"]) == 36 and issue["createdAt"].endswith("Z")
    ((ro_err, ro_text),) = results_of(reqs[3])
    assert not ro_err, ro_text
    reg = json.loads(ro_text)
    assert reg["issueId"] == issue["id"] and len({o["id"] for o in reg["options"]}) == 3, reg
    ((st_err, st_text),) = results_of(reqs[4])
    assert not st_err, st_text
    status = json.loads(st_text)
    assert status["issue"] == {k: v for k, v in issue.items() if k != "issue"}
    assert issue["issue"] == "DB選定"  # mcp-decisive's field beside ours
    assert [o["text"] for o in status["options"]] == ["PostgreSQL", "SQLite", "MySQL"]
    assert status["options"][1]["supplementaryInfo"] == "組み込み"
    assert status["workflow"]["step"] == "reality-test"


def test_cli_sees_context_errors_and_writes(bridge, claude, model_stub, world):
    seed_bank(world.project)
    (world.root / "secret.md").write_text("do not read", encoding="utf-8")
    model_stub.push(
        {
            "tool_use": [
                {"name": RC, "input": {}},
                {"name": RC, "input": {"branch": BRANCH, "language": "fr"}},
                {"name": RB, "input": {"branch": BRANCH, "path": "../../../../secret.md"}},
            ]
        },
        {
            "tool_use": {
                "name": WB,
                "input": {"branch": "feature/new", "path": "progress.md", "content": "# Progress\n\ntags: #core #progress\n\n半分", "language": "en"},
            }
        },
        {"tool_use": {"name": SE, "input": {"tags": ["progress"], "scope": "branch", "branch": "feature/new"}}},
        {"text": "done"},
    )
    r = claude.run("Try the memory bank", bridge)
    assert r.returncode == 0 and not r.json["is_error"], r.stdout
    reqs = model_stub.agent_requests()
    assert len(reqs) == 4
    errs = results_of(reqs[1])
    assert [e for e, _ in errs] == [True, True, True], errs
    assert "needs 'branch'" in errs[0][1]
    assert "'fr'" in errs[1][1]
    assert "refused" in errs[2][1] and "do not read" not in errs[2][1]

    ((w_err, w_text),) = results_of(reqs[2])
    assert not w_err, w_text
    w = json.loads(w_text)
    assert w["bankCreated"] is True and w["created"] is True
    assert w["seeded"] == ["branchContext.md", "activeContext.md", "systemPatterns.md"]
    bank = world.project / "docs" / "branch-memory-bank" / "feature-new"
    assert (bank / "progress.md").read_text(encoding="utf-8").endswith("半分")
    assert (bank / "activeContext.md").read_text(encoding="utf-8").startswith("# Active context")

    ((s_err, s_text),) = results_of(reqs[3])
    assert not s_err, s_text
    found = json.loads(s_text)
    assert found["count"] == 1 and found["documents"][0]["path"] == "progress.md", found
