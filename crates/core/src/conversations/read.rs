//! One conversation file read for a listing, through `capfs`, within a cap, cached by what a
//! `stat` says of it (size, modification time, inode): an unchanged file is never read again.

use super::parse::Meta;
use crate::capfs::{stat_of_file, Stat};
use crate::capfs::{CapDir, CapError};
use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// A file up to this size is read whole for a listing.
pub const WHOLE: u64 = 8 << 20;
/// Of a larger one, its first bytes …
pub const HEAD: u64 = 512 << 10;
/// … and its last.
pub const TAIL: u64 = 2 << 20;

/// What a listing knows of one file: what a `stat` said and what it holds.
#[derive(Debug, Clone)]
pub struct Read1 {
    pub stat: Stat,
    pub meta: Arc<Meta>,
}

fn cache() -> &'static Mutex<HashMap<PathBuf, Read1>> {
    static C: OnceLock<Mutex<HashMap<PathBuf, Read1>>> = OnceLock::new();
    C.get_or_init(Default::default)
}

/// The cached facts of `path` when its `stat` is still `stat`.
pub fn cached(path: &Path, stat: &Stat) -> Option<Read1> {
    let c = cache().lock().unwrap_or_else(|p| p.into_inner());
    c.get(path).filter(|r| same(&r.stat, stat)).cloned()
}

/// Remembers what `path` held.
pub fn remember(path: PathBuf, r: Read1) {
    let mut c = cache().lock().unwrap_or_else(|p| p.into_inner());
    c.insert(path, r);
}

/// Forgets every cached file of folder `dir` not in `keep`.
pub fn prune(dir: &Path, keep: &std::collections::HashSet<PathBuf>) {
    let mut c = cache().lock().unwrap_or_else(|p| p.into_inner());
    c.retain(|p, _| p.parent() != Some(dir) || keep.contains(p));
}

fn same(a: &Stat, b: &Stat) -> bool {
    a.size == b.size && a.mtime_ns == b.mtime_ns && a.ino == b.ino && a.dev == b.dev
}

/// Reads the file `name` of `dir` (a regular file, never a link, never waited on): whole up to
/// [`WHOLE`] bytes, else its head and tail. Returns its stat (of the open file) and its facts.
pub fn read(dir: &CapDir, name: &Path) -> Result<Read1, CapError> {
    let (mut file, meta) = dir.open_file_nofollow(name)?;
    let stat = stat_of_file(&meta);
    let io = |err| CapError::Io {
        what: "read",
        path: dir.display(name),
        err,
    };
    let m = if stat.size <= WHOLE {
        let mut buf = Vec::with_capacity(stat.size as usize + 1);
        (&mut file).take(WHOLE).read_to_end(&mut buf).map_err(io)?;
        Meta::read(&buf, &[])
    } else {
        let mut head = Vec::new();
        (&mut file).take(HEAD).read_to_end(&mut head).map_err(io)?;
        file.seek(SeekFrom::Start(stat.size - TAIL)).map_err(io)?;
        let mut tail = Vec::new();
        (&mut file).take(TAIL).read_to_end(&mut tail).map_err(io)?;
        // From the first whole line.
        let from = memchr::memchr(b'\n', &tail).map_or(tail.len(), |i| i + 1);
        Meta {
            partial: true,
            ..Meta::read(&head, &tail[from..])
        }
    };
    Ok(Read1 {
        stat,
        meta: Arc::new(m),
    })
}

/// Reads at most `limit` bytes of the file `name` of `dir` (for a search); whether it was cut.
pub fn read_capped(dir: &CapDir, name: &Path, limit: u64) -> Result<(Vec<u8>, bool), CapError> {
    let (file, meta) = dir.open_file_nofollow(name)?;
    let mut buf = Vec::with_capacity(meta.len().min(limit) as usize + 1);
    file.take(limit)
        .read_to_end(&mut buf)
        .map_err(|err| CapError::Io {
            what: "read",
            path: dir.display(name),
            err,
        })?;
    Ok((buf, meta.len() > limit))
}
