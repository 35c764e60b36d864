//! The write side of [`CapDir`]: directories created and files written without following a
//! symbolic link, atomically (a temp file renamed inside the same directory handle).

use super::{kind_of, split_parent, CapDir, CapError, Written};

/// The mode of a new file written in place of `old` (none: nothing was there): the old one's
/// without what `how.mode_mask` leaves out, or 0600 when `how.private`. Set before any byte is
/// written.
fn set_mode(
    f: &std::fs::File,
    old: Option<&cap_std::fs::Metadata>,
    how: &Replace<'_>,
) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use cap_std::fs::PermissionsExt as _;
        use std::os::unix::fs::PermissionsExt as _;
        if let Some(m) = old {
            let mode = m.permissions().mode() & how.mode_mask;
            f.set_permissions(std::fs::Permissions::from_mode(mode))?;
        }
        if how.private {
            f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
    }
    #[cfg(not(unix))]
    let _ = (f, old, how);
    Ok(())
}

/// How [`CapDir::replace_in`] writes.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Replace<'a> {
    /// fsync the data before the rename.
    pub durable: bool,
    /// The bits of the old file's mode the new one keeps.
    pub mode_mask: u32,
    /// Refuse when nothing is there.
    pub must_exist: bool,
    /// Refuse unless the file holds exactly these bytes now.
    pub expect: Option<&'a [u8]>,
    /// Readable and writable by its owner only (mode 0600), set before any byte is written.
    pub private: bool,
}
use cap_fs_ext::DirExt;
use cap_std::fs::OpenOptions;
use std::io::{ErrorKind, Write};
use std::path::{Component, Path, PathBuf};

impl CapDir {
    /// Opens (creating what is missing) the directory `rel`, never following a symbolic link:
    /// the directory reached is the one named, inside this one. Returns it and whether the
    /// last component was created.
    pub fn create_dir_all(&self, rel: &Path) -> Result<(CapDir, bool), CapError> {
        let mut cur = self.clone_handle()?;
        let mut created = false;
        let mut so_far = PathBuf::new();
        for c in rel.components() {
            let Component::Normal(name) = c else {
                if matches!(c, Component::CurDir) {
                    continue;
                }
                return Err(self.outside(&rel.to_string_lossy()));
            };
            so_far.push(name);
            created = false;
            let next = match cur.dir.open_dir_nofollow(name) {
                Ok(d) => d,
                Err(e) if e.kind() == ErrorKind::NotFound => {
                    match cur.dir.create_dir(name) {
                        Ok(()) => created = true,
                        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
                        Err(e) => return Err(self.map_err("create the directory", &so_far, e)),
                    }
                    cur.dir
                        .open_dir_nofollow(name)
                        .map_err(|e| self.nofollow_err(&cur, name.as_ref(), &so_far, e))?
                }
                Err(e) => return Err(self.nofollow_err(&cur, name.as_ref(), &so_far, e)),
            };
            cur = CapDir {
                dir: next,
                shown: self.display(&so_far),
                root: self.root.clone(),
            };
        }
        Ok((cur, created))
    }

    pub(super) fn nofollow_err(
        &self,
        parent: &CapDir,
        name: &Path,
        so_far: &Path,
        e: std::io::Error,
    ) -> CapError {
        if let Ok(m) = parent.dir.symlink_metadata(name) {
            if m.file_type().is_symlink() {
                let target = parent.dir.read_link_contents(name).unwrap_or_default();
                return CapError::LinkInWrite {
                    link: self.display(so_far),
                    target,
                };
            }
            if !m.is_dir() {
                return CapError::NotRegular {
                    path: self.display(so_far),
                    kind: "not a directory",
                };
            }
        }
        self.map_err("open the directory", so_far, e)
    }

    /// Writes `bytes` to `rel` atomically: parent directories are created (never through a
    /// symlink), a temp file is written in the parent's handle and renamed over the target.
    /// With `durable`, the data is fsynced before the rename.
    pub fn write_atomic(
        &self,
        rel: &Path,
        bytes: &[u8],
        durable: bool,
    ) -> Result<Written, CapError> {
        self.write_atomic_as(rel, bytes, durable, false)
    }

    /// [`Self::write_atomic`], the file readable by its owner only (mode 0600, set before any
    /// byte is written): for copies of what is private (Claude Code keeps conversations 0600).
    pub fn write_atomic_private(&self, rel: &Path, bytes: &[u8]) -> Result<Written, CapError> {
        self.write_atomic_as(rel, bytes, false, true)
    }

    fn write_atomic_as(
        &self,
        rel: &Path,
        bytes: &[u8],
        durable: bool,
        private: bool,
    ) -> Result<Written, CapError> {
        let (parent, name) = split_parent(rel).ok_or_else(|| CapError::NotRegular {
            path: self.display(rel),
            kind: "a directory",
        })?;
        let (dir, _) = self.create_dir_all(parent)?;
        self.replace_in(
            &dir,
            name,
            rel,
            bytes,
            Replace {
                durable,
                mode_mask: 0o666,
                private,
                ..Replace::default()
            },
        )
    }

    /// The temp file, write and rename of [`CapDir::write_atomic`] in `dir`, the directory of
    /// `rel` already opened (never through a link): `name` there must be a regular file or
    /// nothing (a symlink, directory, FIFO, socket or device is refused).
    pub(super) fn replace_in(
        &self,
        dir: &CapDir,
        name: &Path,
        rel: &Path,
        bytes: &[u8],
        how: Replace<'_>,
    ) -> Result<Written, CapError> {
        let old = match dir.dir.symlink_metadata(name) {
            Ok(m) => Some(m),
            Err(e) if e.kind() == ErrorKind::NotFound => None,
            Err(e) => return Err(self.map_err("write", rel, e)),
        };
        if let Some(m) = &old {
            let ft = m.file_type();
            if ft.is_symlink() {
                return Err(CapError::LinkInWrite {
                    link: self.display(rel),
                    target: dir.dir.read_link_contents(name).unwrap_or_default(),
                });
            }
            if ft.is_dir() {
                return Err(CapError::NotRegular {
                    path: self.display(rel),
                    kind: "a directory",
                });
            }
            if !ft.is_file() {
                return Err(CapError::NotRegular {
                    path: self.display(rel),
                    kind: kind_of(&ft),
                });
            }
        } else if how.must_exist {
            return Err(CapError::NotFound {
                path: self.display(rel),
            });
        }
        if let Some(expect) = how.expect {
            // What is there now must be what the caller built its text from.
            let (file, _) = dir.open_file_nofollow(name).map_err(CapError::for_write)?;
            let limit = expect.len() as u64;
            let same = matches!(super::read_capped_from(file, limit), Ok(now) if now == expect);
            if !same {
                return Err(CapError::Changed {
                    path: self.display(rel),
                });
            }
        }
        let (tmp_name, file) = dir.create_temp(name, self, rel)?;
        let result = (|| -> std::io::Result<()> {
            let mut f = file;
            set_mode(&f, old.as_ref(), &how)?;
            f.write_all(bytes)?;
            if how.durable {
                f.sync_all()?;
            }
            Ok(())
        })();
        if let Err(e) = result {
            let _ = dir.dir.remove_file(&tmp_name);
            return Err(self.map_err("write", rel, e));
        }
        if let Err(e) = dir.dir.rename(&tmp_name, &dir.dir, name) {
            let _ = dir.dir.remove_file(&tmp_name);
            return Err(self.map_err("write", rel, e));
        }
        Ok(Written {
            created: old.is_none(),
        })
    }

    /// Creates `rel` with `bytes` only when nothing is there yet (another writer's file is
    /// never replaced): written to a temp file, then linked into place. `Ok(false)` when
    /// something already existed.
    pub fn write_new(&self, rel: &Path, bytes: &[u8]) -> Result<bool, CapError> {
        let (parent, name) = split_parent(rel).ok_or_else(|| CapError::NotRegular {
            path: self.display(rel),
            kind: "a directory",
        })?;
        let (dir, _) = self.create_dir_all(parent)?;
        if dir.dir.symlink_metadata(name).is_ok() {
            return Ok(false);
        }
        let (tmp_name, mut file) = dir.create_temp(name, self, rel)?;
        let r = file.write_all(bytes).and_then(|_| file.sync_all());
        let r = r.and_then(|_| dir.dir.hard_link(&tmp_name, &dir.dir, name));
        let _ = dir.dir.remove_file(&tmp_name);
        match r {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(self.map_err("write", rel, e)),
        }
    }

    /// A new temp file next to `name` in this directory: created exclusively (never an existing
    /// file, never through a symlink) with `0666 & ~umask`.
    fn create_temp(
        &self,
        name: &Path,
        top: &CapDir,
        rel: &Path,
    ) -> Result<(PathBuf, std::fs::File), CapError> {
        let mut opts = OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use cap_std::fs::OpenOptionsExt;
            opts.mode(0o666);
        }
        top.with_temp_name(name, rel, "create a temp file for", |tmp| {
            self.dir.open_with(tmp, &opts).map(|f| f.into_std())
        })
    }

    /// Makes a new entry next to `name` with `make` under a fresh temp name
    /// (`.<name>.claude-context-<random>.tmp`), trying another while the name is taken (16
    /// tries); the name and what `make` gave. Errors name `rel` (under this, the top directory)
    /// and `what` was being done.
    pub(super) fn with_temp_name<T>(
        &self,
        name: &Path,
        rel: &Path,
        what: &'static str,
        mut make: impl FnMut(&Path) -> std::io::Result<T>,
    ) -> Result<(PathBuf, T), CapError> {
        let base: String = name.to_string_lossy().chars().take(64).collect();
        for _ in 0..16 {
            let mut rnd = [0u8; 6];
            let _ = getrandom::fill(&mut rnd);
            let suffix: String = rnd.iter().map(|b| format!("{b:02x}")).collect();
            let tmp = PathBuf::from(format!(".{base}.claude-context-{suffix}.tmp"));
            match make(&tmp) {
                Ok(made) => return Ok((tmp, made)),
                Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(self.map_err(what, rel, e)),
            }
        }
        Err(CapError::Io {
            what,
            path: self.display(rel),
            err: std::io::Error::new(ErrorKind::AlreadyExists, "no free temp name"),
        })
    }
}
