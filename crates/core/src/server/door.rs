//! What the hook door's asks of the editor share ([`super::permissions`], [`super::plans`]): a
//! bounded count of the asks open at once, the editor's request, and the wait for the editor's
//! answer that ends when the hook goes away first.

use super::Shared;
use crate::editor::EditorError;
use crate::turns::HookEvent;
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
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

/// The longest an ask is waited for (Claude Code's timeout of the hook ends it sooner).
pub const MAX_WAIT: Duration = crate::hook::REVIEW_TIMEOUT;

/// What the hook door asks the editor to decide (a permission, a plan or a question), and
/// what it makes of the answer. [`decide`] does the asking.
pub trait Decidable {
    /// The editor's method.
    const METHOD: &'static str;
    /// The most asks of this kind waiting at once; more are answered `{}` at once (Claude Code
    /// asks itself).
    const MAX_OPEN: usize;
    /// Logged when [`Self::MAX_OPEN`] are waiting.
    const BUSY: &'static str;
    /// Logged when the hook went away before the decision.
    const GONE: &'static str;
    /// The count of the asks of this kind waiting.
    fn open() -> &'static AtomicUsize;
    /// The tool asked about and its input.
    fn tool_input(&self) -> (&str, &Value);
    /// More for the editor's request (`params.cut`), if any.
    fn extra(&self) -> Option<Value> {
        None
    }
    /// The event recorded while the editor has the ask (the session waits), if any.
    fn waiting(&self, _ev: &HookEvent) -> Option<HookEvent> {
        None
    }
    /// The hook's answer for the editor's (`Err`: none in [`MAX_WAIT`]).
    fn result(&self, answer: Result<Result<Value, EditorError>, Elapsed>) -> Value;
    /// The event recorded once the hook's answer is `result`, if any.
    fn decided(&self, ev: &HookEvent, result: &Value) -> Option<HookEvent>;
}

/// One more waiting ask of kind `D`, unless [`Decidable::MAX_OPEN`] are waiting already.
pub fn slot<D: Decidable>() -> Option<Slot> {
    Slot::take(D::open(), D::MAX_OPEN)
}

/// Asks the editor to decide `d` for the session of `ev` and returns the hook's answer; `None`
/// when the hook (its connection `ws`) went away first: nothing to answer.
pub async fn decide<D, S>(
    shared: &Arc<Shared>,
    ev: &HookEvent,
    d: D,
    ws: &mut WebSocketStream<S>,
) -> Option<Value>
where
    D: Decidable,
    S: AsyncRead + AsyncWrite + Unpin,
{
    let Some(_slot) = slot::<D>() else {
        tracing::info!("{}", D::BUSY);
        return Some(json!({}));
    };
    if let Some(waiting) = d.waiting(ev) {
        crate::turns::record(&shared.turns, waiting);
    }
    let (tool, input) = d.tool_input();
    let mut params = editor_params(ev, tool, input);
    if let Some(x) = d.extra() {
        params["cut"] = x;
    }
    let asked = shared.rpc.call(D::METHOD, params);
    let Some(a) = answer_unless_gone(asked, MAX_WAIT, ws).await else {
        tracing::debug!(session = %ev.session_id, "{}", D::GONE);
        return None;
    };
    let result = d.result(a);
    if let Some(next) = d.decided(ev, &result) {
        crate::turns::record(&shared.turns, next);
    }
    Some(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_most_max_open<D: Decidable>() {
        let slots: Vec<Slot> = std::iter::from_fn(slot::<D>)
            .take(D::MAX_OPEN + 1)
            .collect();
        assert_eq!(slots.len(), D::MAX_OPEN, "{}", D::METHOD);
        assert!(slot::<D>().is_none());
        drop(slots);
        assert!(slot::<D>().is_some());
    }

    #[test]
    fn at_most_max_open_asks_of_each_kind_at_once() {
        at_most_max_open::<crate::hook::permission::Ask>();
        at_most_max_open::<crate::plans::Review>();
        assert_eq!(
            (
                crate::hook::permission::Ask::MAX_OPEN,
                crate::plans::Review::MAX_OPEN
            ),
            (32, 8)
        );
    }
}
