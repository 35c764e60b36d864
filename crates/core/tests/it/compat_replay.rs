//! Drop-in replays: each original server's own calls, as its README and tool
//! definitions show them, sent to the bridge over a real WebSocket connection; every answer must
//! carry every field the original returned (beside ours), and every structured answer must come
//! from a tool whose `outputSchema` lists its required fields.
//!
//! * yodakeisuke/mcp-desicive (WRAP): define_issue, register_options, get_current_status,
//!   make-tripwire, reset, prompts identify-issue (identify-the-issue) / widen-options.
//! * tethiro/mcp-claude-context-continuity (sessions): execute_claude, execute_claude_with_context,
//!   get_execution_history, get_current_session, set_current_session, reset_session,
//!   clear_execution_history, test_claude_cli — against a fake `claude`.
//! * t3ta/memory-bank-mcp-server (memory bank v2 and v3): the v2 per-scope tools with `docs`,
//!   read_context, read_rules, search_documents_by_tags, get_recent_branches, and v3
//!   write_document / read_document (README examples, JSON Patch, branch auto-detection).
//! * cl-ai-project/cl-mcp (project info): fs-get-project-info, fs-set-project-root, and the file
//!   tools resolving against the root it sets, for that connection only.
#![cfg(unix)]

use crate::common;

use serde_json::{json, Value};
use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;

/// The tools/list answer by name.
fn listed(c: &mut common::Raw) -> HashMap<String, Value> {
    let r = c.call("tools/list", json!({}));
    r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_string(), t.clone()))
        .collect()
}

/// Calls `tool` (by the original's name) and returns its structured content after checking it
/// is not an error, has every field in `fields` (dotted paths into objects), and that the tool's
/// listed `outputSchema` (under `listed_as`) requires nothing it lacks.
fn replay(
    c: &mut common::Raw,
    tools: &HashMap<String, Value>,
    tool: &str,
    listed_as: &str,
    args: Value,
    fields: &[&str],
) -> Value {
    let r = c.tool(tool, args.clone());
    assert_ne!(r["isError"], true, "{tool} {args}: {r}");
    let sc = r["structuredContent"].clone();
    assert!(sc.is_object(), "{tool}: no structuredContent: {r}");
    for f in fields {
        let mut v = &sc;
        for part in f.split('.') {
            v = v
                .get(part)
                .unwrap_or_else(|| panic!("{tool}: the original's field '{f}' is missing: {sc}"));
        }
    }
    let schema = &tools
        .get(listed_as)
        .unwrap_or_else(|| panic!("{listed_as} is not listed"))["outputSchema"];
    assert!(schema.is_object(), "{listed_as} has no outputSchema");
    for req in schema["required"].as_array().into_iter().flatten() {
        let k = req.as_str().unwrap();
        assert!(sc.get(k).is_some(), "{tool}: schema requires '{k}': {sc}");
    }
    sc
}

#[test]
fn mcp_desicive_wrap_calls() {
    let s = common::start(json!({}));
    let mut c = s.client();
    let init = c.call(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "replay", "version": "1"}}),
    );
    assert!(
        init["result"]["capabilities"]["prompts"].is_object(),
        "{init}"
    );
    let tools = listed(&mut c);
    // Its prompts.
    let p = c.call("prompts/list", json!({}));
    let names: Vec<&str> = p["result"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"identify-issue") && names.contains(&"widen-options"),
        "{p}"
    );
    for name in ["identify-the-issue", "identify-issue"] {
        let g = c.call(
            "prompts/get",
            json!({"name": name, "arguments": {"problem": "新しいDBを選びたい"}}),
        );
        let text = g["result"]["messages"][0]["content"]["text"]
            .as_str()
            .unwrap();
        assert!(
            text.contains("新しいDBを選びたい") && text.contains("define_issue"),
            "{g}"
        );
    }
    let g = c.call("prompts/get", json!({"name": "widen-options"}));
    assert!(g["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap()
        .contains("register_options"));

    let st = replay(
        &mut c,
        &tools,
        "get_current_status",
        "get_current_status",
        json!({}),
        &[
            "workflowState.current",
            "workflowState.displayName",
            "currentStatus",
            "nextActions",
        ],
    );
    assert_eq!(st["workflowState"]["current"], "undefined");
    let di = replay(
        &mut c,
        &tools,
        "define_issue",
        "define_issue",
        json!({"issue": "DB選定", "context": "新サービスの永続化層", "constraints": "月1万円以内"}),
        &["issue"],
    );
    assert_eq!(di["issue"], "DB選定");
    let ro = replay(
        &mut c,
        &tools,
        "register_options",
        "register_options",
        json!({
            "options": ["PostgreSQL", {"text": "SQLite", "supplementaryInfo": "組み込み"}, "MySQL"],
            "widenOptionsStep": {"type": "initial_registered", "description": "初期登録した"}
        }),
        &[
            "options",
            "widenOptionsStep.type",
            "widenOptionsStep.description",
        ],
    );
    for o in ro["options"].as_array().unwrap() {
        assert!(o["id"].is_string() && o["text"].is_string(), "{o}");
    }
    assert_eq!(ro["options"][1]["supplementaryInfo"], "組み込み");
    let st = replay(
        &mut c,
        &tools,
        "get_current_status",
        "get_current_status",
        json!({}),
        &[
            "workflowState.current",
            "workflowState.displayName",
            "currentStatus.課題.issue",
            "currentStatus.課題.context",
            "currentStatus.課題.constraints",
            "currentStatus.選択肢",
            "nextActions",
        ],
    );
    assert_eq!(st["workflowState"]["current"], "initial_options_registered");
    assert_eq!(st["currentStatus"]["課題"]["constraints"], "月1万円以内");
    assert_eq!(st["currentStatus"]["選択肢"][2]["text"], "MySQL");
    let tw = replay(
        &mut c,
        &tools,
        "make-tripwire",
        "make_tripwire",
        json!({"options": [
            {"id": "pg", "name": "PostgreSQL", "description": "マネージドで運用"},
            {"id": "lite", "name": "SQLite", "description": "組み込み"}
        ]}),
        &[
            "tripwires",
            "metadata.generatedAt",
            "metadata.totalOptions",
            "metadata.totalCriteria",
        ],
    );
    assert_eq!(tw["tripwires"][1]["optionId"], "lite");
    assert_eq!(tw["tripwires"][1]["optionName"], "SQLite");
    assert!(tw["tripwires"][1]["criteria"].is_array());
    let rs = replay(
        &mut c,
        &tools,
        "reset",
        "reset",
        json!({}),
        &["success", "message"],
    );
    assert_eq!(rs["success"], true);
}

/// A fake `claude` that answers `--version` and, for a prompt, the CLI's JSON with a new
/// session id per run.
fn fake_claude(dir: &std::path::Path) -> std::path::PathBuf {
    let p = dir.join("claude");
    std::fs::write(
        &p,
        format!(
            r#"#!/bin/sh
case "$*" in *--version*) echo "9.9.9 (Claude Code)"; exit 0;; esac
cat >/dev/null
d="{}"
n=$(( $(cat "$d/count" 2>/dev/null || echo 0) + 1 ))
echo $n > "$d/count"
printf '{{"type":"result","subtype":"success","is_error":false,"result":"answer %s","session_id":"sess-%s","total_cost_usd":0.1,"duration_ms":5,"usage":{{"input_tokens":1,"output_tokens":1}}}}\n' "$n" "$n"
"#,
            dir.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[test]
fn mcp_claude_context_continuity_session_calls() {
    let bin = tempfile::tempdir().unwrap();
    let cli = fake_claude(bin.path());
    let s = common::start(json!({"claude": {"cmd": cli.display().to_string()}}));
    let mut c = s.client();
    let tools = listed(&mut c);
    let exec = [
        "tool_name",
        "success",
        "prompt",
        "response",
        "execution_time",
        "timestamp",
        "error",
    ];
    let r = replay(
        &mut c,
        &tools,
        "execute_claude",
        "execute_claude",
        json!({"prompt": "Hello, I'm John"}),
        &exec,
    );
    assert_eq!(
        (r["tool_name"].clone(), r["response"].clone()),
        (json!("execute_claude"), json!("answer 1"))
    );
    replay(
        &mut c,
        &tools,
        "execute_claude",
        "execute_claude",
        json!({"prompt": "Do you remember my name?"}),
        &exec,
    );
    let mut with_ctx = exec.to_vec();
    with_ctx.push("context_file");
    let r = replay(
        &mut c,
        &tools,
        "execute_claude_with_context",
        "execute_claude_with_context",
        json!({"prompt": "このファイルの目的を説明して", "file_path": "README.md"}),
        &with_ctx,
    );
    assert_eq!(r["tool_name"], "execute_claude_with_context");
    let cur = replay(
        &mut c,
        &tools,
        "get_current_session",
        "get_current_session",
        json!({}),
        &["tool_name", "success", "session_id", "has_session"],
    );
    let saved = cur["session_id"].as_str().unwrap().to_string();
    let h = replay(
        &mut c,
        &tools,
        "get_execution_history",
        "get_execution_history",
        json!({"limit": 10}),
        &[
            "tool_name",
            "success",
            "history",
            "total_entries",
            "current_session_id",
        ],
    );
    let entries = h["history"].as_array().unwrap();
    assert_eq!(entries.len(), 3);
    for (e, t) in entries.iter().zip([
        "execute_claude",
        "execute_claude",
        "execute_claude_with_context",
    ]) {
        assert_eq!(e["tool_name"], t, "{e}");
        for k in &exec {
            assert!(e.get(*k).is_some(), "history entry lacks {k}: {e}");
        }
    }
    let r = replay(
        &mut c,
        &tools,
        "reset_session",
        "reset_session",
        json!({}),
        &["tool_name", "success", "message", "old_session_id"],
    );
    assert_eq!(r["old_session_id"], saved.as_str());
    let r = replay(
        &mut c,
        &tools,
        "set_current_session",
        "set_current_session",
        json!({"session_id": saved}),
        &[
            "tool_name",
            "success",
            "message",
            "old_session_id",
            "new_session_id",
        ],
    );
    assert_eq!(r["new_session_id"], saved.as_str());
    assert_eq!(r["session_id"], saved.as_str());
    let r = replay(
        &mut c,
        &tools,
        "test_claude_cli",
        "test_claude_cli",
        json!({}),
        &["tool_name", "success", "command", "output", "message"],
    );
    assert_eq!(r["success"], true);
    assert_eq!(r["output"], "9.9.9 (Claude Code)");
    assert_eq!(r["command"], format!("{} --version", cli.display()));
    // Ours are there too.
    assert_eq!(r["path"], cli.display().to_string());
    assert_eq!(r["version"], "9.9.9 (Claude Code)");
    let r = replay(
        &mut c,
        &tools,
        "clear_execution_history",
        "clear_execution_history",
        json!({}),
        &["tool_name", "success", "message", "cleared_count"],
    );
    assert_eq!(r["cleared_count"], 3);
}

#[test]
fn memory_bank_mcp_server_v2_and_v3_calls() {
    let s = common::start(json!({}));
    // A git checkout on feature/login (branch auto-detection).
    std::fs::create_dir_all(s.root.join(".git")).unwrap();
    std::fs::write(s.root.join(".git/HEAD"), "ref: refs/heads/feature/login\n").unwrap();
    let mut c = s.client();
    let tools = listed(&mut c);
    let docs = "./docs";
    let doc_fields = ["path", "content", "tags", "lastModified"];

    // v2.
    replay(
        &mut c,
        &tools,
        "write_branch_memory_bank",
        "write_branch_memory_bank",
        json!({"branch": "feature/login", "path": "activeContext.md", "docs": docs,
               "content": "# Active context\n\ntags: #core #active-context\n\n## Current work\nLogin form\n\n## Recent changes\n- added tests\n"}),
        &["path"],
    );
    let r = c.tool(
        "read_branch_memory_bank",
        json!({"branch": "feature/login", "path": "activeContext.md", "docs": docs}),
    );
    // The text is the raw Markdown, as the original answered it.
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("# Active context"),
        "{r}"
    );
    replay(
        &mut c,
        &tools,
        "read_branch_memory_bank",
        "read_branch_memory_bank",
        json!({"branch": "feature/login", "path": "activeContext.md", "docs": docs}),
        &doc_fields,
    );
    replay(
        &mut c,
        &tools,
        "write_global_memory_bank",
        "write_global_memory_bank",
        json!({"path": "core/config.json", "docs": docs, "content": "{\"key\": \"value\", \"metadata\": {\"title\": \"Config\", \"tags\": [\"config\"]}}"}),
        &["path"],
    );
    replay(
        &mut c,
        &tools,
        "read_global_memory_bank",
        "read_global_memory_bank",
        json!({"path": "core/config.json", "docs": docs}),
        &doc_fields,
    );
    let r = c.tool("read_rules", json!({"language": "zh"}));
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("# 记忆库规则"),
        "{r}"
    );
    replay(
        &mut c,
        &tools,
        "read_context",
        "read_context",
        json!({"branch": "feature/login", "language": "zh", "docs": docs}),
        &["rules", "branchMemory", "globalMemory"],
    );
    let r = replay(
        &mut c,
        &tools,
        "search_documents_by_tags",
        "search_documents_by_tags",
        json!({"tags": ["config", "active-context"], "match": "or", "scope": "all", "branch": "feature/login", "docs": docs}),
        &["results"],
    );
    let results = r["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{r}");
    for hit in results {
        for k in ["path", "title", "lastModified", "scope"] {
            assert!(hit.get(k).is_some(), "search result lacks {k}: {hit}");
        }
    }
    assert!(results.iter().any(|h| h["title"] == "Config"), "{r}");
    assert!(
        results.iter().any(|h| h["title"] == "Active context"),
        "{r}"
    );
    let r = replay(
        &mut c,
        &tools,
        "get_recent_branches",
        "get_recent_branches",
        json!({"limit": 10}),
        &["branches", "total"],
    );
    assert_eq!(r["total"], 1);
    let b = &r["branches"][0];
    assert_eq!(b["name"], "feature-login");
    assert!(b["lastModified"].is_string());
    assert_eq!(b["summary"]["currentWork"], "Login form");
    assert_eq!(b["summary"]["recentChanges"], json!(["added tests"]));

    // v3, the README's examples.
    let w = replay(
        &mut c,
        &tools,
        "write_document",
        "write_document",
        json!({"scope": "branch", "branch": "feature/my-branch", "path": "data/config.json",
               "content": {"key": "value"}, "tags": ["config", "feature"], "docs": docs}),
        &["success", "data.path", "data.tags", "data.lastModified"],
    );
    assert_eq!(w["data"]["tags"], json!(["config", "feature"]));
    let r = replay(
        &mut c,
        &tools,
        "read_document",
        "read_document",
        json!({"scope": "global", "path": "core/config.json", "docs": docs}),
        &[
            "success",
            "data.path",
            "data.content",
            "data.tags",
            "data.lastModified",
        ],
    );
    assert_eq!(r["data"]["tags"], json!(["config"]));
    // No branch: the current git branch (feature/login).
    replay(
        &mut c,
        &tools,
        "write_document",
        "write_document",
        json!({"scope": "branch", "path": "data/config.json", "content": {"key": "old"}, "docs": docs}),
        &["success"],
    );
    let w = replay(
        &mut c,
        &tools,
        "write_document",
        "write_document",
        json!({"scope": "branch", "path": "data/config.json", "returnContent": true,
               "patches": [{"op": "replace", "path": "/key", "value": "new-value"}], "docs": docs}),
        &[
            "success",
            "data.path",
            "data.content",
            "data.tags",
            "data.lastModified",
        ],
    );
    assert_eq!(w["branch"], "feature/login");
    let v: Value = serde_json::from_str(w["data"]["content"].as_str().unwrap()).unwrap();
    assert_eq!(v, json!({"key": "new-value"}));
    let r = c.tool(
        "write_document",
        json!({"scope": "branch", "path": "data/config.json",
               "patches": [{"op": "test", "path": "/key", "value": "old"}, {"op": "remove", "path": "/key"}]}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert!(
        r["content"][0]["text"].as_str().unwrap().contains("#1"),
        "{r}"
    );
    let r = replay(
        &mut c,
        &tools,
        "read_document",
        "read_document",
        json!({"scope": "branch", "path": "data/config.json"}),
        &["data.content"],
    );
    assert!(r["data"]["content"].as_str().unwrap().contains("new-value"));
}

#[test]
fn cl_mcp_project_root_calls() {
    let s = common::start(json!({}));
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), s.root.join("escape")).unwrap();
    std::fs::create_dir_all(s.root.join(".git/hooks")).unwrap();
    // `.GIT` is `.git` on a case-insensitive file system (macOS, Windows).
    std::fs::create_dir_all(s.root.join("sub/.GIT/hooks")).unwrap();
    let mut c = s.client();
    let mut other = s.client();
    let tools = listed(&mut c);
    let info = ["project_root", "cwd", "project_root_source"];
    let before = replay(
        &mut c,
        &tools,
        "fs-get-project-info",
        "fs-get-project-info",
        json!({}),
        &info,
    );
    assert_eq!(before["project_root"], s.root.display().to_string());
    let set = replay(
        &mut c,
        &tools,
        "fs-set-project-root",
        "fs-set-project-root",
        json!({"path": s.root.join("src").display().to_string()}),
        &["project_root", "cwd", "previous_root", "status"],
    );
    assert_eq!(
        set["project_root"],
        s.root.join("src").display().to_string()
    );
    assert_eq!(set["previous_root"], s.root.display().to_string());
    let after = replay(
        &mut c,
        &tools,
        "fs-get-project-info",
        "fs-get-project-info",
        json!({}),
        &info,
    );
    assert_eq!(
        after["project_root"],
        s.root.join("src").display().to_string()
    );
    assert_eq!(after["project_root_source"], "explicit");
    // The file tools of this connection resolve against it…
    let r = c.tool("fs-read-file", json!({"path": "main.rs"}));
    assert_ne!(r["isError"], true, "{r}");
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("fn main"),
        "{r}"
    );
    // …and another connection keeps the configured root.
    let r = other.tool("fs-get-project-info", json!({}));
    assert_eq!(
        r["structuredContent"]["project_root"],
        s.root.display().to_string()
    );
    let r = other.tool("fs-read-file", json!({"path": "main.rs"}));
    assert_eq!(r["isError"], true, "{r}");
    // "." keeps it; back up to the configured root works.
    let r = c.tool("fs-set-project-root", json!({"path": "."}));
    assert_eq!(
        r["structuredContent"]["project_root"],
        s.root.join("src").display().to_string()
    );
    let r = c.tool(
        "fs-set-project-root",
        json!({"path": s.root.display().to_string()}),
    );
    assert_eq!(
        r["structuredContent"]["project_root"],
        s.root.display().to_string(),
        "{r}"
    );
    // Never outside what the setup allows.
    for bad in [
        "/".to_string(),
        "..".to_string(),
        outside.path().display().to_string(),
        "escape".to_string(),
        ".git/hooks".to_string(),
        "sub/.GIT/hooks".to_string(),
        "missing-dir".to_string(),
        "README.md".to_string(),
    ] {
        let r = c.tool("fs-set-project-root", json!({"path": bad}));
        assert_eq!(r["isError"], true, "{bad}: {r}");
    }
    let r = c.tool("fs-get-project-info", json!({}));
    assert_eq!(
        r["structuredContent"]["project_root"],
        s.root.display().to_string()
    );
    let r = c.call(
        "tools/call",
        json!({"name": "fs-set-project-root", "arguments": {}}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
}
