//! The `claude-context-mcp` relay: a stdio MCP server (newline-delimited JSON-RPC, as Claude
//! Code speaks to `command` servers) that forwards every message to the editor's WebSocket
//! bridge and every answer back.
//!
//! [`connect`] opens the WebSocket with the token header; [`relay`] pumps messages until either
//! side closes. Both are generic over the byte streams so tests run them on in-memory pipes.

use crate::discovery::Candidate;
use futures_util::{SinkExt, StreamExt};
use std::time::Duration;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

/// The header the bridge checks (same as `server::conn::AUTH_HEADER`).
pub use crate::auth::AUTH_HEADER;

/// The largest WebSocket frame and message the relay reads from the editor, in bytes (the
/// bridge's default `max_message_size`); a larger one ends the relay with an error.
pub const MAX_MESSAGE_SIZE: usize = crate::config::DEFAULT_MAX_MESSAGE_SIZE;

/// How long [`connect`] waits for the TCP connection and the handshake together.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Why the relay stopped (both are normal ends).
#[derive(Debug, PartialEq, Eq)]
pub enum End {
    /// Our stdin reached end of file (Claude Code went away or closed the pipe).
    InputClosed,
    /// The editor closed the WebSocket (Neovim quit or the bridge stopped).
    EditorClosed,
}

#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    #[error("cannot connect to the editor on 127.0.0.1:{port}: {why}")]
    Connect { port: u16, why: String },
    #[error("the editor on port {port} refused the token from {lock_file} (HTTP {status}); the lock file may be stale")]
    Refused {
        port: u16,
        status: u16,
        lock_file: String,
    },
    #[error("reading stdin: {0}")]
    Input(std::io::Error),
    #[error("writing stdout: {0}")]
    Output(std::io::Error),
    #[error("WebSocket: {0}")]
    Ws(String),
    #[error(
        "the editor sent a WebSocket frame or message over the relay's limit of {MAX_MESSAGE_SIZE} bytes ({0}); stopped"
    )]
    TooLarge(String),
}

/// Connects to the bridge of `c` on 127.0.0.1 with its token.
pub async fn connect(c: &Candidate) -> Result<WebSocketStream<TcpStream>, RelayError> {
    let fail = |why: String| RelayError::Connect { port: c.port, why };
    // The MCP-server door: the model behind this relay sees the plugin's tools, not the IDE's
    // diff plumbing (see mcp::catalog::Surface).
    let url = format!("ws://127.0.0.1:{}{}", c.port, crate::mcp::catalog::MCP_PATH);
    let mut req = url
        .as_str()
        .into_client_request()
        .map_err(|e| fail(e.to_string()))?;
    let token = HeaderValue::from_str(&c.token)
        .map_err(|_| fail("the lock file's token is not a valid header value".into()))?;
    req.headers_mut().insert(AUTH_HEADER, token);
    // The bridge's limits: a server on the lock file's port (the lock file may be stale and the
    // port reused) announcing a frame of any size gets an error, never an allocation of it.
    let cfg = crate::server::ws_config(MAX_MESSAGE_SIZE);
    let attempt = async {
        let tcp = TcpStream::connect(("127.0.0.1", c.port))
            .await
            .map_err(|e| fail(e.to_string()))?;
        let _ = tcp.set_nodelay(true);
        match tokio_tungstenite::client_async_with_config(req, tcp, Some(cfg)).await {
            Ok((ws, _resp)) => Ok(ws),
            Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => Err(RelayError::Refused {
                port: c.port,
                status: resp.status().as_u16(),
                lock_file: c.lock_file.display().to_string(),
            }),
            Err(e) => Err(fail(e.to_string())),
        }
    };
    tokio::time::timeout(CONNECT_TIMEOUT, attempt)
        .await
        .map_err(|_| fail("timed out".into()))?
}

/// Makes one WebSocket text message fit on one stdout line: JSON-RPC from the bridge is compact
/// already; anything with a raw newline is re-serialised (or, if it is not JSON, the newline
/// escaped so the framing survives).
fn one_line(text: &str) -> String {
    if !text.contains(['\n', '\r']) {
        return text.to_string();
    }
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v) => v.to_string(),
        Err(_) => text.replace('\r', "\\r").replace('\n', "\\n"),
    }
}

/// Pumps `input` lines to the WebSocket and WebSocket text messages to `output` lines until
/// either side closes. Empty input lines are skipped; a trailing `\r` is dropped.
pub async fn relay<S, R, W>(
    ws: WebSocketStream<S>,
    input: R,
    mut output: W,
) -> Result<End, RelayError>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let (mut sink, mut source) = ws.split();
    let mut lines = input.lines();
    loop {
        tokio::select! {
            line = lines.next_line() => {
                match line.map_err(RelayError::Input)? {
                    Some(l) => {
                        let l = l.strip_suffix('\r').unwrap_or(&l);
                        if l.trim().is_empty() {
                            continue;
                        }
                        if let Err(e) = sink.send(Message::text(l.to_string())).await {
                            return match e {
                                tokio_tungstenite::tungstenite::Error::ConnectionClosed
                                | tokio_tungstenite::tungstenite::Error::AlreadyClosed => {
                                    Ok(End::EditorClosed)
                                }
                                e => Err(RelayError::Ws(e.to_string())),
                            };
                        }
                    }
                    None => {
                        // Say goodbye, then keep reading briefly so answers still in flight
                        // are not lost and the close handshake completes.
                        let _ = sink.send(Message::Close(None)).await;
                        let drain = async {
                            while let Some(m) = source.next().await {
                                match m {
                                    Ok(Message::Text(t)) => {
                                        write_line(&mut output, &one_line(t.as_str())).await?;
                                    }
                                    Ok(Message::Close(_)) | Err(_) => break,
                                    Ok(_) => {}
                                }
                            }
                            Ok::<_, RelayError>(())
                        };
                        let _ = tokio::time::timeout(Duration::from_secs(2), drain).await;
                        return Ok(End::InputClosed);
                    }
                }
            }
            msg = source.next() => {
                if let Some(end) = from_editor(msg, &mut output).await? {
                    return Ok(end);
                }
            }
        }
    }
}

/// Passes one message from the editor on to `output`; `Some` when the connection ended.
async fn from_editor<W: AsyncWrite + Unpin>(
    msg: Option<Result<Message, tokio_tungstenite::tungstenite::Error>>,
    output: &mut W,
) -> Result<Option<End>, RelayError> {
    use tokio_tungstenite::tungstenite::Error as WsError;
    match msg {
        None | Some(Ok(Message::Close(_))) => {
            output.flush().await.map_err(RelayError::Output)?;
            return Ok(Some(End::EditorClosed));
        }
        Some(Ok(Message::Text(t))) => {
            write_line(output, &one_line(t.as_str())).await?;
        }
        Some(Ok(Message::Binary(b))) => {
            if let Ok(t) = std::str::from_utf8(&b) {
                write_line(output, &one_line(t)).await?;
            }
        }
        Some(Ok(_)) => {} // ping/pong: tungstenite answers pings itself
        Some(Err(WsError::ConnectionClosed | WsError::AlreadyClosed | WsError::Protocol(_))) => {
            return Ok(Some(End::EditorClosed))
        }
        Some(Err(WsError::Io(e)))
            if matches!(
                e.kind(),
                std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::BrokenPipe
                    | std::io::ErrorKind::UnexpectedEof
            ) =>
        {
            return Ok(Some(End::EditorClosed))
        }
        Some(Err(WsError::Capacity(e))) => return Err(RelayError::TooLarge(e.to_string())),
        Some(Err(e)) => return Err(RelayError::Ws(e.to_string())),
    }
    Ok(None)
}

async fn write_line<W: AsyncWrite + Unpin>(out: &mut W, line: &str) -> Result<(), RelayError> {
    let mut buf = Vec::with_capacity(line.len() + 1);
    buf.extend_from_slice(line.as_bytes());
    buf.push(b'\n');
    out.write_all(&buf).await.map_err(RelayError::Output)?;
    out.flush().await.map_err(RelayError::Output)
}

/// Tries each candidate in order; returns the first connection and the errors of those that
/// failed before it.
pub async fn connect_first(
    candidates: &[Candidate],
) -> (
    Option<(Candidate, WebSocketStream<TcpStream>)>,
    Vec<RelayError>,
) {
    let mut errors = Vec::new();
    for c in candidates {
        match connect(c).await {
            Ok(ws) => return (Some((c.clone(), ws)), errors),
            Err(e) => errors.push(e),
        }
    }
    (None, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_keeps_compact_json_and_flattens_the_rest() {
        assert_eq!(one_line(r#"{"a":1}"#), r#"{"a":1}"#);
        assert_eq!(one_line("{\n \"a\": \"x\\ny\"\n}"), r#"{"a":"x\ny"}"#);
        assert_eq!(one_line("not\njson"), "not\\njson");
    }
}
