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

/// Tells how far a walk got (directories and files so far), at most once every `every`.
pub struct Reporter<'a> {
    tell: &'a (dyn Fn(u64, u64) + Sync),
    every: std::time::Duration,
    next: Mutex<std::time::Instant>,
    dirs: std::sync::atomic::AtomicU64,
    files: std::sync::atomic::AtomicU64,
}

impl<'a> Reporter<'a> {
    pub fn new(tell: &'a (dyn Fn(u64, u64) + Sync), every: std::time::Duration) -> Reporter<'a> {
        Reporter {
            tell,
            every,
            next: Mutex::new(std::time::Instant::now() + every),
            dirs: Default::default(),
            files: Default::default(),
        }
    }

    /// One more directory of `files` entries walked.
    fn tick(&self, files: u64) {
        use std::sync::atomic::Ordering::Relaxed;
        let dirs = self.dirs.fetch_add(1, Relaxed) + 1;
        let files = self.files.fetch_add(files, Relaxed) + files;
        let now = std::time::Instant::now();
        let due = match self.next.try_lock() {
            Ok(mut next) if now >= *next => {
                *next = now + self.every;
                true
            }
            _ => false,
        };
        if due {
            (self.tell)(dirs, files);
        }
    }
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
        let base = old.tree.map(|id| Base {
            id,
            depth: old.depth,
            entries: old
                .entries
                .iter()
                .filter_map(|e| e.kept.map(|k| (e.name.clone(), k)))
                .collect(),
        });
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
        let mut changed = !known_before || old.tree.is_none();
        let mut olds = std::mem::take(&mut old.entries).into_iter().peekable();
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
                        if matches!(p.what, What::File { trusted: true, .. }) {
                            out.trusted += 1;
                        }
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
        if let Some(p) = self.progress {
            p.tick(
                entries
                    .iter()
                    .filter(|e| e.listed != EntryType::Dir)
                    .count() as u64,
            );
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

    /// Walks the subdirectories `subdirs` of `dir` (whose path prefix is `prefix`), on the
    /// pool's threads when there is one, and notes their trees in `entries`: whether one changed.
    fn subdirs(
        &self,
        dir: &CapDir,
        prefix: &[u8],
        below: &Below,
        entries: &mut [Seen],
        subdirs: Vec<Subdir>,
        out: &mut Out,
    ) -> Result<bool, CheckpointError> {
        let subdirs = self.skip_unchanged(dir, prefix, below, entries, subdirs, out);
        let walk_sub = |(at, old_sub, _): Subdir| {
            let mut sub_out = Out::default();
            let name = &entries[at].name;
            let r = match dir.open_subdir_nofollow(as_path(name).as_ref()) {
                Ok(sub) => {
                    let sub_rel = join_rel(prefix, name);
                    self.dir(
                        &sub,
                        &sub_rel,
                        old_sub,
                        below.rules,
                        below.force,
                        &mut sub_out,
                    )
                    .map(Some)
                }
                Err(_) => {
                    sub_out.stats.unreadable += 1;
                    Ok(None)
                }
            };
            r.map(|m| (at, m, sub_out))
        };
        let prev_kepts: Vec<(usize, Option<FileState>)> =
            subdirs.iter().map(|(at, _, k)| (*at, *k)).collect();
        let results: Vec<Result<_, CheckpointError>> = if self.parallel && subdirs.len() > 1 {
            subdirs.into_par_iter().map(walk_sub).collect()
        } else {
            subdirs.into_iter().map(walk_sub).collect()
        };
        let mut changed = false;
        for (r, (_, prev_kept)) in results.into_iter().zip(prev_kepts) {
            let (at, memo, sub_out) = r?;
            out.add(sub_out);
            let e = &mut entries[at];
            if let Some(m) = memo {
                e.kept = m.tree.map(|id| FileState {
                    kind: Kind::Dir,
                    size: 0,
                    id,
                });
                e.what = What::Dir(Box::new(m));
            }
            changed |= e.kept != prev_kept;
        }
        Ok(changed)
    }

    /// Of `subdirs`, those to walk: the others (no event in or beneath them, the same
    /// directory as remembered, the same rules) keep what the last walk found, put back in
    /// `entries` as it was.
    fn skip_unchanged(
        &self,
        dir: &CapDir,
        prefix: &[u8],
        below: &Below,
        entries: &mut [Seen],
        subdirs: Vec<Subdir>,
        out: &mut Out,
    ) -> Vec<Subdir> {
        let Some(changes) = below.scoped.filter(|_| !below.force) else {
            return subdirs;
        };
        let mut walk = Vec::with_capacity(subdirs.len());
        for (at, old_sub, prev_kept) in subdirs {
            let e = &mut entries[at];
            let keep = match &old_sub {
                Some(m) if !changes.wanted(&join_rel(prefix, &e.name)) => {
                    // The same directory as the one remembered (its inode, without following).
                    match dir.stat_nofollow(as_path(&e.name).as_ref()) {
                        Ok((EntryType::Dir, st)) => m.ident == Some((st.dev, st.ino)),
                        _ => false,
                    }
                }
                _ => false,
            };
            match (keep, old_sub) {
                (true, Some(m)) => {
                    out.stats.dirs_skipped += 1;
                    out.trusted += m.trusted;
                    e.kept = prev_kept;
                    e.what = What::Dir(Box::new(m));
                }
                (_, old_sub) => walk.push((at, old_sub, prev_kept)),
            }
        }
        walk
    }

    /// The tree of a changed directory (at `rel`) holding `entries`, stored; none for an empty
    /// directory other than the root.
    fn tree(
        &self,
        rel: &[u8],
        entries: &[Seen],
        base: Option<Base>,
        out: &mut Out,
    ) -> Result<(Option<ObjectId>, u8), CheckpointError> {
        if !rel.is_empty() && !entries.iter().any(|e| e.kept.is_some()) {
            return Ok((None, 0));
        }
        let kept = || {
            entries
                .iter()
                .filter_map(|e| e.kept.as_ref().map(|k| (e.name.as_slice(), k)))
        };
        let bytes = tree::encode_parts(kept());
        let id = ObjectId::of_tree(&bytes);
        let new = match self.known.lock() {
            Ok(mut k) => k.insert(id),
            Err(_) => true,
        };
        if !new {
            // Stored before, as whatever it was: not a base for a delta.
            return Ok((Some(id), tree::MAX_DELTA_DEPTH));
        }
        let edits = base
            .as_ref()
            .map(|b| edits(&b.entries, kept()))
            .unwrap_or_default();
        let (n, depth) = tree::put_tree(
            self.objects,
            &id,
            &bytes,
            base.as_ref().map(|b| (&b.id, b.depth)),
            edits.iter().map(|(n, s)| (*n, *s)),
        )?;
        if n > 0 {
            out.stats.objects_written += 1;
            out.stats.bytes_written += n;
        }
        Ok((Some(id), depth))
    }
}

/// The path of `name` in the directory whose entries' paths start with `prefix`.
fn join_rel(prefix: &[u8], name: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(prefix.len() + name.len());
    p.extend_from_slice(prefix);
    p.extend_from_slice(name);
    p
}

/// The tree a directory had at the last walk: its id, how many deltas it is stored as, its
/// entries.
struct Base {
    id: ObjectId,
    depth: u8,
    entries: Vec<(Vec<u8>, FileState)>,
}

/// The changes from `old` to `new` (both sorted by name): each name set or removed.
fn edits<'a>(
    old: &'a [(Vec<u8>, FileState)],
    new: impl Iterator<Item = (&'a [u8], &'a FileState)>,
) -> Vec<tree::Edit<'a>> {
    let mut out = Vec::new();
    let mut old = old.iter().peekable();
    for (name, st) in new {
        while let Some((n, _)) = old.next_if(|(n, _)| n.as_slice() < name) {
            out.push((n.as_slice(), None));
        }
        match old.next_if(|(n, _)| n.as_slice() == name) {
            Some((_, was)) if was == st => {}
            _ => out.push((name, Some(st))),
        }
    }
    out.extend(old.map(|(n, _)| (n.as_slice(), None)));
    out
}

/// What a directory's subdirectories are walked with.
struct Below<'a> {
    /// The rules in force in the directory.
    rules: &'a Rules,
    /// Walk every subdirectory whole.
    force: bool,
    /// Only the directories with events changed (`None`: everything may have).
    scoped: Option<&'a Dirty>,
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

/// The entries of `dir` (at `rel`), sorted by name: the old ones when the listing is the same
/// (`same_listing`, their names taken from `old`), else listed again. `None`: not readable
/// (counted; an error for the root).
fn listing(
    dir: &CapDir,
    rel: &[u8],
    old: &mut DirMemo,
    same_listing: bool,
    out: &mut Out,
) -> Result<Option<Listing>, CheckpointError> {
    if same_listing {
        out.stats.dirs_unchanged += 1;
        return Ok(Some(
            old.entries
                .iter_mut()
                .map(|e| (std::mem::take(&mut e.name), e.listed))
                .collect(),
        ));
    }
    let listed = match dir.list_nofollow() {
        Ok(l) => l,
        Err(e) if rel.is_empty() => return Err(e.into()),
        Err(_) => {
            out.stats.unreadable += 1;
            return Ok(None);
        }
    };
    let mut listed: Listing = listed
        .into_iter()
        .map(|l| (l.name.into_encoded_bytes(), l.kind))
        .collect();
    listed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok(Some(listed))
}

/// The bytes and rules of the directory's own `.gitignore` (when `listed` has one), parsed
/// again only when its bytes differ from those of the walk before (`old`).
fn own_ignore(
    dir: &CapDir,
    listed: &[(Vec<u8>, EntryType)],
    old: &mut DirMemo,
) -> Option<(Vec<u8>, Option<Arc<Gitignore>>)> {
    let has_ignore = listed
        .iter()
        .any(|(n, k)| n == b".gitignore" && *k == EntryType::File);
    if !has_ignore {
        return None;
    }
    read_ignore_bytes(dir, Path::new(".gitignore")).map(|bytes| match old.own_ignore.take() {
        Some((b, gi)) if b == bytes => (b, gi),
        _ => {
            let gi = parse_ignore(&bytes).map(Arc::new);
            (bytes, gi)
        }
    })
}

/// The entry of the walk before named `name`: the next of `olds` when the listing is the same,
/// else found by name in the sorted `olds` (those passed by were removed: `changed` when one
/// was kept).
fn previous(
    olds: &mut std::iter::Peekable<std::vec::IntoIter<Seen>>,
    name: &[u8],
    same_listing: bool,
    changed: &mut bool,
) -> Option<Seen> {
    if same_listing {
        // The old entries are the listing, in its order.
        return olds.next();
    }
    while let Some(o) = olds.peek() {
        match o.name.as_slice().cmp(name) {
            std::cmp::Ordering::Less => {
                *changed |= olds.next().is_some_and(|o| o.kept.is_some());
            }
            std::cmp::Ordering::Equal => return olds.next(),
            std::cmp::Ordering::Greater => break,
        }
    }
    None
}

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
