//! What each hook event does: a turn's start checkpoint, the captures before an edit, its end
//! checkpoint and journal record, all on the project's worker thread; and which session's turn
//! each edit tool's file belongs to when turns overlap.

use super::{
    project_root, BashRecord, Live, OtherClaim, Project, TurnError, TurnRecord, MAX_BASH,
    MAX_BASH_HUNKS, MAX_CAPTURES, MAX_LIVE_TURNS,
};
use crate::checkpoint::{Change, CheckpointError, FileState, Kind};
use crate::editor::methods;
use crate::hook::event::{Event, TurnStep};
use crate::turns::HookEvent;
use crate::turns::Tracker as State;
use serde_json::json;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::mpsc;
use std::sync::Arc;

/// Acts on one hook event (called by the hook door after the session registry took it). Never
/// waits for a walk: at most one file is read here (a capture before an edit).
pub fn on_event(shared: &Arc<State>, ev: &HookEvent) {
    if ev.session_id.is_empty() {
        return;
    }
    if let Ok(h) = tokio::runtime::Handle::try_current() {
        let mut rt = shared
            .checkpoints
            .rt
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if rt.is_none() {
            *rt = Some(h);
        }
    }
    match ev.event.turn_step() {
        TurnStep::Start => start_turn(shared, ev),
        // Before the edit (Claude waits): the file is the turn's and is captured.
        TurnStep::BeforeTool => {
            if let (true, Some(file)) = (ev.is_edit_tool(), ev.file.as_deref()) {
                claim(shared, &ev.session_id, file);
                capture(shared, &ev.session_id, file);
            }
        }
        // After a Bash call, what Claude Code says it changed (a hook Claude waits for, so it
        // comes before the turn's Stop): the files are the turn's, named by the command.
        TurnStep::AfterTool => {
            if let Some(bash) = &ev.bash {
                for f in &bash.files {
                    if let Some(rel) = claim(shared, &ev.session_id, &f.path) {
                        note_command(shared, &ev.session_id, rel, &bash.command, &f.hunks);
                    }
                }
            }
        }
        TurnStep::End => {
            if let Some(key) = shared.sessions.current_turn(&ev.session_id) {
                end_turn(shared, key, ev.event);
            }
        }
        TurnStep::Nothing => {}
    }
}

/// A prompt: the session's turn that never ended ends, and a new one is followed from a start
/// checkpoint of its project.
fn start_turn(shared: &Arc<State>, ev: &HookEvent) {
    let cps = &shared.checkpoints;
    let Some(key) = shared.sessions.current_turn(&ev.session_id) else {
        return;
    };
    // The previous turn of this session, if its Stop never came (interrupted), ends now.
    let previous: Vec<u64> = cps
        .tables()
        .live
        .iter()
        .filter(|(k, l)| **k != key && l.record.session == ev.session_id && l.ending.is_none())
        .map(|(k, _)| *k)
        .collect();
    for k in previous {
        end_turn(shared, k, ev.event);
    }
    let Some(root) = ev.cwd.as_deref().map(Path::new).and_then(project_root) else {
        return;
    };
    let project = match cps.project(&root) {
        Ok(p) => p,
        Err(e) => {
            cps.say(shared, format!("{}:open", root.display()), e.to_string());
            return;
        }
    };
    let now = crate::turns::now_ms();
    let record = TurnRecord {
        id: format!("{now}-{key}"),
        session: ev.session_id.clone(),
        terminal: ev.terminal.clone(),
        prompt: crate::turns::first_line(ev.prompt.as_deref().unwrap_or("")),
        started_ms: now,
        ..TurnRecord::default()
    };
    follow(shared, key, &project, record);
    let shared = shared.clone();
    project.run(Box::new(move |p: &Project| {
        take_start(&shared, p, key);
    }));
}

/// Follows turn `key` (its `record`) in `project`: the oldest one is dropped when too many are,
/// and the turns of other sessions in the same project overlap it.
fn follow(shared: &Arc<State>, key: u64, project: &Arc<Project>, record: TurnRecord) {
    let mut t = shared.checkpoints.tables();
    if t.live.len() >= MAX_LIVE_TURNS {
        if let Some(&oldest) = t.live.keys().min() {
            t.live.remove(&oldest);
        }
    }
    // Another session working in the same project: the turns overlap.
    let mut overlapped = false;
    for o in t.live.values_mut() {
        if Arc::ptr_eq(&o.project, project)
            && o.record.session != record.session
            && o.ending.is_none()
        {
            o.overlapped = true;
            overlapped = true;
        }
    }
    t.live.insert(
        key,
        Live {
            project: project.clone(),
            record,
            started: false,
            captures: Vec::new(),
            late: Vec::new(),
            captured: HashSet::new(),
            ending: None,
            edited: HashSet::new(),
            bash: Vec::new(),
            foreign: HashMap::new(),
            overlapped,
        },
    );
}

/// On the project's worker: the start checkpoint of turn `key`. A walk of the whole project
/// that takes a while (its first) tells the editor how far it got (`checkpoint_progress`), then
/// that it is done.
fn take_start(shared: &Arc<State>, p: &Project, key: u64) {
    let cps = &shared.checkpoints;
    let told = std::sync::atomic::AtomicBool::new(false);
    let root = p.root.to_string_lossy().into_owned();
    let tell = |dirs: u64, files: u64, done: bool| {
        cps.tell(
            shared,
            methods::CHECKPOINT_PROGRESS,
            serde_json::json!({ "root": root, "dirs": dirs, "files": files, "done": done }),
        );
    };
    let progress = |dirs: u64, files: u64| {
        told.store(true, std::sync::atomic::Ordering::Relaxed);
        tell(dirs, files, false);
    };
    let r = {
        let mut store = p.store();
        let r = store.checkpoint_reporting(&format!("turn {key} start"), &progress);
        if told.load(std::sync::atomic::Ordering::Relaxed) {
            let st = store.last_stats();
            tell(st.dirs, st.files + st.symlinks + st.over_cap, true);
        }
        r
    };
    match r {
        Ok(id) => {
            if let Some(l) = cps.tables().live.get_mut(&key) {
                l.record.start = Some(id);
                l.started = true;
            }
        }
        Err(e) => {
            if let Some(l) = cps.tables().live.get_mut(&key) {
                l.started = true;
            }
            cps.store_error(shared, &p.root, &e)
        }
    }
}

/// `file` (absolute, or relative to the root) relative to the project `root`, lexically, when
/// inside it.
fn rel_path(root: &Path, file: &str) -> Option<String> {
    let p = Path::new(file);
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        root.join(p)
    };
    crate::paths::relative_inside(root, &crate::paths::normalize(&abs)).filter(|r| r != ".")
}

/// Session `session`'s edit tool (or Bash call, by Claude Code's report) touches `file`: its
/// turn claims it, and every other session's turn followed in the same project leaves it to
/// that turn. Returns the project-relative path claimed.
fn claim(shared: &Arc<State>, session: &str, file: &str) -> Option<String> {
    let key = shared.sessions.current_turn(session)?;
    let mut t = shared.checkpoints.tables();
    let l = t.live.get_mut(&key)?;
    let rel = rel_path(&l.project.root, file)?;
    if l.edited.len() < MAX_CAPTURES {
        l.edited.insert(rel.clone());
    }
    let (project, id) = (l.project.clone(), l.record.id.clone());
    for (k, o) in t.live.iter_mut() {
        if *k == key || o.record.session == session || !Arc::ptr_eq(&o.project, &project) {
            continue;
        }
        if o.foreign.len() < MAX_CAPTURES || o.foreign.contains_key(&rel) {
            o.foreign.entry(rel.clone()).or_default().insert(id.clone());
        }
    }
    Some(rel)
}

/// Session `session`'s Bash call `command` changed `rel` (at `hunks`): noted in its turn, for
/// the review to name the command beside those hunks.
fn note_command(
    shared: &Arc<State>,
    session: &str,
    rel: String,
    command: &str,
    hunks: &[crate::hook::bash_edit::HunkRange],
) {
    let Some(key) = shared.sessions.current_turn(session) else {
        return;
    };
    let mut t = shared.checkpoints.tables();
    let Some(l) = t.live.get_mut(&key).filter(|l| l.bash.len() < MAX_BASH) else {
        return;
    };
    // (The turn's journal record stays small: so many records, so many hunks.)
    let kept: usize = l.bash.iter().map(|b| b.hunks.len()).sum();
    let hunks = &hunks[..hunks.len().min(MAX_BASH_HUNKS.saturating_sub(kept))];
    let record = BashRecord {
        path: rel.into(),
        command: command.to_string(),
        hunks: hunks.to_vec(),
    };
    // (The same report twice is once.)
    if !l.bash.contains(&record) {
        l.bash.push(record);
    }
}

fn capture(shared: &Arc<State>, session: &str, file: &str) {
    let cps = &shared.checkpoints;
    let Some(key) = shared.sessions.current_turn(session) else {
        return;
    };
    let (project, started) = {
        let t = cps.tables();
        match t.live.get(&key) {
            // The first edit of the file in this turn (later ones would capture Claude's own).
            Some(l) if !l.captured.contains(file) => (l.project.clone(), l.started),
            _ => return,
        }
    };
    // Also once the start is taken: it may not hold the file (a git-ignored one), and a file
    // whose content is already stored costs a read and a hash here.
    let r = project.capturer.capture(file);
    match r {
        Ok((rel, st)) => {
            let mut t = cps.tables();
            if let Some(l) = t.live.get_mut(&key) {
                let n = l.captures.len() + l.late.len();
                if n < MAX_CAPTURES && l.captured.insert(file.to_string()) {
                    if st.is_some_and(|s| s.kind == Kind::OverCap) {
                        l.record.not_kept.push(rel.clone().into());
                    }
                    // (Taken before the start was: the start's walk may have seen the edit.)
                    if started && l.started {
                        l.late.push((rel, st));
                    } else {
                        l.captures.push((rel, st));
                    }
                }
            }
        }
        // Outside the project: nothing to capture.
        Err(CheckpointError::Cap(_)) | Err(CheckpointError::BadPath { .. }) => {}
        Err(e) => cps.store_error(shared, &project.root, &e),
    }
}

/// The end of turn `key` (asked for once, by event `by`): its end checkpoint and record, on the
/// project's worker.
fn end_turn(shared: &Arc<State>, key: u64, by: Event) {
    let cps = &shared.checkpoints;
    let project = {
        let mut t = cps.tables();
        let Some(l) = t.live.get_mut(&key) else {
            return;
        };
        if l.ending.is_some() {
            return;
        }
        l.ending = Some(by);
        l.record.ended_ms = Some(crate::turns::now_ms());
        l.project.clone()
    };
    let shared = shared.clone();
    project.run(Box::new(move |p: &Project| {
        finish_turn(&shared, p, key);
    }));
}

/// On the project's worker: turn `key`'s end checkpoint, its files, its journal record.
fn finish_turn(shared: &Arc<State>, p: &Project, key: u64) {
    let cps = &shared.checkpoints;
    // The turn stays followed until its end is taken: another session's edit meanwhile
    // is still claimed against it.
    let (mut rec, captures, late, by) = {
        let mut t = cps.tables();
        let Some(live) = t.live.get_mut(&key) else {
            return;
        };
        (
            live.record.clone(),
            std::mem::take(&mut live.captures),
            std::mem::take(&mut live.late),
            live.ending.unwrap_or(Event::Stop),
        )
    };
    let result = end_checkpoint(p, key, &mut rec, captures, late);
    let live = cps.tables().live.remove(&key);
    let changes = match result {
        Ok(c) => c,
        Err(e) => {
            cps.store_error(shared, &p.root, &e);
            return;
        }
    };
    match &live {
        Some(live) => attribute(&mut rec, live, &changes),
        // (Dropped to bound the table: nothing is known of other sessions' edits.)
        None => rec.files = changes.iter().map(|c| c.path.clone()).collect(),
    }
    if rec.end.is_none() {
        return;
    }
    let abs: Vec<String> = rec
        .files
        .iter()
        .map(|f| super::pathcode::shown(&p.root.join(f)))
        .collect();
    shared.sessions.set_files(key, abs);
    if let Err(e) = p.update_journal(|j| j.turns.push(rec.clone())) {
        cps.say(
            shared,
            format!("{}:journal", p.root.display()),
            e.to_string(),
        );
    }
    // The turn's one end signal, once its end checkpoint is in the journal: the review takes
    // the turn from here (`lua/claude_context/review/turn_end.lua`).
    cps.tell(
        shared,
        methods::TURN_CHECKPOINTED,
        json!({"root": super::pathcode::shown(&p.root), "turn": rec, "event": by}),
    );
}

/// Turn `key`'s start (corrected by its `captures` and `late` captures) and end checkpoints,
/// set in `rec`, and the changes between them (none when the start was never taken).
fn end_checkpoint(
    p: &Project,
    key: u64,
    rec: &mut TurnRecord,
    mut captures: Vec<(String, Option<FileState>)>,
    late: Vec<(String, Option<FileState>)>,
) -> Result<Vec<Change>, CheckpointError> {
    let extra: Vec<String> = captures
        .iter()
        .chain(&late)
        .map(|(r, _)| r.clone())
        .collect();
    let mut store = p.store();
    let Some(start) = rec.start else {
        return Ok(Vec::new());
    };
    // A capture after the start counts where the start does not hold the file (the
    // walk skipped it); where it does, the start is the file before the turn.
    for (rel, st) in late {
        if store.state_at(start, &rel)?.is_none() {
            captures.push((rel, st));
        }
    }
    let start = if captures.is_empty() {
        start
    } else {
        store.derive(
            start,
            &captures,
            &format!("turn {key} start, with captures"),
        )?
    };
    let end = store.checkpoint_with(&format!("turn {key} end"), &extra)?;
    let changes = store.diff(start, end)?;
    rec.start = Some(start);
    rec.end = Some(end);
    Ok(changes)
}

/// Sets `rec`'s files from the `changes` between its start and end: a file another session's
/// overlapping turn claimed is left to it, unless this turn's edit tools (or Bash calls, as
/// Claude Code reported them) touched it too (then it is shared, and noted in `others`); a file
/// nothing claimed is shared when another session's turn overlapped this one. The Bash
/// commands that changed a file of the turn go with it (`commands`).
fn attribute(rec: &mut TurnRecord, live: &Live, changes: &[Change]) {
    for c in changes {
        let path = c.path.clone();
        // (What an edit tool names comes as text: a name that is not UTF-8 is no one's claim.)
        let name = c.path.to_str();
        let mine = name.is_some_and(|n| live.edited.contains(n));
        match name.and_then(|n| live.foreign.get(n)) {
            Some(_) if !mine => continue,
            Some(turns) => {
                let mut turns: Vec<&String> = turns.iter().collect();
                turns.sort();
                for turn in turns {
                    rec.others.push(OtherClaim {
                        path: path.clone(),
                        turn: turn.clone(),
                    });
                }
                rec.shared.push(path.clone());
            }
            None if !mine && live.overlapped => rec.shared.push(path.clone()),
            None => {}
        }
        rec.commands
            .extend(live.bash.iter().filter(|b| b.path == path).cloned());
        rec.files.push(path);
    }
}

/// Runs `f` on the project's worker after every checkpoint already asked for (a turn that is
/// ending is in the journal when `f` runs).
pub fn after_pending<T: Send + 'static>(
    project: &Arc<Project>,
    f: impl FnOnce(&Project) -> T + Send + 'static,
) -> Result<T, TurnError> {
    let (tx, rx) = mpsc::channel();
    project.run(Box::new(move |p: &Project| {
        let _ = tx.send(f(p));
    }));
    rx.recv().map_err(|_| TurnError::WorkerStopped)
}
