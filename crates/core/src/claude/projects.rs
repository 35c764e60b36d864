//! Each project's Claude-session state (history, current session, counters), loaded on first
//! use and written back atomically off the caller's path.

use super::store::{self, Persisted};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::watch;

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// One project's state and the bookkeeping of its writes.
pub(super) struct Project {
    pub(super) state: Arc<Mutex<State>>,
    /// Its file under `state_dir`; None keeps it in memory (no state_dir, no project root).
    file: Option<PathBuf>,
    persist_requested: Arc<AtomicU64>,
    write_scheduled: Arc<AtomicBool>,
    persist_done: Arc<watch::Sender<u64>>,
}

type ProjectCell = Arc<tokio::sync::OnceCell<Arc<Project>>>;

pub(super) struct State {
    pub(super) p: Persisted,
    /// Bumped by reset / set: a run that started before does not overwrite the session.
    pub(super) epoch: u64,
}

/// Every project's state of one bridge, keyed by its root (None: no project root).
pub(super) struct Projects {
    state_dir: Option<PathBuf>,
    cells: Mutex<HashMap<Option<PathBuf>, ProjectCell>>,
    write_lock: Arc<Mutex<()>>,
}

impl Projects {
    /// `state_dir` is where the state persists; `None` keeps it in memory only.
    pub(super) fn new(state_dir: Option<&Path>) -> Projects {
        Projects {
            state_dir: state_dir.map(Path::to_path_buf),
            cells: Mutex::new(HashMap::new()),
            write_lock: Arc::new(Mutex::new(())),
        }
    }

    /// The file the state of the project at `root` persists to.
    pub(super) fn state_file(&self, root: &Path) -> Option<PathBuf> {
        self.state_dir
            .as_deref()
            .map(|d| store::project_file(d, root))
    }

    /// The state of the project at `root` (loaded on first use).
    pub(super) async fn get(&self, root: Option<&Path>) -> Arc<Project> {
        let key = root.map(Path::to_path_buf);
        let cell = lock(&self.cells).entry(key.clone()).or_default().clone();
        cell.get_or_init(|| async {
            let file = key.as_deref().and_then(|r| self.state_file(r));
            let p = match (file.clone(), key.clone()) {
                (Some(f), Some(r)) => tokio::task::spawn_blocking(move || store::load(&f, &r))
                    .await
                    .unwrap_or_default(),
                _ => Persisted {
                    project_root: key.clone(),
                    ..Persisted::default()
                },
            };
            Arc::new(Project {
                state: Arc::new(Mutex::new(State { p, epoch: 0 })),
                file,
                persist_requested: Arc::new(AtomicU64::new(0)),
                write_scheduled: Arc::new(AtomicBool::new(false)),
                persist_done: Arc::new(watch::channel(0).0),
            })
        })
        .await
        .clone()
    }

    /// Starts writing a project's state file (atomically, on the blocking pool) and returns at
    /// once; the fsync stays off the caller's path. Writes are serialised and each takes the
    /// newest state, so the last write always holds the last change. [`Projects::flush`] waits
    /// for them.
    pub(super) fn persist_soon(&self, pr: &Arc<Project>) {
        let Some(path) = pr.file.clone() else {
            return;
        };
        pr.persist_requested.fetch_add(1, Ordering::SeqCst);
        // A write that has not taken its snapshot yet will include this change too.
        if pr.write_scheduled.swap(true, Ordering::SeqCst) {
            return;
        }
        let pr = pr.clone();
        let wl = self.write_lock.clone();
        tokio::task::spawn_blocking(move || {
            let _w = lock(&wl);
            pr.write_scheduled.store(false, Ordering::SeqCst);
            let generation = pr.persist_requested.load(Ordering::SeqCst);
            let snapshot = lock(&pr.state).p.clone();
            if let Err(e) = store::save(&path, &snapshot) {
                tracing::warn!(path = %path.display(), error = %e, "cannot write the Claude session state");
            }
            pr.persist_done.send_modify(|d| *d = (*d).max(generation));
        });
    }

    /// Writes a project's state file and waits until it (and every earlier write) is done.
    pub(super) async fn persist(&self, pr: &Arc<Project>) {
        self.persist_soon(pr);
        Self::flush_project(pr).await;
    }

    async fn flush_project(pr: &Arc<Project>) {
        let target = pr.persist_requested.load(Ordering::SeqCst);
        let mut rx = pr.persist_done.subscribe();
        let _ = rx.wait_for(|d| *d >= target).await;
    }

    /// Waits for every state write started so far, of every project.
    pub(super) async fn flush(&self) {
        let cells: Vec<ProjectCell> = lock(&self.cells).values().cloned().collect();
        for c in cells {
            if let Some(pr) = c.get() {
                Self::flush_project(pr).await;
            }
        }
    }
}
