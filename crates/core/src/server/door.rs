//! What the hook door's asks of the editor share ([`super::permissions`], [`super::plans`]): a
//! bounded count of the asks open at once, the editor's request, and the wait for the editor's
//! answer that ends when the hook goes away first.

use crate::turns::HookEvent;
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::error::Elapsed;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

/// One open ask, counted in its counter while it lives.
pub struct Slot(&'static AtomicUsize);

impl Slot {
    /// One more ask counted in `open`, unless `max` are open already.
    pub fn take(open: &'static AtomicUsize, max: usize) -> Option<Slot> {
        open.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
            (n < max).then_some(n + 1)
        })
        .ok()
        .map(|_| Slot(open))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The editor's request for `tool` with `input` of the session of `ev`.
pub fn editor_params(ev: &HookEvent, tool: &str, input: &Value) -> Value {
    json!({
        "session_id": ev.session_id,
        "terminal": ev.terminal,
        "cwd": ev.cwd,
        "tool": tool,
        "input": input,
    })
}

/// The editor's answer `asked`, waited for at most `wait` (`Err` after that); `None` when the
/// hook's connection `ws` ended first.
pub async fn answer_unless_gone<S, T>(
    asked: impl Future<Output = T>,
    wait: Duration,
    ws: &mut WebSocketStream<S>,
) -> Option<Result<T, Elapsed>>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    // The hook process sends nothing more: anything read is its close (or an error).
    let gone = async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                Some(Ok(_)) => continue,
            }
        }
    };
    tokio::select! {
        a = tokio::time::timeout(wait, asked) => Some(a),
        _ = gone => None,
    }
}
