//! The walk that turns the project into trees: every directory opened beneath the one before
//! it without following a link ([`crate::capfs`]), `.gitignore` files (and `.git/info/exclude`,
//! and the person's global excludes) honoured whether or not the project is a git repository,
//! `.git` itself skipped, links recorded as links, FIFOs, sockets and devices skipped without
//! being opened, files over the size cap recorded but not read. A file whose `lstat` matches
//! the stat cache is not read; the others are read (capped), hashed on the walking thread and
//! handed to writer threads that compress and store the blobs the store does not have yet.

use super::object::{ObjectId, ObjectType, Objects};
use super::statcache::{Cached, StatCache, RACY_NS};
use super::tree::{self, os_bytes, Entry, FileState, Kind};
use super::CheckpointError;
use crate::capfs::{self, CapDir, CapError, EntryType, Stat};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;
use std::borrow::Cow;
use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

/// The largest ignore file read (`.gitignore`, `.git/info/exclude`).
const IGNORE_FILE_LIMIT: u64 = 1 << 20;

/// What the walk honours and where it stops.
#[derive(Debug, Clone)]
pub struct ScanConfig {
    /// Files larger than this are recorded as over the cap (size and stat), not stored.
    pub max_file_bytes: u64,
    /// Threads that compress and store new blobs (0: on the walking thread).
    pub writer_threads: usize,
}

/// What one walk did: counts for logs, and for tests (`files_read` shows the stat cache works).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanStats {
    pub dirs: u64,
    pub files: u64,
    pub symlinks: u64,
    pub over_cap: u64,
    /// FIFOs, sockets and devices: skipped, never opened.
    pub special: u64,
    pub ignored: u64,
    /// Entries that could not be read (permissions, gone during the walk).
    pub unreadable: u64,
    pub cache_hits: u64,
    pub files_read: u64,
    pub bytes_read: u64,
    pub objects_written: u64,
    pub bytes_written: u64,
}

/// The result of a walk: the root tree, the new stat cache, the counts.
pub struct Walked {
    pub root: ObjectId,
    pub cache: StatCache,
    /// The cache differs from the one the walk started from.
    pub cache_changed: bool,
    pub stats: ScanStats,
}

fn as_path(b: &[u8]) -> Cow<'_, Path> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Cow::Borrowed(Path::new(std::ffi::OsStr::from_bytes(b)))
    }
    #[cfg(not(unix))]
    {
        Cow::Owned(std::path::PathBuf::from(
            String::from_utf8_lossy(b).into_owned(),
        ))
    }
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// A fingerprint for a file over the cap: changes when its stat does.
fn fingerprint(s: &Stat) -> ObjectId {
    let mut b = Vec::with_capacity(40);
    for v in [s.size, s.mtime_ns as u64, s.ctime_ns as u64, s.ino, s.dev] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    ObjectId::of_fingerprint(&b)
}

fn parse_ignore(bytes: &[u8]) -> Option<Gitignore> {
    let text = String::from_utf8_lossy(bytes);
    let mut b = GitignoreBuilder::new(".");
    for line in text.lines() {
        // An invalid pattern is skipped, as git does.
        let _ = b.add_line(None, line);
    }
    b.build().ok().filter(|g| !g.is_empty())
}

fn read_ignore(dir: &CapDir, name: &Path) -> Option<Gitignore> {
    let (file, meta) = dir.open_file_nofollow(name).ok()?;
    if meta.len() > IGNORE_FILE_LIMIT {
        return None;
    }
    let bytes = capfs::read_capped_from(file, IGNORE_FILE_LIMIT).ok()?;
    parse_ignore(&bytes)
}

type WriterError = Arc<Mutex<Option<CheckpointError>>>;

struct Writers {
    tx: SyncSender<(ObjectId, Vec<u8>)>,
    error: WriterError,
}

fn writer_loop(
    objects: &Objects,
    rx: &Mutex<Receiver<(ObjectId, Vec<u8>)>>,
    error: &WriterError,
    count: &AtomicU64,
    bytes: &AtomicU64,
) {
    loop {
        let job = match rx.lock() {
            Ok(r) => r.recv(),
            Err(_) => return,
        };
        let Ok((id, content)) = job else { return };
        if error.lock().map(|e| e.is_some()).unwrap_or(true) {
            continue;
        }
        match objects.put(&id, ObjectType::Blob, &content) {
            Ok(0) => {}
            Ok(n) => {
                count.fetch_add(1, Ordering::Relaxed);
                bytes.fetch_add(n, Ordering::Relaxed);
            }
            Err(e) => {
                if let Ok(mut slot) = error.lock() {
                    slot.get_or_insert(e);
                }
            }
        }
    }
}

struct Walk<'a> {
    objects: &'a Objects,
    cfg: &'a ScanConfig,
    old: &'a StatCache,
    new: StatCache,
    known: &'a mut HashSet<ObjectId>,
    stats: ScanStats,
    racy_from: i64,
    /// The ignore files in force: the length of their directory's path prefix, the rules.
    ignores: Vec<(usize, Gitignore)>,
    writers: Option<Writers>,
    /// An entry was added that the old cache did not have.
    cache_changed: bool,
}

impl Walk<'_> {
    fn ignored(&self, full: &[u8], is_dir: bool) -> bool {
        for (plen, gi) in self.ignores.iter().rev() {
            let Some(sub) = full.get(*plen..) else {
                continue;
            };
            match gi.matched(as_path(sub), is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }

    /// Stores a blob the store may not have: on a writer thread, or here.
    fn store_blob(&mut self, id: ObjectId, content: Vec<u8>) -> Result<(), CheckpointError> {
        if !self.known.insert(id) {
            return Ok(());
        }
        let content = match &self.writers {
            Some(w) => match w.tx.send((id, content)) {
                Ok(()) => return Ok(()),
                Err(back) => back.0 .1,
            },
            None => content,
        };
        let n = self.objects.put(&id, ObjectType::Blob, &content)?;
        if n > 0 {
            self.stats.objects_written += 1;
            self.stats.bytes_written += n;
        }
        Ok(())
    }

    fn writer_failed(&self) -> Result<(), CheckpointError> {
        if let Some(w) = &self.writers {
            if let Ok(mut slot) = w.error.lock() {
                if let Some(e) = slot.take() {
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    fn write_tree(&mut self, entries: &[Entry]) -> Result<ObjectId, CheckpointError> {
        let bytes = tree::encode(entries);
        let id = ObjectId::of_tree(&bytes);
        if !self.known.contains(&id) {
            let n = self.objects.put(&id, ObjectType::Tree, &bytes)?;
            if n > 0 {
                self.stats.objects_written += 1;
                self.stats.bytes_written += n;
            }
            self.known.insert(id);
        }
        Ok(id)
    }

    /// A regular file: from the stat cache when its `lstat` matches, else read through its
    /// descriptor (which decides: the stat cached is the descriptor's).
    fn file(
        &mut self,
        dir: &CapDir,
        name: &Path,
        full: &[u8],
        st: &Stat,
    ) -> Result<Option<FileState>, CheckpointError> {
        let kind_of = |s: &Stat| if s.executable { Kind::Exec } else { Kind::File };
        if st.size > self.cfg.max_file_bytes {
            self.stats.over_cap += 1;
            return Ok(Some(FileState {
                kind: Kind::OverCap,
                size: st.size,
                id: fingerprint(st),
            }));
        }
        if let Some(c) = self.old.map.get(full) {
            if c.matches(st) {
                self.stats.cache_hits += 1;
                self.new.map.insert(full.into(), *c);
                return Ok(Some(FileState {
                    kind: kind_of(st),
                    size: st.size,
                    id: c.id,
                }));
            }
        }
        let Ok((file, meta)) = dir.open_file_nofollow(name) else {
            self.stats.unreadable += 1;
            return Ok(None);
        };
        let fst = capfs::stat_of_file(&meta);
        let over = |w: &mut Self| {
            w.stats.over_cap += 1;
            Ok(Some(FileState {
                kind: Kind::OverCap,
                size: fst.size,
                id: fingerprint(&fst),
            }))
        };
        if fst.size > self.cfg.max_file_bytes {
            return over(self);
        }
        let bytes = match capfs::read_capped_from(file, self.cfg.max_file_bytes) {
            Ok(b) => b,
            Err(None) => return over(self),
            Err(Some(_)) => {
                self.stats.unreadable += 1;
                return Ok(None);
            }
        };
        self.stats.files_read += 1;
        self.stats.bytes_read += bytes.len() as u64;
        let id = ObjectId::of_blob(&bytes);
        let size = bytes.len() as u64;
        self.store_blob(id, bytes)?;
        if fst.mtime_ns < self.racy_from && fst.size == size {
            self.new.map.insert(full.into(), Cached::new(&fst, id));
            self.cache_changed = true;
        }
        Ok(Some(FileState {
            kind: kind_of(&fst),
            size,
            id,
        }))
    }

    fn link(&mut self, dir: &CapDir, name: &Path) -> Result<Option<FileState>, CheckpointError> {
        let Ok(target) = dir.read_link_nofollow(name) else {
            self.stats.unreadable += 1;
            return Ok(None);
        };
        let bytes = os_bytes(target.as_os_str());
        let id = ObjectId::of_blob(&bytes);
        let size = bytes.len() as u64;
        self.store_blob(id, bytes)?;
        Ok(Some(FileState {
            kind: Kind::Symlink,
            size,
            id,
        }))
    }

    /// The tree of `dir` (at `rel`, its path from the root); `None` when nothing in it is kept.
    fn dir(
        &mut self,
        dir: &CapDir,
        rel: &mut Vec<u8>,
    ) -> Result<Option<ObjectId>, CheckpointError> {
        self.stats.dirs += 1;
        let listed = match dir.list_nofollow() {
            Ok(l) => l,
            Err(e) if rel.is_empty() => return Err(e.into()),
            Err(_) => {
                self.stats.unreadable += 1;
                return Ok(None);
            }
        };
        let mut listed: Vec<(Vec<u8>, EntryType)> = listed
            .into_iter()
            .map(|l| (os_bytes(&l.name), l.kind))
            .collect();
        listed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let base = rel.len();
        let prefix = if base == 0 { 0 } else { base + 1 };
        let has_ignore = listed
            .iter()
            .any(|(n, k)| n == b".gitignore" && *k == EntryType::File);
        let pushed = if has_ignore {
            match read_ignore(dir, Path::new(".gitignore")) {
                Some(gi) => {
                    self.ignores.push((prefix, gi));
                    true
                }
                None => false,
            }
        } else {
            false
        };
        let mut entries = Vec::with_capacity(listed.len());
        for (name, kind) in listed {
            if name == b".git" {
                continue;
            }
            rel.truncate(base);
            if base > 0 {
                rel.push(b'/');
            }
            rel.extend_from_slice(&name);
            if kind == EntryType::Special {
                self.stats.special += 1;
                continue;
            }
            if self.ignored(rel, kind == EntryType::Dir) {
                self.stats.ignored += 1;
                continue;
            }
            let name_path = as_path(&name);
            let state = match kind {
                EntryType::Dir => {
                    let Ok(sub) = dir.open_subdir_nofollow(&name_path) else {
                        self.stats.unreadable += 1;
                        continue;
                    };
                    self.dir(&sub, rel)?.map(|id| FileState {
                        kind: Kind::Dir,
                        size: 0,
                        id,
                    })
                }
                EntryType::Symlink => {
                    self.stats.symlinks += 1;
                    self.link(dir, &name_path)?
                }
                EntryType::File => match dir.stat_nofollow(&name_path) {
                    Ok((EntryType::File, st)) => {
                        self.stats.files += 1;
                        self.file(dir, &name_path, rel, &st)?
                    }
                    // Swapped since the listing: left for the next checkpoint.
                    _ => {
                        self.stats.unreadable += 1;
                        None
                    }
                },
                EntryType::Special => None,
            };
            if let Some(s) = state {
                entries.push(Entry {
                    name,
                    kind: s.kind,
                    size: s.size,
                    id: s.id,
                });
            }
        }
        rel.truncate(base);
        if pushed {
            self.ignores.pop();
        }
        self.writer_failed()?;
        if entries.is_empty() && base > 0 {
            return Ok(None);
        }
        Ok(Some(self.write_tree(&entries)?))
    }
}

/// Walks the project under `root` and stores what the store does not have. `global`: the
/// person's global git excludes (`core.excludesFile`); `known`: the objects known to be stored
/// (updated).
pub fn walk(
    root: &CapDir,
    objects: &Objects,
    cfg: &ScanConfig,
    global: Option<&Gitignore>,
    old: &StatCache,
    known: &mut HashSet<ObjectId>,
) -> Result<Walked, CheckpointError> {
    let mut ignores = Vec::new();
    if let Some(gi) = global.filter(|g| !g.is_empty()) {
        ignores.push((0, gi.clone()));
    }
    if let Ok(Some((dir, name))) = root.parent_nofollow(Path::new(".git/info/exclude")) {
        if let Some(gi) = read_ignore(&dir, &name) {
            ignores.push((0, gi));
        }
    }
    let racy_from = now_ns() - RACY_NS;
    let threads = cfg.writer_threads;
    let count = AtomicU64::new(0);
    let bytes = AtomicU64::new(0);
    let error: WriterError = Arc::new(Mutex::new(None));
    let result = std::thread::scope(|s| {
        let writers = if threads > 0 {
            let (tx, rx) = sync_channel::<(ObjectId, Vec<u8>)>(16);
            let rx = Arc::new(Mutex::new(rx));
            for _ in 0..threads {
                let rx = rx.clone();
                let error = error.clone();
                let (count, bytes) = (&count, &bytes);
                s.spawn(move || writer_loop(objects, &rx, &error, count, bytes));
            }
            Some(Writers {
                tx,
                error: error.clone(),
            })
        } else {
            None
        };
        let mut w = Walk {
            objects,
            cfg,
            old,
            new: StatCache {
                map: std::collections::HashMap::with_capacity(old.map.len()),
            },
            known,
            stats: ScanStats::default(),
            racy_from,
            ignores,
            writers,
            cache_changed: false,
        };
        let mut rel = Vec::new();
        let r = w.dir(root, &mut rel);
        // Closing the channel lets the writers finish what is queued and stop.
        w.writers = None;
        let changed = w.cache_changed || w.new.map.len() != old.map.len();
        r.map(|root| (root, w.new, w.stats, changed))
    });
    let (root_id, cache, mut stats, cache_changed) = result?;
    if let Ok(mut slot) = error.lock() {
        if let Some(e) = slot.take() {
            return Err(e);
        }
    }
    stats.objects_written += count.load(Ordering::Relaxed);
    stats.bytes_written += bytes.load(Ordering::Relaxed);
    let root_id = match root_id {
        Some(id) => id,
        None => tree::write(objects, &[])?.0,
    };
    Ok(Walked {
        root: root_id,
        cache,
        cache_changed,
        stats,
    })
}

/// What `rel` is now, read through handles opened without following links, its content stored:
/// `None` when it is absent, a directory, or neither a file nor a link.
pub fn probe(
    root: &CapDir,
    objects: &Objects,
    rel: &Path,
    max_file_bytes: u64,
) -> Result<Option<FileState>, CheckpointError> {
    let Some((dir, name)) = root.parent_nofollow(rel).or_else(absent)? else {
        return Ok(None);
    };
    let (kind, st) = match dir.stat_nofollow(&name) {
        Ok(x) => x,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    match kind {
        EntryType::Symlink => {
            let target = dir.read_link_nofollow(&name)?;
            let bytes = os_bytes(target.as_os_str());
            let id = ObjectId::of_blob(&bytes);
            objects.put(&id, ObjectType::Blob, &bytes)?;
            Ok(Some(FileState {
                kind: Kind::Symlink,
                size: bytes.len() as u64,
                id,
            }))
        }
        EntryType::File => {
            let over = |s: &Stat| {
                Ok(Some(FileState {
                    kind: Kind::OverCap,
                    size: s.size,
                    id: fingerprint(s),
                }))
            };
            if st.size > max_file_bytes {
                return over(&st);
            }
            let (file, meta) = match dir.open_file_nofollow(&name) {
                Ok(x) => x,
                Err(e) if e.is_not_found() => return Ok(None),
                Err(CapError::NotRegular { .. }) => return Ok(None),
                Err(e) => return Err(e.into()),
            };
            let fst = capfs::stat_of_file(&meta);
            let bytes = match capfs::read_capped_from(file, max_file_bytes) {
                Ok(b) => b,
                Err(None) => return over(&fst),
                Err(Some(err)) => {
                    return Err(CheckpointError::Io {
                        what: "read",
                        path: root.display(rel),
                        err,
                    })
                }
            };
            let id = ObjectId::of_blob(&bytes);
            objects.put(&id, ObjectType::Blob, &bytes)?;
            Ok(Some(FileState {
                kind: if fst.executable {
                    Kind::Exec
                } else {
                    Kind::File
                },
                size: bytes.len() as u64,
                id,
            }))
        }
        EntryType::Dir | EntryType::Special => Ok(None),
    }
}

/// A directory on the way that is not a directory (a file, a link) means the path is absent.
fn absent(e: CapError) -> Result<Option<(CapDir, std::path::PathBuf)>, CapError> {
    match e {
        CapError::NotRegular { .. } | CapError::LinkInWrite { .. } => Ok(None),
        e if e.is_not_found() => Ok(None),
        e => Err(e),
    }
}
