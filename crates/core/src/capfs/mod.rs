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

use cap_std::fs::{Dir, OpenOptions};
use std::fmt;
use std::io::ErrorKind;
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
    /// The file read is a symbolic link; reads of a project file never follow one.
    LinkInRead {
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
            CapError::LinkInRead { link, target } => write!(
                f,
                "refused: '{}' is a symbolic link (to '{}'); it is not followed. Read the real \
                 path instead.",
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
                "refused: '{}' is larger than the {limit} byte limit",
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

/// A refused or failed file access is said to the caller as the tool's failure (`isError`),
/// never as its malformed arguments.
impl crate::error::Fault for CapError {}

impl CapError {
    /// The same refusal, said of a write (a link met while a write reads what is there).
    pub fn for_write(self) -> Self {
        match self {
            CapError::LinkInRead { link, target } => CapError::LinkInWrite { link, target },
            e => e,
        }
    }

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

/// What messages need of a file's type, from `std::fs` and `cap_std::fs` alike.
trait FileKind {
    /// (FIFO, socket, device, directory).
    fn kinds(&self) -> (bool, bool, bool, bool);
}

/// Implements [`FileKind`] for a file type with the given `FileTypeExt`.
macro_rules! file_kind {
    ($ty:ty, $ext:path) => {
        impl FileKind for $ty {
            fn kinds(&self) -> (bool, bool, bool, bool) {
                #[cfg(unix)]
                {
                    use $ext as _;
                    (
                        self.is_fifo(),
                        self.is_socket(),
                        self.is_char_device() || self.is_block_device(),
                        self.is_dir(),
                    )
                }
                #[cfg(not(unix))]
                (false, false, false, self.is_dir())
            }
        }
    };
}
file_kind!(std::fs::FileType, std::os::unix::fs::FileTypeExt);
file_kind!(cap_std::fs::FileType, cap_std::fs::FileTypeExt);

fn kind_of(ft: &impl FileKind) -> &'static str {
    let (fifo, socket, device, dir) = ft.kinds();
    kind_name(fifo, socket, device, dir)
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

mod file;
mod nofollow;
mod policy;
mod write;

// The layer's API, whichever file of it holds the code.
pub use file::{read_capped_from, read_small_file, read_untrusted_file, SYMLINK};
pub use nofollow::{stat_of_file, EntryType, Listed, Stat};
mod project;
pub use policy::{protected_reason, Name, PolicyError, Protected, WritePolicy, PROTECTED};
pub use project::{ProjectFile, PROJECT_FILE_LIMIT};

#[cfg(test)]
mod tests;
