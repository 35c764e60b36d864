//! The hook door ([`crate::hook::HOOK_PATH`]): where `claude-context-mcp hook <Event>` delivers
//! one Claude Code hook event. The connection passed the same handshake as every other (the
//! token, no `Origin`); it is not a client (no tools, no editor notifications, not in
//! `status().clients`): one request is read, recorded in the session registry
//! ([`crate::turns::Registry`]), answered, and the connection closed.
//!
//! A change of a session's state goes on to the editor as the `session_state` request (handled
//! by `lua/claude_context/sessions/state.lua`), without waiting for it: the hook's answer never
//! waits for Neovim's main thread.

use super::{door, Shared};
use crate::jsonrpc;
use crate::turns::HookEvent;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

/// How long the door waits for the one request after the handshake.
const READ_WAIT: Duration = Duration::from_secs(2);
/// The largest request taken (the hook process sends a few hundred bytes; texts are cut).
const MAX_REQUEST: usize = 256 << 10;

/// Records `ev` and tells the editor what changed (also called by tests without a socket).
pub fn record(shared: &Arc<Shared>, ev: HookEvent) {
    crate::turns::record(&shared.turns, ev);
}

/// Why the hook door refused a request (answered as -32602, "invalid params").
#[derive(Debug, thiserror::Error)]
enum DoorError {
    #[error("not a JSON-RPC request")]
    NotJsonRpc,
    #[error("the hook door takes {} only", crate::hook::METHOD)]
    WrongMethod,
    #[error("params must be an object")]
    ParamsNotObject,
    /// The params do not decode as a hook event.
    #[error("{0}")]
    BadEvent(serde_json::Error),
    #[error("the hook request is too large")]
    TooLarge,
    /// The event names a folder the editor does not know ([`crate::hook::admit_cwd`]).
    #[error("{0}")]
    Refused(crate::hook::HookError),
}

/// Every refusal is the caller's: a request the door cannot take.
impl crate::error::Fault for DoorError {
    fn is_callers(&self) -> bool {
        true
    }
}

fn answer(id: &Value, result: Result<Value, DoorError>) -> String {
    match result {
        Ok(r) => jsonrpc::response(id, r).to_string(),
        Err(e) => jsonrpc::error_response(id, &crate::error::Error::from(e).into()).to_string(),
    }
}

/// What a hook request asks the person to decide, besides its event.
enum Asked {
    /// A plan or a question (super::plans).
    Review(crate::plans::Review),
    /// A permission (super::permissions).
    Permission(crate::hook::permission::Ask),
}

/// One hook request, read once: its event and what the person is asked, if anything.
struct Request {
    event: HookEvent,
    asked: Option<Asked>,
}

/// Parses one hook request: its id, its event (an [`crate::hook::Event`] the plugin knows), and
/// the review or permission ask it carries (checked: any holder of the token may send here).
fn parse(text: &str) -> (Value, Result<Request, DoorError>) {
    let Ok(Value::Object(mut m)) = serde_json::from_str::<Value>(text) else {
        return (Value::Null, Err(DoorError::NotJsonRpc));
    };
    let id = m.remove("id").unwrap_or(Value::Null);
    if m.get("method").and_then(Value::as_str) != Some(crate::hook::METHOD) {
        return (id, Err(DoorError::WrongMethod));
    }
    // (serde would read a struct from an array too.)
    let Some(Value::Object(mut p)) = m.remove("params") else {
        return (id, Err(DoorError::ParamsNotObject));
    };
    let (review, permission) = (p.remove("review"), p.remove("permission"));
    let event = match serde_json::from_value::<HookEvent>(Value::Object(p)) {
        Ok(ev) => ev,
        Err(e) => return (id, Err(DoorError::BadEvent(e))),
    };
    let asked = match (review.and_then(super::plans::from_params), permission) {
        (Some(r), _) => Some(Asked::Review(r)),
        (None, Some(a)) => crate::hook::permission::from_params(&event, a).map(Asked::Permission),
        (None, None) => None,
    };
    (id, Ok(Request { event, asked }))
}

/// Parses one hook request and checks its `cwd`: only a folder the editor knows may be walked
/// into the checkpoint store ([`crate::hook::admit_cwd`]).
fn admitted(shared: &Arc<Shared>, text: &str) -> (Value, Result<Request, DoorError>) {
    let (id, req) = parse(text);
    let req = req.and_then(|mut req| {
        crate::hook::admit_cwd(&mut req.event, &shared.state.model_roots())
            .map_err(DoorError::Refused)?;
        Ok(req)
    });
    (id, req)
}

/// The door's answer to one request that asks the person nothing (no plan or question to
/// review), as [`serve`] gives it, without a socket: the event is recorded when taken. The fuzz
/// target `hook_door` drives the door through it.
pub fn answer_request(shared: &Arc<Shared>, text: &str) -> String {
    let (id, req) = admitted(shared, text);
    let result = req.map(|req| {
        record(shared, req.event);
        json!({})
    });
    answer(&id, result)
}

/// What the door answers a taken request: at once, or once the person decided what it asks.
/// `None`: the hook went away first.
async fn decided<S>(
    shared: &Arc<Shared>,
    req: Request,
    ws: &mut WebSocketStream<S>,
) -> Option<Value>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let ev = req.event;
    record(shared, ev.clone());
    match req.asked {
        Some(Asked::Review(r)) => door::decide(shared, &ev, r, ws).await,
        Some(Asked::Permission(a)) => door::decide(shared, &ev, a, ws).await,
        None => Some(json!({})),
    }
}

/// Serves one hook connection after its handshake.
pub(super) async fn serve<S>(shared: Arc<Shared>, mut ws: WebSocketStream<S>, addr: SocketAddr)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let msg = tokio::time::timeout(READ_WAIT, ws.next()).await;
    let text = match msg {
        Ok(Some(Ok(Message::Text(t)))) if t.len() <= MAX_REQUEST => t,
        Ok(Some(Ok(Message::Text(_)))) => {
            let _ = ws
                .send(Message::text(answer(
                    &Value::Null,
                    Err(DoorError::TooLarge),
                )))
                .await;
            let _ = ws.close(None).await;
            return;
        }
        _ => {
            tracing::debug!(%addr, "hook connection closed without a request");
            let _ = ws.close(None).await;
            return;
        }
    };
    let (id, req) = admitted(&shared, text.as_str());
    let result = match req {
        Ok(req) => match decided(&shared, req, &mut ws).await {
            Some(v) => Ok(v),
            None => return, // the hook went away
        },
        Err(e) => Err(e),
    };
    if let Err(e) = &result {
        tracing::info!(%addr, error = %e, "refused a hook request");
    }
    let _ = ws.send(Message::text(answer(&id, result))).await;
    let _ = ws.close(None).await;
    // Read the client's close so the socket ends cleanly, but not for long.
    let _ = tokio::time::timeout(Duration::from_millis(200), async {
        while let Some(Ok(m)) = ws.next().await {
            if matches!(m, Message::Close(_)) {
                break;
            }
        }
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_checked() {
        let (id, ev) = parse(
            r#"{"jsonrpc":"2.0","id":3,"method":"claude-context/hook","params":{"event":"Stop","session_id":"s"}}"#,
        );
        assert_eq!(id, json!(3));
        assert_eq!(ev.unwrap().event.event, crate::hook::Event::Stop);
        assert!(parse(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
            .1
            .is_err());
        assert!(parse("[]").1.is_err());
        // A refusal is answered as invalid params, in words the hook prints.
        let (id, ev) = parse(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        let a: Value = serde_json::from_str(&answer(&id, ev.map(|_| json!({})))).unwrap();
        assert_eq!(
            a,
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602,
                   "message": "the hook door takes claude-context/hook only"}})
        );
        assert!(
            parse(r#"{"jsonrpc":"2.0","id":1,"method":"claude-context/hook","params":[]}"#)
                .1
                .is_err()
        );
        // An event the plugin does not know, or none: refused, never a session of its own.
        for params in [
            r#"{"event":"Other","session_id":"s"}"#,
            r#"{"session_id":"s"}"#,
        ] {
            let text = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"claude-context/hook","params":{params}}}"#
            );
            assert!(
                matches!(parse(&text).1, Err(DoorError::BadEvent(_))),
                "{params}"
            );
        }
    }
}
