//! Atomic file writes: a temp file in the same directory, then rename over the target. A reader
//! sees the old content or the new, never half of either. [`write_atomic`] also fsyncs the data
//! before the rename (user files: durable across a crash); [`write_atomic_volatile`] does not
//! (files that describe a running process, such as the lock file: after a crash they are stale
//! anyway, and an fsync costs milliseconds — most of the bridge's start-up time).

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically; the file gets `mode` (Unix) before it becomes visible
/// under its final name. For the plugin's own files (lock file, state); files a tool writes on a
/// client's behalf go through [`crate::capfs`].
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    write(path, bytes, mode, true)
}

/// Like [`write_atomic`] (same atomicity, same permissions) but without fsync: for files whose
/// content only matters while this process runs.
pub fn write_atomic_volatile(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    write(path, bytes, mode, false)
}

fn write(path: &Path, bytes: &[u8], mode: u32, durable: bool) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".claude-context-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    #[cfg(not(unix))]
    let _ = mode;
    tmp.write_all(bytes)?;
    if durable {
        tmp.as_file().sync_all()?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Creates `dir` (and parents) and, on Unix, sets it to `mode` when we created it or it is ours.
pub fn ensure_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_sets_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        write_atomic(&p, b"one", 0o600).unwrap();
        write_atomic_volatile(&p, b"two", 0o600).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        write_atomic(&p, b"three", 0o600).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"three");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        // No temp files left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }
}
