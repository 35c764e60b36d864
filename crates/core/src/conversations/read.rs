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
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
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
    })
}

/// Every file the cache knows, with what it holds.
pub fn entries() -> Vec<(PathBuf, Read1)> {
    let c = cache().lock().unwrap_or_else(|p| p.into_inner());
    c.iter().map(|(p, r)| (p.clone(), r.clone())).collect()
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
