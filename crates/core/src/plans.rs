//! Claude's plans and questions answered in the editor.
//!
//! When Claude leaves plan mode (its `ExitPlanMode` tool) or asks the person something (its
//! `AskUserQuestion` tool), the plugin's `PreToolUse` hook for that tool sends the tool's input
//! along with the event ([`Review`]) and waits. The bridge hands it to the editor
//! (`plan_review`, `lua/claude_context/sessions/plans.lua`), which opens the plan in a Markdown buffer or
//! asks the questions with `vim.ui.select`, and answers once the person decided ([`Decision`]).
//! The hook prints Claude Code's PreToolUse answer ([`hook_output`]):
//!
//! - approve: `permissionDecision: "allow"` with the tool's input as `updatedInput` (both
//!   tools need the person: a hook's plain "allow" only skips the prompt of tools that do not;
//!   with the input given back the CLI takes the hook's answer as the person's);
//! - revise: `"deny"`, the reason holding a unified diff of the plan against the person's
//!   edit and the edited plan, so Claude revises it and sees exactly what changed;
//! - decline: `"deny"` with a short reason;
//! - answers: `"allow"` with `updatedInput.answers` (question → the chosen label);
//! - pass: no output at all, and the CLI asks in the terminal as it would without the hook.

use crate::text::cut;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// Claude Code's tool that ends plan mode (its input carries the plan).
pub const EXIT_PLAN_MODE: &str = "ExitPlanMode";
/// Claude Code's tool that asks the person multiple-choice questions.
pub const ASK_USER_QUESTION: &str = "AskUserQuestion";

/// Whether `tool` is one the person decides in Neovim ([`EXIT_PLAN_MODE`], [`ASK_USER_QUESTION`]).
pub fn is_reviewed(tool: &str) -> bool {
    tool == EXIT_PLAN_MODE || tool == ASK_USER_QUESTION
}
/// The largest tool input sent for review, as JSON (the hook door takes 256 KiB requests); a
/// larger plan is left to the terminal.
pub const MAX_INPUT_BYTES: usize = 192 << 10;
/// The largest edited plan a revision carries back (its diff and its text).
pub const MAX_EDIT_BYTES: usize = 96 << 10;

/// What a hook asks the editor to decide: the tool and its input.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Review {
    pub tool: String,
    pub input: Value,
}

impl Review {
    /// The plan of an `ExitPlanMode` review.
    pub fn plan(&self) -> Option<&str> {
        self.input.get("plan").and_then(Value::as_str)
    }
}

/// The review for a PreToolUse of `tool` with input `input`, when the editor can decide it:
/// `ExitPlanMode` with its plan text, `AskUserQuestion` with a list of questions, neither
/// larger than [`MAX_INPUT_BYTES`].
pub fn review_of(tool: &str, input: &Value) -> Option<Review> {
    let obj = input.as_object()?;
    match tool {
        EXIT_PLAN_MODE => {
            obj.get("plan")?.as_str()?;
        }
        ASK_USER_QUESTION => {
            let qs = obj.get("questions")?.as_array()?;
            if qs.is_empty() || !qs.iter().all(|q| question_text(q).is_some()) {
                return None;
            }
        }
        _ => return None,
    }
    if serde_json::to_vec(input).map_or(true, |v| v.len() > MAX_INPUT_BYTES) {
        return None;
    }
    Some(Review {
        tool: tool.to_string(),
        input: input.clone(),
    })
}

fn question_text(q: &Value) -> Option<&str> {
    q.get("question").and_then(Value::as_str)
}

/// The person's decision, as the editor answers `plan_review`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// `:w` of the unchanged plan.
    Approve,
    /// `:w` of an edited plan: its text.
    Revise { text: String },
    /// `:q` without writing.
    Decline,
    /// The questions answered: question text → the chosen label(s).
    Answers { answers: Map<String, Value> },
    /// Leave it to the terminal.
    Pass,
}

/// A unified diff of `old` against `new` (empty when equal).
pub fn unified_diff(old: &str, new: &str) -> String {
    use imara_diff::{Algorithm, BasicLineDiffPrinter, Diff, InternedInput, UnifiedDiffConfig};
    let old = with_eol(old);
    let new = with_eol(new);
    let input = InternedInput::new(old.as_str(), new.as_str());
    let mut diff = Diff::compute(Algorithm::Histogram, &input);
    diff.postprocess_lines(&input);
    diff.unified_diff(
        &BasicLineDiffPrinter(&input.interner),
        UnifiedDiffConfig::default(),
        &input,
    )
    .to_string()
}

fn with_eol(s: &str) -> String {
    if s.is_empty() || s.ends_with('\n') {
        s.to_string()
    } else {
        format!("{s}\n")
    }
}

/// The reason a revision gives Claude: what the person changed and the edited plan.
pub fn revise_reason(plan: &str, edited: &str) -> String {
    let edited = cut(edited, MAX_EDIT_BYTES);
    let diff = unified_diff(plan, edited);
    let diff = cut(&diff, MAX_EDIT_BYTES);
    format!(
        "The person reviewed the plan in their editor and did not approve it: they edited it \
         (changed lines or comments written into it). Revise the plan to take every change \
         into account, then call {EXIT_PLAN_MODE} again with the revised plan.\n\n\
         Their changes, as a unified diff of your plan against their edit:\n\
         ```diff\n--- plan\n+++ edited\n{diff}```\n\n\
         The plan as they left it:\n\n{edited}"
    )
}

/// The reason a decline without an edit gives Claude.
pub const DECLINE_REASON: &str = "The person closed the plan in their editor without approving \
     it. Stay in plan mode: do not start on it; ask them what to change.";

fn decision(behavior: &str, reason: &str, updated: Option<Value>) -> Value {
    let mut out = json!({
        "hookEventName": "PreToolUse",
        "permissionDecision": behavior,
        "permissionDecisionReason": reason,
    });
    if let Some(u) = updated {
        out["updatedInput"] = u;
    }
    json!({ "hookSpecificOutput": out })
}

/// Claude Code's PreToolUse hook output for `d` on `review`; `None`: print nothing (the CLI
/// asks in the terminal).
pub fn hook_output(review: &Review, d: &Decision) -> Option<Value> {
    match (review.tool.as_str(), d) {
        (_, Decision::Pass) => None,
        (EXIT_PLAN_MODE, Decision::Approve) => Some(decision(
            "allow",
            "The person approved the plan in their editor.",
            Some(review.input.clone()),
        )),
        (EXIT_PLAN_MODE, Decision::Revise { text }) => {
            let plan = review.plan().unwrap_or("");
            if text.trim_end() == plan.trim_end() {
                return hook_output(review, &Decision::Approve);
            }
            Some(decision("deny", &revise_reason(plan, text), None))
        }
        (EXIT_PLAN_MODE, Decision::Decline) => Some(decision("deny", DECLINE_REASON, None)),
        (ASK_USER_QUESTION, Decision::Answers { answers }) => {
            let mut input = review.input.clone();
            let asked: Vec<&str> = input
                .get("questions")
                .and_then(Value::as_array)
                .map(|qs| qs.iter().filter_map(question_text).collect())
                .unwrap_or_default();
            // Only answers to the questions asked, as text (the CLI's answers are strings).
            let mut kept = Map::new();
            for (q, a) in answers {
                if !asked.contains(&q.as_str()) {
                    continue;
                }
                let text = match a {
                    Value::String(s) => s.clone(),
                    Value::Array(xs) => xs
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(", "),
                    _ => continue,
                };
                kept.insert(q.clone(), Value::String(cut(&text, 4096).to_string()));
            }
            if kept.len() != asked.len() {
                return None;
            }
            input["answers"] = Value::Object(kept);
            Some(decision(
                "allow",
                "The person answered in their editor.",
                Some(input),
            ))
        }
        (ASK_USER_QUESTION, Decision::Decline) => None,
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_review(plan: &str) -> Review {
        review_of(
            EXIT_PLAN_MODE,
            &json!({"plan": plan, "planFilePath": "/tmp/p.md"}),
        )
        .unwrap()
    }

    #[test]
    fn only_known_tools_with_their_input_are_reviewed() {
        assert!(review_of(EXIT_PLAN_MODE, &json!({"plan": "x"})).is_some());
        assert!(review_of(EXIT_PLAN_MODE, &json!({"allowedPrompts": []})).is_none());
        assert!(review_of(EXIT_PLAN_MODE, &json!("plan")).is_none());
        assert!(review_of("Bash", &json!({"plan": "x"})).is_none());
        let q = json!({"questions": [{"question": "Which?", "options": [{"label": "A"}]}]});
        assert!(review_of(ASK_USER_QUESTION, &q).is_some());
        assert!(review_of(ASK_USER_QUESTION, &json!({"questions": []})).is_none());
        assert!(review_of(ASK_USER_QUESTION, &json!({"questions": [{"q": 1}]})).is_none());
        let big = "x".repeat(MAX_INPUT_BYTES + 1);
        assert!(review_of(EXIT_PLAN_MODE, &json!({ "plan": big })).is_none());
    }

    #[test]
    fn approving_gives_the_input_back() {
        let r = plan_review("# Plan\n1. a\n");
        let out = hook_output(&r, &Decision::Approve).unwrap();
        let h = &out["hookSpecificOutput"];
        assert_eq!(h["hookEventName"], "PreToolUse");
        assert_eq!(h["permissionDecision"], "allow");
        assert_eq!(h["updatedInput"], r.input);
        // A "revision" that changed nothing but the final newline approves.
        let same = hook_output(
            &r,
            &Decision::Revise {
                text: "# Plan\n1. a".into(),
            },
        )
        .unwrap();
        assert_eq!(same["hookSpecificOutput"]["permissionDecision"], "allow");
    }

    #[test]
    fn a_revision_carries_the_diff_and_the_edit() {
        let r = plan_review("# Plan\n1. read\n2. write\n3. test\n");
        let edited = "# Plan\n1. read\n2. write carefully\nNOTE: no network\n3. test\n";
        let out = hook_output(
            &r,
            &Decision::Revise {
                text: edited.into(),
            },
        )
        .unwrap();
        let h = &out["hookSpecificOutput"];
        assert_eq!(h["permissionDecision"], "deny");
        assert!(h.get("updatedInput").is_none());
        let reason = h["permissionDecisionReason"].as_str().unwrap();
        assert!(reason.contains("-2. write\n"), "{reason}");
        assert!(
            reason.contains("+2. write carefully\n+NOTE: no network\n"),
            "{reason}"
        );
        assert!(reason.contains(" 1. read\n"), "{reason}");
        assert!(reason.ends_with(edited), "{reason}");
        assert!(reason.contains(EXIT_PLAN_MODE));
    }

    #[test]
    fn declining_and_passing() {
        let r = plan_review("p");
        let out = hook_output(&r, &Decision::Decline).unwrap();
        assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(
            out["hookSpecificOutput"]["permissionDecisionReason"],
            DECLINE_REASON
        );
        assert!(hook_output(&r, &Decision::Pass).is_none());
        // A plan answer to a question review (or the reverse) is not an answer.
        assert!(hook_output(
            &r,
            &Decision::Answers {
                answers: Map::new()
            }
        )
        .is_none());
    }

    #[test]
    fn answers_fill_the_questions() {
        let input = json!({"questions": [
            {"question": "Which color?", "header": "Color", "options": [{"label": "Red"}, {"label": "Blue"}], "multiSelect": false},
            {"question": "Which sizes?", "header": "Size", "options": [{"label": "S"}, {"label": "L"}], "multiSelect": true},
        ]});
        let r = review_of(ASK_USER_QUESTION, &input).unwrap();
        let answers: Map<String, Value> = serde_json::from_value(json!({
            "Which color?": "Blue", "Which sizes?": ["S", "L"], "Not asked": "x"
        }))
        .unwrap();
        let out = hook_output(&r, &Decision::Answers { answers }).unwrap();
        let h = &out["hookSpecificOutput"];
        assert_eq!(h["permissionDecision"], "allow");
        assert_eq!(h["updatedInput"]["questions"], input["questions"]);
        assert_eq!(
            h["updatedInput"]["answers"],
            json!({"Which color?": "Blue", "Which sizes?": "S, L"})
        );
        // Not every question answered: the terminal asks.
        let partial: Map<String, Value> =
            serde_json::from_value(json!({"Which color?": "Red"})).unwrap();
        assert!(hook_output(&r, &Decision::Answers { answers: partial }).is_none());
    }

    #[test]
    fn decisions_parse_from_the_editor() {
        let d: Decision = serde_json::from_str(r#"{"decision":"approve"}"#).unwrap();
        assert_eq!(d, Decision::Approve);
        let d: Decision = serde_json::from_str(r#"{"decision":"revise","text":"t"}"#).unwrap();
        assert_eq!(d, Decision::Revise { text: "t".into() });
        assert!(serde_json::from_str::<Decision>(r#"{"decision":"explode"}"#).is_err());
    }

    #[test]
    fn the_diff_is_unified() {
        assert_eq!(unified_diff("a\nb\n", "a\nb\n"), "");
        assert_eq!(
            unified_diff("a\nb", "a\nc"),
            "@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
        );
    }
}
