//! One conversation file read for a listing, through `capfs`, within a cap, cached by what a
//! `stat` says of it (size, modification time, inode): an unchanged file is never read again.
//!
//! A file seen for the first time is read quickly ([`lite`]: its first and last [`LITE`] bytes,
//! where the CLI keeps what a listing shows: it appends its title, last prompt and cost records
//! again at the end), then whole later, off the listing's path ([`complete_later`]): only the
//! count of prompts needs the middle.

use super::parse::Meta;
use crate::capfs::{stat_of_file, Stat};
use crate::capfs::{CapDir, CapError};
use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// A file up to this size is read whole for a listing.
pub const WHOLE: u64 = 8 << 20;
/// Of a larger one, its first bytes …
pub const HEAD: u64 = 512 << 10;
/// … and its last.
pub const TAIL: u64 = 2 << 20;

/// A file seen for the first time: up to twice this size it is read whole, else this much of
/// its start and of its end ([`lite`]).
pub const LITE: u64 = 64 << 10;

/// What a listing knows of one file: what a `stat` said and what it holds.
#[derive(Debug, Clone)]
pub struct Read1 {
    pub stat: Stat,
    pub meta: Arc<Meta>,
    /// Read by its head and tail only, to be read whole later ([`complete_later`]).
    pub lite: bool,
    /// Which remembering this is: each [`remember`] gives a number of its own, so two listings
    /// that saw the same numbers saw the same facts ([`super::since`]).
    pub serial: u64,
}

/// What the listing knows of each file, by folder, then by file name (a folder's path is hashed
/// once per listing, not once per file).
type Cache = HashMap<PathBuf, Folder>;
/// What the listing knows of the files of one folder, by name.
pub type Folder = HashMap<OsString, Read1>;

fn cache() -> &'static Mutex<Cache> {
    static C: OnceLock<Mutex<Cache>> = OnceLock::new();
    C.get_or_init(Default::default)
}

fn split(path: &Path) -> Option<(&Path, &OsStr)> {
    Some((path.parent()?, path.file_name()?))
}

/// The cached facts of `path` when its `stat` is still `stat`.
pub fn cached(path: &Path, stat: &Stat) -> Option<Read1> {
    let (dir, name) = split(path)?;
    let c = cache().lock().unwrap_or_else(|p| p.into_inner());
    c.get(dir)?
        .get(name)
        .filter(|r| same(&r.stat, stat))
        .cloned()
}

/// Runs `f` with what the listing knows of the files of folder `dir` (the cache locked: one
/// lookup of the folder for all of its files).
pub fn with_folder<R>(dir: &Path, f: impl FnOnce(Option<&Folder>) -> R) -> R {
    let c = cache().lock().unwrap_or_else(|p| p.into_inner());
    f(c.get(dir))
}

/// Whether what is cached of a file (`r`) is still what its `stat` says now.
pub fn fresh(r: &Read1, stat: &Stat) -> bool {
    same(&r.stat, stat)
}

/// Remembers what `path` held; returns it with its [`Read1::serial`].
pub fn remember(path: PathBuf, r: Read1) -> Read1 {
    static SERIAL: AtomicU64 = AtomicU64::new(1);
    let r = Read1 {
        serial: SERIAL.fetch_add(1, Ordering::Relaxed),
        ..r
    };
    let Some((dir, name)) = split(&path) else {
        return r;
    };
    let mut c = cache().lock().unwrap_or_else(|p| p.into_inner());
    c.entry(dir.to_path_buf())
        .or_default()
        .insert(name.to_os_string(), r.clone());
    r
}

/// Forgets every cached file of folder `dir` not in `keep` (file names).
pub fn prune(dir: &Path, keep: &std::collections::HashSet<&OsStr>) {
    let mut c = cache().lock().unwrap_or_else(|p| p.into_inner());
    if let Some(f) = c.get_mut(dir) {
        f.retain(|n, _| keep.contains(n.as_os_str()));
    }
}

fn same(a: &Stat, b: &Stat) -> bool {
    a.size == b.size && a.mtime_ns == b.mtime_ns && a.ino == b.ino && a.dev == b.dev
}

/// Reads the file `name` of `dir` (a regular file, never a link, never waited on): whole up to
/// [`WHOLE`] bytes, else its head and tail. Returns its stat (of the open file) and its facts.
pub fn read(dir: &CapDir, name: &Path) -> Result<Read1, CapError> {
    read_within(dir, name, WHOLE, HEAD, TAIL)
}

/// Reads the file `name` of `dir` as [`read`] does, but up to `2 ×` [`LITE`] bytes whole, else
/// its first and last [`LITE`] bytes (`lite` then: [`complete_later`] reads it whole).
pub fn lite(dir: &CapDir, name: &Path) -> Result<Read1, CapError> {
    let r = read_within(dir, name, 2 * LITE, LITE, LITE)?;
    Ok(Read1 {
        lite: r.meta.partial,
        ..r
    })
}

/// Reads the file `name` of `dir`: whole up to `whole` bytes, else its first `head` and last
/// `tail` bytes (`partial`).
fn read_within(
    dir: &CapDir,
    name: &Path,
    whole: u64,
    head: u64,
    tail: u64,
) -> Result<Read1, CapError> {
    let (mut file, meta) = dir.open_file_nofollow(name)?;
    let stat = stat_of_file(&meta);
    let io = |err| CapError::Io {
        what: "read",
        path: dir.display(name),
        err,
    };
    let m = if stat.size <= whole {
        let mut buf = Vec::with_capacity(stat.size as usize + 1);
        (&mut file).take(whole).read_to_end(&mut buf).map_err(io)?;
        Meta::read(&buf, &[])
    } else {
        let mut start = Vec::with_capacity(head as usize);
        (&mut file).take(head).read_to_end(&mut start).map_err(io)?;
        file.seek(SeekFrom::Start(stat.size - tail)).map_err(io)?;
        let mut end = Vec::with_capacity(tail as usize);
        (&mut file).take(tail).read_to_end(&mut end).map_err(io)?;
        // From the first whole line.
        let from = memchr::memchr(b'\n', &end).map_or(end.len(), |i| i + 1);
        Meta {
            partial: true,
            ..Meta::read(&start, &end[from..])
        }
    };
    Ok(Read1 {
        stat,
        meta: Arc::new(m),
        lite: false,
        serial: 0,
    })
}

/// Every file the cache knows, with what it holds.
pub fn entries() -> Vec<(PathBuf, Read1)> {
    let c = cache().lock().unwrap_or_else(|p| p.into_inner());
    c.iter()
        .flat_map(|(d, f)| f.iter().map(|(n, r)| (d.join(n), r.clone())))
        .collect()
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
