//! Permission requests at the hook door ([`crate::hook::permission`]): a `PermissionRequest`
//! request carrying `params.permission` is recorded as any event (the session is `waiting`),
//! then the editor is asked (`permission_request`); the hook is answered with the person's
//! decision. Nothing waits on the editor's main thread: the handler queues the ask and answers
//! later. When the hook goes away first (Claude Code's timeout of the hook, or the person
//! answered Claude Code's own dialog and it ended the hook) the request is dropped, which tells
//! the editor to take the ask off its queue (`rpc.cancel`). No decision is ever made here: a
//! timeout, a busy editor or a bad answer is no answer, and Claude Code's dialog stands.

use super::door::{self, Decidable};
use crate::editor::EditorError;
use crate::hook::permission::{result_for, Ask};
use crate::hook::Event;
use crate::turns::HookEvent;
use serde_json::{json, Value};
use std::sync::atomic::AtomicUsize;
use tokio::time::error::Elapsed;

/// The editor's request for ask `a` of the session of `ev`.
pub fn editor_params(ev: &HookEvent, a: &Ask) -> Value {
    let mut p = door::editor_params(ev, &a.tool, &a.input);
    if let Some(c) = a.extra() {
        p["cut"] = c;
    }
    p
}

/// A permission request, asked with [`door::decide`].
impl Decidable for Ask {
    const METHOD: &'static str = crate::editor::methods::PERMISSION_REQUEST;
    /// The most asks waiting at once; more are left to Claude Code's dialog.
    const MAX_OPEN: usize = 32;
    const BUSY: &'static str = "too many permission requests waiting; Claude Code's dialog asks";
    const GONE: &'static str = "the permission hook went away before a decision";

    fn open() -> &'static AtomicUsize {
        static OPEN: AtomicUsize = AtomicUsize::new(0);
        &OPEN
    }

    fn tool_input(&self) -> (&str, &Value) {
        (&self.tool, &self.input)
    }

    /// An input sent cut: its start, its end and what is left out (`params.cut`).
    fn extra(&self) -> Option<Value> {
        self.cut.as_ref().and_then(|c| serde_json::to_value(c).ok())
    }

    fn result(&self, answer: Result<Result<Value, EditorError>, Elapsed>) -> Value {
        match answer {
            Ok(Ok(v)) => result_for(Some(v), self.cut.is_some()),
            Ok(Err(e)) => {
                tracing::info!(error = %e, "the editor did not take the permission request");
                json!({})
            }
            Err(_) => json!({}),
        }
    }

    /// Allowed in Neovim: the session works on.
    fn decided(&self, ev: &HookEvent, result: &Value) -> Option<HookEvent> {
        (result.get("allowed") == Some(&Value::Bool(true))).then(|| HookEvent {
            event: Event::PostToolUse,
            ..ev.clone()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_editor_gets_the_tool_and_its_input() {
        let ev = HookEvent {
            cwd: Some("/p/.claude/worktrees/a".into()),
            ..HookEvent::new(Event::PermissionRequest, "s1")
        };
        let a = Ask {
            tool: "Bash".into(),
            input: json!({"command": "ls"}),
            cut: None,
        };
        let p = editor_params(&ev, &a);
        assert_eq!(p["session_id"], "s1");
        assert_eq!(p["tool"], "Bash");
        assert_eq!(p["input"]["command"], "ls");
    }
}
