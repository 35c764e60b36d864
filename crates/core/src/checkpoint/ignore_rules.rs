//! The ignore rules a checkpoint's walk follows: `.gitignore` files read without following a
//! link (capped), parsed, and chained from the root down, each chain named by a hash of its
//! files' contents so that a directory whose rules did not change keeps its decisions.

use crate::capfs::{self, CapDir};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;
use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

/// The largest ignore file read (`.gitignore`, `.git/info/exclude`).
const IGNORE_FILE_LIMIT: u64 = 1 << 20;

pub(super) fn as_path(b: &[u8]) -> Cow<'_, Path> {
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

pub(crate) fn parse_ignore(bytes: &[u8]) -> Option<Gitignore> {
    let text = String::from_utf8_lossy(bytes);
    let mut b = GitignoreBuilder::new(".");
    for line in text.lines() {
        // An invalid pattern is skipped, as git does.
        let _ = b.add_line(None, line);
    }
    b.build().ok().filter(|g| !g.is_empty())
}

/// The bytes of an ignore file (`None`: unreadable, not a regular file, or over the limit).
pub(crate) fn read_ignore_bytes(dir: &CapDir, name: &Path) -> Option<Vec<u8>> {
    let (file, meta) = dir.open_file_nofollow(name).ok()?;
    if meta.len() > IGNORE_FILE_LIMIT {
        return None;
    }
    capfs::read_capped_from(file, IGNORE_FILE_LIMIT).ok()
}

/// The ignore rules in force in one directory: each ignore file's directory prefix length and
/// its rules, innermost last, and a hash naming exactly this list (the files' contents), so a
/// directory whose rules did not change keeps the decisions of the walk before.
#[derive(Clone)]
pub(crate) struct Rules {
    list: Arc<Vec<(usize, Arc<Gitignore>)>>,
    pub(super) sig: [u8; 32],
}

impl Rules {
    /// No rules (the start of every chain).
    pub(crate) fn none() -> Rules {
        Rules {
            list: Arc::new(Vec::new()),
            sig: [0; 32],
        }
    }

    pub(crate) fn ignored(&self, full: &[u8], is_dir: bool) -> bool {
        for (plen, gi) in self.list.iter().rev() {
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

    /// These rules and an ignore file's (`bytes`, parsed as `gi`) at prefix `plen`.
    pub(crate) fn with(&self, plen: usize, bytes: &[u8], gi: Option<&Arc<Gitignore>>) -> Rules {
        let mut h = blake3::Hasher::new();
        h.update(&self.sig);
        h.update(&(plen as u64).to_le_bytes());
        h.update(&(bytes.len() as u64).to_le_bytes());
        h.update(bytes);
        let mut list = self.list.clone();
        if let Some(gi) = gi {
            Arc::make_mut(&mut list).push((plen, gi.clone()));
        }
        Rules {
            list,
            sig: *h.finalize().as_bytes(),
        }
    }
}

impl std::fmt::Debug for Rules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rules")
            .field("files", &self.list.len())
            .finish()
    }
}
