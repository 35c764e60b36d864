//! What the last walk found, kept in memory by the store ([`DirMemo`]): the next walk of the
//! same store starts from it (`scan.rs`), and the stat cache is written straight from it.

use super::object::ObjectId;
use super::statcache::{Cached, Encoder, StatCache};
use super::tree::FileState;
use crate::capfs::{EntryType, Stat};
use ignore::gitignore::Gitignore;
use std::sync::Arc;

/// What the last walk found in one directory, kept in memory so that the next walk of the same
/// store trusts what it can: a file whose `lstat` is the same and whose mtime was old enough is
/// not read, an entry the same rules ignored is not matched again, and a directory none of
/// whose entries changed keeps its tree id (not encoded, hashed or looked for on disk again).
/// Every entry is still listed and every file still `lstat`ed: a file's content can change
/// without its directory's mtime moving.
#[derive(Debug, Default)]
pub struct DirMemo {
    /// The directory's tree; `None` when nothing in it is kept (or it could not be listed).
    pub(super) tree: Option<ObjectId>,
    /// The hash of the ignore rules in force inside it ([`super::ignore_rules::Rules::sig`]).
    pub(super) rules: [u8; 32],
    /// The directory's own stat when it was listed, kept only when its mtime was old enough:
    /// the same stat next time means the same names (adding, removing or renaming an entry
    /// moves its directory's mtime), so the listing is not read again.
    pub(super) listed_at: Option<Stat>,
    /// The directory's device and inode when it was walked: another directory at the same
    /// path later (renamed over it, a new one) is walked whole.
    pub(super) ident: Option<(u64, u64)>,
    /// How many deltas its tree is stored as ([`super::tree::put_tree`]).
    pub(super) depth: u8,
    /// Its own `.gitignore`: the bytes read and their rules (`None`: no rules in them).
    pub(super) own_ignore: Option<(Vec<u8>, Option<Arc<Gitignore>>)>,
    /// Its entries, sorted by name.
    pub(super) entries: Vec<Seen>,
    /// How many trusted files it holds, subdirectories included.
    pub(super) trusted: u64,
}

#[derive(Debug)]
pub(super) struct Seen {
    pub(super) name: Vec<u8>,
    /// The entry's type in the listing.
    pub(super) listed: EntryType,
    /// What it is in the directory's tree (`None`: not in it).
    pub(super) kept: Option<FileState>,
    pub(super) what: What,
}

#[derive(Debug)]
pub(super) enum What {
    /// Ignored by the rules in force.
    Ignored,
    /// Skipped (a FIFO, socket or device; unreadable) or already described by `kept` (a link,
    /// a file over the cap): looked at again next time.
    Other,
    /// A regular file read or found in the cache; `trusted` when its mtime was old enough that
    /// the same `lstat` next time means the same content.
    File {
        stat: Stat,
        trusted: bool,
    },
    Dir(Box<DirMemo>),
}

impl DirMemo {
    /// How many trusted files it holds.
    pub fn trusted_count(&self) -> u64 {
        self.trusted
    }

    /// The stat cache this memo holds: every trusted file, by its path from the root.
    pub fn to_stat_cache(&self) -> StatCache {
        let mut cache = StatCache::default();
        let mut path = Vec::new();
        self.each_trusted(&mut path, &mut |p, c| {
            cache.map.insert(p.into(), c);
        });
        cache
    }

    /// The bytes of [`Self::to_stat_cache`], written straight from the memo.
    pub fn encode_stat_cache(&self) -> Vec<u8> {
        let mut e = Encoder::with_capacity(self.trusted_count() as usize);
        let mut path = Vec::with_capacity(256);
        self.each_trusted(&mut path, &mut |p, c| e.push(p, &c));
        e.finish()
    }

    fn each_trusted(&self, path: &mut Vec<u8>, f: &mut dyn FnMut(&[u8], Cached)) {
        let base = path.len();
        for e in &self.entries {
            path.truncate(base);
            if base > 0 {
                path.push(b'/');
            }
            path.extend_from_slice(&e.name);
            match (&e.what, e.kept) {
                (
                    What::File {
                        stat,
                        trusted: true,
                    },
                    Some(k),
                ) => f(path, Cached::new(stat, k.id)),
                (What::Dir(m), _) => m.each_trusted(path, f),
                _ => {}
            }
        }
        path.truncate(base);
    }

    /// Forgets every tree id (a collection deleted objects they may name); the files' stats
    /// stay, checked by the caller.
    pub fn forget_trees_and(&mut self, drop_file: &dyn Fn(&ObjectId) -> bool) {
        self.tree = None;
        self.trusted = 0;
        for e in &mut self.entries {
            match &mut e.what {
                What::Dir(m) => {
                    m.forget_trees_and(drop_file);
                    e.kept = None;
                    self.trusted += m.trusted;
                }
                What::File { trusted, .. } => {
                    if e.kept.is_some_and(|k| drop_file(&k.id)) {
                        *trusted = false;
                    }
                    self.trusted += u64::from(*trusted);
                }
                _ => {}
            }
        }
    }
}
