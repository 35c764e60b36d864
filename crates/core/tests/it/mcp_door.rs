//! The model's door (`/mcp`) over a real WebSocket, against an editor that answers like
//! Neovim would:
//! * `openFile` of a file outside the project is refused before the editor hears of it;
//! * selections and open editors in files outside are not reported on `/mcp`;
//! * `selection_changed` and `at_mentioned` reach the IDE door only, even when a `/mcp` client
//!   claims to be an IDE (`ide_connected`);
//! * the IDE door (Claude Code itself) is unchanged.

use claude_context_core::config::Config;
use claude_context_core::editor::{EditorRpc, EditorState, RpcFuture};
use claude_context_core::server::Server;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::ws_async;

use ws_async::{connect, next, send, Ws};

/// An editor whose active buffer is `secret` (a file outside the project the person opened)
/// and that has `secret` and `inside` open. openFile answers as the Lua handler does.
struct Editor {
    calls: Mutex<Vec<(String, Value)>>,
    secret: PathBuf,
    inside: PathBuf,
}

impl EditorRpc for Editor {
    fn call(&self, method: &str, params: Value) -> RpcFuture {
        self.calls
            .lock()
            .unwrap()
            .push((method.to_string(), params.clone()));
        let tab = |p: &Path| {
            json!({"uri": format!("file://{}", p.display()), "isActive": false, "label": "x",
                "languageId": "text", "isDirty": false, "isUntitled": false,
                "fileName": p, "lineCount": 1})
        };
        let r = match method {
            "openFile" => json!({"filePath": params["filePath"], "languageId": "text",
                                 "lineCount": 1}),
            "getCurrentSelection" | "getLatestSelection" => json!({"success": true,
                "text": "SECRET-KEY-MATERIAL", "filePath": self.secret,
                "fileUrl": format!("file://{}", self.secret.display()),
                "selection": {"start": {"line": 0, "character": 0},
                              "end": {"line": 0, "character": 19}, "isEmpty": false}}),
            "getOpenEditors" => json!({"tabs": [tab(&self.secret), tab(&self.inside)]}),
            "getDiagnostics" => json!([
                {"uri": format!("file://{}", self.secret.display()), "diagnostics": [
                    {"message": "SECRET-KEY-MATERIAL is not valid", "severity": "Error",
                     "range": {"start": {"line": 0, "character": 0},
                               "end": {"line": 0, "character": 1}}}]},
                {"uri": format!("file://{}", self.inside.display()), "diagnostics": []}]),
            "saveDocument" => json!({"success": true, "filePath": params["filePath"],
                                     "saved": true, "message": "Document saved"}),
            _ => json!({}),
        };
        Box::pin(async move { Ok(r) })
    }
}

struct Fixture {
    _d: tempfile::TempDir,
    proj: PathBuf,
    secret: PathBuf,
    ed: Arc<Editor>,
    server: Server,
}

fn start() -> Fixture {
    let d = tempfile::tempdir().unwrap();
    let base = d.path().canonicalize().unwrap();
    let proj = base.join("proj");
    std::fs::create_dir_all(proj.join(".git")).unwrap();
    std::fs::create_dir_all(base.join("home/.ssh")).unwrap();
    let secret = base.join("home/.ssh/id_rsa");
    std::fs::write(&secret, "SECRET-KEY-MATERIAL\n").unwrap();
    let inside = proj.join("a.txt");
    std::fs::write(&inside, "hello\n").unwrap();
    std::os::unix::fs::symlink(base.join("home/.ssh"), proj.join("ssh-link")).unwrap();
    let ed = Arc::new(Editor {
        calls: Mutex::new(Vec::new()),
        secret: secret.clone(),
        inside,
    });
    let config = Config {
        lock_dir: Some(base.join("ide")),
        project_root: Some(proj.to_string_lossy().into_owned()),
        ..Config::default()
    };
    let state = EditorState {
        cwd: Some(proj.clone()),
        ..Default::default()
    };
    let server = Server::start(config, state, ed.clone()).expect("server starts");
    Fixture {
        _d: d,
        proj,
        secret,
        ed,
        server,
    }
}

/// Every message up to the answer to a ping (which comes after whatever was queued before).
async fn drain(ws: &mut Ws, id: &str) -> Vec<Value> {
    send(ws, json!({"jsonrpc": "2.0", "id": id, "method": "ping"})).await;
    let mut got = Vec::new();
    loop {
        let m = next(ws).await;
        if m["id"] == id {
            return got;
        }
        got.push(m);
    }
}

async fn call(ws: &mut Ws, id: u64, name: &str, args: Value) -> Value {
    send(
        ws,
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": name, "arguments": args}}),
    )
    .await;
    loop {
        let m = next(ws).await;
        if m["id"] == id {
            return m["result"].clone();
        }
    }
}

fn text(r: &Value) -> String {
    r["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

async fn stop(server: Server) {
    // Stopping shuts a runtime down, which tokio forbids from inside another runtime's task.
    tokio::task::spawn_blocking(move || server.stop())
        .await
        .unwrap();
}

async fn until(what: &str, f: impl Fn() -> bool) {
    for _ in 0..1000 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_open_file_of_a_secret_outside_is_refused_before_the_editor_hears_of_it() {
    let f = start();
    let mut m = connect(&f.server, "/mcp").await;
    let link = f.proj.join("ssh-link/id_rsa");
    for (i, path) in [
        f.secret.display().to_string(),
        "/etc/passwd".into(),
        link.display().to_string(),
        "ssh-link/id_rsa".into(),
        "../home/.ssh/id_rsa".into(),
        format!("file://{}", f.secret.display()),
    ]
    .into_iter()
    .enumerate()
    {
        let r = call(
            &mut m,
            i as u64 + 1,
            "openFile",
            json!({"filePath": path, "startLine": 1, "endLine": 9}),
        )
        .await;
        assert_eq!(r["isError"], true, "{path}: {r}");
        assert!(text(&r).contains("outside the project"), "{path}: {r}");
    }
    assert!(
        !f.ed
            .calls
            .lock()
            .unwrap()
            .iter()
            .any(|(m, _)| m == "openFile"),
        "the editor was never asked to open them"
    );
    // A file inside opens, and the editor gets the absolute path that was checked.
    let r = call(&mut m, 10, "openFile", json!({"filePath": "a.txt"})).await;
    assert_eq!(r["isError"], false, "{r}");
    let calls = f.ed.calls.lock().unwrap().clone();
    let (_, p) = calls.iter().find(|(m, _)| m == "openFile").unwrap();
    assert_eq!(p["filePath"], json!(f.proj.join("a.txt")));
    stop(f.server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_selection_and_open_editors_of_a_secret_outside_are_withheld() {
    let f = start();
    let mut m = connect(&f.server, "/mcp").await;
    for (i, tool) in ["getCurrentSelection", "getLatestSelection"]
        .into_iter()
        .enumerate()
    {
        let r = call(&mut m, i as u64 + 1, tool, json!({})).await;
        assert!(!r.to_string().contains("SECRET"), "{tool}: {r}");
        assert_eq!(r["structuredContent"]["success"], false, "{tool}: {r}");
        assert!(text(&r).contains("outside the project"), "{tool}: {r}");
    }
    let r = call(&mut m, 3, "getOpenEditors", json!({})).await;
    let tabs = r["structuredContent"]["tabs"].as_array().unwrap();
    assert_eq!(tabs.len(), 1, "{r}");
    assert_eq!(tabs[0]["fileName"], json!(f.proj.join("a.txt")));
    assert!(!text(&r).contains("id_rsa"), "{r}");
    let r = call(&mut m, 4, "getDiagnostics", json!({})).await;
    assert!(!r.to_string().contains("SECRET"), "{r}");
    assert!(text(&r).contains("a.txt"), "{r}");
    // Saving (or asking about) the person's buffer of a file outside is refused too.
    for (i, tool) in ["saveDocument", "checkDocumentDirty"]
        .into_iter()
        .enumerate()
    {
        let r = call(
            &mut m,
            5 + i as u64,
            tool,
            json!({"filePath": f.secret.display().to_string()}),
        )
        .await;
        assert_eq!(r["isError"], true, "{tool}: {r}");
        assert!(text(&r).contains("outside the project"), "{tool}: {r}");
    }
    assert!(!f
        .ed
        .calls
        .lock()
        .unwrap()
        .iter()
        .any(|(m, _)| m == "saveDocument" || m == "checkDocumentDirty"));

    // The IDE door (Claude Code itself) is unchanged: it sees the person's editor as it is.
    let mut ide = connect(&f.server, "/").await;
    let r = call(&mut ide, 1, "getCurrentSelection", json!({})).await;
    assert_eq!(r["structuredContent"]["text"], "SECRET-KEY-MATERIAL");
    let r = call(&mut ide, 2, "getOpenEditors", json!({})).await;
    assert_eq!(r["structuredContent"]["tabs"].as_array().unwrap().len(), 2);
    let r = call(&mut ide, 4, "getDiagnostics", json!({})).await;
    assert!(text(&r).contains("SECRET"), "{r}");
    let r = call(
        &mut ide,
        3,
        "openFile",
        json!({"filePath": f.secret.display().to_string()}),
    )
    .await;
    assert_eq!(r["isError"], false, "{r}");
    stop(f.server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn selection_changed_and_at_mentioned_never_reach_mcp_clients() {
    let f = start();
    let mut ide = connect(&f.server, "/").await;
    let mut m = connect(&f.server, "/mcp").await;
    // Both claim to be Claude Code's IDE session; only the IDE door's claim counts.
    for ws in [&mut ide, &mut m] {
        send(
            ws,
            json!({"jsonrpc": "2.0", "method": "ide_connected", "params": {"pid": 4242}}),
        )
        .await;
    }
    drain(&mut ide, "sync0").await;
    drain(&mut m, "sync0").await;
    until("both clients registered", || {
        f.server.shared().client_count() == 2
    })
    .await;
    let ed = f.ed.clone();
    until("the editor to hear ide_connected", || {
        ed.calls
            .lock()
            .unwrap()
            .iter()
            .any(|(m, _)| m == "ide_connected")
    })
    .await;
    let shared = f.server.shared().clone();
    assert_eq!(
        shared.broadcast_ide("at_mentioned", json!({"filePath": "/p/a"})),
        1
    );
    assert_eq!(
        shared.broadcast("selection_changed", json!({"text": "SECRET"})),
        1
    );
    let got = drain(&mut ide, "sync1").await;
    let methods: Vec<&str> = got.iter().filter_map(|v| v["method"].as_str()).collect();
    assert_eq!(methods, vec!["at_mentioned", "selection_changed"]);
    let got = drain(&mut m, "sync1").await;
    assert!(got.is_empty(), "the /mcp client got {got:?}");
    let heard =
        f.ed.calls
            .lock()
            .unwrap()
            .iter()
            .filter(|(m, _)| m == "ide_connected")
            .count();
    assert_eq!(heard, 1, "the /mcp client's ide_connected was ignored");
    stop(f.server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_open_file_resolves_a_relative_path_against_the_root_this_connection_set() {
    let f = start();
    let sub = f.proj.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(sub.join("b.txt"), "b\n").unwrap();
    let mut m = connect(&f.server, "/mcp").await;
    let r = call(&mut m, 1, "fs-set-project-root", json!({"path": "sub"})).await;
    assert_eq!(r["isError"], false, "{r}");
    let r = call(&mut m, 2, "openFile", json!({"filePath": "b.txt"})).await;
    assert_eq!(r["isError"], false, "{r}");
    let calls = f.ed.calls.lock().unwrap().clone();
    let (_, p) = calls.iter().find(|(m, _)| m == "openFile").unwrap();
    // The door checks on the blocking pool; the connection's root goes along (it was lost).
    assert_eq!(p["filePath"], json!(sub.join("b.txt")));
    stop(f.server).await;
}
