//! One file of the person's project as the editor's own features read and write it (the review
//! of Claude's changes puts a hunk back, removes a file Claude created, restores one it
//! deleted): every directory on the way is opened beneath the project root without following a
//! symbolic link, only a regular file is read or replaced, and a replacement is a temp file
//! beside it, fsynced and renamed over it, keeping its mode. A directory swapped for a link
//! between two operations is refused at the next one, never written through: nothing is
//! checked by path and then opened by name.

use super::write::Replace;
use super::{read_capped_from, split_parent, CapDir, CapError, EntryType};
use std::path::{Path, PathBuf};

/// The most bytes of one file read or written here.
pub const PROJECT_FILE_LIMIT: u64 = 32 << 20;

/// A file of a project: its root's handle and its path relative to it.
#[derive(Debug)]
pub struct ProjectFile {
    root: CapDir,
    rel: PathBuf,
    limit: u64,
}

impl ProjectFile {
    /// `path` (absolute, or relative to `root`) must name a file inside `root` lexically; links
    /// are looked at only while the operations walk to it, one directory at a time.
    pub fn open(root: &Path, path: &str) -> Result<ProjectFile, CapError> {
        let cap = CapDir::open_root(root)?;
        // An absolute path under the root as the person spelled it (before the root's own links
        // were resolved) is taken relative to it.
        let p = Path::new(path);
        let rel = match p.strip_prefix(root) {
            Ok(r) if p.is_absolute() && !r.as_os_str().is_empty() => {
                cap.rel(&r.to_string_lossy())?
            }
            _ => cap.rel(path)?,
        };
        if rel == Path::new(".") {
            return Err(CapError::NotRegular {
                path: cap.display(&rel),
                kind: "a directory",
            });
        }
        Ok(ProjectFile {
            root: cap,
            rel,
            limit: PROJECT_FILE_LIMIT,
        })
    }

    /// The same file with another size cap (for tests and callers with a smaller budget).
    pub fn with_limit(mut self, limit: u64) -> ProjectFile {
        self.limit = limit;
        self
    }

    /// The file's absolute path, for messages.
    pub fn path(&self) -> PathBuf {
        self.root.display(&self.rel)
    }

    /// The directory holding the file (opened without following a link) and the file's name;
    /// `None` when a directory on the way does not exist.
    fn parent(&self) -> Result<Option<(CapDir, PathBuf)>, CapError> {
        self.root.parent_nofollow(&self.rel)
    }

    /// The file's bytes; `None` when it does not exist. A symlink (the file or a directory on
    /// the way), a FIFO, socket or device, or more than the cap is refused; a FIFO is never
    /// opened.
    pub fn read(&self) -> Result<Option<Vec<u8>>, CapError> {
        let Some((dir, name)) = self.parent()? else {
            return Ok(None);
        };
        match dir.stat_nofollow(&name) {
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(e),
            Ok((EntryType::File, st)) if st.size > self.limit => {
                return Err(self.too_large());
            }
            Ok((EntryType::File, _)) => {}
            Ok((EntryType::Symlink, _)) => {
                return Err(CapError::LinkInRead {
                    link: self.path(),
                    target: dir.read_link_nofollow(&name).unwrap_or_default(),
                })
            }
            Ok((EntryType::Dir, _)) => return Err(self.not_regular("a directory")),
            Ok((EntryType::Special, _)) => return Err(self.not_regular("a FIFO, socket or device")),
        }
        // The descriptor decides (the entry may have been swapped since the stat).
        let (file, meta) = dir.open_file_nofollow(&name)?;
        if meta.len() > self.limit {
            return Err(self.too_large());
        }
        read_capped_from(file, self.limit)
            .map(Some)
            .map_err(|e| match e {
                None => self.too_large(),
                Some(err) => CapError::Io {
                    what: "read",
                    path: self.path(),
                    err,
                },
            })
    }

    /// Replaces the existing regular file with `bytes` atomically, keeping its mode (execute
    /// bits too). With `expect`, only when it holds exactly those bytes now (what the caller
    /// built `bytes` from): a file changed meanwhile is not overwritten.
    pub fn replace(&self, bytes: &[u8], expect: Option<&[u8]>) -> Result<(), CapError> {
        self.check_size(bytes)?;
        let Some((dir, name)) = self.parent()? else {
            return Err(CapError::NotFound { path: self.path() });
        };
        self.root
            .replace_in(
                &dir,
                &name,
                &self.rel,
                bytes,
                Replace {
                    durable: true,
                    mode_mask: 0o7777,
                    must_exist: true,
                    expect,
                    private: false,
                },
            )
            .map(|_| ())
    }

    /// Creates the file with `bytes` (and the directories on the way, never through a link);
    /// refused when anything is there already.
    pub fn create(&self, bytes: &[u8]) -> Result<(), CapError> {
        self.check_size(bytes)?;
        if split_parent(&self.rel).is_none() {
            return Err(self.not_regular("a directory"));
        }
        if self.root.write_new(&self.rel, bytes)? {
            Ok(())
        } else {
            Err(CapError::Io {
                what: "create",
                path: self.path(),
                err: std::io::Error::new(std::io::ErrorKind::AlreadyExists, "it exists"),
            })
        }
    }

    /// Removes the regular file (never a link, a directory or anything else). With `expect`,
    /// only when it holds exactly those bytes now.
    pub fn remove(&self, expect: Option<&[u8]>) -> Result<(), CapError> {
        let Some((dir, name)) = self.parent()? else {
            return Err(CapError::NotFound { path: self.path() });
        };
        match dir.stat_nofollow(&name)? {
            (EntryType::File, _) => {}
            (EntryType::Symlink, _) => {
                return Err(CapError::LinkInWrite {
                    link: self.path(),
                    target: dir.read_link_nofollow(&name).unwrap_or_default(),
                })
            }
            (EntryType::Dir, _) => return Err(self.not_regular("a directory")),
            (EntryType::Special, _) => return Err(self.not_regular("a FIFO, socket or device")),
        }
        if let Some(expect) = expect {
            let (file, _) = dir.open_file_nofollow(&name).map_err(CapError::for_write)?;
            let same =
                matches!(read_capped_from(file, expect.len() as u64), Ok(now) if now == expect);
            if !same {
                return Err(CapError::Changed { path: self.path() });
            }
        }
        dir.remove_file_nofollow(&name).map(|_| ())
    }

    fn check_size(&self, bytes: &[u8]) -> Result<(), CapError> {
        if bytes.len() as u64 > self.limit {
            return Err(self.too_large());
        }
        Ok(())
    }

    fn too_large(&self) -> CapError {
        CapError::TooLarge {
            path: self.path(),
            limit: self.limit,
        }
    }

    fn not_regular(&self, kind: &'static str) -> CapError {
        CapError::NotRegular {
            path: self.path(),
            kind,
        }
    }
}
