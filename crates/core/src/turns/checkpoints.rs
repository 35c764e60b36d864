//! Checkpoints taken at Claude Code's hooks: what a turn changed, whatever changed it.
//!
//! * `UserPromptSubmit`: the session's project (its `cwd`'s git root, else the `cwd`) is
//!   checkpointed on the project's own worker thread; the hook's answer does not wait for it (a
//!   project's first checkpoint, a walk of every file, can take seconds).
//! * `PreToolUse` of an edit tool ([`crate::turns::EDIT_TOOLS`]): while the turn's start
//!   checkpoint is still being taken, the file is captured right away (one file read through
//!   [`crate::capfs`], stored content-addressed without the store's lock), so the walk cannot
//!   miss its content from before the edit; the start is corrected with it at the turn's end.
//! * `Stop` (or the next prompt, or `SessionEnd`): the end checkpoint, another walk, so that files
//!   changed by Bash, a formatter or a generator are found too; the turn's files are the diff
//!   between its start and its end.
//!
//! Each project's turns are kept in `turns.json` next to its store (written atomically), so
//! review and rewind work after Neovim restarts. A store that is full, damaged or busy is
//! logged, and said once per project and kind through the editor's `checkpoint_error` request;
//! nothing here panics into the hook door or blocks it.

use crate::checkpoint::{
    tree, Capturer, Change, CheckpointError, CheckpointId, FileState, Kind, RestoreRequest, Store,
    StoreOptions,
};
use crate::state::State;
use crate::turns::{HookEvent, EDIT_TOOLS};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};

/// Projects with a store open at once.
pub const MAX_PROJECTS: usize = 32;
/// Turns kept in one project's `turns.json`; the oldest go first.
pub const MAX_TURN_RECORDS: usize = 200;
/// Rewinds kept (to undo) per project.
pub const MAX_REWINDS: usize = 50;
/// Turns followed in memory at once (all projects).
const MAX_LIVE_TURNS: usize = 500;
/// Paths captured per turn before the start checkpoint finished.
const MAX_CAPTURES: usize = 1000;
/// The journal file read back at most (200 turns of 1000 paths are far below).
const JOURNAL_LIMIT: u64 = 64 << 20;

/// One turn as the project's journal keeps it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct TurnRecord {
    /// Stable across restarts: the start time and the bridge's turn number.
    pub id: String,
    pub session: String,
    pub terminal: Option<String>,
    /// The prompt's first line.
    pub prompt: String,
    pub started_ms: u64,
    pub ended_ms: Option<u64>,
    /// The checkpoint before the turn (corrected with the files captured before an edit).
    pub start: Option<CheckpointId>,
    /// The checkpoint at the turn's end.
    pub end: Option<CheckpointId>,
    /// Project-relative paths changed between `start` and `end`.
    pub files: Vec<String>,
}

/// One rewind, to undo it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct RewindRecord {
    pub time_ms: u64,
    /// The turn rewound to before.
    pub turn: String,
    /// The project right before the rewind (restoring it undoes the rewind).
    pub before: CheckpointId,
    /// The project right after.
    pub after: CheckpointId,
    /// What the rewind wrote or removed (project-relative).
    pub paths: Vec<String>,
    pub undone: bool,
}

/// A project's `turns.json`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Journal {
    pub turns: Vec<TurnRecord>,
    pub rewinds: Vec<RewindRecord>,
}

type Job = Box<dyn FnOnce(&Project) + Send>;

/// One project: its store, its worker thread, its journal.
pub struct Project {
    pub root: PathBuf,
    store: Mutex<Store>,
    capturer: Capturer,
    journal_lock: Mutex<()>,
    tx: Mutex<mpsc::Sender<Job>>,
}

impl Project {
    fn journal_path(&self, store: &Store) -> PathBuf {
        store.dir().join("turns.json")
    }

    /// The store, locked (a panic elsewhere leaves it usable).
    pub fn store(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The journal (empty when absent; a damaged one is an error).
    pub fn journal(&self) -> Result<Journal, String> {
        let path = self.journal_path(&self.store());
        read_journal(&path)
    }

    /// Changes the journal under its lock and writes it atomically.
    pub fn update_journal<T>(&self, f: impl FnOnce(&mut Journal) -> T) -> Result<T, String> {
        let _g = self.journal_lock.lock().unwrap_or_else(|p| p.into_inner());
        let path = self.journal_path(&self.store());
        let mut j = read_journal(&path).unwrap_or_default();
        let out = f(&mut j);
        let over = j.turns.len().saturating_sub(MAX_TURN_RECORDS);
        j.turns.drain(..over);
        let over = j.rewinds.len().saturating_sub(MAX_REWINDS);
        j.rewinds.drain(..over);
        let bytes = serde_json::to_vec(&j).map_err(|e| e.to_string())?;
        crate::fsutil::write_atomic(&path, &bytes, 0o600)
            .map_err(|e| format!("cannot write '{}': {e}", path.display()))?;
        Ok(out)
    }

    fn run(&self, job: Job) {
        let tx = self.tx.lock().unwrap_or_else(|p| p.into_inner());
        let _ = tx.send(job);
    }
}

fn read_journal(path: &Path) -> Result<Journal, String> {
    use std::io::Read;
    let f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Journal::default()),
        Err(e) => return Err(format!("cannot read '{}': {e}", path.display())),
    };
    let mut bytes = Vec::new();
    f.take(JOURNAL_LIMIT)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read '{}': {e}", path.display()))?;
    serde_json::from_slice(&bytes).map_err(|e| {
        format!(
            "the turn journal '{}' is damaged ({e}); delete it to start over",
            path.display()
        )
    })
}

/// A turn being followed.
struct Live {
    project: Arc<Project>,
    record: TurnRecord,
    /// Set by the worker when the start checkpoint is taken.
    started: bool,
    /// Files captured before an edit while the start was not taken yet (first capture of each).
    captures: Vec<(String, Option<FileState>)>,
    captured: HashSet<String>,
    /// The end was asked for.
    ending: bool,
}

#[derive(Default)]
struct Tables {
    projects: HashMap<PathBuf, Arc<Project>>,
    live: HashMap<u64, Live>,
    /// Messages already shown (per project and kind).
    said: HashSet<String>,
}

/// The checkpoints of every project the sessions work in (one per bridge, in its state).
pub struct Checkpoints {
    state_dir: Option<PathBuf>,
    opts: Mutex<StoreOptions>,
    tables: Mutex<Tables>,
    /// The bridge's runtime, to send the editor requests from the worker threads.
    rt: Mutex<Option<tokio::runtime::Handle>>,
}

impl std::fmt::Debug for Checkpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpoints")
            .field("state_dir", &self.state_dir)
            .finish()
    }
}

/// The project root for a session's `cwd`: its git root, else the `cwd` itself. `None` for a
/// directory that is not one, or for the home directory or `/` (never walked whole).
pub fn project_root(cwd: &Path) -> Option<PathBuf> {
    let cwd = std::fs::canonicalize(cwd).ok()?;
    if !cwd.is_dir() {
        return None;
    }
    let root = crate::project::find_git_root(&cwd).unwrap_or(cwd);
    let home = std::env::var_os("HOME").and_then(|h| std::fs::canonicalize(h).ok());
    if root.parent().is_none() || Some(&root) == home.as_ref() {
        return None;
    }
    Some(root)
}

impl Checkpoints {
    /// Checkpoints kept under `state_dir` (`None`: none are taken).
    pub fn new(state_dir: Option<PathBuf>) -> Checkpoints {
        Checkpoints::with_options(state_dir, StoreOptions::default())
    }

    pub fn with_options(state_dir: Option<PathBuf>, opts: StoreOptions) -> Checkpoints {
        Checkpoints {
            state_dir,
            opts: Mutex::new(opts),
            tables: Mutex::new(Tables::default()),
            rt: Mutex::new(None),
        }
    }

    /// Options for the stores opened from now on (those open keep theirs).
    pub fn configure(&self, opts: StoreOptions) {
        *self.opts.lock().unwrap_or_else(|p| p.into_inner()) = opts;
    }

    fn tables(&self) -> MutexGuard<'_, Tables> {
        self.tables.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The project of `root` (opening its store and starting its worker the first time).
    pub fn project(&self, root: &Path) -> Result<Arc<Project>, String> {
        let Some(state_dir) = &self.state_dir else {
            return Err("no state directory: checkpoints are off".into());
        };
        if let Some(p) = self.tables().projects.get(root) {
            return Ok(p.clone());
        }
        let store = Store::open(
            state_dir,
            root,
            self.opts.lock().unwrap_or_else(|p| p.into_inner()).clone(),
        )
        .map_err(|e| e.to_string())?;
        let capturer = store.capturer().map_err(|e| e.to_string())?;
        let (tx, rx) = mpsc::channel::<Job>();
        let project = Arc::new(Project {
            root: root.to_path_buf(),
            store: Mutex::new(store),
            capturer,
            journal_lock: Mutex::new(()),
            tx: Mutex::new(tx),
        });
        let mut t = self.tables();
        if let Some(p) = t.projects.get(root) {
            return Ok(p.clone());
        }
        if t.projects.len() >= MAX_PROJECTS {
            return Err(format!(
                "checkpoints are taken for {MAX_PROJECTS} projects at most per bridge"
            ));
        }
        let weak = Arc::downgrade(&project);
        std::thread::Builder::new()
            .name("cc-checkpoints".into())
            .spawn(move || {
                crate::server::yield_to_the_editor(crate::server::thread_nice())();
                while let Ok(job) = rx.recv() {
                    let Some(p) = weak.upgrade() else { break };
                    if let Err(e) =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(&p)))
                    {
                        tracing::error!(panic = ?e.downcast_ref::<&str>(), "a checkpoint job panicked");
                    }
                }
            })
            .map_err(|e| format!("cannot start the checkpoint thread: {e}"))?;
        t.projects.insert(root.to_path_buf(), project.clone());
        Ok(project)
    }

    /// Logs `msg` and tells the editor once per `key`.
    fn say(&self, shared: &Arc<State>, key: String, msg: String) {
        tracing::warn!(message = %msg, "checkpoints");
        if !self.tables().said.insert(key) {
            return;
        }
        self.tell(shared, "checkpoint_error", json!({ "message": msg }));
    }

    /// Sends the editor `method` without waiting for its answer.
    fn tell(&self, shared: &Arc<State>, method: &str, params: Value) {
        let fut = shared.rpc.call(method, params);
        let rt = tokio::runtime::Handle::try_current()
            .ok()
            .or_else(|| self.rt.lock().unwrap_or_else(|p| p.into_inner()).clone());
        if let Some(rt) = rt {
            rt.spawn(async move {
                if let Err(e) = fut.await {
                    tracing::debug!(error = %e, "the editor did not take a checkpoint message");
                }
            });
        }
    }

    fn store_error(&self, shared: &Arc<State>, root: &Path, e: &CheckpointError) {
        let kind = match e {
            CheckpointError::Full { .. } => "full",
            CheckpointError::Corrupt { .. } | CheckpointError::Missing { .. } => "corrupt",
            CheckpointError::Busy { .. } => "busy",
            _ => "other",
        };
        self.say(
            shared,
            format!("{}:{kind}", root.display()),
            format!(
                "checkpoints of {}: {e} (review and rewind miss this turn)",
                root.display()
            ),
        );
    }
}

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
    match ev.event.as_str() {
        "UserPromptSubmit" => start_turn(shared, ev),
        "PreToolUse" => {
            let edit = ev
                .tool_name
                .as_deref()
                .is_some_and(|t| EDIT_TOOLS.contains(&t));
            if let (true, Some(file)) = (edit, ev.file.as_deref()) {
                capture(shared, &ev.session_id, file);
            }
        }
        "Stop" | "SessionEnd" => {
            if let Some(key) = shared.sessions.current_turn(&ev.session_id) {
                end_turn(shared, key);
            }
        }
        _ => {}
    }
}

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
        .filter(|(k, l)| **k != key && l.record.session == ev.session_id && !l.ending)
        .map(|(k, _)| *k)
        .collect();
    for k in previous {
        end_turn(shared, k);
    }
    let Some(root) = ev.cwd.as_deref().map(Path::new).and_then(project_root) else {
        return;
    };
    let project = match cps.project(&root) {
        Ok(p) => p,
        Err(msg) => {
            cps.say(shared, format!("{}:open", root.display()), msg);
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
    {
        let mut t = cps.tables();
        if t.live.len() >= MAX_LIVE_TURNS {
            if let Some(&oldest) = t.live.keys().min() {
                t.live.remove(&oldest);
            }
        }
        t.live.insert(
            key,
            Live {
                project: project.clone(),
                record,
                started: false,
                captures: Vec::new(),
                captured: HashSet::new(),
                ending: false,
            },
        );
    }
    let shared = shared.clone();
    project.run(Box::new(move |p: &Project| {
        let r = p.store().checkpoint(&format!("turn {key} start"));
        let cps = &shared.checkpoints;
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
                cps.store_error(&shared, &p.root, &e)
            }
        }
    }));
}

fn capture(shared: &Arc<State>, session: &str, file: &str) {
    let cps = &shared.checkpoints;
    let Some(key) = shared.sessions.current_turn(session) else {
        return;
    };
    let project = {
        let t = cps.tables();
        match t.live.get(&key) {
            Some(l) if !l.started && !l.captured.contains(file) => l.project.clone(),
            // Taken already: the start holds the file as it was before this turn's edits.
            _ => return,
        }
    };
    let r = project.capturer.capture(file);
    match r {
        Ok((rel, st)) => {
            let mut t = cps.tables();
            if let Some(l) = t.live.get_mut(&key) {
                if l.captures.len() < MAX_CAPTURES && l.captured.insert(file.to_string()) {
                    l.captures.push((rel, st));
                }
            }
        }
        // Outside the project: nothing to capture.
        Err(CheckpointError::Cap(_)) | Err(CheckpointError::BadPath { .. }) => {}
        Err(e) => cps.store_error(shared, &project.root, &e),
    }
}

fn end_turn(shared: &Arc<State>, key: u64) {
    let cps = &shared.checkpoints;
    let project = {
        let mut t = cps.tables();
        let Some(l) = t.live.get_mut(&key) else {
            return;
        };
        if l.ending {
            return;
        }
        l.ending = true;
        l.record.ended_ms = Some(crate::turns::now_ms());
        l.project.clone()
    };
    let shared = shared.clone();
    project.run(Box::new(move |p: &Project| {
        let cps = &shared.checkpoints;
        let Some(mut live) = cps.tables().live.remove(&key) else {
            return;
        };
        let extra: Vec<String> = live.captures.iter().map(|(r, _)| r.clone()).collect();
        let result = (|| -> Result<TurnRecord, CheckpointError> {
            let mut store = p.store();
            let mut rec = live.record.clone();
            let Some(start) = rec.start else {
                return Ok(rec);
            };
            let start = if live.captures.is_empty() {
                start
            } else {
                let captures = std::mem::take(&mut live.captures);
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
            rec.files = changes
                .iter()
                .map(|c| c.path.to_string_lossy().into_owned())
                .collect();
            Ok(rec)
        })();
        let rec = match result {
            Ok(r) => r,
            Err(e) => {
                cps.store_error(&shared, &p.root, &e);
                return;
            }
        };
        if rec.end.is_none() {
            return;
        }
        let abs: Vec<String> = rec
            .files
            .iter()
            .map(|f| p.root.join(f).to_string_lossy().into_owned())
            .collect();
        shared.sessions.set_files(key, abs);
        if let Err(msg) = p.update_journal(|j| j.turns.push(rec.clone())) {
            cps.say(&shared, format!("{}:journal", p.root.display()), msg);
        }
        cps.tell(
            &shared,
            "turn_checkpointed",
            json!({"root": p.root, "turn": rec}),
        );
    }));
}

/// Runs `f` on the project's worker after every checkpoint already asked for (a turn that is
/// ending is in the journal when `f` runs).
pub fn after_pending<T: Send + 'static>(
    project: &Arc<Project>,
    f: impl FnOnce(&Project) -> T + Send + 'static,
) -> Result<T, String> {
    let (tx, rx) = mpsc::channel();
    project.run(Box::new(move |p: &Project| {
        let _ = tx.send(f(p));
    }));
    rx.recv()
        .map_err(|_| "the checkpoint thread stopped".to_string())
}

// ---------------------------------------------------------------------------------------------
// What the editor asks: change sets, rewinds, the turn list.

/// Which turns a change set or rewind is about.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct TurnQuery {
    /// The last `n` turns (default 1).
    pub n: Option<usize>,
    pub session: Option<String>,
    /// The project (any directory in it; default: the bridge's project root).
    pub root: Option<String>,
    /// Rewind: overwrite files the person changed since.
    pub overwrite: bool,
    /// Change set: only this turn (its id), instead of the last `n`.
    pub turn: Option<String>,
}

/// The journal's finished turns of `q.session` (all when none), oldest first.
fn finished(j: &Journal, session: Option<&str>) -> Vec<TurnRecord> {
    j.turns
        .iter()
        .filter(|t| t.start.is_some() && t.end.is_some())
        .filter(|t| session.is_none_or(|s| t.session == s))
        .cloned()
        .collect()
}

/// The project for a query: its root, resolved like a session's cwd.
pub fn query_project(shared: &Arc<State>, q: &TurnQuery) -> Result<Arc<Project>, String> {
    let dir = match &q.root {
        Some(r) => PathBuf::from(r),
        None => shared
            .project()
            .root
            .ok_or("no project root (give opts.root)")?,
    };
    let root = project_root(&dir)
        .ok_or_else(|| format!("'{}' is not a project with checkpoints", dir.display()))?;
    shared.checkpoints.project(&root)
}

const BINARY_PROBE: usize = 8000;

fn is_binary(b: &[u8]) -> bool {
    b[..b.len().min(BINARY_PROBE)].contains(&0) || std::str::from_utf8(b).is_err()
}

/// The change set of the last `q.n` turns (the review's source), as the editor's JSON.
pub fn changeset(p: &Project, q: &TurnQuery) -> Result<Value, String> {
    let j = p.journal()?;
    let all = finished(&j, q.session.as_deref());
    let n = q.n.unwrap_or(1).max(1);
    let turns: Vec<TurnRecord> = match &q.turn {
        Some(id) => all.iter().filter(|t| &t.id == id).cloned().collect(),
        None => all[all.len().saturating_sub(n)..].to_vec(),
    };
    let (Some(first), Some(last)) = (turns.first(), turns.last()) else {
        return Ok(json!({"root": p.root, "turns": [], "files": []}));
    };
    let (before, after) = (first.start.unwrap_or(0), last.end.unwrap_or(0));
    let mut store = p.store();
    let changes = store.diff(before, after).map_err(|e| e.to_string())?;
    let renames = tree::renames(&changes);
    let renamed_from: HashMap<&Path, &Path> = renames
        .iter()
        .map(|(from, to)| (to.as_path(), from.as_path()))
        .collect();
    let gone: HashSet<&Path> = renames.iter().map(|(f, _)| f.as_path()).collect();
    let mut files = Vec::new();
    for c in &changes {
        if gone.contains(c.path.as_path()) {
            continue;
        }
        files.push(review_file(
            &mut store,
            p,
            c,
            renamed_from.get(c.path.as_path()),
            before,
            after,
        )?);
    }
    let turns: Vec<Value> = turns.iter().map(turn_json).collect();
    Ok(json!({"root": p.root, "turns": turns, "files": files}))
}

fn turn_json(t: &TurnRecord) -> Value {
    json!({
        "id": t.id,
        "session": t.session,
        "terminal": t.terminal,
        "prompt": t.prompt,
        "started_ms": t.started_ms,
        "ended_ms": t.ended_ms,
        "files": t.files,
    })
}

fn review_file(
    store: &mut Store,
    p: &Project,
    c: &Change,
    old: Option<&&Path>,
    before_ck: CheckpointId,
    after_ck: CheckpointId,
) -> Result<Value, String> {
    let path = c.path.to_string_lossy().into_owned();
    let old_path = old.map(|o| o.to_string_lossy().into_owned());
    let read = |store: &mut Store, ck: CheckpointId, path: &str, st: &Option<FileState>| match st {
        Some(s) if s.kind.has_content() => store.file_at(ck, path).map_err(|e| e.to_string()),
        _ => Ok(None),
    };
    let before_path = old_path.clone().unwrap_or_else(|| path.clone());
    let before_state = match old {
        Some(_) => store
            .state_at(before_ck, &before_path)
            .map_err(|e| e.to_string())?,
        None => c.before,
    };
    let before = read(store, before_ck, &before_path, &before_state)?;
    let after = read(store, after_ck, &path, &c.after)?;
    let over = [before_state, c.after]
        .iter()
        .any(|s| s.is_some_and(|s| s.kind == Kind::OverCap));
    let binary = [&before, &after]
        .iter()
        .any(|b| b.as_deref().is_some_and(is_binary));
    let status = if over {
        "too_large"
    } else if binary {
        "binary"
    } else if old.is_some() {
        "renamed"
    } else if before_state.is_none() {
        "added"
    } else if c.after.is_none() {
        "deleted"
    } else {
        "modified"
    };
    let text = |b: Option<Vec<u8>>| -> Option<String> {
        if over || binary {
            return None;
        }
        b.and_then(|b| String::from_utf8(b).ok())
    };
    Ok(json!({
        "path": path,
        "absolute": p.root.join(&c.path),
        "old_path": old_path,
        "status": status,
        "before": text(before),
        "after": text(after),
    }))
}

/// The project's finished turns, oldest first (`:ClaudeContext checkpoints`).
pub fn list_turns(p: &Project, q: &TurnQuery) -> Result<Value, String> {
    let j = p.journal()?;
    let turns: Vec<Value> = finished(&j, q.session.as_deref())
        .iter()
        .map(turn_json)
        .collect();
    let undo = j
        .rewinds
        .iter()
        .rev()
        .find(|r| !r.undone)
        .map(|r| json!({"time_ms": r.time_ms, "turn": r.turn, "paths": r.paths}));
    Ok(json!({"root": p.root, "turns": turns, "undo": undo}))
}

fn report_json(p: &Project, r: &crate::checkpoint::RestoreReport) -> Value {
    let abs = |v: &[PathBuf]| -> Vec<String> {
        v.iter()
            .map(|x| p.root.join(x).to_string_lossy().into_owned())
            .collect()
    };
    let kept = |v: &[crate::checkpoint::Kept]| -> Vec<Value> {
        v.iter()
            .map(|k| json!({"path": p.root.join(&k.path), "why": k.why}))
            .collect()
    };
    json!({
        "root": p.root,
        "written": abs(&r.written),
        "removed": abs(&r.removed),
        "conflicts": kept(&r.conflicts),
        "failed": kept(&r.failed),
    })
}

/// Restores the project's files to before the `q.n`-th last turn (of `q.session`, else of every
/// session). Only the paths those turns changed are touched; a file that differs from what the
/// last turn left (the person changed it since) is kept unless `q.overwrite`. The restore is a
/// checkpoint of its own, recorded so that [`rewind_undo`] can undo it.
pub fn rewind(p: &Project, q: &TurnQuery) -> Result<Value, String> {
    let j = p.journal()?;
    let all = finished(&j, q.session.as_deref());
    let n = q.n.unwrap_or(1).max(1);
    if n > all.len() {
        return Err(format!(
            "there are {} turns with checkpoints in {}; cannot rewind {n}",
            all.len(),
            p.root.display()
        ));
    }
    let turns = &all[all.len() - n..];
    let (first, last) = (&turns[0], &turns[turns.len() - 1]);
    let mut paths: Vec<String> = turns.iter().flat_map(|t| t.files.clone()).collect();
    paths.sort();
    paths.dedup();
    let mut value = restore(
        p,
        first.start.unwrap_or(0),
        last.end.unwrap_or(0),
        paths,
        q.overwrite,
        &first.id,
    )?;
    value["turn"] = turn_json(first);
    Ok(value)
}

fn restore(
    p: &Project,
    target: CheckpointId,
    expected: CheckpointId,
    paths: Vec<String>,
    overwrite: bool,
    turn: &str,
) -> Result<Value, String> {
    let report = p
        .store()
        .restore(&RestoreRequest {
            target,
            expected,
            paths: Some(paths),
            overwrite_changed: overwrite,
        })
        .map_err(|e| e.to_string())?;
    let changed: Vec<String> = report
        .written
        .iter()
        .chain(&report.removed)
        .map(|x| x.to_string_lossy().into_owned())
        .collect();
    if !changed.is_empty() {
        let rec = RewindRecord {
            time_ms: crate::turns::now_ms(),
            turn: turn.to_string(),
            before: report.before,
            after: report.after,
            paths: changed,
            undone: false,
        };
        p.update_journal(|j| j.rewinds.push(rec))?;
    }
    Ok(report_json(p, &report))
}

/// Undoes the last rewind not undone yet: the files it wrote get back what they held right
/// before it (a file changed since the rewind is kept unless `overwrite`).
pub fn rewind_undo(p: &Project, overwrite: bool) -> Result<Value, String> {
    let j = p.journal()?;
    let Some(at) = j.rewinds.iter().rposition(|r| !r.undone) else {
        return Err(format!("no rewind to undo in {}", p.root.display()));
    };
    let r = j.rewinds[at].clone();
    let report = p
        .store()
        .restore(&RestoreRequest {
            target: r.before,
            expected: r.after,
            paths: Some(r.paths.clone()),
            overwrite_changed: overwrite,
        })
        .map_err(|e| e.to_string())?;
    if report.conflicts.is_empty() {
        p.update_journal(|j| {
            if let Some(x) = j.rewinds.iter_mut().find(|x| **x == r) {
                x.undone = true;
            }
        })?;
    }
    Ok(report_json(p, &report))
}
