//! `Shared::status()` reports what each client did: its name and protocol version after
//! `initialize`, the CLI's pid after `ide_connected`, and whether it asked for `tools/list`
//! (what the end-to-end discovery test and `:ClaudeContext status` rely on).

use claude_context_core::config::Config;
use claude_context_core::editor::{EditorState, NoEditor};
use claude_context_core::server::{ClientStatus, Server};
use futures_util::{SinkExt, StreamExt};
use std::sync::Arc;
use std::time::Duration;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

fn start(dir: &std::path::Path) -> Server {
    let config = Config {
        lock_dir: Some(dir.join("ide")),
        ..Config::default()
    };
    let state = EditorState {
        cwd: Some(dir.to_path_buf()),
        ..Default::default()
    };
    match Server::start(config, state, Arc::new(NoEditor)) {
        Ok(s) => s,
        Err(e) => panic!("server did not start: {e}"),
    }
}

async fn until(server: &Server, f: impl Fn(&ClientStatus) -> bool) -> ClientStatus {
    for _ in 0..500 {
        if let Some(c) = server.shared().status().clients.into_iter().find(|c| f(c)) {
            return c;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!(
        "status never showed the expected client: {:?}",
        server.shared().status().clients
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_shows_ide_connected_and_tools_listed() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let mut req = format!("ws://127.0.0.1:{}", server.port())
        .into_client_request()
        .unwrap();
    req.headers_mut().insert(
        "x-claude-code-ide-authorization",
        server.shared().token().parse().unwrap(),
    );
    let (mut ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
    let send = |v: serde_json::Value| Message::text(v.to_string());

    ws.send(send(
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "claude-code", "version": "9.9.9"}}}),
    ))
    .await
    .unwrap();
    ws.next().await.unwrap().unwrap();
    let c = until(&server, |c| c.name.is_some()).await;
    assert_eq!(c.name.as_deref(), Some("claude-code"));
    assert_eq!(c.protocol_version.as_deref(), Some("2025-06-18"));
    assert_eq!(
        c.surface,
        claude_context_core::mcp::catalog::Surface::Ide,
        "the lock file's URL is the IDE door"
    );
    assert_eq!(c.ide_connected_pid, None);
    assert!(!c.tools_listed, "no tools/list was sent yet");

    ws.send(send(
        serde_json::json!({"jsonrpc": "2.0", "method": "ide_connected",
        "params": {"pid": 4242}}),
    ))
    .await
    .unwrap();
    let c = until(&server, |c| c.ide_connected_pid.is_some()).await;
    assert_eq!(c.ide_connected_pid, Some(4242));
    assert!(!c.tools_listed);

    ws.send(send(
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ))
    .await
    .unwrap();
    ws.next().await.unwrap().unwrap();
    let c = until(&server, |c| c.tools_listed).await;
    assert_eq!(c.ide_connected_pid, Some(4242));

    ws.close(None).await.unwrap();
    for _ in 0..500 {
        if server.shared().status().clients.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(server.shared().status().clients.is_empty());
    // Stopping shuts a runtime down, which tokio forbids from inside another runtime's task.
    tokio::task::spawn_blocking(move || server.stop())
        .await
        .unwrap();
}
