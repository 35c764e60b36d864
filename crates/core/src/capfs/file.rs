//! Reads by path, for files outside any root a tool is confined to (a git worktree's files,
//! lock files, the file an `openDiff` shows): a regular file only, never waited on, capped.

use super::{kind_of, CapError};
use std::io::{ErrorKind, Read};
use std::path::Path;

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

/// Reads a small file another local process may have put there (a lock file of
/// `~/.claude/ide`): a symbolic link is not followed (refused as [`CapError::NotRegular`] of
/// kind `symbolic link`), a FIFO, socket or device is refused without waiting on it (as in
/// [`read_small_file`]), and at most `limit` bytes are read. Returns the bytes and the open
/// file's metadata (its owner, for the caller's trust check).
pub fn read_untrusted_file(
    path: &Path,
    limit: u64,
) -> Result<(Vec<u8>, std::fs::Metadata), CapError> {
    let not_regular = |kind| CapError::NotRegular {
        path: path.to_path_buf(),
        kind,
    };
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if m.file_type().is_symlink() {
            return Err(not_regular(SYMLINK));
        }
        if !m.file_type().is_file() {
            return Err(not_regular(kind_of(&m.file_type())));
        }
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let io = |err| CapError::Io {
        what: "read",
        path: path.to_path_buf(),
        err,
    };
    let file = opts.open(path).map_err(|e| {
        #[cfg(unix)]
        if e.raw_os_error() == Some(libc::ELOOP) {
            return not_regular(SYMLINK);
        }
        match e.kind() {
            ErrorKind::NotFound => CapError::NotFound {
                path: path.to_path_buf(),
            },
            _ => io(e),
        }
    })?;
    let meta = file.metadata().map_err(io)?;
    if !meta.file_type().is_file() {
        return Err(not_regular(kind_of(&meta.file_type())));
    }
    let too_large = || CapError::TooLarge {
        path: path.to_path_buf(),
        limit,
    };
    if meta.len() > limit {
        return Err(too_large());
    }
    let bytes = read_capped_from(file, limit).map_err(|e| match e {
        None => too_large(),
        Some(e) => io(e),
    })?;
    Ok((bytes, meta))
}

/// How [`read_untrusted_file`] names a symbolic link it does not follow.
pub const SYMLINK: &str = "symbolic link";

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
