//! Permission requests at the hook door ([`crate::hook::permission`]): a `PermissionRequest`
//! request carrying `params.permission` is recorded as any event (the session is `waiting`),
//! then the editor is asked (`permission_request`); the hook is answered with the person's
//! decision. Nothing waits on the editor's main thread: the handler queues the ask and answers
//! later. When the hook goes away first (Claude Code's timeout of the hook, or the person
//! answered Claude Code's own dialog and it ended the hook) the request is dropped, which tells
//! the editor to take the ask off its queue (`rpc.cancel`). No decision is ever made here: a
//! timeout, a busy editor or a bad answer is no answer, and Claude Code's dialog stands.

use super::door::{self, Slot};
use super::Shared;
use crate::hook::permission::{result_for, Ask};
use crate::turns::HookEvent;
use serde_json::{json, Value};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::WebSocketStream;

/// The most asks waiting at once; more are left to Claude Code's dialog.
pub const MAX_OPEN: usize = 32;
/// The longest an ask is waited for (Claude Code's timeout of the hook ends it sooner).
pub const MAX_WAIT: Duration = crate::hook::REVIEW_TIMEOUT;

static OPEN: AtomicUsize = AtomicUsize::new(0);

/// One more waiting ask, unless [`MAX_OPEN`] are waiting already.
fn slot() -> Option<Slot> {
    Slot::take(&OPEN, MAX_OPEN)
}

/// The editor's request for ask `a` of the session of `ev`.
pub fn editor_params(ev: &HookEvent, a: &Ask) -> Value {
    door::editor_params(ev, &a.tool, &a.input)
}

/// Asks the editor and returns the hook's answer; `None` when the hook went away first.
pub async fn decide<S>(
    shared: &Arc<Shared>,
    ev: &HookEvent,
    a: Ask,
    ws: &mut WebSocketStream<S>,
) -> Option<Value>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let Some(_slot) = slot() else {
        tracing::info!("too many permission requests waiting; Claude Code's dialog asks");
        return Some(json!({}));
    };
    let asked = shared.rpc.call("permission_request", editor_params(ev, &a));
    let Some(a) = door::answer_unless_gone(asked, MAX_WAIT, ws).await else {
        tracing::debug!(session = %ev.session_id, "the permission hook went away before a decision");
        return None;
    };
    let result = match a {
        Ok(Ok(v)) => result_for(Some(v)),
        Ok(Err(e)) => {
            tracing::info!(error = %e, "the editor did not take the permission request");
            json!({})
        }
        Err(_) => json!({}),
    };
    if result.get("allowed") == Some(&Value::Bool(true)) {
        // Allowed in Neovim: the session works on.
        super::hooks::record(
            shared,
            HookEvent {
                event: "PostToolUse".into(),
                ..ev.clone()
            },
        );
    }
    Some(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_max_open_asks_at_once() {
        let slots: Vec<Slot> = std::iter::from_fn(slot).take(MAX_OPEN + 1).collect();
        assert_eq!(slots.len(), MAX_OPEN);
        assert!(slot().is_none());
        drop(slots);
        assert!(slot().is_some());
    }

    #[test]
    fn the_editor_gets_the_tool_and_its_input() {
        let ev = HookEvent {
            event: "PermissionRequest".into(),
            session_id: "s1".into(),
            cwd: Some("/p/.claude/worktrees/a".into()),
            ..Default::default()
        };
        let a = Ask {
            tool: "Bash".into(),
            input: json!({"command": "ls"}),
        };
        let p = editor_params(&ev, &a);
        assert_eq!(p["session_id"], "s1");
        assert_eq!(p["tool"], "Bash");
        assert_eq!(p["input"]["command"], "ls");
    }
}
