//! Operations on the names inside one directory handle that never follow a symbolic link: the
//! primitives a tree walk (listing, `lstat`, reading a file or a link) and a restore (writing,
//! linking, removing) are built of. A path given here is resolved one component at a time, each
//! directory opened with `O_NOFOLLOW` beneath the one before: a symlink anywhere on the way is
//! an entry to record, never a way out.

use super::{kind_of, CapDir, CapError};
use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::OpenOptions;
use std::ffi::OsString;
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

/// What a directory entry is, from the directory listing (`d_type`) or an `lstat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryType {
    File,
    Dir,
    Symlink,
    /// A FIFO, socket or device: never opened.
    Special,
}

/// One entry of a directory listing.
#[derive(Debug, Clone)]
pub struct Listed {
    pub name: OsString,
    pub kind: EntryType,
}

/// What an `lstat` of one entry says; enough to tell an unchanged file from a changed one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stat {
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub ino: u64,
    pub dev: u64,
    /// Any execute bit set (Unix).
    pub executable: bool,
}

fn entry_type(ft: &cap_std::fs::FileType) -> EntryType {
    if ft.is_symlink() {
        EntryType::Symlink
    } else if ft.is_dir() {
        EntryType::Dir
    } else if ft.is_file() {
        EntryType::File
    } else {
        EntryType::Special
    }
}

/// What a [`Stat`] is made of, from `std::fs` and `cap_std::fs` metadata alike.
trait ToStat {
    fn to_stat(&self) -> Stat;
}

/// Implements [`ToStat`] for a metadata type with the given `MetadataExt`; `to_std` makes its
/// `SystemTime` the standard library's (off Unix only).
macro_rules! to_stat {
    ($ty:ty, $ext:path, $to_std:expr) => {
        impl ToStat for $ty {
            fn to_stat(&self) -> Stat {
                let m = self;
                #[cfg(unix)]
                {
                    use $ext as _;
                    Stat {
                        size: m.len(),
                        mtime_ns: m.mtime().saturating_mul(1_000_000_000) + m.mtime_nsec(),
                        ctime_ns: m.ctime().saturating_mul(1_000_000_000) + m.ctime_nsec(),
                        ino: m.ino(),
                        dev: m.dev(),
                        executable: m.mode() & 0o111 != 0,
                    }
                }
                #[cfg(not(unix))]
                {
                    let ns = |t: std::io::Result<_>| {
                        t.ok()
                            .map($to_std)
                            .and_then(|t: std::time::SystemTime| {
                                t.duration_since(std::time::UNIX_EPOCH).ok()
                            })
                            .map(|d| d.as_nanos() as i64)
                            .unwrap_or(0)
                    };
                    Stat {
                        size: m.len(),
                        mtime_ns: ns(m.modified()),
                        ctime_ns: ns(m.created()),
                        ino: 0,
                        dev: 0,
                        executable: false,
                    }
                }
            }
        }
    };
}
to_stat!(
    cap_std::fs::Metadata,
    cap_std::fs::MetadataExt,
    cap_std::time::SystemTime::into_std
);
to_stat!(
    std::fs::Metadata,
    std::os::unix::fs::MetadataExt,
    std::convert::identity
);

/// The `Stat` of an open file (its descriptor, not a path).
pub fn stat_of_file(m: &std::fs::Metadata) -> Stat {
    m.to_stat()
}

/// The plain name components of `rel` (`.` dropped); `..`, a root or a prefix is refused.
fn names(top: &CapDir, rel: &Path) -> Result<Vec<OsString>, CapError> {
    let mut out = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => out.push(n.to_os_string()),
            Component::CurDir => {}
            _ => return Err(top.outside(&rel.to_string_lossy())),
        }
    }
    Ok(out)
}

impl CapDir {
    /// The entries of this directory (without `.` and `..`), their kind from the listing itself
    /// (an `lstat` where the file system does not say). Nothing is followed or opened.
    pub fn list_nofollow(&self) -> Result<Vec<Listed>, CapError> {
        let rd = self
            .dir
            .entries()
            .map_err(|e| self.map_err("list", Path::new("."), e))?;
        let mut out = Vec::new();
        for e in rd {
            let e = e.map_err(|e| self.map_err("list", Path::new("."), e))?;
            let name = e.file_name();
            let kind = match e.file_type() {
                Ok(ft) => entry_type(&ft),
                Err(_) => match self.dir.symlink_metadata(&name) {
                    Ok(m) => entry_type(&m.file_type()),
                    // Gone since the listing.
                    Err(_) => continue,
                },
            };
            out.push(Listed { name, kind });
        }
        Ok(out)
    }

    /// `fstat` of this directory's own handle (no path is resolved).
    pub fn stat_self(&self) -> Result<Stat, CapError> {
        let m = self
            .dir
            .dir_metadata()
            .map_err(|e| self.map_err("read the metadata of", Path::new("."), e))?;
        Ok(m.to_stat())
    }

    /// `lstat` of the entry `name` of this directory (a symlink is described, not followed).
    pub fn stat_nofollow(&self, name: &Path) -> Result<(EntryType, Stat), CapError> {
        let m = self
            .dir
            .symlink_metadata(name)
            .map_err(|e| self.map_err("read the metadata of", name, e))?;
        Ok((entry_type(&m.file_type()), m.to_stat()))
    }

    /// Opens the subdirectory `name` of this directory; a symlink there is refused.
    pub fn open_subdir_nofollow(&self, name: &Path) -> Result<CapDir, CapError> {
        let dir = self
            .dir
            .open_dir_nofollow(name)
            .map_err(|e| self.nofollow_err(self, name, name, e))?;
        Ok(CapDir {
            dir,
            shown: self.display(name),
            root: self.root.clone(),
        })
    }

    /// Opens the regular file `name` of this directory for reading: `O_NOFOLLOW | O_NONBLOCK`,
    /// then the open descriptor decides (a FIFO, socket or device is refused at once, never
    /// read; a symlink is refused).
    pub fn open_file_nofollow(
        &self,
        name: &Path,
    ) -> Result<(std::fs::File, std::fs::Metadata), CapError> {
        let mut opts = OpenOptions::new();
        opts.read(true).follow(FollowSymlinks::No);
        #[cfg(unix)]
        {
            use cap_std::fs::OpenOptionsExt;
            opts.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
        }
        let file = self
            .dir
            .open_with(name, &opts)
            .map_err(|e| {
                #[cfg(unix)]
                if e.raw_os_error() == Some(libc::ELOOP) {
                    return CapError::LinkInRead {
                        link: self.display(name),
                        target: self.dir.read_link_contents(name).unwrap_or_default(),
                    };
                }
                self.map_err("open", name, e)
            })?
            .into_std();
        let meta = file.metadata().map_err(|e| self.map_err("read", name, e))?;
        if !meta.file_type().is_file() {
            return Err(CapError::NotRegular {
                path: self.display(name),
                kind: kind_of(&meta.file_type()),
            });
        }
        #[cfg(unix)]
        super::clear_nonblock(&file);
        Ok((file, meta))
    }

    /// The target text of the symlink `name` of this directory (never resolved).
    pub fn read_link_nofollow(&self, name: &Path) -> Result<PathBuf, CapError> {
        self.dir
            .read_link_contents(name)
            .map_err(|e| self.map_err("read the link", name, e))
    }

    /// The directory holding `rel` and the last component's name, each directory on the way
    /// opened without following a symlink. `None` when a directory on the way does not exist.
    pub fn parent_nofollow(&self, rel: &Path) -> Result<Option<(CapDir, PathBuf)>, CapError> {
        let mut parts = names(self, rel)?;
        let Some(last) = parts.pop() else {
            return Err(CapError::Invalid {
                input: rel.to_string_lossy().into_owned(),
                reason: "names no file".into(),
            });
        };
        let mut cur = self.clone_handle()?;
        let mut so_far = PathBuf::new();
        for p in parts {
            so_far.push(&p);
            match cur.dir.open_dir_nofollow(&p) {
                Ok(d) => {
                    cur = CapDir {
                        dir: d,
                        shown: self.display(&so_far),
                        root: self.root.clone(),
                    }
                }
                Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(self.nofollow_err(&cur, Path::new(&p), &so_far, e)),
            }
        }
        Ok(Some((cur, PathBuf::from(last))))
    }

    /// A second handle on this directory (errors as opening `.`).
    pub(super) fn clone_handle(&self) -> Result<CapDir, CapError> {
        Ok(CapDir {
            dir: self
                .dir
                .try_clone()
                .map_err(|e| self.map_err("open", Path::new("."), e))?,
            shown: self.shown.clone(),
            root: self.root.clone(),
        })
    }

    /// Removes the file or symlink `rel` (a link itself, never its target). `Ok(false)` when
    /// nothing was there; a directory is refused.
    pub fn remove_file_nofollow(&self, rel: &Path) -> Result<bool, CapError> {
        let Some((dir, name)) = self.parent_nofollow(rel)? else {
            return Ok(false);
        };
        match dir.dir.symlink_metadata(&name) {
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(self.map_err("remove", rel, e)),
            Ok(m) if m.is_dir() => {
                return Err(CapError::NotRegular {
                    path: self.display(rel),
                    kind: "a directory",
                })
            }
            Ok(_) => {}
        }
        match dir.dir.remove_file_or_symlink(&name) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
            Err(e) => Err(self.map_err("remove", rel, e)),
        }
    }

    /// Removes the directory `rel` when it is empty; `Ok(false)` when it is not (or is gone).
    pub fn remove_empty_dir_nofollow(&self, rel: &Path) -> Result<bool, CapError> {
        let Some((dir, name)) = self.parent_nofollow(rel)? else {
            return Ok(false);
        };
        match dir.dir.symlink_metadata(&name) {
            Ok(m) if m.is_dir() => {}
            _ => return Ok(false),
        }
        Ok(dir.dir.remove_dir(&name).is_ok())
    }

    /// Sets or clears the execute bits of the regular file `rel` (where its read bits are),
    /// through its open descriptor: a symlink is refused, never followed.
    #[cfg(unix)]
    pub fn set_executable_nofollow(&self, rel: &Path, executable: bool) -> Result<(), CapError> {
        use std::os::unix::fs::PermissionsExt;
        let Some((dir, name)) = self.parent_nofollow(rel)? else {
            return Err(CapError::NotFound {
                path: self.display(rel),
            });
        };
        let (file, meta) = dir.open_file_nofollow(&name).map_err(CapError::for_write)?;
        let mode = meta.permissions().mode() & 0o7777;
        let read = mode & 0o444;
        let new = if executable {
            mode | (read >> 2)
        } else {
            mode & !0o111
        };
        if new != mode {
            file.set_permissions(std::fs::Permissions::from_mode(new))
                .map_err(|e| self.map_err("set the permissions of", rel, e))?;
        }
        Ok(())
    }

    /// Makes `rel` a symbolic link with `target` as its text, atomically (a temp link renamed
    /// over what is there; a directory there is refused). The parents are created as
    /// [`CapDir::create_dir_all`] does, never through a link.
    #[cfg(unix)]
    pub fn symlink_atomic(&self, rel: &Path, target: &Path) -> Result<(), CapError> {
        let (parent, name) = super::split_parent(rel).ok_or_else(|| CapError::NotRegular {
            path: self.display(rel),
            kind: "a directory",
        })?;
        let (dir, _) = self.create_dir_all(parent)?;
        if let Ok(m) = dir.dir.symlink_metadata(name) {
            if m.is_dir() {
                return Err(CapError::NotRegular {
                    path: self.display(rel),
                    kind: "a directory",
                });
            }
        }
        let (tmp, ()) = self.with_temp_name(name, rel, "write the link", |tmp| {
            dir.dir.symlink_contents(target, tmp)
        })?;
        dir.dir.rename(&tmp, &dir.dir, name).map_err(|e| {
            let _ = dir.dir.remove_file(&tmp);
            self.map_err("write the link", rel, e)
        })
    }
}

#[cfg(target_os = "linux")]
impl CapDir {
    /// Adds an inotify watch (`mask`) on this very directory to the inotify instance `ifd`:
    /// through `/proc/self/fd/<its descriptor>`, which names the directory this handle holds,
    /// never a path that could be swapped for a link. Returns the watch and the directory's
    /// file system type (`statfs`'s `f_type`: events are reliable only on local ones).
    pub fn inotify_watch(&self, ifd: std::os::fd::RawFd, mask: u32) -> std::io::Result<(i32, i64)> {
        use std::os::fd::AsRawFd;
        let fd = self.dir.as_raw_fd();
        // SAFETY: fstatfs fills the struct we pass, on a descriptor this handle owns.
        let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstatfs(fd, &mut fs) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let path = std::ffi::CString::new(format!("/proc/self/fd/{fd}"))
            .map_err(|_| std::io::Error::from(ErrorKind::InvalidInput))?;
        // SAFETY: a NUL-terminated path and a descriptor the caller owns.
        let wd = unsafe { libc::inotify_add_watch(ifd, path.as_ptr(), mask | libc::IN_ONLYDIR) };
        if wd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        #[allow(clippy::unnecessary_cast)]
        Ok((wd, fs.f_type as i64))
    }
}
