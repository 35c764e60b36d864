//! Checkpoints wired to the hook door: a turn's start (UserPromptSubmit), a capture before an
//! edit (PreToolUse), its end (Stop); what the turn changed (edit tools and behind the hooks'
//! back: deleted, new, renamed, binary, CRLF, over the cap), two sessions apart (one after the
//! other, and overlapping), rewind and its undo, a full and a damaged store said to the editor,
//! never a crash.

use crate::common;

use claude_context_core::checkpoint::StoreOptions;
use claude_context_core::config::Config;
use claude_context_core::editor::EditorState;
use claude_context_core::server::hooks::record;
use claude_context_core::server::{Server, Shared};
use claude_context_core::turns::checkpoints::{self, Project, TurnQuery};
use claude_context_core::turns::{Event, HookEvent};
use common::bridge::Recorder;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub(crate) struct Bridge {
    server: Server,
    editor: Arc<Recorder>,
    project: PathBuf,
    _tmp: tempfile::TempDir,
}

pub(crate) fn bridge() -> Bridge {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let project = base.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let cfg = Config {
        lock_dir: Some(base.join("claude").join("ide")),
        state_dir: Some(base.join("state")),
        ..Config::default()
    };
    let state = EditorState {
        cwd: Some(project.clone()),
        nvim_version: "0.11.4".into(),
        ..Default::default()
    };
    let editor = Arc::new(Recorder::default());
    let server = Server::start(cfg, state, editor.clone()).unwrap();
    Bridge {
        server,
        editor,
        project,
        _tmp: tmp,
    }
}

impl Bridge {
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        self.server.shared()
    }

    pub(crate) fn hook(&self, event: &str, session: &str, tool: Option<&str>, file: Option<&Path>) {
        let ev = HookEvent {
            cwd: Some(self.project.to_string_lossy().into_owned()),
            prompt: (event == "UserPromptSubmit").then(|| format!("prompt of {session}\nmore")),
            tool_name: tool.map(str::to_string),
            file: file.map(|f| f.to_string_lossy().into_owned()),
            ..HookEvent::new(Event::parse(event).expect("an event"), session)
        };
        // The hook door's own entry point.
        record(self.shared(), ev);
    }

    pub(crate) fn proj(&self) -> Arc<Project> {
        let root = checkpoints::project_root(&self.project).unwrap();
        self.shared().checkpoints.project(&root).unwrap()
    }

    /// Waits for the checkpoints asked for so far.
    pub(crate) fn settle(&self) {
        checkpoints::after_pending(&self.proj(), |_| ()).unwrap();
    }

    pub(crate) fn changeset(&self, n: usize, session: Option<&str>) -> Value {
        self.settle();
        let q = TurnQuery {
            n: Some(n),
            session: session.map(str::to_string),
            ..Default::default()
        };
        checkpoints::changeset(&self.proj(), &q).unwrap()
    }

    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.project.join(rel)
    }

    /// One turn of `session`: its Edit writes `after` into `rel`, then its Stop.
    pub(crate) fn edit_turn(&self, session: &str, rel: &str, after: &[u8]) {
        self.hook("UserPromptSubmit", session, None, None);
        self.settle();
        self.hook("PreToolUse", session, Some("Edit"), Some(&self.path(rel)));
        std::fs::write(self.path(rel), after).unwrap();
        self.hook("Stop", session, None, None);
    }

    fn editor_calls(&self, method: &str) -> Vec<Value> {
        self.editor
            .calls
            .lock()
            .unwrap()
            .iter()
            .filter(|(m, _)| m == method)
            .map(|(_, p)| p.clone())
            .collect()
    }
}

pub(crate) fn file<'a>(cs: &'a Value, path: &str) -> &'a Value {
    cs["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("{path} not in {cs:#}"))
}

pub(crate) fn paths(cs: &Value) -> Vec<String> {
    cs["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_turn_finds_edits_and_changes_behind_the_hooks_back_and_rewinds_them() {
    let b = bridge();
    let w = |rel: &str, bytes: &[u8]| std::fs::write(b.path(rel), bytes).unwrap();
    w("edited.txt", b"one\ntwo\n");
    w("sedded.txt", b"alpha\nbeta\n");
    w("crlf.txt", b"a\r\nb\r\n");
    w("gone.txt", b"bye\n");
    w("old-name.txt", b"moving content\n");
    w("image.bin", &[0u8, 1, 2, 3, 255]);
    let big = vec![b'x'; 5 << 20];
    w("big.txt", &big);
    w("same.txt", b"untouched\n");

    b.hook("UserPromptSubmit", "s-1", None, None);
    // (The start's walk ends before the model's first answer comes back.)
    b.settle();
    b.hook(
        "PreToolUse",
        "s-1",
        Some("Edit"),
        Some(&b.path("edited.txt")),
    );
    w("edited.txt", b"one\nTWO\n");
    b.hook(
        "PostToolUse",
        "s-1",
        Some("Edit"),
        Some(&b.path("edited.txt")),
    );
    b.hook("PreToolUse", "s-1", Some("Write"), Some(&b.path("new.txt")));
    w("new.txt", b"brand new\n");
    // Behind the hooks' back (Bash, a formatter).
    w("sedded.txt", b"alpha\nBETA\n");
    w("crlf.txt", b"a\r\nB\r\n");
    std::fs::remove_file(b.path("gone.txt")).unwrap();
    std::fs::rename(b.path("old-name.txt"), b.path("new-name.txt")).unwrap();
    w("image.bin", &[0u8, 9, 9, 9]);
    let mut big2 = big.clone();
    big2[0] = b'y';
    w("big.txt", &big2);
    b.hook("Stop", "s-1", None, None);

    let cs = b.changeset(1, None);
    assert_eq!(
        paths(&cs),
        [
            "big.txt",
            "crlf.txt",
            "edited.txt",
            "gone.txt",
            "image.bin",
            "new-name.txt",
            "new.txt",
            "sedded.txt"
        ],
        "{cs:#}"
    );
    let f = file(&cs, "edited.txt");
    assert_eq!(f["status"], "modified");
    assert_eq!(f["before"], "one\ntwo\n");
    assert_eq!(f["after"], "one\nTWO\n");
    assert_eq!(
        f["absolute"],
        b.path("edited.txt").to_string_lossy().as_ref()
    );
    let f = file(&cs, "sedded.txt");
    assert_eq!(
        (&f["before"], &f["after"]),
        (&"alpha\nbeta\n".into(), &"alpha\nBETA\n".into())
    );
    let f = file(&cs, "crlf.txt");
    assert_eq!(
        (&f["before"], &f["after"]),
        (&"a\r\nb\r\n".into(), &"a\r\nB\r\n".into())
    );
    let f = file(&cs, "new.txt");
    assert_eq!(
        (&f["status"], &f["before"], &f["after"]),
        (&"added".into(), &Value::Null, &"brand new\n".into())
    );
    let f = file(&cs, "gone.txt");
    assert_eq!(
        (&f["status"], &f["after"]),
        (&"deleted".into(), &Value::Null)
    );
    let f = file(&cs, "new-name.txt");
    assert_eq!(f["status"], "renamed");
    assert_eq!(f["old_path"], "old-name.txt");
    assert_eq!(f["before"], "moving content\n");
    assert_eq!(file(&cs, "image.bin")["status"], "binary");
    assert_eq!(file(&cs, "big.txt")["status"], "too_large");
    assert_eq!(cs["turns"][0]["prompt"], "prompt of s-1");
    assert_eq!(cs["turns"][0]["session"], "s-1");

    // turns(): the files come from the checkpoints (absolute), Bash's included.
    let turns = b.shared().sessions.turns(Some("s-1"));
    assert!(turns[0]
        .files
        .contains(&b.path("sedded.txt").to_string_lossy().into_owned()));
    // (A rename changes two paths: both are listed.)
    assert_eq!(turns[0].files.len(), 9);
    assert_eq!(b.editor_calls("turn_checkpointed").len(), 1);

    // The person changes one file after the turn: rewind keeps it, and says so.
    w("sedded.txt", b"mine now\n");
    let q = TurnQuery::default();
    let r = checkpoints::rewind(&b.proj(), &q).unwrap();
    assert_eq!(std::fs::read(b.path("edited.txt")).unwrap(), b"one\ntwo\n");
    assert_eq!(std::fs::read(b.path("crlf.txt")).unwrap(), b"a\r\nb\r\n");
    assert!(!b.path("new.txt").exists());
    assert_eq!(std::fs::read(b.path("gone.txt")).unwrap(), b"bye\n");
    assert_eq!(
        std::fs::read(b.path("old-name.txt")).unwrap(),
        b"moving content\n"
    );
    assert!(!b.path("new-name.txt").exists());
    assert_eq!(
        std::fs::read(b.path("image.bin")).unwrap(),
        [0u8, 1, 2, 3, 255]
    );
    assert_eq!(std::fs::read(b.path("sedded.txt")).unwrap(), b"mine now\n");
    let conflicts = r["conflicts"].as_array().unwrap();
    let conflict_paths: Vec<&str> = conflicts
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert!(
        conflict_paths.contains(&b.path("sedded.txt").to_str().unwrap()),
        "{r:#}"
    );
    // The big file was over the cap: it cannot be restored, and is not touched.
    assert_eq!(std::fs::read(b.path("big.txt")).unwrap(), big2);
    assert_eq!(std::fs::read(b.path("same.txt")).unwrap(), b"untouched\n");

    // Confirmed: the person's change goes too (it is in the rewind's own checkpoint).
    let q = TurnQuery {
        overwrite: true,
        ..Default::default()
    };
    checkpoints::rewind(&b.proj(), &q).unwrap();
    assert_eq!(
        std::fs::read(b.path("sedded.txt")).unwrap(),
        b"alpha\nbeta\n"
    );

    // Undo twice: back to the person's change, then to what Claude left.
    checkpoints::rewind_undo(&b.proj(), false).unwrap();
    assert_eq!(std::fs::read(b.path("sedded.txt")).unwrap(), b"mine now\n");
    checkpoints::rewind_undo(&b.proj(), false).unwrap();
    assert_eq!(std::fs::read(b.path("edited.txt")).unwrap(), b"one\nTWO\n");
    assert_eq!(std::fs::read(b.path("new.txt")).unwrap(), b"brand new\n");
    assert!(!b.path("gone.txt").exists());
    assert!(checkpoints::rewind_undo(&b.proj(), false).is_err());
}

/// A turn's end reaches the editor as one signal, `turn_checkpointed`, and only once its end
/// checkpoint is in the journal: read right when the signal is sent (no waiting for the
/// project's worker), the turn's change set is there. The session's `done` (its Stop) is not
/// that signal: it comes first, before the end checkpoint is taken.
#[test]
fn a_turns_end_is_told_once_its_checkpoint_is_in_the_journal() {
    let b = bridge();
    std::fs::write(b.path("a.txt"), b"one\n").unwrap();
    b.edit_turn("s-1", "a.txt", b"ONE\n");
    let mut told = Vec::new();
    for _ in 0..6000 {
        told = b.editor_calls("turn_checkpointed");
        if !told.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // Read at once: what the signal names is in the journal already.
    let turn = told.first().expect("the turn's end told")["turn"].clone();
    let q = TurnQuery {
        turn: turn["id"].as_str().map(str::to_string),
        ..Default::default()
    };
    let cs = checkpoints::changeset(&b.proj(), &q).unwrap();
    assert_eq!(paths(&cs), ["a.txt"]);
    assert_eq!(
        (told[0]["event"].as_str(), turn["session"].as_str()),
        (Some("Stop"), Some("s-1"))
    );
    b.settle();
    assert_eq!(b.editor_calls("turn_checkpointed").len(), 1);
}

/// A turn whose start checkpoint cannot be taken yet (the test holds the project's store): the
/// edit tool's hook (`capture`) runs, Claude edits `a.txt` ("before" to "after"), the store is
/// let go and the turn ends. Its change set keeps the captured before.
fn edit_while_the_start_is_held(b: &Bridge, capture: impl FnOnce()) {
    std::fs::write(b.path("a.txt"), b"before\n").unwrap();
    // Creates the project (and its worker) before the prompt.
    let p = b.proj();
    // The worker cannot take the start checkpoint while the test holds the store.
    let held = p.store();
    b.hook("UserPromptSubmit", "s", None, None);
    capture();
    std::fs::write(b.path("a.txt"), b"after\n").unwrap();
    drop(held);
    b.hook("Stop", "s", None, None);
    let cs = b.changeset(1, None);
    let f = file(&cs, "a.txt");
    assert_eq!(
        (&f["before"], &f["after"]),
        (&"before\n".into(), &"after\n".into())
    );
}

#[test]
fn an_edit_captured_while_the_start_is_still_being_taken_keeps_its_before() {
    let b = bridge();
    edit_while_the_start_is_held(&b, || {
        b.hook("PreToolUse", "s", Some("Edit"), Some(&b.path("a.txt")));
    });
}

#[test]
fn two_sessions_keep_their_turns_apart() {
    let b = bridge();
    std::fs::write(b.path("a.txt"), b"a\n").unwrap();
    std::fs::write(b.path("b.txt"), b"b\n").unwrap();
    b.hook("UserPromptSubmit", "s-1", None, None);
    b.settle();
    std::fs::write(b.path("a.txt"), b"A\n").unwrap();
    b.hook("Stop", "s-1", None, None);
    b.hook("UserPromptSubmit", "s-2", None, None);
    b.settle();
    std::fs::write(b.path("b.txt"), b"B\n").unwrap();
    b.hook("Stop", "s-2", None, None);
    assert_eq!(paths(&b.changeset(1, Some("s-1"))), ["a.txt"]);
    assert_eq!(paths(&b.changeset(1, Some("s-2"))), ["b.txt"]);
    assert_eq!(paths(&b.changeset(2, None)), ["a.txt", "b.txt"]);
    let s1 = b.shared().sessions.turns(Some("s-1"));
    assert_eq!(s1.len(), 1);
    assert_eq!(s1[0].files, [b.path("a.txt").to_string_lossy()]);
    // Rewinding s-2's turn leaves s-1's change alone.
    let q = TurnQuery {
        session: Some("s-2".into()),
        ..Default::default()
    };
    checkpoints::rewind(&b.proj(), &q).unwrap();
    assert_eq!(std::fs::read(b.path("b.txt")).unwrap(), b"b\n");
    assert_eq!(std::fs::read(b.path("a.txt")).unwrap(), b"A\n");
}

#[test]
fn overlapping_turns_keep_their_edit_tools_files_apart() {
    let b = bridge();
    let w = |rel: &str, bytes: &[u8]| std::fs::write(b.path(rel), bytes).unwrap();
    let edit = |session: &str, rel: &str, bytes: &[u8]| {
        b.hook("PreToolUse", session, Some("Edit"), Some(&b.path(rel)));
        w(rel, bytes);
        b.hook("PostToolUse", session, Some("Edit"), Some(&b.path(rel)));
    };
    w("a.txt", b"a\n");
    w("b.txt", b"b\n");
    w("c.txt", b"c\n");
    b.hook("UserPromptSubmit", "s-1", None, None);
    b.hook("UserPromptSubmit", "s-2", None, None);
    b.settle();
    edit("s-1", "a.txt", b"A\n");
    edit("s-2", "b.txt", b"B\n");
    // s-2 edits on after s-1 stopped, before s-1's end checkpoint is taken (the worker is held).
    let p = b.proj();
    let held = p.store();
    b.hook("Stop", "s-1", None, None);
    edit("s-2", "c.txt", b"C\n");
    drop(held);
    b.hook("Stop", "s-2", None, None);
    let cs = b.changeset(1, Some("s-1"));
    assert_eq!(paths(&cs), ["a.txt"], "{cs:#}");
    assert_eq!(file(&cs, "a.txt").get("shared"), None);
    assert_eq!(paths(&b.changeset(1, Some("s-2"))), ["b.txt", "c.txt"]);
    assert_eq!(paths(&b.changeset(2, None)), ["a.txt", "b.txt", "c.txt"]);
    let s1 = b.shared().sessions.turns(Some("s-1"));
    assert_eq!(s1[0].files, [b.path("a.txt").to_string_lossy()]);
}

#[test]
fn a_change_no_edit_tool_claims_while_turns_overlap_is_in_both_and_marked() {
    let b = bridge();
    std::fs::write(b.path("a.txt"), b"a\n").unwrap();
    std::fs::write(b.path("gen.txt"), b"generated\n").unwrap();
    b.hook("UserPromptSubmit", "s-1", None, None);
    b.hook("UserPromptSubmit", "s-2", None, None);
    b.settle();
    b.hook("PreToolUse", "s-1", Some("Write"), Some(&b.path("a.txt")));
    std::fs::write(b.path("a.txt"), b"A\n").unwrap();
    // Bash or a formatter, of either session: nobody can tell.
    std::fs::write(b.path("gen.txt"), b"regenerated\n").unwrap();
    b.hook("Stop", "s-1", None, None);
    b.hook("Stop", "s-2", None, None);
    let cs = b.changeset(1, Some("s-1"));
    assert_eq!(paths(&cs), ["a.txt", "gen.txt"], "{cs:#}");
    assert_eq!(file(&cs, "gen.txt")["shared"], true);
    assert_eq!(file(&cs, "a.txt").get("shared"), None);
    assert_eq!(cs["turns"][0]["shared"], serde_json::json!(["gen.txt"]));
    let cs = b.changeset(1, Some("s-2"));
    assert_eq!(paths(&cs), ["gen.txt"], "{cs:#}");
    assert_eq!(file(&cs, "gen.txt")["shared"], true);
    // One after the other: nothing is shared.
    b.hook("UserPromptSubmit", "s-1", None, None);
    b.settle();
    std::fs::write(b.path("gen.txt"), b"again\n").unwrap();
    b.hook("Stop", "s-1", None, None);
    let cs = b.changeset(1, Some("s-1"));
    assert_eq!(paths(&cs), ["gen.txt"]);
    assert_eq!(file(&cs, "gen.txt").get("shared"), None);
}

#[test]
fn rewinding_one_of_two_overlapping_turns_leaves_the_other_sessions_files_alone() {
    let b = bridge();
    let w = |rel: &str, bytes: &[u8]| std::fs::write(b.path(rel), bytes).unwrap();
    let edit = |session: &str, rel: &str, bytes: &[u8]| {
        b.hook("PreToolUse", session, Some("Edit"), Some(&b.path(rel)));
        w(rel, bytes);
        b.hook("PostToolUse", session, Some("Edit"), Some(&b.path(rel)));
    };
    w("mine.txt", b"1\n");
    w("theirs.txt", b"2\n");
    w("both.txt", b"one\ntwo\n");
    w("bash.txt", b"x\n");
    b.hook("UserPromptSubmit", "s-1", None, None);
    b.hook("UserPromptSubmit", "s-2", None, None);
    b.settle();
    edit("s-1", "mine.txt", b"1 by s-1\n");
    edit("s-2", "theirs.txt", b"2 by s-2\n");
    edit("s-1", "both.txt", b"ONE\ntwo\n");
    edit("s-2", "both.txt", b"ONE\nTWO\n");
    w("bash.txt", b"X\n");
    b.hook("Stop", "s-1", None, None);
    b.hook("Stop", "s-2", None, None);
    let cs = b.changeset(1, Some("s-1"));
    assert_eq!(paths(&cs), ["bash.txt", "both.txt", "mine.txt"], "{cs:#}");
    assert_eq!(file(&cs, "both.txt")["shared"], true);

    let q = TurnQuery {
        session: Some("s-1".into()),
        overwrite: true,
        ..Default::default()
    };
    let r = checkpoints::rewind(&b.proj(), &q).unwrap();
    assert_eq!(std::fs::read(b.path("mine.txt")).unwrap(), b"1\n");
    // The other session's file, and the one both edited, are left alone (even when told to
    // overwrite), and the second is listed as kept.
    assert_eq!(std::fs::read(b.path("theirs.txt")).unwrap(), b"2 by s-2\n");
    assert_eq!(std::fs::read(b.path("both.txt")).unwrap(), b"ONE\nTWO\n");
    let kept: Vec<&str> = r["others"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["path"].as_str().unwrap())
        .collect();
    assert_eq!(kept, [b.path("both.txt").to_str().unwrap()], "{r:#}");
    assert!(r["others"][0]["why"]
        .as_str()
        .unwrap()
        .contains("another session"));
    // What no edit tool claimed is the turn's too: rewound.
    assert_eq!(std::fs::read(b.path("bash.txt")).unwrap(), b"x\n");

    // Both turns rewound together: nothing is another's, everything goes back.
    checkpoints::rewind_undo(&b.proj(), false).unwrap();
    let q = TurnQuery {
        n: Some(2),
        ..Default::default()
    };
    let r = checkpoints::rewind(&b.proj(), &q).unwrap();
    assert_eq!(r["others"], serde_json::json!([]), "{r:#}");
    assert_eq!(std::fs::read(b.path("both.txt")).unwrap(), b"one\ntwo\n");
    assert_eq!(std::fs::read(b.path("theirs.txt")).unwrap(), b"2\n");
}

#[test]
fn a_full_store_is_said_once_and_nothing_breaks() {
    let b = bridge();
    b.shared().checkpoints.configure(StoreOptions {
        max_store_bytes: 4096,
        compress: false,
        ..StoreOptions::default()
    });
    let noise: Vec<u8> = (0..64u32 << 10)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(b.path("noise.bin"), &noise).unwrap();
    for _ in 0..2 {
        b.hook("UserPromptSubmit", "s", None, None);
        b.hook("Stop", "s", None, None);
        b.settle();
    }
    let said = b.editor_calls("checkpoint_error");
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0]["message"].as_str().unwrap().contains("full"),
        "{said:?}"
    );
    assert_eq!(paths(&b.changeset(1, None)), Vec::<String>::new());
    // The project's file is untouched, the session still followed.
    assert_eq!(std::fs::read(b.path("noise.bin")).unwrap(), noise);
    assert_eq!(b.shared().sessions.turns(Some("s")).len(), 2);
}

#[test]
fn a_damaged_store_or_journal_is_a_clear_error_never_a_crash() {
    let b = bridge();
    std::fs::write(b.path("a.txt"), b"a\n").unwrap();
    b.hook("UserPromptSubmit", "s", None, None);
    b.settle();
    std::fs::write(b.path("a.txt"), b"A\n").unwrap();
    b.hook("Stop", "s", None, None);
    b.settle();
    let p = b.proj();
    let dir = p.store().dir().to_path_buf();
    // Every object damaged: the turn cannot be shown nor rewound, and says why.
    for e in walk(&dir.join("objects")) {
        std::fs::write(&e, b"garbage").unwrap();
    }
    let q = TurnQuery::default();
    let e = checkpoints::changeset(&p, &q).unwrap_err().to_string();
    assert!(e.contains("damaged"), "{e}");
    let e = checkpoints::rewind(&p, &q).unwrap_err().to_string();
    assert!(e.contains("damaged"), "{e}");
    assert_eq!(std::fs::read(b.path("a.txt")).unwrap(), b"A\n");
    // Records cannot be written: the next turns' checkpoints fail, said once, the hooks go on.
    std::fs::remove_dir_all(dir.join("checkpoints")).unwrap();
    std::fs::write(dir.join("checkpoints"), b"not a directory").unwrap();
    for _ in 0..2 {
        b.hook("UserPromptSubmit", "s", None, None);
        b.hook("Stop", "s", None, None);
        b.settle();
    }
    let said = b.editor_calls("checkpoint_error");
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0]["message"]
            .as_str()
            .unwrap()
            .contains("checkpoints of"),
        "{said:?}"
    );
    assert_eq!(b.shared().sessions.turns(Some("s")).len(), 3);
    // A damaged journal: said, not a panic.
    std::fs::write(dir.join("turns.json"), b"{not json").unwrap();
    let e = checkpoints::changeset(&p, &q).unwrap_err().to_string();
    assert!(e.contains("turn journal") && e.contains("damaged"), "{e}");
    let e = checkpoints::rewind(&p, &q).unwrap_err().to_string();
    assert!(e.contains("damaged"), "{e}");
}

#[test]
fn a_fifo_or_a_link_out_of_the_project_is_never_followed() {
    let b = bridge();
    let outside = b.project.parent().unwrap().join("secret.txt");
    std::fs::write(&outside, b"secret\n").unwrap();
    std::os::unix::fs::symlink(&outside, b.path("link.txt")).unwrap();
    let fifo = b.path("pipe");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string; mkfifo only creates the node.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    b.hook("UserPromptSubmit", "s", None, None);
    // An edit tool aimed at the FIFO and at the link: captured as what they are, not read.
    b.hook("PreToolUse", "s", Some("Write"), Some(&fifo));
    b.hook("PreToolUse", "s", Some("Edit"), Some(&b.path("link.txt")));
    std::fs::remove_file(b.path("link.txt")).unwrap();
    std::fs::write(b.path("link.txt"), b"now a file\n").unwrap();
    b.hook("Stop", "s", None, None);
    let cs = b.changeset(1, None);
    assert_eq!(paths(&cs), ["link.txt"]);
    let f = file(&cs, "link.txt");
    assert_eq!(
        f["before"],
        outside.to_string_lossy().as_ref(),
        "the link's target text"
    );
    checkpoints::rewind(&b.proj(), &TurnQuery::default()).unwrap();
    assert_eq!(std::fs::read_link(b.path("link.txt")).unwrap(), outside);
    assert_eq!(std::fs::read(&outside).unwrap(), b"secret\n");
}

fn walk(d: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(d).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Claude Code's `mcp_tool` hook before a tool: a `tools/call` of the hook tool on `/mcp`.
fn mcp_hook(b: &Bridge, args: Value) -> Value {
    use claude_context_core::mcp::{catalog::Surface, handle_text_in, Inflight};
    let req = serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": claude_context_core::hook::MCP_TOOL, "arguments": args}});
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (answer, _) = rt.block_on(handle_text_in(
        &b.shared().mcp,
        &req.to_string(),
        &Inflight::new(Surface::Mcp),
    ));
    serde_json::from_str(&answer.unwrap()).unwrap()
}

#[test]
fn the_edit_hook_as_an_mcp_tool_call_captures_the_file_before_the_edit() {
    let b = bridge();
    // As Claude Code interpolates the hook input: tool_input as JSON text.
    let args = |event: &str, tool: &str| {
        serde_json::json!({
            "hook_event_name": event,
            "session_id": "s",
            "cwd": b.project.to_string_lossy(),
            "tool_name": tool,
            "file_path": b.path("a.txt").to_string_lossy(),
            "notebook_path": "",
            "permission_mode": "acceptEdits",
        })
    };
    edit_while_the_start_is_held(&b, || {
        let r = mcp_hook(&b, args("PreToolUse", "Edit"));
        assert_eq!(r["result"]["content"][0]["text"], "{}", "{r}");
    });
    // Nothing but a tool's PreToolUse or PostToolUse is taken this way (no faked states).
    for (event, tool) in [
        ("Stop", "Edit"),
        ("PreToolUse", ""),
        ("SessionEnd", "Bash"),
        ("UserPromptSubmit", ""),
    ] {
        let r = mcp_hook(&b, args(event, tool));
        assert_eq!(r["error"]["code"], -32602, "{event} {tool}: {r}");
    }
    assert_eq!(
        b.shared().sessions.sessions(0)[0].state,
        claude_context_core::turns::SessionState::Done
    );
    // Before every tool (the one hook of a tool call): a session that waited for a permission
    // works again when Claude goes on to its next tool, whatever the tool.
    b.hook("UserPromptSubmit", "s", None, None);
    b.hook("PermissionRequest", "s", Some("Bash"), None);
    let state = || b.shared().sessions.sessions(0)[0].state;
    assert_eq!(state(), claude_context_core::turns::SessionState::Waiting);
    let mut read = args("PreToolUse", "Read");
    read["file_path"] = b.path("a.txt").to_string_lossy().into();
    let r = mcp_hook(&b, read);
    assert_eq!(r["result"]["content"][0]["text"], "{}", "{r}");
    assert_eq!(state(), claude_context_core::turns::SessionState::Working);
    let files = || {
        b.shared()
            .sessions
            .turns(Some("s"))
            .last()
            .unwrap()
            .files
            .clone()
    };
    assert!(files().is_empty(), "a Read changes no file: {:?}", files());
    // An edit tool's file is in the turn's files as the edit starts.
    let mut write = args("PreToolUse", "Write");
    write["file_path"] = b.path("new.txt").to_string_lossy().into();
    mcp_hook(&b, write);
    assert_eq!(files(), [b.path("new.txt").to_string_lossy()]);
    // A PostToolUse (a session started by an earlier version of the plugin) is taken too: it
    // ends waiting; the files are the PreToolUse's.
    b.hook("PermissionRequest", "s", Some("Write"), None);
    let mut post = args("PostToolUse", "Write");
    post["file_path"] = b.path("other.txt").to_string_lossy().into();
    let r = mcp_hook(&b, post);
    assert_eq!(r["result"]["content"][0]["text"], "{}", "{r}");
    assert_eq!(state(), claude_context_core::turns::SessionState::Working);
    assert_eq!(files(), [b.path("new.txt").to_string_lossy()]);
}

#[test]
fn the_hook_tool_is_offered_to_no_one_and_not_callable_at_the_ide_door() {
    use claude_context_core::mcp::{catalog::Surface, handle_text_in, Inflight};
    let b = bridge();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for surface in [Surface::Ide, Surface::Mcp] {
        let list = b.shared().mcp.catalog.list(surface).to_string();
        assert!(
            !list.contains(claude_context_core::hook::MCP_TOOL),
            "{surface:?}"
        );
    }
    let req = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": claude_context_core::hook::MCP_TOOL, "arguments": {}}});
    let (answer, _) = rt.block_on(handle_text_in(
        &b.shared().mcp,
        &req.to_string(),
        &Inflight::new(Surface::Ide),
    ));
    let v: Value = serde_json::from_str(&answer.unwrap()).unwrap();
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Unknown tool"),
        "{v}"
    );
}

#[test]
fn a_git_ignored_file_an_edit_tool_overwrites_is_captured_and_rewound_and_one_over_the_cap_is_said()
{
    let b = bridge();
    std::fs::write(b.path(".gitignore"), b"local.cfg\nhuge.log\n").unwrap();
    std::fs::write(b.path("local.cfg"), b"the person's settings\n").unwrap();
    let huge = vec![b'h'; 5 << 20];
    std::fs::write(b.path("huge.log"), &huge).unwrap();
    b.hook("UserPromptSubmit", "s", None, None);
    // The start's walk is over (it skipped the ignored files) when Claude edits.
    b.settle();
    for f in ["local.cfg", "huge.log"] {
        b.hook("PreToolUse", "s", Some("Write"), Some(&b.path(f)));
    }
    std::fs::write(b.path("local.cfg"), b"Claude's\n").unwrap();
    std::fs::write(b.path("huge.log"), b"short now\n").unwrap();
    b.hook("Stop", "s", None, None);
    let cs = b.changeset(1, None);
    let f = file(&cs, "local.cfg");
    assert_eq!(
        (&f["before"], &f["after"]),
        (&"the person's settings\n".into(), &"Claude's\n".into())
    );
    // Over the cap: recorded, not kept, and the turn says so.
    assert_eq!(file(&cs, "huge.log")["status"], "too_large");
    assert_eq!(cs["turns"][0]["not_kept"], serde_json::json!(["huge.log"]));
    let r = checkpoints::rewind(&b.proj(), &TurnQuery::default()).unwrap();
    assert_eq!(
        std::fs::read(b.path("local.cfg")).unwrap(),
        b"the person's settings\n"
    );
    // It cannot be restored: reported as failed or kept, never skipped in silence.
    let said: Vec<&str> = ["failed", "conflicts"]
        .iter()
        .flat_map(|k| r[*k].as_array().unwrap())
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert!(
        said.contains(&b.path("huge.log").to_str().unwrap()),
        "{r:#}"
    );
}

#[cfg(unix)]
#[test]
fn names_that_are_not_utf8_are_rewound_by_their_bytes_and_listed_escaped() {
    use std::os::unix::ffi::OsStrExt;
    let b = bridge();
    let name = |bytes: &[u8]| b.project.join(std::ffi::OsStr::from_bytes(bytes));
    std::fs::write(name(b"caf\xe9.txt"), b"kept by the person\n").unwrap();
    std::fs::write(b.path("plain.txt"), b"plain\n").unwrap();
    b.hook("UserPromptSubmit", "s", None, None);
    b.settle();
    // Behind the hooks' back (Bash): one deleted, one created, one changed.
    std::fs::remove_file(name(b"caf\xe9.txt")).unwrap();
    std::fs::write(name(b"n\xffew\n.txt"), b"Claude's\n").unwrap();
    std::fs::write(b.path("plain.txt"), b"PLAIN\n").unwrap();
    b.hook("Stop", "s", None, None);
    let cs = b.changeset(1, None);
    assert_eq!(file(&cs, "caf\\xe9.txt")["status"], "odd_name", "{cs:#}");
    assert_eq!(file(&cs, "n\\xffew\n.txt")["status"], "odd_name");
    let r = checkpoints::rewind(&b.proj(), &TurnQuery::default()).unwrap();
    assert_eq!(
        std::fs::read(name(b"caf\xe9.txt")).unwrap(),
        b"kept by the person\n"
    );
    assert!(!name(b"n\xffew\n.txt").exists());
    assert_eq!(std::fs::read(b.path("plain.txt")).unwrap(), b"plain\n");
    let root = b.project.to_str().unwrap();
    assert_eq!(
        r["written"],
        serde_json::json!([format!("{root}/caf\\xe9.txt"), format!("{root}/plain.txt")]),
        "{r:#}"
    );
    assert_eq!(
        r["removed"],
        serde_json::json!([format!("{root}/n\\xffew\n.txt")])
    );
    // And the undo puts them back by their bytes too.
    checkpoints::rewind_undo(&b.proj(), false).unwrap();
    assert!(!name(b"caf\xe9.txt").exists());
    assert_eq!(
        std::fs::read(name(b"n\xffew\n.txt")).unwrap(),
        b"Claude's\n"
    );
}

#[test]
fn a_review_write_keeps_what_it_replaces_and_can_be_undone() {
    use claude_context_core::turns::checkpoints::keep;
    let b = bridge();
    std::fs::write(b.path("a.txt"), b"before\n").unwrap();
    b.edit_turn("s", "a.txt", b"Claude's\n");
    b.settle();
    // The person adds a line after the turn; then a reject in the review writes the file.
    std::fs::write(b.path("a.txt"), b"Claude's\nmine\n").unwrap();
    let cps = &b.shared().checkpoints;
    let kept = keep::before_write(cps, &b.project, &b.path("a.txt"), None)
        .unwrap()
        .expect("kept");
    std::fs::write(b.path("a.txt"), b"before\nmine\n").unwrap();
    keep::after_write(kept).unwrap();
    // Undone: the file is what it was right before the review wrote it.
    let r = checkpoints::rewind_undo(&b.proj(), false).unwrap();
    assert_eq!(
        std::fs::read(b.path("a.txt")).unwrap(),
        b"Claude's\nmine\n",
        "{r:#}"
    );
    // A later change of the person's is never overwritten by such an undo: kept, and said.
    let kept = keep::before_write(cps, &b.project, &b.path("a.txt"), None)
        .unwrap()
        .unwrap();
    std::fs::write(b.path("a.txt"), b"before\nmine\n").unwrap();
    keep::after_write(kept).unwrap();
    std::fs::write(b.path("a.txt"), b"before\nmine\nand more\n").unwrap();
    let r = checkpoints::rewind_undo(&b.proj(), false).unwrap();
    assert_eq!(
        std::fs::read(b.path("a.txt")).unwrap(),
        b"before\nmine\nand more\n"
    );
    assert_eq!(r["conflicts"].as_array().unwrap().len(), 1, "{r:#}");
}

/// A project's first checkpoint (a walk of every file) never holds the prompt: while the walk
/// has the store (held here as a long walk holds it), the prompt's hook and an edit's hook
/// answer, the edit's file is captured; once the walk runs it tells the editor how far it got
/// (`checkpoint_progress`), then that it is done; the turn's before is restored by a rewind.
#[test]
fn the_first_checkpoint_never_holds_the_prompt_and_tells_its_progress() {
    let b = bridge();
    b.shared().checkpoints.configure(StoreOptions {
        progress_every: std::time::Duration::ZERO,
        ..StoreOptions::default()
    });
    for i in 0..40 {
        let p = b.path(&format!("d{}/f{i}.txt", i % 4));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("{i}\n")).unwrap();
    }
    std::fs::write(b.path("a.txt"), b"before\n").unwrap();
    let p = b.proj();
    let held = p.store();
    let (tx, rx) = std::sync::mpsc::channel();
    let answered = std::thread::scope(|s| {
        s.spawn(|| {
            b.hook("UserPromptSubmit", "s", None, None);
            b.hook("PreToolUse", "s", Some("Edit"), Some(&b.path("a.txt")));
            let _ = tx.send(());
        });
        let r = rx.recv_timeout(std::time::Duration::from_secs(120));
        // Let the walk go (the hooks' thread too, were it waiting for it).
        drop(held);
        r
    });
    assert!(
        answered.is_ok(),
        "the prompt's hook waited for the checkpoint"
    );
    std::fs::write(b.path("a.txt"), b"after\n").unwrap();
    b.hook("Stop", "s", None, None);
    b.settle();
    let mut told = Vec::new();
    for _ in 0..600 {
        told = b.editor_calls("checkpoint_progress");
        if told.iter().any(|t| t["done"] == true) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // The messages are sent without waiting: they may arrive in any order.
    let last = told
        .iter()
        .find(|t| t["done"] == true)
        .cloned()
        .unwrap_or_default();
    assert_eq!(last["done"], true, "{told:?}");
    assert!(told.iter().any(|t| t["done"] == false), "{told:?}");
    assert_eq!(
        last["root"],
        b.project.to_string_lossy().as_ref(),
        "{told:?}"
    );
    assert!(last["files"].as_u64().unwrap() >= 41, "{told:?}");
    checkpoints::rewind(&b.proj(), &TurnQuery::default()).unwrap();
    assert_eq!(std::fs::read(b.path("a.txt")).unwrap(), b"before\n");
}

/// The editor's write of `rel` (`None`: removed) through the review's keeping, in `group`: the
/// core's `kept_write`, as the binding's file writes call it.
fn kept_write(b: &Bridge, rel: &str, bytes: Option<&[u8]>, group: Option<&str>) {
    use claude_context_core::turns::checkpoints::keep;
    let cps = &b.shared().checkpoints;
    keep::kept_write(Some(cps), &b.project, Path::new(rel), group, || {
        match bytes {
            Some(x) => std::fs::write(b.path(rel), x).unwrap(),
            None => std::fs::remove_file(b.path(rel)).unwrap(),
        }
        Ok(())
    })
    .unwrap();
}

/// Without a running bridge there is no store: the write runs as asked, its result returned;
/// its failure is the write's.
#[test]
fn kept_write_without_a_store_runs_the_write_as_asked() {
    use claude_context_core::capfs::CapError;
    use claude_context_core::turns::checkpoints::keep;
    let dir = tempfile::tempdir().unwrap();
    let r = keep::kept_write(None, dir.path(), Path::new("a.txt"), None, || Ok(7));
    assert_eq!(r.unwrap(), 7);
    let r: Result<(), CapError> =
        keep::kept_write(None, dir.path(), Path::new("a.txt"), None, || {
            Err(CapError::NotFound {
                path: dir.path().join("a.txt"),
            })
        });
    assert!(r.is_err());
}

#[test]
fn a_land_in_a_project_where_no_turn_ran_is_undone_whole_and_never_over_a_later_change() {
    let b = bridge();
    std::fs::write(b.path("a.txt"), b"mine\n").unwrap();
    std::fs::write(b.path("old.txt"), b"to go\n").unwrap();
    std::fs::write(b.path("c.txt"), b"c mine\n").unwrap();
    // No turn ran: the store has no checkpoint. A land writes four files as one batch.
    kept_write(&b, "a.txt", Some(b"landed\n"), Some("land w1"));
    kept_write(&b, "new.txt", Some(b"brand new\n"), Some("land w1"));
    kept_write(&b, "old.txt", None, Some("land w1"));
    kept_write(&b, "c.txt", Some(b"c landed\n"), Some("land w1"));
    // The person changes one of them afterwards.
    std::fs::write(b.path("c.txt"), b"c landed\nand my line\n").unwrap();
    let r = checkpoints::rewind_undo(&b.proj(), false).unwrap();
    assert_eq!(std::fs::read(b.path("a.txt")).unwrap(), b"mine\n", "{r:#}");
    assert!(!b.path("new.txt").exists(), "{r:#}");
    assert_eq!(std::fs::read(b.path("old.txt")).unwrap(), b"to go\n");
    assert_eq!(
        std::fs::read(b.path("c.txt")).unwrap(),
        b"c landed\nand my line\n",
        "the person's later change is never overwritten"
    );
    assert_eq!(r["group"], "land w1");
    let conflicts = r["conflicts"].as_array().unwrap();
    assert_eq!(conflicts.len(), 1, "{r:#}");
    assert_eq!(conflicts[0]["path"], b.path("c.txt").to_str().unwrap());
    // Confirmed (`!`), the one left is undone too; then nothing of the land is left to undo.
    checkpoints::rewind_undo(&b.proj(), true).unwrap();
    assert_eq!(std::fs::read(b.path("c.txt")).unwrap(), b"c mine\n");
    assert!(checkpoints::rewind_undo(&b.proj(), false).is_err());
}

#[cfg(unix)]
#[test]
fn a_rewind_where_one_file_cannot_be_read_restores_the_others_and_lists_it() {
    let b = bridge();
    for f in ["a.txt", "fifo.txt", "dir.txt", "z.txt"] {
        std::fs::write(b.path(f), format!("{f} before\n")).unwrap();
    }
    b.hook("UserPromptSubmit", "s", None, None);
    b.settle();
    for f in ["a.txt", "fifo.txt", "dir.txt", "z.txt"] {
        b.hook("PreToolUse", "s", Some("Write"), Some(&b.path(f)));
        std::fs::write(b.path(f), format!("{f} by Claude\n")).unwrap();
    }
    b.hook("Stop", "s", None, None);
    b.settle();
    // After the turn, one file becomes a FIFO and one a directory.
    std::fs::remove_file(b.path("fifo.txt")).unwrap();
    let c = std::ffi::CString::new(b.path("fifo.txt").to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    std::fs::remove_file(b.path("dir.txt")).unwrap();
    std::fs::create_dir(b.path("dir.txt")).unwrap();
    std::fs::write(b.path("dir.txt").join("inside"), b"x\n").unwrap();
    for overwrite in [false, true] {
        let q = TurnQuery {
            overwrite,
            ..Default::default()
        };
        let r = checkpoints::rewind(&b.proj(), &q)
            .unwrap_or_else(|e| panic!("one unreadable file fails the whole rewind: {e}"));
        assert_eq!(std::fs::read(b.path("a.txt")).unwrap(), b"a.txt before\n");
        assert_eq!(std::fs::read(b.path("z.txt")).unwrap(), b"z.txt before\n");
        let said: Vec<&str> = ["failed", "conflicts"]
            .iter()
            .flat_map(|k| r[*k].as_array().unwrap())
            .map(|c| c["path"].as_str().unwrap())
            .collect();
        for f in ["fifo.txt", "dir.txt"] {
            assert!(said.contains(&b.path(f).to_str().unwrap()), "{f}: {r:#}");
        }
        // Neither is replaced: the FIFO stays a FIFO, the directory and its file stay.
        use std::os::unix::fs::FileTypeExt;
        let ft = std::fs::symlink_metadata(b.path("fifo.txt"))
            .unwrap()
            .file_type();
        assert!(ft.is_fifo(), "{overwrite}");
        assert!(b.path("dir.txt").join("inside").exists());
        if !overwrite {
            checkpoints::rewind_undo(&b.proj(), false).unwrap();
        }
    }
}
