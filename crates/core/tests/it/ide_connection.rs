//! What the IDE integration needs from a connection, over a real WebSocket:
//! * a `tools/call` waiting on the editor (openDiff) is cancelled — its editor future dropped,
//!   no answer sent — by `notifications/cancelled` and by the client going away;
//! * `ide_connected` reaches the editor, and `broadcast_ide` only reaches such clients.

use claude_context_core::config::Config;
use claude_context_core::editor::{EditorRpc, EditorState, RpcFuture};
use claude_context_core::server::Server;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::ws_async;

use ws_async::{connect, next, send};

/// An editor whose openDiff never answers; it counts the waits that were dropped unanswered.
#[derive(Default)]
struct Editor {
    calls: Mutex<Vec<(String, Value)>>,
    waiting: AtomicUsize,
    dropped: Arc<AtomicUsize>,
}

struct DropCount(Arc<AtomicUsize>);
impl Drop for DropCount {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl EditorRpc for Editor {
    fn call(&self, method: &str, params: Value) -> RpcFuture {
        self.calls
            .lock()
            .unwrap()
            .push((method.to_string(), params));
        if method == "openDiff" {
            self.waiting.fetch_add(1, Ordering::SeqCst);
            let guard = DropCount(self.dropped.clone());
            return Box::pin(async move {
                let _guard = guard;
                std::future::pending::<()>().await;
                Ok(Value::Null)
            });
        }
        Box::pin(async { Ok(json!({})) })
    }
}

fn start(dir: &std::path::Path, ed: Arc<Editor>) -> Server {
    let config = Config {
        lock_dir: Some(dir.join("ide")),
        ..Config::default()
    };
    let state = EditorState {
        cwd: Some(dir.to_path_buf()),
        ..Default::default()
    };
    match Server::start(config, state, ed) {
        Ok(s) => s,
        Err(e) => panic!("server did not start: {e}"),
    }
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

fn open_diff(id: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "openDiff", "arguments": {"old_file_path": "/p/a", "new_file_path": "/p/a",
        "new_file_contents": "x", "tab_name": "t"}}})
}

async fn stop(server: Server) {
    // Stopping shuts a runtime down, which tokio forbids from inside another runtime's task.
    tokio::task::spawn_blocking(move || server.stop())
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_notification_drops_the_wait_and_answers_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ed = Arc::new(Editor::default());
    let server = start(dir.path(), ed.clone());
    let mut ws = connect(&server, "").await;
    send(&mut ws, open_diff(json!(7))).await;
    send(&mut ws, open_diff(json!("other"))).await;
    until("the editor to be asked twice", || {
        ed.waiting.load(Ordering::SeqCst) == 2
    })
    .await;
    send(
        &mut ws,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": 7, "reason": "user interrupted"}}),
    )
    .await;
    until("the cancelled wait to be dropped", || {
        ed.dropped.load(Ordering::SeqCst) == 1
    })
    .await;
    // The connection goes on; request 7 gets no answer (the ping's answer comes first and only).
    send(
        &mut ws,
        json!({"jsonrpc": "2.0", "id": 8, "method": "ping"}),
    )
    .await;
    let r = next(&mut ws).await;
    assert_eq!(r["id"], 8, "{r}");
    assert_eq!(
        ed.dropped.load(Ordering::SeqCst),
        1,
        "the other request still waits"
    );
    stop(server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_departing_client_cancels_its_waits() {
    let dir = tempfile::tempdir().unwrap();
    let ed = Arc::new(Editor::default());
    let server = start(dir.path(), ed.clone());
    let mut ws = connect(&server, "").await;
    let mut other = connect(&server, "").await;
    send(&mut ws, open_diff(json!(1))).await;
    send(&mut other, open_diff(json!(1))).await;
    until("both waits", || ed.waiting.load(Ordering::SeqCst) == 2).await;
    ws.close(None).await.unwrap();
    drop(ws);
    until("the departed client's wait to be dropped", || {
        ed.dropped.load(Ordering::SeqCst) == 1
    })
    .await;
    // The other client's wait is untouched and its connection works.
    send(
        &mut other,
        json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
    )
    .await;
    assert_eq!(next(&mut other).await["id"], 2);
    assert_eq!(ed.dropped.load(Ordering::SeqCst), 1);
    drop(other);
    until("the second wait to be dropped", || {
        ed.dropped.load(Ordering::SeqCst) == 2
    })
    .await;
    stop(server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ide_connected_reaches_the_editor_and_scopes_broadcast_ide() {
    let dir = tempfile::tempdir().unwrap();
    let ed = Arc::new(Editor::default());
    let server = start(dir.path(), ed.clone());
    let mut ide = connect(&server, "").await;
    let mut plain = connect(&server, "").await;
    send(
        &mut ide,
        json!({"jsonrpc": "2.0", "method": "ide_connected", "params": {"pid": 4242}}),
    )
    .await;
    until("the editor to hear ide_connected", || {
        ed.calls
            .lock()
            .unwrap()
            .iter()
            .any(|(m, p)| m == "ide_connected" && p["pid"] == 4242)
    })
    .await;
    until("both clients registered", || {
        server.shared().client_count() == 2
    })
    .await;
    let shared = server.shared().clone();
    assert_eq!(
        shared.broadcast_ide("at_mentioned", json!({"filePath": "/p/a"})),
        1
    );
    assert_eq!(
        shared.broadcast("selection_changed", json!({"text": "x"})),
        2
    );
    let m = next(&mut ide).await;
    assert_eq!(m["method"], "at_mentioned");
    assert_eq!(m["params"]["filePath"], "/p/a");
    assert_eq!(next(&mut ide).await["method"], "selection_changed");
    // The plain client's first notification is selection_changed: it never got at_mentioned.
    assert_eq!(next(&mut plain).await["method"], "selection_changed");
    stop(server).await;
}
