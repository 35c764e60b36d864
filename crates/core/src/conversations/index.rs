//! The listing's cache kept on disk between editor sessions (`<cache dir>/claude-context/
//! conversations.json`): what each file held, by its path and what its `stat` said (size,
//! modification time, inode, device). A new editor's first listing takes from it every file
//! whose `stat` still says the same (reading none of them), and reads only the others. Written
//! atomically through `capfs` after a listing read files, mode 0600 (it holds titles and
//! prompts, which Claude Code keeps 0600); read without following a link or
//! waiting on a FIFO. A damaged or foreign file is ignored: the files are read again.

use super::parse::Meta;
use super::read::{self, Read1};
use crate::capfs::{read_untrusted_file, CapDir, Stat};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The index's file, in the cache folder given.
pub const FILE: &str = "claude-context/conversations.json";
/// The largest index read (about 20,000 conversations).
const LIMIT: u64 = 32 << 20;
/// The index's format; another is ignored.
const VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Index {
    version: u32,
    files: Vec<Entry>,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    /// The file's path, its bytes.
    path: Vec<u8>,
    size: u64,
    mtime_ns: i64,
    ino: u64,
    dev: u64,
    meta: Meta,
}

#[cfg(unix)]
fn path_bytes(p: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    p.as_os_str().as_bytes().to_vec()
}

#[cfg(unix)]
fn bytes_path(b: Vec<u8>) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    PathBuf::from(std::ffi::OsString::from_vec(b))
}

#[cfg(not(unix))]
fn path_bytes(p: &Path) -> Vec<u8> {
    p.to_string_lossy().into_owned().into_bytes()
}

#[cfg(not(unix))]
fn bytes_path(b: Vec<u8>) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(&b).into_owned())
}

/// Puts what the index in `cache_dir` holds into the listing's cache, once per process and
/// folder (later listings have it in memory).
pub fn load(cache_dir: &Path) {
    static LOADED: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    let mut loaded = LOADED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if !loaded.insert(cache_dir.to_path_buf()) {
        return;
    }
    drop(loaded);
    let Ok((bytes, _)) = read_untrusted_file(&cache_dir.join(FILE), LIMIT) else {
        return;
    };
    let Ok(index) = serde_json::from_slice::<Index>(&bytes) else {
        return;
    };
    if index.version != VERSION {
        return;
    }
    for e in index.files {
        let stat = Stat {
            size: e.size,
            mtime_ns: e.mtime_ns,
            ino: e.ino,
            dev: e.dev,
            ..Stat::default()
        };
        let path = bytes_path(e.path);
        if read::cached(&path, &stat).is_none() {
            let meta = Arc::new(e.meta);
            read::remember(
                path,
                Read1 {
                    stat,
                    meta,
                    lite: false,
                    serial: 0,
                },
            );
        }
    }
}

/// Writes the listing's cache (the files read whole) as the index in `cache_dir`, atomically.
pub fn save(cache_dir: &Path) -> Result<(), crate::capfs::CapError> {
    let files = read::entries()
        .into_iter()
        .filter(|(_, r)| !r.lite)
        .map(|(path, r)| Entry {
            path: path_bytes(&path),
            size: r.stat.size,
            mtime_ns: r.stat.mtime_ns,
            ino: r.stat.ino,
            dev: r.stat.dev,
            meta: (*r.meta).clone(),
        })
        .collect();
    let index = Index {
        version: VERSION,
        files,
    };
    let bytes = serde_json::to_vec(&index).unwrap_or_default();
    // Titles and prompts: as private as Claude Code's own files (0600).
    CapDir::open_root(cache_dir)?.write_atomic_private(Path::new(FILE), &bytes)?;
    Ok(())
}
