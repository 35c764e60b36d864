//! The walk that turns the project into trees: every directory opened beneath the one before
//! it without following a link ([`crate::capfs`]), `.gitignore` files (and `.git/info/exclude`,
//! and the person's global excludes) honoured whether or not the project is a git repository,
//! `.git` itself skipped, links recorded as links, FIFOs, sockets and devices skipped without
//! being opened, files over the size cap recorded but not read. Subdirectories are walked side
//! by side on a thread pool; each thread reads, hashes, compresses and stores what it finds.
//!
//! A walk starts from what the walk before found ([`DirMemo`], kept in memory by the store):
//! every file is `lstat`ed, and one whose stat is that of a trusted entry is not read; a
//! directory whose own stat did not change since it was listed is not listed again; an entry
//! the same ignore rules decided is not matched again; a directory none of whose entries
//! changed keeps its tree id. Where the memory knows nothing (a first walk), the stat cache
//! read from disk spares the reads.

use super::ignore_rules::{as_path, parse_ignore, read_ignore_bytes, Rules};
pub use super::memo::DirMemo;
use delta::Base;
use listing::{listing, own_ignore, previous};
pub use progress::Reporter;
use subdirs::Below;

mod delta;
mod listing;
mod progress;
mod subdirs;
use super::memo::{Seen, What};
use super::object::{ObjectId, ObjectType, Objects};
use super::statcache::{trustworthy, StatCache};
use super::tree::{self, os_bytes, FileState, Kind};
use super::watch::{Changes, Dirty, Watch};
use super::CheckpointError;
use crate::capfs::{self, CapDir, EntryType, Stat};
use ignore::gitignore::Gitignore;
use rayon::prelude::*;
use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// What the walk honours and where it stops.
#[derive(Debug, Clone)]
pub struct ScanConfig {
    /// Files larger than this are recorded as over the cap (size and stat), not stored.
    pub max_file_bytes: u64,
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
    /// Directories whose stat was the same as when they were last listed: not listed again.
    pub dirs_unchanged: u64,
    /// Directories not even opened: the watch saw no change in or beneath them
    /// ([`super::watch`]); their trees are the last walk's.
    pub dirs_skipped: u64,
    /// The walk went over every directory (not only those the watch said changed).
    pub whole: bool,
    pub files_read: u64,
    pub bytes_read: u64,
    pub objects_written: u64,
    pub bytes_written: u64,
}

/// The result of a walk: the root tree, what it found (for the next walk and the stat cache),
/// the counts.
pub struct Walked {
    pub root: ObjectId,
    pub memo: DirMemo,
    /// The trusted files differ from those the walk started from (the cache on disk is stale).
    pub cache_changed: bool,
    pub stats: ScanStats,
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// A fingerprint for a file over the cap: changes when its stat does.
pub(super) fn fingerprint(s: &Stat) -> ObjectId {
    let mut b = Vec::with_capacity(40);
    for v in [s.size, s.mtime_ns as u64, s.ctime_ns as u64, s.ino, s.dev] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    ObjectId::of_fingerprint(&b)
}

/// What one directory's walk (and those beneath it) counted.
#[derive(Default)]
struct Out {
    stats: ScanStats,
    /// Trusted files now.
    trusted: u64,
    /// Trusted files that were not trusted with the same stat and content before.
    fresh: u64,
}

impl Out {
    fn add(&mut self, o: Out) {
        let (a, b) = (&mut self.stats, o.stats);
        a.dirs += b.dirs;
        a.files += b.files;
        a.symlinks += b.symlinks;
        a.over_cap += b.over_cap;
        a.special += b.special;
        a.ignored += b.ignored;
        a.unreadable += b.unreadable;
        a.cache_hits += b.cache_hits;
        a.dirs_unchanged += b.dirs_unchanged;
        a.dirs_skipped += b.dirs_skipped;
        a.files_read += b.files_read;
        a.bytes_read += b.bytes_read;
        a.objects_written += b.objects_written;
        a.bytes_written += b.bytes_written;
        self.trusted += o.trusted;
        self.fresh += o.fresh;
    }
}

/// The kind a regular file with stat `s` is kept as.
fn file_kind(s: &Stat) -> Kind {
    if s.executable {
        Kind::Exec
    } else {
        Kind::File
    }
}

/// A file over the size cap: its size and a fingerprint of its stat, counted.
fn over_cap(s: &Stat, out: &mut Out) -> (Option<FileState>, What) {
    out.stats.over_cap += 1;
    let state = FileState {
        kind: Kind::OverCap,
        size: s.size,
        id: fingerprint(s),
    };
    (Some(state), What::Other)
}

/// What every directory's walk shares.
struct Ctx<'a> {
    objects: &'a Objects,
    cfg: &'a ScanConfig,
    /// The cache read from disk, for the directories the memo does not know (a first walk).
    flat: &'a StatCache,
    known: &'a Mutex<HashSet<ObjectId>>,
    /// When the walk started: what changed shortly before is not trusted later (see
    /// [`trustworthy`]).
    now: i64,
    parallel: bool,
    /// Watches every directory walked (before it is listed).
    watch: Option<&'a Watch>,
    /// Only these directories changed (`None`: look at everything).
    changes: Option<&'a Dirty>,
    /// Told how far a whole walk got, now and then.
    progress: Option<&'a Reporter<'a>>,
}

impl Ctx<'_> {
    /// Stores a blob the store may not have.
    fn store(
        &self,
        ty: ObjectType,
        id: ObjectId,
        content: &[u8],
        out: &mut Out,
    ) -> Result<(), CheckpointError> {
        let new = match self.known.lock() {
            Ok(mut k) => k.insert(id),
            Err(_) => true,
        };
        if !new {
            return Ok(());
        }
        let n = self.objects.put(&id, ty, content)?;
        if n > 0 {
            out.stats.objects_written += 1;
            out.stats.bytes_written += n;
        }
        Ok(())
    }

    /// A regular file: unchanged when its `lstat` matches a trusted entry of the walk before
    /// (or of the cache on disk), else read through its descriptor (which decides: the stat
    /// kept is the descriptor's).
    fn file(
        &self,
        dir: &CapDir,
        name: &Path,
        full: &[u8],
        st: &Stat,
        prev: Option<&Seen>,
        out: &mut Out,
    ) -> Result<Option<(Option<FileState>, What)>, CheckpointError> {
        if st.size > self.cfg.max_file_bytes {
            return Ok(Some(over_cap(st, out)));
        }
        if let Some(id) = self.cached_id(full, st, prev) {
            out.stats.cache_hits += 1;
            out.trusted += 1;
            let state = FileState {
                kind: file_kind(st),
                size: st.size,
                id,
            };
            return Ok(Some((
                Some(state),
                What::File {
                    stat: *st,
                    trusted: true,
                },
            )));
        }
        self.read_file(dir, name, out)
    }

    /// The blob of the file at `full` when its `lstat` `st` matches a trusted entry of the walk
    /// before (`prev`), or of the cache on disk when the walk before did not see it.
    fn cached_id(&self, full: &[u8], st: &Stat, prev: Option<&Seen>) -> Option<ObjectId> {
        match prev {
            Some(Seen {
                what:
                    What::File {
                        stat,
                        trusted: true,
                    },
                kept: Some(k),
                ..
            }) => (stat == st).then_some(k.id),
            Some(_) => None,
            None => self
                .flat
                .map
                .get(full)
                .filter(|c| c.matches(st))
                .map(|c| c.id),
        }
    }

    /// Reads and stores the regular file `name` through its descriptor (whose stat is kept).
    fn read_file(
        &self,
        dir: &CapDir,
        name: &Path,
        out: &mut Out,
    ) -> Result<Option<(Option<FileState>, What)>, CheckpointError> {
        let Ok((file, meta)) = dir.open_file_nofollow(name) else {
            out.stats.unreadable += 1;
            return Ok(None);
        };
        let fst = capfs::stat_of_file(&meta);
        if fst.size > self.cfg.max_file_bytes {
            return Ok(Some(over_cap(&fst, out)));
        }
        let bytes = match capfs::read_capped_from(file, self.cfg.max_file_bytes) {
            Ok(b) => b,
            Err(None) => return Ok(Some(over_cap(&fst, out))),
            Err(Some(_)) => {
                out.stats.unreadable += 1;
                return Ok(None);
            }
        };
        out.stats.files_read += 1;
        out.stats.bytes_read += bytes.len() as u64;
        let id = ObjectId::of_blob(&bytes);
        let size = bytes.len() as u64;
        self.store(ObjectType::Blob, id, &bytes, out)?;
        let trusted = trustworthy(fst.mtime_ns, self.now) && fst.size == size;
        if trusted {
            out.trusted += 1;
            out.fresh += 1;
        }
        let state = FileState {
            kind: file_kind(&fst),
            size,
            id,
        };
        Ok(Some((Some(state), What::File { stat: fst, trusted })))
    }

    fn link(
        &self,
        dir: &CapDir,
        name: &Path,
        out: &mut Out,
    ) -> Result<Option<FileState>, CheckpointError> {
        let Ok(target) = dir.read_link_nofollow(name) else {
            out.stats.unreadable += 1;
            return Ok(None);
        };
        let bytes = os_bytes(target.as_os_str());
        let id = ObjectId::of_blob(&bytes);
        let size = bytes.len() as u64;
        self.store(ObjectType::Blob, id, &bytes, out)?;
        Ok(Some(FileState {
            kind: Kind::Symlink,
            size,
            id,
        }))
    }

    /// The directory `dir` (at `rel`, its path from the root), given what the walk before saw
    /// there (`old`) and the rules in force above it.
    /// `force`: walk everything beneath, whatever the watch says (the rules above changed, or
    /// the directory is not the one remembered).
    #[allow(clippy::too_many_arguments)]
    fn dir(
        &self,
        dir: &CapDir,
        rel: &[u8],
        old: Option<DirMemo>,
        rules: &Rules,
        force: bool,
        out: &mut Out,
    ) -> Result<DirMemo, CheckpointError> {
        if let Some(w) = self.watch {
            // Before the listing: what changes after it is an event.
            w.add(dir, rel);
        }
        out.stats.dirs += 1;
        let trusted_before = out.trusted;
        let known_before = old.is_some();
        let mut old = old.unwrap_or_default();
        // The tree the last walk kept here (before the listing takes the names): a changed one
        // is stored as its changes against it.
        let base = Base::of(&old);
        // Taken before the listing: a change during it shows next time.
        let dir_stat = dir.stat_self().ok();
        let ident = dir_stat.map(|s| (s.dev, s.ino));
        let force = force || (known_before && old.ident != ident);
        let scoped = self.changes.filter(|_| !force);
        // No event in it: the same names, the same files (only subdirectories may differ).
        let quiet = known_before && scoped.is_some_and(|c| !c.is_dirty(rel));
        let same_listing = quiet || (dir_stat.is_some() && old.listed_at == dir_stat);
        let Some(listed) = listing(dir, rel, &mut old, same_listing, out)? else {
            return Ok(DirMemo::default());
        };
        let listed_at = if quiet {
            old.listed_at
        } else {
            dir_stat.filter(|s| trustworthy(s.mtime_ns, self.now))
        };
        let prefix = if rel.is_empty() { 0 } else { rel.len() + 1 };
        // This directory's own ignore file: parsed again only when its bytes changed.
        let own_ignore = if quiet {
            old.own_ignore.take()
        } else {
            own_ignore(dir, &listed, &mut old)
        };
        let here = match &own_ignore {
            Some((bytes, gi)) => rules.with(prefix, bytes, gi.as_ref()),
            None => rules.clone(),
        };
        let same_rules = known_before && old.rules == here.sig;
        let quiet = quiet && same_rules;
        // A directory that had no tree (or whose tree was forgotten) gets one computed again.
        let changed = !known_before || old.tree.is_none();
        let look = Look {
            rel,
            prefix,
            here: &here,
            same_listing,
            same_rules,
            quiet,
        };
        let olds = std::mem::take(&mut old.entries);
        let (mut entries, subdirs, mut changed, full) =
            self.entries(dir, &look, listed, olds, changed, out)?;
        if let Some(p) = self.progress {
            p.tick(&entries);
        }
        let below = Below {
            rules: &here,
            force: force || !same_rules,
            scoped,
        };
        changed |= self.subdirs(dir, &full[..prefix], &below, &mut entries, subdirs, out)?;
        let (tree, depth) = if changed {
            self.tree(rel, &entries, base, out)?
        } else {
            (old.tree, old.depth)
        };
        Ok(DirMemo {
            tree,
            rules: here.sig,
            listed_at,
            ident,
            depth,
            own_ignore,
            entries,
            trusted: out.trusted - trusted_before,
        })
    }

    /// The entries of the directory `look` describes, from its listing and the last walk's
    /// entries (`olds`): each file looked at (or kept as it was when nothing happened in the
    /// directory), the subdirectories to walk, whether any entry changed (`changed` so far), and
    /// the paths' prefix.
    fn entries(
        &self,
        dir: &CapDir,
        look: &Look,
        listed: Listing,
        olds: Vec<Seen>,
        mut changed: bool,
        out: &mut Out,
    ) -> Result<Looked, CheckpointError> {
        let (rel, prefix, here) = (look.rel, look.prefix, look.here);
        let (same_listing, same_rules, quiet) = (look.same_listing, look.same_rules, look.quiet);
        let mut olds = olds.into_iter().peekable();
        let mut entries: Vec<Seen> = Vec::with_capacity(listed.len());
        let mut subdirs: Vec<Subdir> = Vec::new();
        let mut full = path_prefix(rel, prefix);
        for (name, kind) in listed {
            if name == b".git" || is_worktrees(rel, &name) {
                continue;
            }
            let prev = previous(&mut olds, &name, same_listing, &mut changed);
            let prev_kept = prev.as_ref().and_then(|p| p.kept);
            let prev = prev.filter(|p| p.listed == kind);
            full.truncate(prefix);
            full.extend_from_slice(&name);
            let ignored = kind != EntryType::Special
                && match &prev {
                    Some(p) if same_rules => matches!(p.what, What::Ignored),
                    _ => here.ignored(&full, kind == EntryType::Dir),
                };
            let (kept, what) = if ignored {
                out.stats.ignored += 1;
                (None, What::Ignored)
            } else if kind == EntryType::Dir {
                subdirs.push((entries.len(), old_subdir(prev), prev_kept));
                (None, What::Other)
            } else {
                match prev {
                    // Unchanged since the last walk (no event): kept as it was.
                    Some(p) if quiet => {
                        out.trusted +=
                            u64::from(matches!(p.what, What::File { trusted: true, .. }));
                        (p.kept, p.what)
                    }
                    prev => self.entry(dir, &name, kind, &full, prev.as_ref(), out)?,
                }
            };
            if kind != EntryType::Dir || matches!(what, What::Ignored) {
                changed |= kept != prev_kept;
            }
            entries.push(Seen {
                name,
                listed: kind,
                kept,
                what,
            });
        }
        changed |= olds.any(|o| o.kept.is_some());
        Ok((entries, subdirs, changed, full))
    }

    /// A listed entry that is neither a directory nor ignored: a special file (counted), a
    /// symlink or a regular file (one swapped since the listing is left for the next checkpoint).
    fn entry(
        &self,
        dir: &CapDir,
        name: &[u8],
        kind: EntryType,
        full: &[u8],
        prev: Option<&Seen>,
        out: &mut Out,
    ) -> Result<(Option<FileState>, What), CheckpointError> {
        let name_path = as_path(name);
        Ok(match kind {
            EntryType::Symlink => {
                out.stats.symlinks += 1;
                (self.link(dir, &name_path, out)?, What::Other)
            }
            EntryType::File => match dir.stat_nofollow(&name_path) {
                Ok((EntryType::File, st)) => {
                    out.stats.files += 1;
                    match self.file(dir, &name_path, full, &st, prev, out)? {
                        Some(x) => x,
                        None => (None, What::Other),
                    }
                }
                // Swapped since the listing: left for the next checkpoint.
                _ => {
                    out.stats.unreadable += 1;
                    (None, What::Other)
                }
            },
            EntryType::Special => {
                out.stats.special += 1;
                (None, What::Other)
            }
            EntryType::Dir => (None, What::Other),
        })
    }
}

/// A directory's entries looked at: the entries, the subdirectories to walk, whether any entry
/// changed, the paths' prefix.
type Looked = (Vec<Seen>, Vec<Subdir>, bool, Vec<u8>);

/// How a directory's entries are looked at.
struct Look<'a> {
    /// Its path from the root, and the length of its entries' paths' prefix.
    rel: &'a [u8],
    prefix: usize,
    /// The rules in force in it.
    here: &'a Rules,
    /// The listing is the last walk's (entries in the same order).
    same_listing: bool,
    /// The same rules as at the last walk: what they ignored is ignored.
    same_rules: bool,
    /// Nothing happened in it since the last walk (the watch says): files kept as they were.
    quiet: bool,
}

/// `rel` and, unless it is the root, a slash: `prefix` bytes, the start of its entries' paths.
fn path_prefix(rel: &[u8], prefix: usize) -> Vec<u8> {
    let mut full = Vec::with_capacity(prefix + 64);
    full.extend_from_slice(rel);
    if !rel.is_empty() {
        full.push(b'/');
    }
    full
}

/// What the walk before saw in the subdirectory it saw as `prev`.
fn old_subdir(prev: Option<Seen>) -> Option<DirMemo> {
    match prev {
        Some(Seen {
            what: What::Dir(m), ..
        }) => Some(*m),
        _ => None,
    }
}

/// A directory's entries: names and kinds, sorted by name.
type Listing = Vec<(Vec<u8>, EntryType)>;

/// A subdirectory to walk: its index in the entries, what the walk before saw there, and what
/// was kept for it before.
type Subdir = (usize, Option<DirMemo>, Option<FileState>);

/// Walks the project under `root` and stores what the store does not have. `global`: the
/// person's global git excludes (`core.excludesFile`); `memo`: what the walk before found
/// (`None`: nothing known, a first walk); `flat`: the stat cache read from disk, used where the
/// memo knows nothing; `known`: the objects known to be stored (updated); `pool`: the threads
/// that walk directories side by side (`None`: this thread only).
#[allow(clippy::too_many_arguments)]
pub fn walk(
    root: &CapDir,
    objects: &Objects,
    cfg: &ScanConfig,
    global: Option<&Arc<Gitignore>>,
    memo: Option<DirMemo>,
    flat: &StatCache,
    known: &mut HashSet<ObjectId>,
    pool: Option<&rayon::ThreadPool>,
    watch: Option<&Watch>,
    changes: &Changes,
    progress: Option<&Reporter>,
) -> Result<Walked, CheckpointError> {
    let mut rules = Rules::none();
    if let Some(gi) = global.filter(|g| !g.is_empty()) {
        // Read once per store: the same for every walk.
        rules = rules.with(0, b"global excludes", Some(gi));
    }
    if let Ok(Some((dir, name))) = root.parent_nofollow(Path::new(".git/info/exclude")) {
        if let Some(bytes) = read_ignore_bytes(&dir, &name) {
            let gi = parse_ignore(&bytes).map(Arc::new);
            rules = rules.with(0, &bytes, gi.as_ref());
        }
    }
    let old_trusted = match &memo {
        Some(m) => m.trusted_count(),
        None => flat.map.len() as u64,
    };
    let scoped = match changes {
        Changes::Dirs(d) if memo.is_some() => Some(d),
        _ => None,
    };
    let shared = Mutex::new(std::mem::take(known));
    let cx = Ctx {
        objects,
        cfg,
        flat,
        known: &shared,
        now: now_ns(),
        parallel: pool.is_some(),
        watch,
        changes: scoped,
        // Only a whole walk takes long enough to tell.
        progress: progress.filter(|_| scoped.is_none()),
    };
    let mut out = Out::default();
    out.stats.whole = cx.changes.is_none();
    let r = match pool {
        Some(p) => p.install(|| cx.dir(root, &[], memo, &rules, false, &mut out)),
        None => cx.dir(root, &[], memo, &rules, false, &mut out),
    };
    *known = shared.into_inner().unwrap_or_default();
    let memo = r?;
    let root_id = match memo.tree {
        Some(id) => id,
        None => tree::write(objects, &[])?.0,
    };
    Ok(Walked {
        root: root_id,
        memo,
        cache_changed: out.fresh > 0 || out.trusted != old_trusted,
        stats: out.stats,
    })
}

/// Whether `name` in the directory `rel` is `.claude/worktrees`: the worktrees of background
/// sessions (`claude --bg --worktree`) are their own checkouts, not the project's files.
pub fn is_worktrees(rel: &[u8], name: &[u8]) -> bool {
    rel == b".claude" && name == b"worktrees"
}

/// The walk's thread pool of `threads` threads, one for the whole process (every project's store
/// shares it: 32 open projects do not make 32 pools).
pub(super) fn shared_pool(threads: usize) -> Option<std::sync::Arc<rayon::ThreadPool>> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let mut pools = POOLS.get_or_init(Default::default).lock().ok()?;
    if let Some(p) = pools.get(&threads) {
        return Some(p.clone());
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("checkpoint-walk-{i}"))
        // A thread waiting for a subdirectory runs others on its stack: deep trees.
        .stack_size(16 << 20)
        .build()
        .ok()?;
    let pool = Arc::new(pool);
    pools.insert(threads, pool.clone());
    Some(pool)
}

#[cfg(test)]
mod pool_tests {
    #[test]
    fn every_store_of_the_process_shares_one_walk_pool() {
        let a = super::shared_pool(3).unwrap();
        let b = super::shared_pool(3).unwrap();
        assert!(std::sync::Arc::ptr_eq(&a, &b));
        assert_eq!(a.current_num_threads(), 3);
    }
}
