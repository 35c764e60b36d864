//! Checkpoints of a project's files: what every file held at a moment (a prompt, right before
//! an edit, the end of a turn, a restore), cheap to take, to compare and to write back.
//!
//! # The store
//!
//! One store per project, under the plugin's state directory
//! (`<state_dir>/checkpoints/<project dir name>-<hash of the full root>/`):
//!
//! ```text
//! lock                      advisory lock: one writer at a time (two Neovims on one project)
//! version                   changed by every write; another process's caches reload when it moves
//! statcache                 path → (size, mtime, ctime, inode, device) → content id
//! checkpoints/<id, 20 digits>  one small text record per checkpoint: time, kind, label,
//!                           root tree, and a checksum of the record
//! objects/<2 hex>/<62 hex>  content-addressed objects, named by their BLAKE3 hash
//! ```
//!
//! * A **blob** is a file's content (or a symlink's target text), stored once however many
//!   checkpoints and paths hold it, compressed with zstd when that saves an eighth or more.
//! * A **tree** is one directory: its entries sorted by name, each a kind (file, executable,
//!   symlink, directory, over the cap), a size and an id. A checkpoint is its root tree, like a
//!   git commit's. Two checkpoints share every directory that did not change between them: a
//!   checkpoint writes only the trees on the way to a changed file, and a diff skips every
//!   subtree whose id is the same on both sides ([`tree::diff`]).
//! * Every object is checked against its name when read; a record against its checksum. A
//!   truncated or garbage file, a missing object, a full store or a store held by another
//!   process too long is a [`CheckpointError`], never a panic or a hang; the project's files are
//!   only ever written by [`Store::restore`], atomically, after the state they replace has been
//!   checkpointed.
//!
//! # What a checkpoint holds
//!
//! The walk ([`scan`]) reads the project through [`crate::capfs`] handles: nothing is followed
//! out of the project, links are recorded as links, FIFOs, sockets and devices are skipped
//! without being opened, `.gitignore` rules apply whether or not the project is a git repository,
//! `.git` is skipped, files over [`StoreOptions::max_file_bytes`] are recorded (size, a hash of
//! their stat) but not stored. The stat cache means a file whose `lstat` did not change is not
//! read again. A store keeps what its last walk found in memory ([`scan::DirMemo`]): the next
//! walk of the same store lists again only the directories whose stat moved, re-hashes only
//! the trees of directories whose entries changed, and writes the stat cache back (whole,
//! atomically) only when the trusted files changed. After a failure or another process's
//! write, that memory is dropped and the stat cache is read from disk again.
//!
//! # Size
//!
//! The objects are kept under [`StoreOptions::max_store_bytes`]: when a checkpoint goes over,
//! the oldest checkpoints are dropped and the objects no remaining checkpoint reaches are
//! deleted. When even the newest checkpoint alone does not fit, it is not recorded and
//! [`CheckpointError::Full`] says so.

mod gc;
pub(crate) mod ignore_rules;
mod inner;
mod memo;
pub mod object;
pub mod probe;
mod records;
mod restore;
pub mod scan;
pub mod statcache;
pub mod tree;
pub mod watch;

use crate::capfs::{CapDir, CapError};
use object::{ObjectId, ObjectType, Objects};
use statcache::StatCache;
use std::collections::{HashMap, HashSet};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use restore::{Kept, RestoreReport, RestoreRequest};
pub use scan::{ScanConfig, ScanStats};
pub use tree::{Change, FileState, Kind};

/// A checkpoint's number in its store: increasing, never reused.
pub type CheckpointId = u64;

/// Why a store operation failed. Each message names the store or the file and what to do.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error(
        "the checkpoint store is damaged: '{path}': {what}. Checkpoints that need it cannot be \
         restored; delete that checkpoint's record (or the whole store directory) to start over"
    )]
    Corrupt { path: PathBuf, what: String },
    #[error(
        "the checkpoint store at '{store}' lacks object {id} (deleted or lost in a crash); the \
         checkpoints that need it cannot be restored"
    )]
    Missing { id: String, store: PathBuf },
    #[error(
        "no checkpoint {id} in the store at '{store}' (dropped to keep the store's size cap?)"
    )]
    Unknown { id: CheckpointId, store: PathBuf },
    #[error(
        "the checkpoint store is full: this checkpoint needs {needed} bytes, over the cap of \
         {cap} bytes even with every older checkpoint dropped; nothing was recorded (raise \
         the cap or ignore large files in .gitignore)"
    )]
    Full { needed: u64, cap: u64 },
    #[error(
        "the checkpoint store at '{store}' is busy: another process has held its lock for {secs} \
         s (another Neovim on the same project?)"
    )]
    Busy { store: PathBuf, secs: u64 },
    #[error("'{path}' is not a path inside the project")]
    BadPath { path: PathBuf },
    #[error("cannot {what} '{path}': {err}")]
    Io {
        what: &'static str,
        path: PathBuf,
        err: std::io::Error,
    },
    #[error(transparent)]
    Cap(#[from] CapError),
}

/// How a store behaves.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// Files larger than this are recorded as over the cap, not stored.
    pub max_file_bytes: u64,
    /// The objects' total size on disk; the oldest checkpoints go first.
    pub max_store_bytes: u64,
    /// Compress objects with zstd where that helps.
    pub compress: bool,
    /// Honour the person's global git excludes too.
    pub global_gitignore: bool,
    /// How long to wait for another process's lock before [`CheckpointError::Busy`].
    pub lock_timeout: Duration,
    /// Threads walking the project's directories side by side and storing new contents
    /// (1: the calling thread only).
    pub writer_threads: usize,
    /// Watch the project's directories (inotify, on Linux) so that a checkpoint walks only
    /// those that changed ([`watch`]); `false`: every checkpoint walks the whole project.
    pub watch: bool,
    /// A whole walk that lasts longer tells how far it got this often
    /// ([`Store::checkpoint_reporting`]).
    pub progress_every: Duration,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            max_file_bytes: 4 << 20,
            max_store_bytes: 1 << 30,
            compress: true,
            global_gitignore: true,
            lock_timeout: Duration::from_secs(30),
            writer_threads: std::thread::available_parallelism()
                .map(|n| n.get().clamp(1, 8))
                .unwrap_or(1),
            watch: true,
            progress_every: Duration::from_secs(1),
        }
    }
}

/// Why a checkpoint was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A walk of the whole project.
    Snapshot,
    /// A checkpoint with one path captured right before an edit.
    Capture,
    /// The project's state right before a restore (restore it to undo the restore).
    BeforeRestore,
    /// The project's state right after a restore.
    AfterRestore,
}

impl Origin {
    fn as_str(self) -> &'static str {
        match self {
            Origin::Snapshot => "snapshot",
            Origin::Capture => "capture",
            Origin::BeforeRestore => "before-restore",
            Origin::AfterRestore => "after-restore",
        }
    }

    fn parse(s: &str) -> Option<Origin> {
        Some(match s {
            "snapshot" => Origin::Snapshot,
            "capture" => Origin::Capture,
            "before-restore" => Origin::BeforeRestore,
            "after-restore" => Origin::AfterRestore,
            _ => return None,
        })
    }
}

/// One checkpoint's record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointInfo {
    pub id: CheckpointId,
    /// Milliseconds since the Unix epoch.
    pub time_ms: u64,
    pub origin: Origin,
    pub label: String,
    pub tree: ObjectId,
}

/// What a garbage collection did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GcReport {
    pub dropped_checkpoints: Vec<CheckpointId>,
    pub deleted_objects: u64,
    pub freed_bytes: u64,
    pub store_bytes: u64,
}

/// `<state_dir>/checkpoints/<project dir name>-<hash of the full root>`.
pub fn store_dir(state_dir: &Path, project_root: &Path) -> PathBuf {
    let hash = blake3::hash(project_root.as_os_str().as_encoded_bytes());
    let base = crate::paths::name_part(project_root, &[]);
    let base = if base.is_empty() { "root".into() } else { base };
    state_dir
        .join("checkpoints")
        .join(format!("{base}-{}", &hash.to_hex()[..16]))
}

/// The state a store keeps between operations (reloaded when another process wrote).
struct Inner {
    root: CapDir,
    dir: PathBuf,
    objects: Objects,
    opts: StoreOptions,
    /// The stat cache read from disk: used by a walk where `memo` knows nothing.
    cache: StatCache,
    /// The stat cache on disk is older than what this process knows.
    cache_dirty: bool,
    /// What the last walk found, kept for the next one; `None` after a failure or another
    /// process's write (the disk's cache is read again).
    memo: Option<scan::DirMemo>,
    /// The threads of a walk (one pool for the process), taken at the first one.
    pool: Option<std::sync::Arc<rayon::ThreadPool>>,
    /// Objects known to be stored.
    known: HashSet<ObjectId>,
    /// The `version` this process last saw or wrote.
    seen_version: Option<String>,
    /// The objects' total size on disk, once counted.
    store_bytes: Option<u64>,
    last_stats: ScanStats,
    /// The person's global git excludes, read once.
    global_ignore: Option<std::sync::Arc<ignore::gitignore::Gitignore>>,
    /// The directories that changed since the last walk, as the OS tells ([`watch`]).
    watch: Option<watch::Watch>,
    /// Watching was given up (not available, or a directory could not be watched).
    watch_off: bool,
    /// When the stat cache was last written: while the watch spares walks, it is written at
    /// most every [`CACHE_WRITE_EVERY`] (it only spares a later process's first walk reads).
    cache_written: Option<Instant>,
}

/// How often the stat cache is written back at most while directories are watched.
const CACHE_WRITE_EVERY: Duration = Duration::from_secs(60);

/// Stores one file's current content (see [`Store::capturer`]).
#[derive(Debug)]
pub struct Capturer {
    root: CapDir,
    objects: Objects,
    max_file_bytes: u64,
}

impl Capturer {
    /// What `path` (absolute inside the project, or relative to it) holds now, its content
    /// stored: `None` when absent. Read without following links; over the cap: recorded only.
    pub fn capture(&self, path: &str) -> Result<(String, Option<FileState>), CheckpointError> {
        let rel = self.root.rel(path)?;
        let st = probe::probe(&self.root, &self.objects, &rel, self.max_file_bytes)?;
        Ok((rel.to_string_lossy().into_owned(), st))
    }
}

/// One project's checkpoint store.
pub struct Store {
    lock: fd_lock::RwLock<std::fs::File>,
    inner: Inner,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("dir", &self.inner.dir)
            .finish()
    }
}

fn io_err(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> CheckpointError {
    let path = path.to_path_buf();
    move |err| CheckpointError::Io { what, path, err }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl Store {
    /// Opens (creating) the store of `project_root` under `state_dir`.
    pub fn open(
        state_dir: &Path,
        project_root: &Path,
        opts: StoreOptions,
    ) -> Result<Store, CheckpointError> {
        let root = CapDir::open_root(project_root)?;
        let dir = store_dir(state_dir, root.path());
        // The folder of every project's store lists the projects' names: the person's only.
        if let Some(parent) = dir.parent() {
            crate::fsutil::ensure_private_dir(parent)
                .map_err(io_err("create the store's folder", parent))?;
        }
        Self::open_at(dir, root, opts)
    }

    /// Opens (creating) the store in `dir` for the project whose root is `root`.
    pub fn open_at(
        dir: PathBuf,
        root: CapDir,
        opts: StoreOptions,
    ) -> Result<Store, CheckpointError> {
        crate::fsutil::ensure_private_dir(&dir).map_err(io_err("create the store", &dir))?;
        for sub in ["objects", "checkpoints"] {
            let p = dir.join(sub);
            if let Err(e) = std::fs::create_dir(&p) {
                if e.kind() != ErrorKind::AlreadyExists {
                    return Err(io_err("create the directory", &p)(e));
                }
            }
        }
        let lock_path = dir.join("lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io_err("open the lock file", &lock_path))?;
        let objects = Objects::new(dir.join("objects"), opts.compress);
        let opts_watch = opts.watch;
        let global_ignore = opts
            .global_gitignore
            .then(|| std::sync::Arc::new(ignore::gitignore::Gitignore::global().0));
        Ok(Store {
            lock: fd_lock::RwLock::new(file),
            inner: Inner {
                root,
                dir,
                objects,
                opts,
                cache: StatCache::default(),
                cache_dirty: false,
                memo: None,
                pool: None,
                known: HashSet::new(),
                seen_version: None,
                store_bytes: None,
                last_stats: ScanStats::default(),
                global_ignore,
                watch: None,
                watch_off: !opts_watch,
                cache_written: None,
            },
        })
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// The project root.
    pub fn root(&self) -> &Path {
        self.inner.root.path()
    }

    /// What the last walk did.
    pub fn last_stats(&self) -> &ScanStats {
        &self.inner.last_stats
    }

    /// Runs `f` holding the store's lock (waiting up to the timeout), with caches current.
    fn locked<T>(
        &mut self,
        writes: bool,
        f: impl FnOnce(&mut Inner) -> Result<T, CheckpointError>,
    ) -> Result<T, CheckpointError> {
        let timeout = self.inner.opts.lock_timeout;
        let start = Instant::now();
        let guard = loop {
            match self.lock.try_write() {
                Ok(g) => break g,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    if start.elapsed() >= timeout {
                        return Err(CheckpointError::Busy {
                            store: self.inner.dir.clone(),
                            secs: timeout.as_secs(),
                        });
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => return Err(io_err("lock", &self.inner.dir.join("lock"))(e)),
            }
        };
        let inner = &mut self.inner;
        inner.sync_version();
        let r = f(inner);
        if r.is_err() {
            // What this process believed is stored may not be: ask the disk again, and let the
            // next walk start from the stat cache on disk, not from what this one found.
            inner.known.clear();
            inner.store_bytes = None;
            inner.memo = None;
            inner.unwatch();
            inner.cache_dirty = false;
            inner.cache = StatCache::load(&inner.cache_path());
        }
        if writes || r.is_err() {
            inner.bump_version();
        }
        drop(guard);
        r
    }

    /// Checkpoints the whole project.
    pub fn checkpoint(&mut self, label: &str) -> Result<CheckpointId, CheckpointError> {
        self.checkpoint_with(label, &[])
    }

    /// Checkpoints the whole project, and also the `extra` paths even where `.gitignore` skips
    /// them (files an edit captured: a turn's end must see them too).
    pub fn checkpoint_with(
        &mut self,
        label: &str,
        extra: &[String],
    ) -> Result<CheckpointId, CheckpointError> {
        self.locked(true, |s| s.snapshot(Origin::Snapshot, label, extra, None))
    }

    /// Checkpoints the whole project like [`Store::checkpoint`]; a walk of every directory (the
    /// project's first, or one after events were lost) that lasts longer than
    /// [`StoreOptions::progress_every`] calls `progress(directories, files)` that often.
    pub fn checkpoint_reporting(
        &mut self,
        label: &str,
        progress: &(dyn Fn(u64, u64) + Sync),
    ) -> Result<CheckpointId, CheckpointError> {
        let every = self.inner.opts.progress_every;
        self.locked(true, |s| {
            let r = scan::Reporter::new(progress, every);
            s.snapshot(Origin::Snapshot, label, &[], Some(&r))
        })
    }

    /// A checkpoint holding nothing: the base of a first capture in a project that has no
    /// checkpoint yet (the editor's write before any turn ran: a land), with no walk of the
    /// project. Only the paths captured on it are meaningful.
    pub fn empty(&mut self, label: &str) -> Result<CheckpointId, CheckpointError> {
        self.locked(true, |s| {
            let (tree, added) = tree::write(&s.objects, &[])?;
            s.add_bytes(added);
            s.record(Origin::Capture, label, tree)
        })
    }

    /// A checkpoint like `base` with `path` as it is now (content stored): called right
    /// before an edit tool writes `path`. Only the directories on the way are written.
    pub fn capture_file(
        &mut self,
        base: CheckpointId,
        path: &str,
    ) -> Result<CheckpointId, CheckpointError> {
        self.locked(true, |s| {
            let rel = s.root.rel(path)?;
            let info = s.info(base)?;
            let now = probe::probe(&s.root, &s.objects, &rel, s.opts.max_file_bytes)?;
            let (tree, added) = tree::with_path(&s.objects, &info.tree, &rel, now)?;
            s.add_bytes(added);
            s.record(Origin::Capture, &rel.to_string_lossy(), tree)
        })
    }

    /// A checkpoint like `base` with each path set to the state given (`None`: absent), their
    /// contents already stored by a [`Capturer`]: a turn's start corrected with the files
    /// captured right before an edit while the start's walk still ran.
    pub fn derive(
        &mut self,
        base: CheckpointId,
        states: &[(String, Option<FileState>)],
        label: &str,
    ) -> Result<CheckpointId, CheckpointError> {
        self.locked(true, |s| {
            let mut tree = s.info(base)?.tree;
            for (path, st) in states {
                let rel = s.root.rel(path)?;
                let (t, added) = tree::with_path(&s.objects, &tree, &rel, *st)?;
                s.add_bytes(added);
                tree = t;
            }
            s.record(Origin::Capture, label, tree)
        })
    }

    /// A handle that stores single files' contents without the store's lock (objects are
    /// content-addressed and written atomically), for captures that must not wait for a walk.
    pub fn capturer(&self) -> Result<Capturer, CheckpointError> {
        Ok(Capturer {
            root: CapDir::open_root(self.inner.root.path())?,
            objects: Objects::new(
                self.inner.objects.dir().to_path_buf(),
                self.inner.opts.compress,
            ),
            max_file_bytes: self.inner.opts.max_file_bytes,
        })
    }

    /// The newest checkpoint that can be read (`None`: none), reading only as many records as
    /// it takes.
    pub fn latest(&mut self) -> Result<Option<CheckpointId>, CheckpointError> {
        self.locked(false, |s| {
            Ok(s.ids()?.into_iter().rev().find(|id| s.info(*id).is_ok()))
        })
    }

    /// Every checkpoint that can be read, oldest first (a damaged record is left out; reading
    /// it with [`Store::info`] says what is wrong).
    pub fn list(&mut self) -> Result<Vec<CheckpointInfo>, CheckpointError> {
        self.locked(false, |s| {
            Ok(s.ids()?
                .into_iter()
                .filter_map(|id| s.info(id).ok())
                .collect())
        })
    }

    /// Checkpoint `id`'s record.
    pub fn info(&mut self, id: CheckpointId) -> Result<CheckpointInfo, CheckpointError> {
        self.locked(false, |s| s.info(id))
    }

    /// The files that differ between checkpoints `a` and `b`.
    pub fn diff(
        &mut self,
        a: CheckpointId,
        b: CheckpointId,
    ) -> Result<Vec<Change>, CheckpointError> {
        self.locked(false, |s| {
            let (ta, tb) = (s.info(a)?.tree, s.info(b)?.tree);
            tree::diff(&s.objects, &ta, &tb)
        })
    }

    /// What `path` holds in checkpoint `id` (`None`: absent there).
    pub fn state_at(
        &mut self,
        id: CheckpointId,
        path: &str,
    ) -> Result<Option<FileState>, CheckpointError> {
        self.locked(false, |s| {
            let rel = s.root.rel(path)?;
            let t = s.info(id)?.tree;
            tree::lookup(&s.objects, &t, &rel)
        })
    }

    /// The content of `path` in checkpoint `id` (`None`: absent there, or over the cap); a
    /// symlink's is its target text.
    pub fn file_at(
        &mut self,
        id: CheckpointId,
        path: &str,
    ) -> Result<Option<Vec<u8>>, CheckpointError> {
        self.locked(false, |s| {
            let rel = s.root.rel(path)?;
            let t = s.info(id)?.tree;
            match tree::lookup(&s.objects, &t, &rel)? {
                Some(st) if st.kind.has_content() => Ok(Some(s.blob(&st)?)),
                _ => Ok(None),
            }
        })
    }

    /// Writes checkpoint `target`'s content back (see [`RestoreRequest`]). The project is
    /// checkpointed first (the report's `before`: restoring it undoes this restore) and after.
    pub fn restore(&mut self, req: &RestoreRequest) -> Result<RestoreReport, CheckpointError> {
        self.locked(true, |s| s.restore(req))
    }

    /// Drops the oldest checkpoints until the objects fit the size cap, and deletes the objects
    /// no checkpoint reaches (and what writes interrupted by a crash left behind).
    pub fn gc(&mut self) -> Result<GcReport, CheckpointError> {
        self.locked(true, |s| {
            s.objects.remove_stale_temps();
            s.gc(None)
        })
    }

    /// The objects' total size on disk.
    pub fn store_bytes(&mut self) -> Result<u64, CheckpointError> {
        self.locked(false, |s| s.store_bytes())
    }
}
