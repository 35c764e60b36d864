//! Reviews at the hook door ([`crate::plans`]): a `PreToolUse` request of `ExitPlanMode` or
//! `AskUserQuestion` carries the tool's input (`params.review`). The door records the event as
//! any other, then asks the editor to decide (`plan_review`, answered by
//! `lua/claude_context/sessions/plans.lua` once the person wrote or closed the plan, or chose the
//! answers) and answers the hook with Claude Code's output for that decision.
//!
//! Nothing waits on the editor's main thread: the editor's handler opens the buffer and returns;
//! the decision comes later, as the answer of the same request. When the hook process goes away
//! first (Claude Code's timeout of the hook, the person pressed Esc in the terminal) the request
//! is dropped, which tells the editor to close the review (`rpc.cancel`). When the editor or the
//! bridge goes away, the hook's connection ends and it prints nothing: the CLI asks in the
//! terminal.

use super::door::{self, Decidable, MAX_WAIT};
use crate::editor::EditorError;
use crate::hook::Event;
use crate::plans::{hook_output, Decision, Review};
use crate::turns::HookEvent;
use serde_json::{json, Value};
use std::sync::atomic::AtomicUsize;
use tokio::time::error::Elapsed;

/// The review a hook request carries in `params.review` (checked again: any holder of the token
/// may send to the door).
pub fn from_params(review: Value) -> Option<Review> {
    let r: Review = serde_json::from_value(review).ok()?;
    crate::plans::review_of(&r.tool, &r.input)
}

/// What the session waits for while the editor has the review.
fn waiting_message(r: &Review) -> String {
    match r.tool.as_str() {
        crate::plans::EXIT_PLAN_MODE => "plan review in Neovim".into(),
        _ => "a question in Neovim".into(),
    }
}

/// The editor's request for `r` of the session of `ev`.
pub fn editor_params(ev: &HookEvent, r: &Review) -> Value {
    door::editor_params(ev, &r.tool, &r.input)
}

/// The hook's answer (`result`) for the editor's answer `answer`.
pub fn result_for(r: &Review, answer: Result<Value, EditorError>) -> Value {
    let decision = match answer {
        Ok(v) => serde_json::from_value::<Decision>(v).unwrap_or(Decision::Pass),
        Err(e) => {
            tracing::info!(error = %e, "the editor did not take the review; the terminal asks");
            Decision::Pass
        }
    };
    let denied = matches!(decision, Decision::Revise { .. } | Decision::Decline);
    match hook_output(r, &decision) {
        Some(out) => json!({ "output": out, "denied": denied }),
        None => json!({}),
    }
}

/// A review, asked with [`door::decide`].
impl Decidable for Review {
    const METHOD: &'static str = crate::editor::methods::PLAN_REVIEW;
    /// The most reviews open at once (each is a buffer in Neovim); more are left to the
    /// terminal.
    const MAX_OPEN: usize = 8;
    const BUSY: &'static str = "too many reviews open; the terminal asks";
    const GONE: &'static str = "the hook went away before the decision";

    fn open() -> &'static AtomicUsize {
        static OPEN: AtomicUsize = AtomicUsize::new(0);
        &OPEN
    }

    fn tool_input(&self) -> (&str, &Value) {
        (&self.tool, &self.input)
    }

    /// The session waits for the person while the editor has it.
    fn waiting(&self, ev: &HookEvent) -> Option<HookEvent> {
        Some(HookEvent {
            event: Event::Notification,
            notification_type: Some("permission_prompt".into()),
            message: Some(waiting_message(self)),
            ..ev.clone()
        })
    }

    fn result(&self, answer: Result<Result<Value, EditorError>, Elapsed>) -> Value {
        result_for(
            self,
            answer.unwrap_or_else(|_| {
                Err(EditorError::Timeout {
                    method: Self::METHOD.into(),
                    waited_ms: MAX_WAIT.as_millis() as u64,
                })
            }),
        )
    }

    /// The person decided in Neovim: the session works on (Claude revises, or goes ahead).
    /// (No PostToolUse follows a denial, and the sessions `:ClaudeContext open` starts have no
    /// PostToolUse hook at all.)
    fn decided(&self, ev: &HookEvent, result: &Value) -> Option<HookEvent> {
        result.get("output")?;
        let denied = result.get("denied") == Some(&Value::Bool(true));
        Some(HookEvent {
            event: if denied {
                Event::PostToolUseFailure
            } else {
                Event::PostToolUse
            },
            ..ev.clone()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_review_is_read_from_the_request_and_checked() {
        let text = json!({"jsonrpc": "2.0", "id": 1, "method": "claude-context/hook", "params": {
            "event": "PreToolUse", "session_id": "s", "tool_name": "ExitPlanMode",
            "review": {"tool": "ExitPlanMode", "input": {"plan": "# P"}}}})
        .to_string();
        let from_request = |text: &str| {
            let v: Value = serde_json::from_str(text).ok()?;
            from_params(v.get("params")?.get("review")?.clone())
        };
        let r = from_request(&text).unwrap();
        assert_eq!(r.plan(), Some("# P"));
        let bad = text.replace("ExitPlanMode\", \"input", "Bash\", \"input");
        let bad = bad.replace(r#""tool":"ExitPlanMode""#, r#""tool":"Bash""#);
        assert!(from_request(&bad).is_none());
        assert!(from_request(r#"{"params":{}}"#).is_none());
    }

    #[test]
    fn the_editors_answer_becomes_the_hooks() {
        let r = crate::plans::review_of("ExitPlanMode", &json!({"plan": "a\n"})).unwrap();
        let ok = result_for(&r, Ok(json!({"decision": "approve"})));
        assert_eq!(
            ok["output"]["hookSpecificOutput"]["permissionDecision"],
            "allow"
        );
        assert_eq!(ok["denied"], false);
        let revise = result_for(&r, Ok(json!({"decision": "revise", "text": "b\n"})));
        assert_eq!(revise["denied"], true);
        // The editor failed or answered nonsense: nothing, and the terminal asks.
        let busy = EditorError::Busy {
            method: "plan_review".into(),
            waited_ms: 1,
        };
        assert_eq!(result_for(&r, Err(busy)), json!({}));
        assert_eq!(result_for(&r, Ok(json!({"decision": 7}))), json!({}));
        assert_eq!(result_for(&r, Ok(json!({"decision": "pass"}))), json!({}));
    }
}
