use super::*;

fn ev(event: &str, session: &str) -> HookEvent {
    HookEvent::new(Event::parse(event).expect("an event"), session)
}

fn prompt(session: &str, text: &str) -> HookEvent {
    HookEvent {
        prompt: Some(text.into()),
        ..ev("UserPromptSubmit", session)
    }
}

fn edit(event: &str, session: &str, tool: &str, file: &str) -> HookEvent {
    HookEvent {
        tool_name: Some(tool.into()),
        file: Some(file.into()),
        ..ev(event, session)
    }
}

fn state(r: &Registry, id: &str) -> SessionState {
    r.sessions(0)
        .into_iter()
        .find(|s| s.id == id)
        .expect("session")
        .state
}

#[test]
fn a_turn_goes_working_waiting_working_done_then_idle_when_seen() {
    let r = Registry::default();
    let start = HookEvent {
        model: Some("claude-x".into()),
        terminal: Some("main".into()),
        ..ev("SessionStart", "s1")
    };
    let c = r.apply(&start, 10).expect("a new session is news");
    assert_eq!(c.previous, None);
    assert_eq!(c.session.state, SessionState::Idle);
    assert_eq!(c.session.name, "main");
    assert_eq!(c.session.model.as_deref(), Some("claude-x"));

    let c = r
        .apply(&prompt("s1", "\n  fix the parser\nand more"), 100)
        .unwrap();
    assert_eq!(c.previous, Some(SessionState::Idle));
    assert_eq!(c.session.state, SessionState::Working);
    assert_eq!(c.session.prompt, "fix the parser");

    // An edit tool's file is in the turn's files as the edit starts (the hook Claude waits
    // for); a tool that is not an edit tool adds none.
    let c = r
        .apply(&edit("PreToolUse", "s1", "Edit", "/p/a.rs"), 110)
        .expect("a file is news");
    assert_eq!(c.session.files, vec!["/p/a.rs".to_string()]);
    assert!(r
        .apply(&edit("PreToolUse", "s1", "Read", "/p/b.rs"), 111)
        .is_none());
    let c = r
        .apply(
            &HookEvent {
                tool_name: Some("Edit".into()),
                ..ev("PermissionRequest", "s1")
            },
            120,
        )
        .unwrap();
    assert_eq!(c.session.state, SessionState::Waiting);
    assert_eq!(
        c.session.waiting_for.as_deref(),
        Some("permission for Edit")
    );

    let c = r
        .apply(&edit("PostToolUse", "s1", "Edit", "/p/a.rs"), 130)
        .unwrap();
    assert_eq!(c.previous, Some(SessionState::Waiting));
    assert_eq!(c.session.state, SessionState::Working);
    assert_eq!(c.session.files, vec!["/p/a.rs".to_string()]);
    // The same file again, and a tool that is not an edit tool: nothing new.
    assert!(r
        .apply(&edit("PostToolUse", "s1", "Edit", "/p/a.rs"), 131)
        .is_none());
    assert!(r
        .apply(&edit("PostToolUse", "s1", "Read", "/p/b.rs"), 132)
        .is_none());
    r.apply(&edit("PreToolUse", "s1", "Write", "/p/new.rs"), 140);

    let c = r.apply(&ev("Stop", "s1"), 1100).unwrap();
    assert_eq!(c.session.state, SessionState::Done);
    assert_eq!(c.session.elapsed_ms, 1000);
    assert_eq!(c.session.files_changed, 2);
    // The elapsed time of a finished turn stays its running time.
    assert_eq!(r.sessions(5000)[0].elapsed_ms, 1000);
    assert_eq!(r.sessions(5000)[0].state_ms, 3900);

    let c = r.seen("s1", 2000).unwrap();
    assert_eq!(c.session.state, SessionState::Idle);
    assert!(r.seen("s1", 2001).is_none(), "only done becomes idle");

    let turns = r.turns(None);
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0].prompt, "\n  fix the parser\nand more");
    assert_eq!(turns[0].start_ms, 100);
    assert_eq!(turns[0].end_ms, Some(1100));
    assert_eq!(turns[0].files, vec!["/p/a.rs", "/p/new.rs"]);
    assert_eq!(turns[0].name.as_deref(), Some("main"));

    let c = r
        .apply(
            &HookEvent {
                reason: Some("exit".into()),
                ..ev("SessionEnd", "s1")
            },
            3000,
        )
        .unwrap();
    assert_eq!(c.session.state, SessionState::Ended);
}

#[test]
fn two_sessions_keep_separate_turns_and_states() {
    let r = Registry::default();
    r.apply(&prompt("a", "one"), 1);
    r.apply(&prompt("b", "two"), 2);
    r.apply(&edit("PreToolUse", "a", "Edit", "/x"), 3);
    r.apply(&edit("PreToolUse", "b", "NotebookEdit", "/y.ipynb"), 4);
    r.apply(&ev("Stop", "a"), 5);
    assert_eq!(state(&r, "a"), SessionState::Done);
    assert_eq!(state(&r, "b"), SessionState::Working);
    let ta = r.turns(Some("a"));
    let tb = r.turns(Some("b"));
    assert_eq!((ta.len(), tb.len()), (1, 1));
    assert_eq!(ta[0].files, vec!["/x"]);
    assert_eq!(tb[0].files, vec!["/y.ipynb"]);
    assert_ne!(ta[0].id, tb[0].id);
    assert_eq!(tb[0].end_ms, None);
}

#[test]
fn notifications_wait_only_for_the_person() {
    let r = Registry::default();
    r.apply(&prompt("s", "go"), 1);
    let n = |t: &str| HookEvent {
        notification_type: Some(t.into()),
        message: Some(format!("{t} message")),
        ..ev("Notification", "s")
    };
    assert!(r.apply(&n("auth_success"), 2).is_none());
    assert_eq!(state(&r, "s"), SessionState::Working);
    let c = r.apply(&n("permission_prompt"), 3).unwrap();
    assert_eq!(c.session.state, SessionState::Waiting);
    assert_eq!(
        c.session.waiting_for.as_deref(),
        Some("permission_prompt message")
    );
    r.apply(&ev("PostToolUse", "s"), 4);
    assert_eq!(state(&r, "s"), SessionState::Working);
    r.apply(&ev("Stop", "s"), 5);
    // An idle prompt after Claude stopped keeps "done" (unseen) rather than "waiting".
    assert!(r.apply(&n("idle_prompt"), 6).is_none());
    assert_eq!(state(&r, "s"), SessionState::Done);
}

#[test]
fn the_next_tool_ends_waiting_but_not_a_review_in_neovim() {
    let r = Registry::default();
    r.apply(&prompt("s", "go"), 1);
    let perm = HookEvent {
        tool_name: Some("Bash".into()),
        ..ev("PermissionRequest", "s")
    };
    r.apply(&perm, 2);
    assert_eq!(state(&r, "s"), SessionState::Waiting);
    // The hook before Claude's next tool (the one hook of a tool call): the person answered.
    let c = r
        .apply(&edit("PreToolUse", "s", "Read", "/p/a.rs"), 3)
        .unwrap();
    assert_eq!(c.previous, Some(SessionState::Waiting));
    assert_eq!(c.session.state, SessionState::Working);
    assert!(c.session.files.is_empty(), "a Read is no edit");
    // A plan review in Neovim waits; the hook before ExitPlanMode (it runs beside the
    // review's own, and may come after it) does not end that wait, nor does AskUserQuestion's.
    for tool in ["ExitPlanMode", "AskUserQuestion"] {
        let review = HookEvent {
            notification_type: Some("permission_prompt".into()),
            message: Some("plan review in Neovim".into()),
            ..ev("Notification", "s")
        };
        r.apply(&review, 4);
        let pre = HookEvent {
            tool_name: Some(tool.into()),
            ..ev("PreToolUse", "s")
        };
        assert!(r.apply(&pre, 5).is_none(), "{tool}");
        assert_eq!(state(&r, "s"), SessionState::Waiting, "{tool}");
        // The person's decision (recorded by the door) does.
        let decided = HookEvent {
            tool_name: Some(tool.into()),
            ..ev("PostToolUse", "s")
        };
        r.apply(&decided, 6);
        assert_eq!(state(&r, "s"), SessionState::Working, "{tool}");
    }
}

#[test]
fn a_new_prompt_ends_an_interrupted_turn_and_events_without_a_session_are_ignored() {
    let r = Registry::default();
    assert!(r.apply(&ev("Stop", ""), 1).is_none());
    assert!(r.sessions(1).is_empty());
    r.apply(&prompt("s", "first"), 10);
    r.apply(&prompt("s", "second"), 20);
    let t = r.turns(None);
    assert_eq!(t[0].end_ms, Some(20));
    assert_eq!(t[1].end_ms, None);
    assert_eq!(r.sessions(25)[0].elapsed_ms, 5);
    assert_eq!(r.sessions(25)[0].name, "s");
}

#[test]
fn tables_stay_bounded() {
    let r = Registry::default();
    for i in 0..(MAX_SESSIONS + 10) {
        r.apply(&prompt(&format!("s{i}"), "p"), i as u64);
    }
    assert_eq!(r.sessions(0).len(), MAX_SESSIONS);
    // The least recently active went first.
    assert!(r.sessions(0).iter().all(|s| s.id != "s0"));
    for i in 0..(MAX_TURNS + 5) {
        r.apply(&prompt("t", "p"), 1000 + i as u64);
    }
    assert_eq!(r.turns(None).len(), MAX_TURNS);
    let long = "é".repeat(PROMPT_BYTES);
    let c = r.apply(&prompt("t", &long), 99_999).unwrap();
    assert!(c.session.prompt.len() <= LINE_BYTES);
    assert!(r.turns(Some("t")).last().unwrap().prompt.len() <= PROMPT_BYTES);
}

#[test]
fn a_late_post_tool_use_never_moves_a_finished_session_nor_joins_the_next_turn() {
    // PostToolUse is a hook Claude Code does not wait for: it may reach the bridge after Stop.
    let r = Registry::default();
    r.apply(&prompt("s", "go"), 1);
    r.apply(&edit("PreToolUse", "s", "Write", "/p/new.rs"), 2);
    r.apply(&ev("Stop", "s"), 3);
    // The file its PreToolUse listed already: nothing new, and no state moves.
    assert!(r
        .apply(&edit("PostToolUse", "s", "Write", "/p/new.rs"), 4)
        .is_none());
    assert_eq!(state(&r, "s"), SessionState::Done);
    // After the next prompt, a late PostToolUse of the last turn's edit is not the new turn's.
    r.apply(&prompt("s", "next"), 5);
    assert!(r
        .apply(&edit("PostToolUse", "s", "Write", "/p/late.rs"), 6)
        .is_none());
    let t = r.turns(Some("s"));
    assert_eq!(t.len(), 2);
    assert_eq!(t[0].files, ["/p/new.rs"]);
    assert!(t[1].files.is_empty(), "{:?}", t[1].files);
    assert_eq!(t[0].end_ms, Some(3));
}
