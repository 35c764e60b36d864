//! Bash edits named by their command: a Bash call's PostToolUse input as Claude Code sends it
//! with `bashEditDiffEnabled` (`tool_response.bashEditDiff`), read by the hook's own parser and
//! recorded through the hook door's entry point. Two sessions whose turns overlap, one Bash edit
//! each: each file (so each hunk) is one turn's, with its command; without the report (an older
//! CLI) both stay in both turns, marked shared, as before.

use crate::turn_checkpoints::{bridge, file, paths, Bridge};
use claude_context_core::hook::event_from_input;
use claude_context_core::server::hooks::record;
use serde_json::{json, Value};

/// Session `session` runs Bash `command`, which writes `after` to `rel`; the PostToolUse input
/// carries Claude Code's report of it when `report` (hunk: the one changed line, line 1).
fn bash(b: &Bridge, session: &str, command: &str, rel: &str, after: &[u8], report: bool) {
    let abs = b.path(rel).to_string_lossy().into_owned();
    b.hook("PreToolUse", session, Some("Bash"), None);
    std::fs::write(b.path(rel), after).unwrap();
    let mut response = json!({"stdout": "", "stderr": "", "interrupted": false, "isImage": false});
    if report {
        response["bashEditDiff"] = json!({
            "files": [{"filePath": abs, "hunks": [
                {"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1, "lines": ["-x", "+y"]}
            ]}],
            "moreFiles": 0,
            "changedFiles": [abs],
        });
    }
    let input = json!({
        "session_id": session,
        "hook_event_name": "PostToolUse",
        "cwd": b.path("").to_string_lossy(),
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "d"},
        "tool_response": response,
    });
    let ev = event_from_input("PostToolUse", input.to_string().as_bytes(), None).unwrap();
    assert_eq!(ev.bash.is_some(), report, "{ev:?}");
    record(b.shared(), ev);
}

fn commands(cs: &Value, rel: &str) -> Vec<String> {
    file(cs, rel)
        .get("commands")
        .and_then(Value::as_array)
        .map(|v| {
            v.iter()
                .map(|c| c["command"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Two sessions' overlapping turns, one Bash edit each (`report`: Claude Code reports them).
fn two_overlapping_bash_turns(report: bool) -> Bridge {
    let b = bridge();
    std::fs::write(b.path("a.txt"), b"a\n").unwrap();
    std::fs::write(b.path("b.txt"), b"b\n").unwrap();
    b.hook("UserPromptSubmit", "s-1", None, None);
    b.hook("UserPromptSubmit", "s-2", None, None);
    b.settle();
    bash(&b, "s-1", "sed -i 's/a/A/' a.txt", "a.txt", b"A\n", report);
    bash(&b, "s-2", "printf 'B\\n' > b.txt", "b.txt", b"B\n", report);
    b.hook("Stop", "s-1", None, None);
    b.hook("Stop", "s-2", None, None);
    b
}

#[test]
fn overlapping_turns_each_own_their_bash_edit_with_its_command() {
    let b = two_overlapping_bash_turns(true);
    let cs = b.changeset(1, Some("s-1"));
    assert_eq!(paths(&cs), ["a.txt"], "{cs:#}");
    assert_eq!(file(&cs, "a.txt").get("shared"), None);
    assert_eq!(commands(&cs, "a.txt"), ["sed -i 's/a/A/' a.txt"]);
    let hunk = &file(&cs, "a.txt")["commands"][0]["hunks"][0];
    assert_eq!(hunk["new_start"], 1);
    assert_eq!(hunk["new_lines"], 1);
    let cs = b.changeset(1, Some("s-2"));
    assert_eq!(paths(&cs), ["b.txt"], "{cs:#}");
    assert_eq!(file(&cs, "b.txt").get("shared"), None);
    assert_eq!(commands(&cs, "b.txt"), ["printf 'B\\n' > b.txt"]);
    // Both turns together: each file once, each with its own command only.
    let cs = b.changeset(2, None);
    assert_eq!(paths(&cs), ["a.txt", "b.txt"]);
    assert_eq!(commands(&cs, "a.txt"), ["sed -i 's/a/A/' a.txt"]);
    assert_eq!(commands(&cs, "b.txt"), ["printf 'B\\n' > b.txt"]);
    // The session registry's turns name their own file alone.
    let s1 = b.shared().sessions.turns(Some("s-1"));
    assert_eq!(s1[0].files, [b.path("a.txt").to_string_lossy()]);
    let s2 = b.shared().sessions.turns(Some("s-2"));
    assert_eq!(s2[0].files, [b.path("b.txt").to_string_lossy()]);
}

#[test]
fn without_the_report_an_older_clis_bash_edits_stay_shared_as_before() {
    let b = two_overlapping_bash_turns(false);
    for s in ["s-1", "s-2"] {
        let cs = b.changeset(1, Some(s));
        assert_eq!(paths(&cs), ["a.txt", "b.txt"], "{cs:#}");
        for f in ["a.txt", "b.txt"] {
            assert_eq!(file(&cs, f)["shared"], true);
            assert!(commands(&cs, f).is_empty());
        }
    }
}

#[test]
fn a_bash_edit_and_another_sessions_edit_of_the_same_file_share_it_both_named() {
    let b = bridge();
    std::fs::write(b.path("a.txt"), b"a\nb\n").unwrap();
    b.hook("UserPromptSubmit", "s-1", None, None);
    b.hook("UserPromptSubmit", "s-2", None, None);
    b.settle();
    bash(&b, "s-1", "sed -i 's/a/A/' a.txt", "a.txt", b"A\nb\n", true);
    b.hook("PreToolUse", "s-2", Some("Edit"), Some(&b.path("a.txt")));
    std::fs::write(b.path("a.txt"), b"A\nB\n").unwrap();
    b.hook("Stop", "s-1", None, None);
    b.hook("Stop", "s-2", None, None);
    // Both claimed it: in both turns, shared, the command beside it in the Bash one's.
    let cs = b.changeset(1, Some("s-1"));
    assert_eq!(file(&cs, "a.txt")["shared"], true, "{cs:#}");
    assert_eq!(commands(&cs, "a.txt"), ["sed -i 's/a/A/' a.txt"]);
    let cs = b.changeset(1, Some("s-2"));
    assert_eq!(file(&cs, "a.txt")["shared"], true, "{cs:#}");
    assert!(commands(&cs, "a.txt").is_empty());
}

#[test]
fn a_command_is_kept_as_text_and_a_path_outside_the_project_is_no_claim() {
    let b = bridge();
    std::fs::write(b.path("a.txt"), b"a\n").unwrap();
    b.hook("UserPromptSubmit", "s-1", None, None);
    b.settle();
    let command = "printf 'A\\n' > a.txt # \u{1b}]52;c;aGk=\u{7}\u{1b}[2J";
    bash(&b, "s-1", command, "a.txt", b"A\n", true);
    // A report naming a file outside the project claims nothing there.
    let input = json!({
        "session_id": "s-1", "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "touch /etc/x"},
        "tool_response": {"bashEditDiff": {"files": [{"filePath": "/etc/passwd", "hunks": []}], "moreFiles": 0}},
    });
    record(
        b.shared(),
        event_from_input("PostToolUse", input.to_string().as_bytes(), None).unwrap(),
    );
    b.hook("Stop", "s-1", None, None);
    let cs = b.changeset(1, Some("s-1"));
    assert_eq!(paths(&cs), ["a.txt"], "{cs:#}");
    assert_eq!(commands(&cs, "a.txt"), [command]);
}
