//! Requests from the bridge to its client (MCP `elicitation/create`, `sampling/createMessage`).
//!
//! Each connection has a [`ClientLink`]: the capabilities the client declared in `initialize`,
//! the connection's outgoing queue, an id space of our own (string ids `cc-<n>`, which cannot
//! collide with the client's ids in the other direction, and are told apart from them by
//! being responses: `result`/`error` and no `method`), and the requests waiting for an answer
//! (id → oneshot sender). A response from the client is routed to its waiter; one we never
//! asked for is ignored. When the connection closes every waiter gets an error, and a client
//! that does not answer within the timeout gets `notifications/cancelled` and the waiter an
//! error: the tool then falls back to what it does without the capability, and says so.

use crate::jsonrpc::{json_text, RpcError};
use rmcp::model::ErrorCode;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, OwnedSemaphorePermit};
use tokio_tungstenite::tungstenite::Message;

/// A message on its way to the client, as a connection's queue holds them. `_bytes` holds the
/// message's share of the connection's byte budget until it is handed to the socket.
pub(crate) struct Outgoing {
    pub(crate) msg: Message,
    _bytes: Option<OwnedSemaphorePermit>,
}

impl Outgoing {
    /// A message outside the byte budget (notifications, close frames, requests to the client:
    /// small and few).
    pub(crate) fn unbudgeted(msg: Message) -> Outgoing {
        Outgoing { msg, _bytes: None }
    }

    /// A message holding `bytes` of the connection's budget until it is written.
    pub(crate) fn budgeted(msg: Message, bytes: OwnedSemaphorePermit) -> Outgoing {
        Outgoing {
            msg,
            _bytes: Some(bytes),
        }
    }
}

type Waiter = oneshot::Sender<Result<Value, RpcError>>;

/// One connection's side of server→client requests.
#[derive(Default)]
pub struct ClientLink {
    /// The connection's outgoing queue; `None` before the connection attaches it and after it
    /// closed (and for in-process dispatch without a connection).
    tx: Mutex<Option<mpsc::Sender<Outgoing>>>,
    next: AtomicU64,
    pending: Mutex<HashMap<String, Waiter>>,
    /// `capabilities` from the client's `initialize` (null until then).
    capabilities: Mutex<Value>,
}

tokio::task_local! {
    /// The link of the connection whose request is being handled: scoped around each request by
    /// the MCP dispatch, so a tool can ask that connection's client.
    pub static CLIENT: Arc<ClientLink>;
}

/// The current request's client link, when the request came over a connection.
pub fn current() -> Option<Arc<ClientLink>> {
    CLIENT.try_with(Arc::clone).ok()
}

/// Why a request to the client got no usable answer.
#[derive(Debug, Clone, PartialEq)]
pub enum AskError {
    /// The client did not declare the capability, or there is no connection to ask on.
    Unsupported,
    /// No answer within the timeout (the request was cancelled).
    Timeout(Duration),
    /// The connection closed before the answer came.
    Closed,
    /// The client answered with a JSON-RPC error.
    Rpc(RpcError),
}

impl std::fmt::Display for AskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AskError::Unsupported => write!(f, "the client does not offer it"),
            AskError::Timeout(d) => {
                write!(f, "the client did not answer within {} s", d.as_secs_f64())
            }
            AskError::Closed => write!(f, "the connection closed before the client answered"),
            AskError::Rpc(e) => write!(f, "the client answered error {}: {}", e.code, e.message),
        }
    }
}

impl ClientLink {
    fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        m.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Gives the link the connection's outgoing queue.
    pub(crate) fn attach(&self, tx: mpsc::Sender<Outgoing>) {
        *Self::lock(&self.tx) = Some(tx);
    }

    /// The connection closed: no more requests, and every waiter gets an error. Returns how
    /// many were waiting.
    pub fn close(&self) -> usize {
        Self::lock(&self.tx).take();
        // Dropping a waiter's sender is what tells it the connection closed (a client's own
        // error with the same text is the client's error).
        Self::lock(&self.pending).drain().count()
    }

    /// Records the client's `initialize` capabilities.
    pub fn set_capabilities(&self, caps: Value) {
        *Self::lock(&self.capabilities) = caps;
    }

    /// Whether the client declared capability `name` (`elicitation`, `sampling`, …).
    pub fn supports(&self, name: &str) -> bool {
        Self::lock(&self.capabilities)
            .get(name)
            .is_some_and(|c| !c.is_null())
            && Self::lock(&self.tx).is_some()
    }

    /// How many requests wait for the client's answer.
    pub fn waiting(&self) -> usize {
        Self::lock(&self.pending).len()
    }

    /// Routes a response (`id` and the rest of the message: `result` or `error`, taken as they
    /// are) to its waiter. Returns false when no request of ours has that id.
    pub fn resolve(&self, id: &Value, result: Option<Value>, error: Option<Value>) -> bool {
        let Some(key) = id.as_str() else {
            return false;
        };
        let Some(w) = Self::lock(&self.pending).remove(key) else {
            return false;
        };
        let r = match (result, error) {
            (Some(r), _) => Ok(r),
            (None, Some(e)) => Err(RpcError {
                code: e.get("code").and_then(Value::as_i64).unwrap_or(-32603) as i32,
                message: e
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                data: e.get("data").cloned(),
            }),
            (None, None) => Err(RpcError::new(
                ErrorCode::INVALID_REQUEST,
                "response without result or error",
            )),
        };
        let _ = w.send(r);
        true
    }

    fn send(&self, v: &Value) -> bool {
        let tx = Self::lock(&self.tx).clone();
        let Some(tx) = tx else { return false };
        let m = Outgoing::unbudgeted(Message::text(json_text(v)));
        // The queue is bounded; a full one means a client that does not read: don't wait.
        tx.try_send(m).is_ok()
    }

    /// Sends `method` with `params` to the client, when it declared `capability`, and waits up
    /// to `timeout` for the answer.
    pub async fn ask(
        &self,
        capability: &str,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, AskError> {
        if !self.supports(capability) {
            return Err(AskError::Unsupported);
        }
        let id = format!("cc-{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        let (tx, rx) = oneshot::channel();
        Self::lock(&self.pending).insert(id.clone(), tx);
        // Removes the entry however this ends (answered, timed out, the tool call cancelled).
        struct Forget<'a>(&'a ClientLink, &'a str);
        impl Drop for Forget<'_> {
            fn drop(&mut self) {
                ClientLink::lock(&self.0.pending).remove(self.1);
            }
        }
        let _forget = Forget(self, &id);
        let req = crate::jsonrpc::request(&Value::from(id.as_str()), method, params);
        if !self.send(&req) {
            return Err(AskError::Closed);
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(Ok(v))) => Ok(v),
            Ok(Ok(Err(e))) => Err(AskError::Rpc(e)),
            Ok(Err(_)) => Err(AskError::Closed),
            Err(_) => {
                self.send(&crate::jsonrpc::notification(
                    "notifications/cancelled",
                    json!({"requestId": id, "reason": "timed out"}),
                ));
                Err(AskError::Timeout(timeout))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `elicitation/create` asked on its own task (the test answers it through `resolve`).
    fn ask_later(link: &Arc<ClientLink>) -> tokio::task::JoinHandle<Result<Value, AskError>> {
        let link = link.clone();
        tokio::spawn(async move {
            link.ask(
                "elicitation",
                "elicitation/create",
                json!({}),
                Duration::from_secs(20),
            )
            .await
        })
    }

    #[tokio::test]
    async fn answers_reach_their_waiter_and_close_fails_the_rest() {
        let link = Arc::new(ClientLink::default());
        let (tx, mut rx) = mpsc::channel(8);
        link.attach(tx);
        assert!(!link.supports("elicitation"), "nothing declared yet");
        link.set_capabilities(json!({"elicitation": {}}));
        assert!(link.supports("elicitation"));
        assert!(!link.supports("sampling"));
        let asked = ask_later(&link);
        let sent = rx.recv().await.unwrap();
        let Message::Text(t) = sent.msg else { panic!() };
        let v: Value = serde_json::from_str(t.as_str()).unwrap();
        assert_eq!(v["id"], "cc-1");
        assert_eq!(v["method"], "elicitation/create");
        assert!(
            !link.resolve(&json!(1), None, None),
            "a number is not one of our ids"
        );
        assert!(link.resolve(&json!("cc-1"), Some(json!({"action": "decline"})), None));
        assert_eq!(asked.await.unwrap(), Ok(json!({"action": "decline"})));
        assert_eq!(link.waiting(), 0);
        // A client's own error is its error, even with the text a closed connection had.
        let asked = ask_later(&link);
        let _ = rx.recv().await.unwrap();
        let error = json!({"code": -32603, "message": "connection closed"});
        assert!(link.resolve(&json!("cc-2"), None, Some(error)));
        assert!(
            matches!(asked.await.unwrap(), Err(AskError::Rpc(_))),
            "not taken for a closed connection"
        );
        // A waiter when the connection closes gets an error.
        let asked = ask_later(&link);
        let _ = rx.recv().await.unwrap();
        assert_eq!(link.close(), 1);
        assert_eq!(asked.await.unwrap(), Err(AskError::Closed));
        assert!(!link.supports("elicitation"), "closed");
    }
}
