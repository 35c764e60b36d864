//! The core files as read last, keyed by what identifies the file's version: its path, the
//! device and inode of the file opened, its size, and its modification and change times. A file
//! rewritten in place or replaced (an atomic write is a new inode) no longer matches and is read
//! again; a hit still costs the open and the `fstat` through the capability layer
//! ([`read_cached`]), never a read. A file changed within the last
//! [`SETTLE`] is not kept: a file system's clock is coarse (a tick of milliseconds, or whole
//! seconds on some), so a second write of the same size within one tick would keep the same
//! times. Bounded: only core files come here.

use super::document::{self, Document};
use crate::capfs::CapDir;
use std::collections::HashMap;
use std::path::Path;
use std::path::PathBuf;
use std::sync::{LazyLock, Mutex};
use std::time::SystemTime;

/// Entries kept (ten core files per bank: many banks' worth); past it the cache starts over.
const MAX_ENTRIES: usize = 256;

/// How long ago a file must have last changed for its times to tell its version.
pub const SETTLE: std::time::Duration = std::time::Duration::from_secs(2);

/// A file's version as opened.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    path: PathBuf,
    rel: String,
    size: u64,
    modified: Option<SystemTime>,
    /// Device, inode and change time (seconds, nanoseconds), where the platform tells them.
    id: (u64, u64, i64, i64),
}

impl Key {
    pub fn new(path: PathBuf, rel: &str, meta: &std::fs::Metadata) -> Key {
        #[cfg(unix)]
        let id = {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino(), meta.ctime(), meta.ctime_nsec())
        };
        #[cfg(not(unix))]
        let id = (0, 0, 0, 0);
        Key {
            path,
            rel: rel.to_string(),
            size: meta.len(),
            modified: meta.modified().ok(),
            id,
        }
    }

    /// Whether the file's last change (modification or change time) is older than [`SETTLE`].
    pub fn settled(&self) -> bool {
        let Some(modified) = self.modified else {
            return false;
        };
        let changed = u64::try_from(self.id.2)
            .ok()
            .map(|s| {
                SystemTime::UNIX_EPOCH
                    + std::time::Duration::new(s, u32::try_from(self.id.3).unwrap_or(0))
            })
            .map_or(modified, |c| c.max(modified));
        SystemTime::now()
            .duration_since(changed)
            .is_ok_and(|age| age >= SETTLE)
    }
}

static CACHE: LazyLock<Mutex<HashMap<Key, Document>>> = LazyLock::new(Mutex::default);

fn cache() -> std::sync::MutexGuard<'static, HashMap<Key, Document>> {
    CACHE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The document read for this version of the file, if it was read.
pub fn get(key: &Key) -> Option<Document> {
    cache().get(key).cloned()
}

/// Keeps `doc` as read for this version of the file (an older version of the same path goes).
pub fn put(key: Key, doc: &Document) {
    let mut c = cache();
    c.retain(|k, _| k.path != key.path);
    if c.len() >= MAX_ENTRIES {
        c.clear();
    }
    c.insert(key, doc.clone());
}

/// [`super::document::read`], answered from this cache when the file opened is the one read last time (same
/// device, inode, size, modification and change times, last changed a while ago): the core
/// files `read_context` returns at every call are opened and checked each time, and read again
/// only when they changed.
pub fn read_cached(
    dir: &CapDir,
    rel_path: &Path,
    rel: &str,
) -> Result<Document, document::ReadError> {
    let (f, meta) = document::open(dir, rel_path)?;
    let key = Key::new(dir.display(rel_path), rel, &meta);
    if let Some(doc) = get(&key) {
        return Ok(doc);
    }
    let doc = document::read_open(f, &meta, rel)?;
    if key.settled() {
        put(key, &doc);
    }
    Ok(doc)
}
