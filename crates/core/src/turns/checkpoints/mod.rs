//! Checkpoints taken at Claude Code's hooks: what a turn changed, whatever changed it.
//!
//! * `UserPromptSubmit`: the session's project (its `cwd`'s git root, else the `cwd`) is
//!   checkpointed on the project's own worker thread; the hook's answer does not wait for it (a
//!   project's first checkpoint, a walk of every file, can take seconds).
//! * `PreToolUse` of an edit tool ([`crate::turns::EDIT_TOOLS`]): the file is captured right
//!   away (one file read through [`crate::capfs`], stored content-addressed without the store's
//!   lock), the first time in the turn. While the start checkpoint is still being taken, the
//!   walk cannot miss its content from before the edit; after it, a file the start does not
//!   hold (a git-ignored one: the walk skips it) is kept all the same. The start is corrected
//!   with the captures at the turn's end. A file over the size cap is recorded, not kept: the
//!   turn says so (`not_kept`).
//! * `Stop` (or the next prompt, or `SessionEnd`): the end checkpoint, another walk, so that files
//!   changed by Bash, a formatter or a generator are found too; the turn's files are the diff
//!   between its start and its end.
//!
//! Two sessions' turns may overlap in one project. Each edit tool's file (`PreToolUse`,
//! `PostToolUse`) is claimed by its session's turn: another session's overlapping turn leaves
//! it out of its files (so out of its review and rewind) unless its own edit tools touched it
//! too. So is each file a Bash call changed when Claude Code reports it (its PostToolUse's
//! `bashEditDiff`, [`crate::hook::bash_edit`]): the turn records the command beside it. A
//! change nothing claims (Bash on an older CLI, a formatter) while turns overlap cannot be told
//! apart: it stays in each of them, marked `shared`. A rewind never writes back a file that
//! another session's overlapping turn (not rewound with it) edited too; it lists it as kept.
//!
//! Each project's turns are kept in `turns.json` next to its store (written atomically), so
//! review and rewind work after Neovim restarts. A store that is full, damaged or busy is
//! logged, and said once per project and kind through the editor's `checkpoint_error` request;
//! nothing here panics into the hook door or blocks it.

mod events;
pub mod keep;
pub mod pathcode;
mod review;

pub use events::{after_pending, on_event};
pub use review::{
    changeset, list_turns, query_project, restore_file, rewind, rewind_undo, TurnQuery,
};

use crate::capfs::CapError;
use crate::checkpoint::{Capturer, CheckpointError, CheckpointId, FileState, Store, StoreOptions};
use crate::editor::methods;
use crate::turns::Tracker as State;
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
/// Files a turn's Bash calls changed, recorded with their commands (the rest are the turn's
/// all the same, unnamed).
const MAX_BASH: usize = 128;
/// Hunks of those recorded per turn (all files together).
const MAX_BASH_HUNKS: usize = 1000;
/// The journal file read back at most (200 turns of 1000 paths are far below).
const JOURNAL_LIMIT: u64 = 64 << 20;

/// What can go wrong with a project's turns: its store, its journal, its worker, or what the
/// editor asked for.
#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    #[error(transparent)]
    Store(#[from] CheckpointError),
    #[error("cannot read '{}': {err}", path.display())]
    ReadJournal { path: PathBuf, err: CapError },
    #[error(
        "the turn journal '{}' is damaged ({err}); delete it to start over",
        path.display()
    )]
    DamagedJournal {
        path: PathBuf,
        err: serde_json::Error,
    },
    #[error("{0}")]
    EncodeJournal(serde_json::Error),
    #[error("cannot write '{}': {err}", path.display())]
    WriteJournal { path: PathBuf, err: std::io::Error },
    #[error("no state directory: checkpoints are off")]
    NoStateDir,
    #[error("checkpoints are taken for {MAX_PROJECTS} projects at most per bridge")]
    TooManyProjects,
    #[error("cannot start the checkpoint thread: {0}")]
    Thread(std::io::Error),
    #[error("the checkpoint thread stopped")]
    WorkerStopped,
    #[error("no project root (give opts.root)")]
    NoProjectRoot,
    #[error("'{}' is not a project with checkpoints", .0.display())]
    NotAProject(PathBuf),
    #[error("there are {have} turns with checkpoints in {}; cannot rewind {n}", root.display())]
    TooFewTurns {
        have: usize,
        n: usize,
        root: PathBuf,
    },
    #[error("no rewind to undo in {}", .0.display())]
    NothingToUndo(PathBuf),
    #[error("restoring one file needs {0}")]
    FileRestoreNeeds(&'static str),
}

impl TurnError {
    /// Whether what the editor asked for is at fault (no such project, turn or rewind).
    pub fn is_callers(&self) -> bool {
        matches!(
            self,
            TurnError::NoProjectRoot
                | TurnError::NotAProject(_)
                | TurnError::TooFewTurns { .. }
                | TurnError::NothingToUndo(_)
                | TurnError::FileRestoreNeeds(_)
        )
    }
}

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
    /// Project-relative paths changed between `start` and `end`, less those another session's
    /// overlapping turn claimed (its edit tools touched them, this turn's did not). Kept as
    /// bytes ([`pathcode`]): a name that is not UTF-8 round-trips.
    #[serde(with = "pathcode::list")]
    pub files: Vec<PathBuf>,
    /// Of `files`: those changed while another session's turn overlapped this one that this
    /// turn cannot claim alone (no edit tool touched them, Bash or a formatter did; or both
    /// sessions' edit tools did).
    #[serde(skip_serializing_if = "Vec::is_empty", with = "pathcode::list")]
    pub shared: Vec<PathBuf>,
    /// Of `files`: those another session's overlapping turn edited too, with that turn's id (a
    /// rewind that does not rewind that turn too keeps them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<OtherClaim>,
    /// Files an edit tool changed whose content before the edit was over the size cap: not
    /// kept, so neither reviewable nor restorable (said in the review and the turn list).
    #[serde(skip_serializing_if = "Vec::is_empty", with = "pathcode::list")]
    pub not_kept: Vec<PathBuf>,
    /// Of `files`: those a Bash call of this turn changed, by Claude Code's report, with the
    /// command and its hunks (the review shows the command beside them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<BashRecord>,
}

/// A file of a turn's that one of its Bash calls changed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct BashRecord {
    #[serde(with = "pathcode::one")]
    pub path: PathBuf,
    /// The command (the model's text: shown escaped, never run).
    pub command: String,
    /// The hunks' line ranges as the command left the file.
    pub hunks: Vec<crate::hook::bash_edit::HunkRange>,
}

/// A file of a turn's that another session's turn edited too.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct OtherClaim {
    #[serde(with = "pathcode::one")]
    pub path: PathBuf,
    /// The other turn's id.
    pub turn: String,
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
    #[serde(with = "pathcode::list")]
    pub paths: Vec<PathBuf>,
    pub undone: bool,
    /// The batch of the editor's writes this one belongs to (a land): the records of one
    /// group are undone together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
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
    pub fn journal(&self) -> Result<Journal, TurnError> {
        let path = self.journal_path(&self.store());
        read_journal(&path)
    }

    /// Changes the journal under its lock and writes it atomically.
    pub fn update_journal<T>(&self, f: impl FnOnce(&mut Journal) -> T) -> Result<T, TurnError> {
        let _g = self.journal_lock.lock().unwrap_or_else(|p| p.into_inner());
        let path = self.journal_path(&self.store());
        let mut j = read_journal(&path).unwrap_or_default();
        let out = f(&mut j);
        let over = j.turns.len().saturating_sub(MAX_TURN_RECORDS);
        j.turns.drain(..over);
        let over = j.rewinds.len().saturating_sub(MAX_REWINDS);
        j.rewinds.drain(..over);
        let bytes = serde_json::to_vec(&j).map_err(TurnError::EncodeJournal)?;
        crate::fsutil::write_atomic(&path, &bytes, 0o600)
            .map_err(|err| TurnError::WriteJournal { path, err })?;
        Ok(out)
    }

    fn run(&self, job: Job) {
        let tx = self.tx.lock().unwrap_or_else(|p| p.into_inner());
        let _ = tx.send(job);
    }
}

fn read_journal(path: &Path) -> Result<Journal, TurnError> {
    // Through the one reader of files outside a confined root: never a link, never a FIFO
    // waited on, at most JOURNAL_LIMIT bytes.
    let bytes = match crate::capfs::read_untrusted_file(path, JOURNAL_LIMIT) {
        Ok((bytes, _)) => bytes,
        Err(CapError::NotFound { .. }) => return Ok(Journal::default()),
        Err(err) => {
            return Err(TurnError::ReadJournal {
                path: path.to_path_buf(),
                err,
            })
        }
    };
    serde_json::from_slice(&bytes).map_err(|err| TurnError::DamagedJournal {
        path: path.to_path_buf(),
        err,
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
    /// Files captured before an edit after the start was taken (first capture of each): they
    /// correct the start where it does not hold the file (an ignored file the walk skipped).
    late: Vec<(String, Option<FileState>)>,
    captured: HashSet<String>,
    /// The end was asked for, by this event (its Stop, its SessionEnd, or the session's next
    /// prompt when the Stop never came).
    ending: Option<crate::hook::Event>,
    /// Project-relative paths this session's edit tools (and Bash calls, as Claude Code
    /// reported them) touched during the turn.
    edited: HashSet<String>,
    /// What this session's Bash calls changed, with their commands (Claude Code's report).
    bash: Vec<BashRecord>,
    /// Paths other sessions' edit tools touched while this turn was followed, with their
    /// turns' ids: theirs, not this turn's.
    foreign: HashMap<String, HashSet<String>>,
    /// Another session's turn ran (for a while) at the same time in the same project.
    overlapped: bool,
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
    pub fn project(&self, root: &Path) -> Result<Arc<Project>, TurnError> {
        let Some(state_dir) = &self.state_dir else {
            return Err(TurnError::NoStateDir);
        };
        if let Some(p) = self.tables().projects.get(root) {
            return Ok(p.clone());
        }
        let store = Store::open(
            state_dir,
            root,
            self.opts.lock().unwrap_or_else(|p| p.into_inner()).clone(),
        )?;
        let capturer = store.capturer()?;
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
            return Err(TurnError::TooManyProjects);
        }
        let weak = Arc::downgrade(&project);
        std::thread::Builder::new()
            .name("cc-checkpoints".into())
            .spawn(move || {
                crate::threads::yield_to_the_editor(crate::threads::thread_nice())();
                while let Ok(job) = rx.recv() {
                    let Some(p) = weak.upgrade() else { break };
                    if let Err(e) =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(&p)))
                    {
                        tracing::error!(panic = ?e.downcast_ref::<&str>(), "a checkpoint job panicked");
                    }
                }
            })
            .map_err(TurnError::Thread)?;
        t.projects.insert(root.to_path_buf(), project.clone());
        Ok(project)
    }

    /// Logs `msg` and tells the editor once per `key`.
    fn say(&self, shared: &Arc<State>, key: String, msg: String) {
        tracing::warn!(message = %msg, "checkpoints");
        if !self.tables().said.insert(key) {
            return;
        }
        self.tell(shared, methods::CHECKPOINT_ERROR, json!({ "message": msg }));
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
