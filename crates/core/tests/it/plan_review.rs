//! Plans and questions reviewed in the editor, through the built `claude-context-mcp hook
//! PreToolUse` against a real bridge: the editor gets `plan_review` with the tool's input, the
//! session waits meanwhile, and the hook prints Claude Code's PreToolUse output for the
//! person's decision; when the editor fails, the hook prints nothing (the CLI asks in the
//! terminal); when the hook goes away first, the editor's request is dropped (its review closes).

use crate::common;

use claude_context_core::editor::{EditorError, EditorRpc, RpcFuture};
use claude_context_core::server::Server;
use claude_context_core::turns::SessionState;
use common::bridge::Dirs;
use serde_json::{json, Value};
use std::process::{Child, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the editor answers `plan_review` with.
#[derive(Clone)]
enum Answer {
    Now(Result<Value, EditorError>),
    /// Never; `dropped` is set when the bridge stops waiting.
    Never(Arc<AtomicBool>),
}

struct Editor {
    answer: Mutex<Answer>,
    calls: Mutex<Vec<(String, Value)>>,
}

struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl EditorRpc for Editor {
    fn call(&self, method: &str, params: Value) -> RpcFuture {
        self.calls
            .lock()
            .unwrap()
            .push((method.to_string(), params));
        if method != "plan_review" {
            return Box::pin(async { Ok(Value::Null) });
        }
        match self.answer.lock().unwrap().clone() {
            Answer::Now(a) => Box::pin(async move { a }),
            Answer::Never(flag) => {
                let guard = SetOnDrop(flag);
                Box::pin(async move {
                    let _guard = guard;
                    std::future::pending::<()>().await;
                    Ok(Value::Null)
                })
            }
        }
    }
}

struct Bridge {
    server: Server,
    editor: Arc<Editor>,
    dirs: Dirs,
}

fn bridge(answer: Answer) -> Bridge {
    let dirs = Dirs::new("project", &[]);
    let editor = Arc::new(Editor {
        answer: Mutex::new(answer),
        calls: Mutex::default(),
    });
    let server = dirs.start(editor.clone(), |_| {});
    Bridge {
        server,
        editor,
        dirs,
    }
}

impl Bridge {
    fn spawn(&self, input: &Value) -> Child {
        let port = Some(self.server.port());
        self.dirs.spawn_hook("PreToolUse", input, port)
    }

    fn hook(&self, input: &Value) -> Output {
        self.dirs
            .hook("PreToolUse", input, Some(self.server.port()))
    }

    fn state(&self, id: &str) -> Option<SessionState> {
        let s = self.server.shared().status().sessions;
        s.into_iter().find(|s| s.id == id).map(|s| s.state)
    }

    fn reviews(&self) -> Vec<Value> {
        let calls = self.editor.calls.lock().unwrap();
        calls
            .iter()
            .filter(|(m, _)| m == "plan_review")
            .map(|(_, p)| p.clone())
            .collect()
    }
}

const PLAN: &str = "# Plan\n1. read the parser\n2. rename it\n";

fn exit_plan_mode(session: &str) -> Value {
    json!({
        "session_id": session,
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/p",
        "hook_event_name": "PreToolUse",
        "permission_mode": "plan",
        "tool_name": "ExitPlanMode",
        "tool_input": {"plan": PLAN, "planFilePath": "/home/u/.claude/plans/p.md"},
        "tool_use_id": "toolu_1",
    })
}

fn output(out: &Output) -> Value {
    assert!(out.status.success(), "exit status {:?}", out.status);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {:?} / stderr {:?}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn an_approved_plan_lets_claude_proceed_with_its_input() {
    let b = bridge(Answer::Now(Ok(json!({"decision": "approve"}))));
    let out = output(&b.hook(&exit_plan_mode("s-1")));
    let h = &out["hookSpecificOutput"];
    assert_eq!(h["hookEventName"], "PreToolUse");
    assert_eq!(h["permissionDecision"], "allow");
    assert_eq!(h["updatedInput"]["plan"], PLAN);
    let reviews = b.reviews();
    assert_eq!(reviews.len(), 1);
    assert_eq!(reviews[0]["tool"], "ExitPlanMode");
    assert_eq!(reviews[0]["input"]["plan"], PLAN);
    assert_eq!(reviews[0]["session_id"], "s-1");
    assert_eq!(reviews[0]["terminal"], "main");
}

#[test]
fn an_edited_plan_declines_with_the_changes_and_the_session_works_on() {
    let edited = "# Plan\n1. read the parser\nDo not touch the tests.\n2. rename it\n";
    let b = bridge(Answer::Now(Ok(
        json!({"decision": "revise", "text": edited}),
    )));
    let out = output(&b.hook(&exit_plan_mode("s-2")));
    let h = &out["hookSpecificOutput"];
    assert_eq!(h["permissionDecision"], "deny");
    let reason = h["permissionDecisionReason"].as_str().unwrap();
    assert!(reason.contains("+Do not touch the tests.\n"), "{reason}");
    assert!(reason.ends_with(edited), "{reason}");
    assert_eq!(b.state("s-2"), Some(SessionState::Working));
}

#[test]
fn when_the_editor_cannot_decide_the_terminal_asks() {
    let b = bridge(Answer::Now(Err(EditorError::Busy {
        method: "plan_review".into(),
        waited_ms: 1,
    })));
    let out = b.hook(&exit_plan_mode("s-3"));
    assert!(out.status.success());
    assert!(
        out.stdout.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    // Other tools are never held: no review, nothing printed.
    let mut bash = exit_plan_mode("s-3");
    bash["tool_name"] = json!("Bash");
    bash["tool_input"] = json!({"command": "ls"});
    let out = b.hook(&bash);
    assert!(out.stdout.is_empty());
    assert_eq!(b.reviews().len(), 1);
}

#[test]
fn a_hook_that_goes_away_closes_the_review() {
    let dropped = Arc::new(AtomicBool::new(false));
    let b = bridge(Answer::Never(dropped.clone()));
    let mut child = b.spawn(&exit_plan_mode("s-4"));
    // Waiting for the person: the session says so.
    let deadline = Instant::now() + Duration::from_secs(30);
    while b.state("s-4") != Some(SessionState::Waiting) {
        assert!(Instant::now() < deadline, "the session never waited");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!dropped.load(Ordering::SeqCst));
    // Claude Code's timeout of the hook (or Esc in the terminal) kills it.
    child.kill().unwrap();
    let _ = child.wait();
    while !dropped.load(Ordering::SeqCst) {
        assert!(
            Instant::now() < deadline,
            "the editor's request was never dropped"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn questions_are_answered_with_the_chosen_labels() {
    let b = bridge(Answer::Now(Ok(
        json!({"decision": "answers", "answers": {"Which color?": "Blue"}}),
    )));
    let mut input = exit_plan_mode("s-5");
    input["tool_name"] = json!("AskUserQuestion");
    input["tool_input"] = json!({"questions": [{"question": "Which color?", "header": "Color",
        "options": [{"label": "Red", "description": "r"}, {"label": "Blue", "description": "b"}],
        "multiSelect": false}]});
    let out = output(&b.hook(&input));
    let h = &out["hookSpecificOutput"];
    assert_eq!(h["permissionDecision"], "allow");
    assert_eq!(
        h["updatedInput"]["answers"],
        json!({"Which color?": "Blue"})
    );
    assert_eq!(
        h["updatedInput"]["questions"],
        input["tool_input"]["questions"]
    );
}
