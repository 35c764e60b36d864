//! An async WebSocket client for the integration tests that drive a [`Server`] from tokio
//! (`ide_connection.rs`, `mcp_door.rs`): connect with the token to a door, send, read the next
//! text message.
#![allow(dead_code)]

use claude_context_core::server::Server;
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Connects with the token to `path` (`""` or `"/"`: the IDE door; `"/mcp"`: the model's).
pub async fn connect(server: &Server, path: &str) -> Ws {
    let mut req = format!("ws://127.0.0.1:{}{path}", server.port())
        .into_client_request()
        .unwrap();
    req.headers_mut().insert(
        "x-claude-code-ide-authorization",
        server.shared().token().parse().unwrap(),
    );
    tokio_tungstenite::connect_async(req).await.unwrap().0
}

pub async fn send(ws: &mut Ws, v: Value) {
    ws.send(Message::text(v.to_string())).await.unwrap();
}

/// The next text message, decoded (panics after 10 s).
pub async fn next(ws: &mut Ws) -> Value {
    loop {
        let m = tokio::time::timeout(Duration::from_secs(10), ws.next())
            .await
            .expect("a message within 10 s")
            .expect("the connection is open")
            .unwrap();
        if let Message::Text(t) = m {
            return serde_json::from_str(t.as_str()).unwrap();
        }
    }
}
