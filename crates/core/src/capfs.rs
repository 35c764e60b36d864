//! The capability layer: every file a tool reads or writes on a client's behalf is reached
//! through an open handle of its root directory ([`CapDir`]), never by re-checking a path and
//! then opening it by name.
//!
//! * Resolution is done by [`cap_std`] (the Bytecode Alliance's capability-based `std::fs`): on
//!   Linux it uses `openat2(RESOLVE_BENEATH)`, so the kernel itself refuses a path that leaves the
//!   root — through `..`, an absolute symlink, or a directory swapped for a symlink while we work.
//!   There is no window between a check and an open for another process to race.
//! * Reads open with `O_NONBLOCK` and look at the open file (`fstat`): FIFOs, sockets and
//!   devices are refused at once, so nothing can pin a thread; every read has a cap and nothing
//!   is allocated from a size in metadata.
//! * Writes never follow a symbolic link: each directory on the way is opened with `O_NOFOLLOW`
//!   (created when missing), the temp file is created in that directory's handle with
//!   `0666 & ~umask` (the kernel applies the umask) and renamed inside the same handle. An
//!   overwrite keeps the old file's permissions but never an exec bit.
//! * [`WritePolicy`] keeps files that run code later without the person running the project
//!   ([`PROTECTED`]: git hooks, `.claude/`, editors' tasks and exrc files, direnv, mise, Cargo's
//!   configuration, …) for the person: refused unless allowed in setup.
//!
//! The threat model this serves is in SECURITY.md.

use cap_fs_ext::DirExt;
use cap_std::fs::{Dir, OpenOptions};
use std::fmt;
use std::io::{ErrorKind, Read, Write};
use std::path::{Component, Path, PathBuf};

/// Why a file operation was refused or failed. The messages name the path and say what to do.
#[derive(Debug)]
pub enum CapError {
    /// The path leads outside the root (`..`, an absolute path elsewhere, a symlink out).
    Outside {
        input: String,
        root: PathBuf,
    },
    /// A symbolic link on the way leads outside the root.
    LinkOut {
        link: PathBuf,
        target: PathBuf,
        root: PathBuf,
    },
    /// A write would go through (or replace) a symbolic link.
    LinkInWrite {
        link: PathBuf,
        target: PathBuf,
    },
    /// Not a regular file (FIFO, socket, device, directory where a file is wanted).
    NotRegular {
        path: PathBuf,
        kind: &'static str,
    },
    /// Larger than the cap for this read.
    TooLarge {
        path: PathBuf,
        limit: u64,
    },
    NotFound {
        path: PathBuf,
    },
    /// The write policy keeps this file for the person.
    Denied {
        path: String,
        why: &'static str,
    },
    /// The file is not what the caller read before (someone changed it meanwhile).
    Changed {
        path: PathBuf,
    },
    /// Empty path, NUL byte, …
    Invalid {
        input: String,
        reason: String,
    },
    /// The root itself cannot be opened.
    BadRoot {
        root: PathBuf,
        reason: String,
    },
    Io {
        what: &'static str,
        path: PathBuf,
        err: std::io::Error,
    },
}

impl fmt::Display for CapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CapError::Outside { input, root } => write!(
                f,
                "refused: '{input}' leads outside the project root '{}'. Use a path inside the \
                 root (relative paths resolve against it).",
                root.display()
            ),
            CapError::LinkOut { link, target, root } => write!(
                f,
                "refused: '{}' is a symbolic link to '{}', which leads outside '{}'. Links out of \
                 the project are not followed (remove the link, or configure the location in \
                 setup()).",
                link.display(),
                target.display(),
                root.display()
            ),
            CapError::LinkInWrite { link, target } => write!(
                f,
                "refused: '{}' is a symbolic link (to '{}'); writes do not go through links. \
                 Write to the real path instead.",
                link.display(),
                target.display()
            ),
            CapError::NotRegular { path, kind } => write!(
                f,
                "refused: '{}' is {kind}, not a regular file (FIFOs, sockets and devices are \
                 never opened)",
                path.display()
            ),
            CapError::TooLarge { path, limit } => write!(
                f,
                "refused: '{}' is larger than the {limit} byte limit for this read",
                path.display()
            ),
            CapError::NotFound { path } => write!(
                f,
                "'{}' does not exist (No such file or directory)",
                path.display()
            ),
            CapError::Denied { path, why } => write!(
                f,
                "refused: '{path}' {why}, so only the person edits it. To let tools write it, \
                 add it to setup{{security = {{allow_write = {{…}}}}}} (see :help \
                 claude-context-security)."
            ),
            CapError::Changed { path } => write!(
                f,
                "'{}' changed on disk since it was read: not written (look at it again, then \
                 retry)",
                path.display()
            ),
            CapError::Invalid { input, reason } => write!(f, "invalid path '{input}': {reason}"),
            CapError::BadRoot { root, reason } => {
                write!(f, "the root '{}' cannot be used: {reason}", root.display())
            }
            CapError::Io { what, path, err } => {
                write!(f, "cannot {what} '{}': {err}", path.display())
            }
        }
    }
}

impl std::error::Error for CapError {}

impl CapError {
    pub fn is_not_found(&self) -> bool {
        matches!(self, CapError::NotFound { .. })
            || matches!(self, CapError::Io { err, .. } if err.kind() == ErrorKind::NotFound)
    }
}

/// `cap_std` reports a path that tried to leave the root like this (from `EXDEV` under
/// `RESOLVE_BENEATH`, or its own checks where the kernel has no `openat2`).
fn is_escape(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    if e.raw_os_error() == Some(libc::EXDEV) {
        return true;
    }
    e.kind() == ErrorKind::PermissionDenied && e.to_string().contains("outside of the filesystem")
}

/// A directory handle: the root of a confined tree, or a directory inside one.
#[derive(Debug)]
pub struct CapDir {
    dir: Dir,
    /// The directory's absolute path, for messages and results (canonical for a root).
    shown: PathBuf,
    /// The root this directory lies in, for messages.
    root: PathBuf,
}

/// What [`CapDir::write_atomic`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// The file did not exist before.
    pub created: bool,
}

/// How [`CapDir::replace_in`] writes.
#[derive(Debug, Clone, Copy, Default)]
struct Replace<'a> {
    /// fsync the data before the rename.
    durable: bool,
    /// The bits of the old file's mode the new one keeps.
    mode_mask: u32,
    /// Refuse when nothing is there.
    must_exist: bool,
    /// Refuse unless the file holds exactly these bytes now.
    expect: Option<&'a [u8]>,
}

impl CapDir {
    /// Opens a root the person chose (project root, a configured bank root): the only place
    /// ambient authority is used. Symlinks in `path` itself are resolved (the person's path).
    pub fn open_root(path: &Path) -> Result<CapDir, CapError> {
        let canon = path.canonicalize().map_err(|e| CapError::BadRoot {
            root: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let dir = Dir::open_ambient_dir(&canon, cap_std::ambient_authority()).map_err(|e| {
            CapError::BadRoot {
                root: canon.clone(),
                reason: e.to_string(),
            }
        })?;
        Ok(CapDir {
            dir,
            shown: canon.clone(),
            root: canon,
        })
    }

    /// The directory's absolute path.
    pub fn path(&self) -> &Path {
        &self.shown
    }

    /// The absolute path of `rel` inside this directory, for messages and results.
    pub fn display(&self, rel: &Path) -> PathBuf {
        if rel == Path::new(".") {
            self.shown.clone()
        } else {
            self.shown.join(rel)
        }
    }

    /// Turns a client's path into a relative path inside this directory, lexically: absolute
    /// paths must start with the directory's path; `.` is dropped and `..` folded; a path that
    /// climbs above the directory is refused. The result is `.` for the directory itself.
    /// Symlinks are not looked at here: the kernel confines them when the path is opened.
    pub fn rel(&self, input: &str) -> Result<PathBuf, CapError> {
        if input.is_empty() {
            return Err(CapError::Invalid {
                input: input.into(),
                reason: "the path is empty".into(),
            });
        }
        if input.contains('\0') {
            return Err(CapError::Invalid {
                input: input.escape_debug().to_string(),
                reason: "the path contains a NUL byte".into(),
            });
        }
        let p = Path::new(input);
        let stripped: &Path = if p.is_absolute() {
            let lexical = crate::paths::normalize(p);
            return match lexical.strip_prefix(&self.shown) {
                Ok(rest) => self.rel_components(input, rest),
                Err(_) => Err(self.outside(input)),
            };
        } else {
            p
        };
        self.rel_components(input, stripped)
    }

    fn rel_components(&self, input: &str, p: &Path) -> Result<PathBuf, CapError> {
        let mut out = PathBuf::new();
        let mut depth = 0usize;
        for c in p.components() {
            match c {
                Component::CurDir => {}
                Component::ParentDir => {
                    if depth == 0 {
                        return Err(self.outside(input));
                    }
                    out.pop();
                    depth -= 1;
                }
                Component::Normal(n) => {
                    out.push(n);
                    depth += 1;
                }
                Component::RootDir | Component::Prefix(_) => return Err(self.outside(input)),
            }
        }
        if out.as_os_str().is_empty() {
            out.push(".");
        }
        Ok(out)
    }

    fn outside(&self, input: &str) -> CapError {
        CapError::Outside {
            input: input.into(),
            root: self.root.clone(),
        }
    }

    /// Maps an error of an operation on `rel`: escapes name the symlink that leads out.
    fn map_err(&self, what: &'static str, rel: &Path, e: std::io::Error) -> CapError {
        if is_escape(&e) {
            if let Some((link, target)) = self.find_link_out(rel) {
                return CapError::LinkOut {
                    link,
                    target,
                    root: self.root.clone(),
                };
            }
            return self.outside(&rel.to_string_lossy());
        }
        match e.kind() {
            ErrorKind::NotFound => CapError::NotFound {
                path: self.display(rel),
            },
            _ => CapError::Io {
                what,
                path: self.display(rel),
                err: e,
            },
        }
    }

    /// The first symbolic link along `rel` (relative to this directory), with its target text.
    fn find_link_out(&self, rel: &Path) -> Option<(PathBuf, PathBuf)> {
        let mut prefix = PathBuf::new();
        for c in rel.components() {
            prefix.push(c);
            let Ok(m) = self.dir.symlink_metadata(&prefix) else {
                return None;
            };
            if m.file_type().is_symlink() {
                let target = self.dir.read_link_contents(&prefix).ok()?;
                return Some((self.display(&prefix), target));
            }
        }
        None
    }

    /// `cap_std` refuses every symlink with an absolute target. One that points inside this
    /// directory (written by a tool that makes absolute links) is honoured by rewriting the
    /// path through it: the rewritten path is opened beneath the handle again, so the kernel
    /// still confines it. `None` when no such link is on the way.
    fn through_absolute_link(&self, rel: &Path) -> Option<PathBuf> {
        let mut prefix = PathBuf::new();
        let comps: Vec<Component> = rel.components().collect();
        for (i, c) in comps.iter().enumerate() {
            prefix.push(c);
            let m = self.dir.symlink_metadata(&prefix).ok()?;
            if !m.file_type().is_symlink() {
                continue;
            }
            let target = self.dir.read_link_contents(&prefix).ok()?;
            if !target.is_absolute() {
                return None;
            }
            let inside = crate::paths::normalize(&target)
                .strip_prefix(&self.shown)
                .ok()?
                .to_path_buf();
            let mut out = inside;
            for r in &comps[i + 1..] {
                out.push(r);
            }
            return self.rel_components(&out.to_string_lossy(), &out).ok();
        }
        None
    }

    /// Runs `op` on `rel`, retrying through absolute links that point inside (at most
    /// [`crate::paths::MAX_SYMLINK_HOPS`] of them).
    fn follow<T>(
        &self,
        rel: &Path,
        op: impl Fn(&Path) -> std::io::Result<T>,
    ) -> (PathBuf, std::io::Result<T>) {
        let mut cur = rel.to_path_buf();
        for _ in 0..crate::paths::MAX_SYMLINK_HOPS {
            match op(&cur) {
                Err(e) if is_escape(&e) => match self.through_absolute_link(&cur) {
                    Some(next) => cur = next,
                    None => return (cur, Err(e)),
                },
                r => return (cur, r),
            }
        }
        let r = op(&cur);
        (cur, r)
    }

    /// Opens a directory inside this one, following symlinks that stay inside the root.
    /// `None` when it does not exist.
    pub fn open_dir(&self, rel: &Path) -> Result<Option<CapDir>, CapError> {
        match self.follow(rel, |p| self.dir.open_dir(p)).1 {
            Ok(dir) => Ok(Some(CapDir {
                dir,
                shown: self.display(rel),
                root: self.root.clone(),
            })),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => Err(CapError::NotRegular {
                path: self.display(rel),
                kind: "not a directory",
            }),
            Err(e) => Err(self.map_err("open the directory", rel, e)),
        }
    }

    /// This directory as a new root: errors then speak of it as the boundary.
    pub fn as_root(mut self) -> CapDir {
        self.root = self.shown.clone();
        self
    }

    /// Opens (creating what is missing) the directory `rel`, never following a symbolic link:
    /// the directory reached is the one named, inside this one. Returns it and whether the
    /// last component was created.
    pub fn create_dir_all(&self, rel: &Path) -> Result<(CapDir, bool), CapError> {
        let mut cur = CapDir {
            dir: self
                .dir
                .try_clone()
                .map_err(|e| self.map_err("open", Path::new("."), e))?,
            shown: self.shown.clone(),
            root: self.root.clone(),
        };
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

    fn nofollow_err(
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

    /// Opens a regular file for reading without blocking on it: `O_NONBLOCK` (a FIFO opens at
    /// once instead of waiting for a writer), then `fstat` on the open file decides.
    pub fn open_regular(&self, rel: &Path) -> Result<(std::fs::File, std::fs::Metadata), CapError> {
        let mut opts = OpenOptions::new();
        opts.read(true);
        #[cfg(unix)]
        {
            use cap_std::fs::OpenOptionsExt;
            opts.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
        }
        let file = self
            .follow(rel, |p| self.dir.open_with(p, &opts))
            .1
            .map_err(|e| self.map_err("open", rel, e))?
            .into_std();
        let meta = file.metadata().map_err(|e| self.map_err("read", rel, e))?;
        let ft = meta.file_type();
        if !ft.is_file() {
            return Err(CapError::NotRegular {
                path: self.display(rel),
                kind: kind_of(&ft),
            });
        }
        #[cfg(unix)]
        clear_nonblock(&file);
        Ok((file, meta))
    }

    /// [`CapDir::open_regular`], refusing a file whose size is already over `limit` (a huge
    /// sparse file is refused without reading its first `limit` bytes).
    pub fn open_regular_capped(
        &self,
        rel: &Path,
        limit: u64,
    ) -> Result<(std::fs::File, std::fs::Metadata), CapError> {
        let (file, meta) = self.open_regular(rel)?;
        if meta.len() > limit {
            return Err(CapError::TooLarge {
                path: self.display(rel),
                limit,
            });
        }
        Ok((file, meta))
    }

    /// Reads a whole regular file of at most `limit` bytes (more is an error, checked on the
    /// size first and again while reading: the size is never used to allocate).
    pub fn read_capped(&self, rel: &Path, limit: u64) -> Result<Vec<u8>, CapError> {
        let (file, _) = self.open_regular_capped(rel, limit)?;
        read_capped_from(file, limit).map_err(|e| match e {
            None => CapError::TooLarge {
                path: self.display(rel),
                limit,
            },
            Some(e) => self.map_err("read", rel, e),
        })
    }

    /// Metadata of `rel`, following symlinks that stay inside the root.
    pub fn metadata(&self, rel: &Path) -> Result<cap_std::fs::Metadata, CapError> {
        self.follow(rel, |p| self.dir.metadata(p))
            .1
            .map_err(|e| self.map_err("read the metadata of", rel, e))
    }

    /// The entries of the directory `rel` (`.` for this one), following symlinks that stay
    /// inside the root (as [`CapDir::open_dir`] does).
    pub fn read_dir(&self, rel: &Path) -> Result<cap_std::fs::ReadDir, CapError> {
        let r = if rel == Path::new(".") {
            self.dir.entries()
        } else {
            self.follow(rel, |p| self.dir.read_dir(p)).1
        };
        r.map_err(|e| self.map_err("list", rel, e))
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
                ..Replace::default()
            },
        )
    }

    /// The temp file, write and rename of [`CapDir::write_atomic`] in `dir`, the directory of
    /// `rel` already opened (never through a link): `name` there must be a regular file or
    /// nothing (a symlink, directory, FIFO, socket or device is refused).
    fn replace_in(
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
                    kind: kind_of_cap(&ft),
                });
            }
        } else if how.must_exist {
            return Err(CapError::NotFound {
                path: self.display(rel),
            });
        }
        if let Some(expect) = how.expect {
            // What is there now must be what the caller built its text from.
            let (file, _) = dir.open_file_nofollow(name)?;
            let limit = expect.len() as u64;
            let same = matches!(read_capped_from(file, limit), Ok(now) if now == expect);
            if !same {
                return Err(CapError::Changed {
                    path: self.display(rel),
                });
            }
        }
        let (tmp_name, file) = dir.create_temp(name, self, rel)?;
        let result = (|| -> std::io::Result<()> {
            let mut f = file;
            #[cfg(unix)]
            if let Some(m) = &old {
                use cap_std::fs::PermissionsExt as _;
                use std::os::unix::fs::PermissionsExt as _;
                // Keep the old permissions (without what `mode_mask` leaves out).
                let mode = m.permissions().mode() & how.mode_mask;
                f.set_permissions(std::fs::Permissions::from_mode(mode))?;
            }
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
        let base = name.to_string_lossy();
        let base: String = base.chars().take(64).collect();
        for _ in 0..16 {
            let mut rnd = [0u8; 6];
            let _ = getrandom::fill(&mut rnd);
            let suffix: String = rnd.iter().map(|b| format!("{b:02x}")).collect();
            let tmp = PathBuf::from(format!(".{base}.claude-context-{suffix}.tmp"));
            let mut opts = OpenOptions::new();
            opts.write(true).create_new(true);
            #[cfg(unix)]
            {
                use cap_std::fs::OpenOptionsExt;
                opts.mode(0o666);
            }
            match self.dir.open_with(&tmp, &opts) {
                Ok(f) => return Ok((tmp, f.into_std())),
                Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(top.map_err("create a temp file for", rel, e)),
            }
        }
        Err(CapError::Io {
            what: "create a temp file for",
            path: top.display(rel),
            err: std::io::Error::new(ErrorKind::AlreadyExists, "no free temp name"),
        })
    }
}

/// Reads a regular file of at most `limit` bytes by its path, for files outside any root a tool
/// is confined to: a git worktree's `gitdir` and `HEAD`, lock files, and the file on disk an
/// `openDiff` shows (an IDE-door tool: Claude Code's own connection names any file the editor
/// can open; on `/mcp` the door admits the path first). Opened with `O_NONBLOCK` and checked on
/// the open descriptor (a FIFO, socket or device is refused at once), at most `limit` bytes.
/// What a stat already shows is not a regular file is refused without opening it: opening a
/// FIFO, even without blocking, would release a writer waiting at its other end. The stat only
/// spares that open; the descriptor is what is checked (a swap after the stat is still caught).
pub fn read_small_file(path: &Path, limit: u64) -> Result<Vec<u8>, CapError> {
    if let Ok(m) = std::fs::metadata(path) {
        if !m.file_type().is_file() {
            return Err(CapError::NotRegular {
                path: path.to_path_buf(),
                kind: kind_of(&m.file_type()),
            });
        }
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let io = |err| CapError::Io {
        what: "read",
        path: path.to_path_buf(),
        err,
    };
    let file = opts.open(path).map_err(|e| match e.kind() {
        ErrorKind::NotFound => CapError::NotFound {
            path: path.to_path_buf(),
        },
        _ => io(e),
    })?;
    let meta = file.metadata().map_err(io)?;
    let ft = meta.file_type();
    if !ft.is_file() {
        return Err(CapError::NotRegular {
            path: path.to_path_buf(),
            kind: kind_of(&ft),
        });
    }
    if meta.len() > limit {
        // Refused from the size, without reading the first `limit` bytes (a sparse file).
        return Err(CapError::TooLarge {
            path: path.to_path_buf(),
            limit,
        });
    }
    read_capped_from(file, limit).map_err(|e| match e {
        None => CapError::TooLarge {
            path: path.to_path_buf(),
            limit,
        },
        Some(e) => io(e),
    })
}

/// Reads at most `limit` bytes; `Err(None)` when there is more.
pub fn read_capped_from(file: impl Read, limit: u64) -> Result<Vec<u8>, Option<std::io::Error>> {
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(Some)?;
    if bytes.len() as u64 > limit {
        return Err(None);
    }
    Ok(bytes)
}

fn split_parent(rel: &Path) -> Option<(&Path, &Path)> {
    let name = rel.file_name()?;
    let parent = rel.parent().unwrap_or(Path::new(""));
    Some((parent, Path::new(name)))
}

#[cfg(unix)]
fn clear_nonblock(file: &std::fs::File) {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor we own; failure leaves O_NONBLOCK, harmless for a file.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
}

fn kind_of(ft: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        kind_name(
            ft.is_fifo(),
            ft.is_socket(),
            ft.is_char_device() || ft.is_block_device(),
            ft.is_dir(),
        )
    }
    #[cfg(not(unix))]
    kind_name(false, false, false, ft.is_dir())
}

fn kind_of_cap(ft: &cap_std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use cap_std::fs::FileTypeExt;
        kind_name(
            ft.is_fifo(),
            ft.is_socket(),
            ft.is_char_device() || ft.is_block_device(),
            ft.is_dir(),
        )
    }
    #[cfg(not(unix))]
    kind_name(false, false, false, ft.is_dir())
}

/// How messages name what is not a regular file.
fn kind_name(fifo: bool, socket: bool, device: bool, dir: bool) -> &'static str {
    match (fifo, socket, device, dir) {
        (true, ..) => "a FIFO",
        (_, true, ..) => "a socket",
        (_, _, true, _) => "a device",
        (.., true) => "a directory",
        _ => "not a regular file",
    }
}

/// Files that run code later, without the person asking: kept for the person unless allowed.
#[derive(Debug, Clone)]
pub struct WritePolicy {
    allow: globset::GlobSet,
}

/// How a [`Protected`] entry names paths. Every name is lower case, and is compared with each
/// component of the path relative to the project root lowercased (and, as Windows would, with
/// trailing dots and spaces and an `:stream` suffix dropped), at any depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Name {
    /// A directory of this name and everything in it (a file of this name too).
    Tree(&'static str),
    /// A file of this name.
    File(&'static str),
    /// Components in a row anywhere in the path (`.github/workflows`: everything in it).
    Seq(&'static [&'static str]),
    /// A file named `stem` + `ext`, or `stem.` + anything + `ext` (`Stem("mise", ".toml")`:
    /// `mise.toml`, `mise.local.toml`).
    Stem(&'static str, &'static str),
    /// A file whose name ends with this.
    Suffix(&'static str),
}

/// One protected name and why it is protected: what runs it without the person running the
/// project.
#[derive(Debug, Clone, Copy)]
pub struct Protected {
    pub name: Name,
    pub why: &'static str,
}

const fn p(name: Name, why: &'static str) -> Protected {
    Protected { name, why }
}

use Name::{File, Seq, Stem, Suffix, Tree};

const GIT_HOOK: &str = "is a git hook or its configuration (git runs it on commit, push, …)";
const CLAUDE: &str = "is Claude Code's project configuration (settings and hooks run commands; \
                      commands, agents and skills steer it)";
const AGENT: &str = "is an AI agent's project configuration (MCP servers and hooks it starts)";
const DIRENV: &str = "is loaded by direnv when a shell enters the directory";
const EXRC: &str = "is run by Neovim's or Vim's 'exrc' when it starts there";
const EDITOR: &str = "is an editor's project configuration (tasks, run configurations, \
                      language-server commands and settings that run programs)";
const CARGO: &str = "is Cargo's configuration (rust-analyzer runs cargo on open and save: \
                     rustc wrappers, runners, aliases)";
const TOOLCHAIN: &str = "picks the toolchain the editor's tools run (a toolchain may be any \
                         program)";
const MISE: &str = "is mise's configuration (hooks, tasks and env scripts run when a shell \
                    enters the directory)";
const PACKAGES: &str = "configures the package manager (the program run as it, the scripts \
                        and hooks it runs)";
const PYTHON: &str = "is run by Python when it starts (the editor's Python tools start it)";
const CI: &str = "runs in CI with the repository's secrets on the next push";

/// The protected files: what `fs-write-file` and the memory bank's writes refuse unless the
/// person allows it (`setup{security = {allow_write}}`), at any depth and in any letter case.
/// The line (SECURITY.md, `:help claude-context-security-protected`): files a tool acts on by
/// itself — on entering the directory, starting the editor or a language server, saving,
/// committing, pushing, starting Claude Code — and that can make it run a program. Source the
/// person runs on purpose (package.json scripts, Makefiles, build scripts, tests) is not here.
pub const PROTECTED: &[Protected] = &[
    p(
        Tree(".git"),
        "is inside .git (hooks and config run commands on the next git command)",
    ),
    p(Tree(".husky"), GIT_HOOK),
    p(Tree(".githooks"), GIT_HOOK),
    p(Tree(".lefthook"), GIT_HOOK),
    p(Tree(".lefthook-local"), GIT_HOOK),
    p(Stem("lefthook", ""), GIT_HOOK),
    p(Stem("lefthook-local", ""), GIT_HOOK),
    p(Stem(".lefthook", ""), GIT_HOOK),
    p(Stem(".lefthook-local", ""), GIT_HOOK),
    p(File(".pre-commit-config.yaml"), GIT_HOOK),
    p(File(".pre-commit-config.yml"), GIT_HOOK),
    p(File(".overcommit.yml"), GIT_HOOK),
    p(Tree(".claude"), CLAUDE),
    p(
        File(".mcp.json"),
        "configures MCP servers (commands Claude Code starts)",
    ),
    p(Tree(".cursor"), AGENT),
    p(Tree(".gemini"), AGENT),
    p(File(".envrc"), DIRENV),
    p(File(".env"), DIRENV),
    p(File(".nvim.lua"), EXRC),
    p(File(".nvimrc"), EXRC),
    p(File(".exrc"), EXRC),
    p(File(".vimrc"), EXRC),
    p(File(".gvimrc"), EXRC),
    p(File("_vimrc"), EXRC),
    p(File("_exrc"), EXRC),
    p(
        File(".lazy.lua"),
        "is run by lazy.nvim as a local plugin spec",
    ),
    p(
        Stem(".luarc", ""),
        "configures lua-language-server (its runtime.plugin runs Lua)",
    ),
    p(Tree(".vscode"), EDITOR),
    p(Tree(".idea"), EDITOR),
    p(Tree(".fleet"), EDITOR),
    p(Tree(".zed"), EDITOR),
    p(Tree(".helix"), EDITOR),
    p(Tree(".devcontainer"), EDITOR),
    p(File(".dir-locals.el"), EDITOR),
    p(File(".dir-locals-2.el"), EDITOR),
    p(Tree(".cargo"), CARGO),
    p(File("rust-toolchain"), TOOLCHAIN),
    p(File("rust-toolchain.toml"), TOOLCHAIN),
    p(File(".tool-versions"), TOOLCHAIN),
    p(Stem("mise", ".toml"), MISE),
    p(Stem(".mise", ".toml"), MISE),
    p(Tree(".mise"), MISE),
    p(Seq(&[".config", "mise"]), MISE),
    p(Seq(&["mise", "config.toml"]), MISE),
    p(File(".npmrc"), PACKAGES),
    p(File(".yarnrc"), PACKAGES),
    p(File(".yarnrc.yml"), PACKAGES),
    p(Stem(".pnpmfile", ""), PACKAGES),
    p(Seq(&[".yarn", "releases"]), PACKAGES),
    p(Seq(&[".yarn", "plugins"]), PACKAGES),
    p(Suffix(".pth"), PYTHON),
    p(File("sitecustomize.py"), PYTHON),
    p(File("usercustomize.py"), PYTHON),
    p(Tree(".venv"), PYTHON),
    p(Seq(&[".github", "workflows"]), CI),
    p(Seq(&[".github", "actions"]), CI),
    p(File(".gitlab-ci.yml"), CI),
    p(Tree(".circleci"), CI),
];

impl Default for WritePolicy {
    fn default() -> Self {
        WritePolicy {
            allow: globset::GlobSet::empty(),
        }
    }
}

impl WritePolicy {
    /// `allow`: glob patterns (relative to the project root) the person lets tools write even
    /// though they are protected, e.g. `.claude/settings.local.json` or `.git/info/exclude`.
    pub fn new(allow: &[String]) -> Result<WritePolicy, String> {
        let mut b = globset::GlobSetBuilder::new();
        for p in allow {
            let g = globset::GlobBuilder::new(p)
                .case_insensitive(true)
                .literal_separator(true)
                .build()
                .map_err(|e| format!("security.allow_write: invalid pattern '{p}': {e}"))?;
            b.add(g);
        }
        Ok(WritePolicy {
            allow: b
                .build()
                .map_err(|e| format!("security.allow_write: {e}"))?,
        })
    }

    /// Refuses a write to a protected path. `rel` is relative to the project root (as returned
    /// by [`CapDir::rel`]); writes never follow symlinks, so the path named is the path written.
    pub fn check(&self, rel: &Path) -> Result<(), CapError> {
        let shown = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        let Some(why) = protected_reason(rel) else {
            return Ok(());
        };
        if self.allow.is_match(&shown) {
            return Ok(());
        }
        Err(CapError::Denied { path: shown, why })
    }
}

/// A path component as the protected list compares it: lower case, without what Windows
/// ignores or reads as a stream (`.GIT. ` and `.git::$DATA` are `.git` there).
fn canonical_name(n: &std::ffi::OsStr) -> String {
    let mut s = n.to_string_lossy().to_lowercase();
    if let Some(i) = s.find(':') {
        s.truncate(i);
    }
    let kept = s.trim_end_matches(['.', ' ']).len();
    // `.` and `..` are never components here; keep a name that is only dots as it is.
    if kept > 0 {
        s.truncate(kept);
    }
    s
}

/// Why `rel` (relative to the project root or a bank) is protected, if it is: the first entry
/// of [`PROTECTED`] that names it.
pub fn protected_reason(rel: &Path) -> Option<&'static str> {
    let parts: Vec<String> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(canonical_name(n)),
            _ => None,
        })
        .collect();
    let last = parts.last()?;
    PROTECTED
        .iter()
        .find(|e| match e.name {
            Tree(d) => parts.iter().any(|p| p == d),
            File(f) => last == f,
            Stem(stem, ext) => {
                let rest = last.strip_prefix(stem).and_then(|r| r.strip_suffix(ext));
                rest.is_some_and(|r| r.is_empty() || (r.starts_with('.') && r.len() > 1))
            }
            Suffix(x) => last.len() > x.len() && last.ends_with(x),
            Seq(seq) => parts.windows(seq.len()).any(|w| w == seq),
        })
        .map(|e| e.why)
}

mod nofollow;
pub use nofollow::{stat_of_file, EntryType, Listed, Stat};
mod project;
pub use project::{ProjectFile, PROJECT_FILE_LIMIT};

#[cfg(test)]
mod tests;
