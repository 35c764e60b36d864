//! JSON deeper than any stack, through every way JSON enters the bridge: tool arguments on both
//! doors, documents and state files read from disk, and JSON Patch (which builds a document
//! level by level from small operations). A stack overflow aborts the process (in Neovim: the
//! editor, with the person's unsaved work), so each test runs its body in a child process of
//! its own: an overflow there is this test's failure, named, not the end of the test binary.
#![cfg(unix)]

use crate::common;

use claude_context_core::json_limits::{nested_array_text, MAX_DEPTH};
use serde_json::{json, Value};
use std::io::Write;
use std::process::Command;

/// Deeper than any thread's stack survives recursing over.
const DEEP: usize = 100_000;

const CHILD_ENV: &str = "CLAUDE_CONTEXT_JSON_DEPTH_CHILD";

/// Runs `body` in a child process (this test binary, running only the test `name`): a crash
/// there (stack overflow, abort, out of memory) fails this test with its status and output.
fn in_child(name: &str, body: impl FnOnce()) {
    if std::env::var(CHILD_ENV).as_deref() == Ok(name) {
        body();
        return;
    }
    // The test's path in the binary: its module's, without the crate's name.
    let path = match module_path!().split_once("::") {
        Some((_, module)) => format!("{module}::{name}"),
        None => name.to_string(),
    };
    let out = Command::new(std::env::current_exe().unwrap())
        .args([path.as_str(), "--exact", "--test-threads=1", "--nocapture"])
        .env(CHILD_ENV, name)
        .output()
        .expect("run the test binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{name} crashed or failed in its own process ({:?}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(stdout.contains("1 passed"), "{name} did not run:\n{stdout}");
}

fn is_error(r: &Value) -> bool {
    r["isError"] == true
}

fn text(r: &Value) -> String {
    r["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The operations that nest `{"a": …}` one level deeper each time (add a sibling, move the
/// document into it, move it back): 3 small operations per level.
fn nesting_ops(levels: usize) -> Vec<Value> {
    let mut ops = Vec::with_capacity(3 * levels);
    for _ in 0..levels {
        ops.push(json!({"op": "add", "path": "/b", "value": {}}));
        ops.push(json!({"op": "move", "from": "/a", "path": "/b/a"}));
        ops.push(json!({"op": "move", "from": "/b", "path": "/a"}));
    }
    ops
}

#[test]
fn json_patch_depth_bomb_is_refused() {
    in_child("json_patch_depth_bomb_is_refused", || {
        let srv = common::start(json!({}));
        let mut c = srv.client();
        let r = c.tool(
            "write_document",
            json!({"scope": "global", "path": "deep.json", "content": {"a": {}}}),
        );
        assert!(!is_error(&r), "{r}");
        let file = srv.root.join("docs/global-memory-bank/deep.json");
        let before = std::fs::read(&file).unwrap();
        // 100,000 levels in a few MB of operations (on the old code: a stack overflow when the
        // document is serialized or dropped).
        // Written as text: a debug build spends long building 300,000 values in the test.
        let one = r#"{"op":"add","path":"/b","value":{}},{"op":"move","from":"/a","path":"/b/a"},{"op":"move","from":"/b","path":"/a"}"#;
        let ops = vec![one; DEEP].join(",");
        let r = c.roundtrip(&format!(
            r#"{{"jsonrpc":"2.0","id":"bomb","method":"tools/call","params":{{"name":"write_document","arguments":{{"scope":"global","path":"deep.json","patches":[{ops}]}}}}}}"#
        ));
        let r = r["result"].clone();
        assert!(is_error(&r), "{r}");
        let t = text(&r);
        assert!(
            t.contains("more than the limit of 1000") && t.contains("no change"),
            "the error names the limit: {t}"
        );
        // Within the operation limit, the depth limit stops it at the operation that passes it.
        let r = c.tool(
            "write_document",
            json!({"scope": "global", "path": "deep.json", "patches": nesting_ops(333)}),
        );
        let t = text(&r);
        assert!(
            is_error(&r)
                && t.contains(&format!("deeper than {MAX_DEPTH} levels"))
                && t.contains("patch operation #")
                && t.contains("no change was written"),
            "the error names the limit and the operation: {r}"
        );
        assert_eq!(std::fs::read(&file).unwrap(), before, "nothing was written");
        // Up to the limit it works, and the document reads back.
        let r = c.tool(
            "write_document",
            json!({"scope": "global", "path": "deep.json", "patches": nesting_ops(MAX_DEPTH - 2)}),
        );
        assert!(!is_error(&r), "{r}");
        let back: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        assert_eq!(claude_context_core::json_limits::depth(&back), MAX_DEPTH);
        let r = c.tool(
            "read_document",
            json!({"scope": "global", "path": "deep.json"}),
        );
        assert!(!is_error(&r), "{r}");
        // Copying the document into itself doubles it every time: refused at the size limit.
        let mut copies =
            vec![json!({"op": "replace", "path": "", "value": {"s": "x".repeat(4096)}})];
        for i in 0..40 {
            copies.push(json!({"op": "copy", "from": "", "path": format!("/c{i}")}));
        }
        let r = c.tool(
            "write_document",
            json!({"scope": "global", "path": "deep.json", "patches": copies}),
        );
        let t = text(&r);
        assert!(is_error(&r) && t.contains("document limit"), "{r}");
        // A pointer 100,000 tokens long is only a failed operation.
        let long = "/a".repeat(DEEP);
        let r = c.tool(
            "write_document",
            json!({"scope": "global", "path": "deep.json", "patches": [{"op": "add", "path": long, "value": 1}]}),
        );
        assert!(is_error(&r), "{r}");
        c.assert_alive();
    });
}

/// Connects to `/mcp` (the model's door) with the token.
fn mcp_client(srv: &common::TestServer) -> common::Raw {
    let (status, raw) = common::Raw::try_connect_path(
        srv.port,
        "/mcp",
        &[(common::AUTH_HEADER, srv.token.as_str())],
    )
    .unwrap();
    assert!(status.starts_with("HTTP/1.1 101"), "{status}");
    raw
}

#[test]
fn every_json_entry_point_survives_100k_deep_input() {
    in_child("every_json_entry_point_survives_100k_deep_input", || {
        let deep = nested_array_text(DEEP);
        let srv = common::start(json!({}));
        // Tool arguments, on both doors: a parse error, and the connection still answers.
        for mut c in [srv.client(), mcp_client(&srv)] {
            let msg = format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"write_document","arguments":{{"scope":"global","path":"x.json","content":{deep}}}}}}}"#
            );
            let r = c.roundtrip(&msg);
            assert_eq!(r["error"]["code"], -32700, "{r}");
            let r = c.roundtrip(&format!(
                r#"{{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{{"name":"write_document","arguments":{{"scope":"global","path":"x.json","patches":[{{"op":"add","path":"/x","value":{deep}}}]}}}}}}"#
            ));
            assert_eq!(r["error"]["code"], -32700, "{r}");
            c.assert_alive();
        }
        // Documents read from disk: a JSON document and a Markdown one whose tag line is deep.
        let bank = srv.root.join("docs/global-memory-bank");
        std::fs::create_dir_all(&bank).unwrap();
        std::fs::write(bank.join("deep.json"), &deep).unwrap();
        let mut obj = String::new();
        for _ in 0..DEEP {
            obj.push_str(r#"{"metadata":"#);
        }
        obj.push_str(&"}".repeat(DEEP));
        std::fs::write(bank.join("deepobj.json"), &obj).unwrap();
        std::fs::write(
            bank.join("notes.md"),
            format!("# N\n\ntags: #a\n\n{deep}\n"),
        )
        .unwrap();
        let mut c = srv.client();
        for (tool, args) in [
            (
                "read_document",
                json!({"scope": "global", "path": "deep.json"}),
            ),
            (
                "read_document",
                json!({"scope": "global", "path": "deepobj.json"}),
            ),
            ("read_global_memory_bank", json!({"path": "deep.json"})),
            (
                "search_documents_by_tags",
                json!({"tags": ["a"], "scope": "global"}),
            ),
            ("list_memory_bank_documents", json!({})),
            ("read_context", json!({"includeBranchMemory": false})),
            (
                "write_document",
                json!({"scope": "global", "path": "deep.json", "tags": ["t"]}),
            ),
            (
                "write_document",
                json!({"scope": "global", "path": "deepobj.json", "patches": [{"op": "add", "path": "/x", "value": 1}]}),
            ),
            (
                "fs-read-file",
                json!({"path": "docs/global-memory-bank/deep.json"}),
            ),
        ] {
            let r = c.call("tools/call", json!({"name": tool, "arguments": args}));
            assert!(
                r.get("result").is_some() || r.get("error").is_some(),
                "{tool}: {r}"
            );
        }
        c.assert_alive();
        // State files: the decision store and the session history, then the tools that read
        // them; the configuration; lock files (read by claude-context-mcp).
        let state = srv.dir.path().join("state");
        let store = claude_context_core::decision::store_path(&state, &srv.root);
        std::fs::create_dir_all(store.parent().unwrap()).unwrap();
        std::fs::write(&store, &deep).unwrap();
        let r = c.call(
            "tools/call",
            json!({"name": "get_current_status", "arguments": {}}),
        );
        assert!(r.get("result").is_some() || r.get("error").is_some(), "{r}");
        c.assert_alive();
        assert!(claude_context_core::config::Config::from_json(&deep).is_err());
        let lock_dir = srv.dir.path().join("locks");
        std::fs::create_dir_all(&lock_dir).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&lock_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        }
        let mut f = std::fs::File::create(lock_dir.join("4242.lock")).unwrap();
        f.write_all(deep.as_bytes()).unwrap();
        let q = claude_context_core::discovery::Query {
            lock_dir,
            cwd: srv.root.clone(),
            sse_port: None,
            ide_name: "Neovim".into(),
            owner_uid: claude_context_core::discovery::current_uid(),
        };
        let found = claude_context_core::discovery::discover(&q);
        assert!(found.candidates.is_empty(), "{:?}", found.notes);
    });
}

/// Past the limit, JSON Patch operations are counted while they are read, not kept: the count
/// is refused with the number given, from text or from a value, and within the limit they
/// apply as before.
#[test]
fn patch_operations_past_the_limit_are_counted_not_kept() {
    use claude_context_core::memory_bank::edit::{apply_patches, Patches, MAX_PATCH_OPS};
    let many = 5 * MAX_PATCH_OPS;
    let text = format!(
        "[{}]",
        vec![r#"{"op":"add","path":"/x","value":[1,2,3]}"#; many].join(",")
    );
    let p: Patches = serde_json::from_str(&text).unwrap();
    assert_eq!(p.len(), many);
    let e = apply_patches("d.json", "{}", p).unwrap_err().to_string();
    assert!(
        e.contains(&format!("{many} patch operations")) && e.contains("no change"),
        "{e}"
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(serde_json::from_value::<Patches>(v).unwrap().len(), many);
    assert!(serde_json::from_str::<Patches>(r#"{"op":"add"}"#).is_err());
    let few: Patches =
        serde_json::from_value(json!([{"op": "add", "path": "/a", "value": 1}])).unwrap();
    let out: Value = serde_json::from_str(&apply_patches("d.json", "{}", few).unwrap()).unwrap();
    assert_eq!(out, json!({"a": 1}));
}
