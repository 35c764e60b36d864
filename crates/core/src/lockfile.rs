//! The lock file through which Claude Code finds the editor (doc/protocol.md, IDE protocol):
//! `<dir>/<port>.lock`, JSON `{pid, workspaceFolders, ideName, transport, authToken, ideKind}`,
//! mode 0600 inside a 0700 directory, written atomically (without fsync: see
//! [`fsutil::write_atomic_volatile`]), removed when the bridge stops.

use crate::fsutil;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What our lock files are: `ideKind` of the lock files this plugin writes, and the `ideName`
/// of those written before `ideName` told Neovims apart.
pub const KIND: &str = "Neovim";

#[derive(Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LockContent {
    pub pid: u32,
    pub workspace_folders: Vec<String>,
    /// What Claude Code shows (`/ide`, "Opened changes in …"): for us "Neovim (<project>, pid
    /// <pid>)" by default (setup{ide = {name = …}}), so two Neovims can be told apart.
    pub ide_name: String,
    pub transport: String,
    pub auth_token: String,
    /// Which editor wrote the file ([`KIND`] for us), whatever `ideName` says; Claude Code does
    /// not read it. Absent in lock files of other IDEs and of older versions of this plugin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ide_kind: Option<String>,
}

impl LockContent {
    /// The editor kind: `ideKind`, else `ideName` (older lock files, other IDEs).
    pub fn kind(&self) -> &str {
        self.ide_kind.as_deref().unwrap_or(&self.ide_name)
    }
}

/// Debug output masks the token, so a `{:?}` in a log line cannot leak it.
impl std::fmt::Debug for LockContent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockContent")
            .field("pid", &self.pid)
            .field("workspace_folders", &self.workspace_folders)
            .field("ide_name", &self.ide_name)
            .field("transport", &self.transport)
            .field("auth_token", &crate::auth::mask(&self.auth_token))
            .field("ide_kind", &self.ide_kind)
            .finish()
    }
}

/// Why the lock files cannot be placed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LockError {
    #[error("neither CLAUDE_CONFIG_DIR nor HOME is set: cannot place the lock file")]
    NoHome,
}

impl crate::error::Fault for LockError {}

/// `$CLAUDE_CONFIG_DIR/ide`, else `~/.claude/ide`.
pub fn default_lock_dir() -> Result<PathBuf, LockError> {
    if let Some(d) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(d).join("ide"));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .ok_or(LockError::NoHome)?;
    Ok(PathBuf::from(home).join(".claude").join("ide"))
}

/// A lock file we wrote; [`LockFile::remove`] (or drop) deletes it.
#[derive(Debug)]
pub struct LockFile {
    path: PathBuf,
    content: LockContent,
}

impl LockFile {
    /// Writes `<dir>/<port>.lock` atomically with mode 0600, creating `dir` with mode 0700.
    pub fn create(dir: &Path, port: u16, content: LockContent) -> std::io::Result<LockFile> {
        fsutil::ensure_private_dir(dir)?;
        let lock = LockFile {
            path: dir.join(format!("{port}.lock")),
            content,
        };
        lock.write()?;
        Ok(lock)
    }

    fn write(&self) -> std::io::Result<()> {
        let json = serde_json::to_vec(&self.content).map_err(std::io::Error::other)?;
        // Atomic (Claude Code never reads half a file) but not fsynced: the file only means
        // something while this process runs, and an fsync would dominate the bridge's start-up.
        fsutil::write_atomic_volatile(&self.path, &json, 0o600)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn content(&self) -> &LockContent {
        &self.content
    }

    /// Rewrites the file when the workspace folders changed; returns whether it wrote.
    pub fn update_folders(&mut self, folders: Vec<String>) -> std::io::Result<bool> {
        if self.content.workspace_folders == folders {
            return Ok(false);
        }
        self.content.workspace_folders = folders;
        self.write()?;
        Ok(true)
    }

    pub fn remove(self) {
        // Drop does the work.
    }
}

impl Drop for LockFile {
    fn drop(&mut self) {
        // Only remove the file if it is still ours (same token): never delete another editor's.
        if let Ok(bytes) = crate::capfs::read_small_file(&self.path, MAX_LOCK_FILE) {
            if let Ok(c) = serde_json::from_slice::<LockContent>(&bytes) {
                if c.auth_token != self.content.auth_token {
                    return;
                }
            }
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

/// What a lock file's pid names, for the current user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PidState {
    /// A running process of the current user: the editor may still be there.
    Mine,
    /// No such process.
    Gone,
    /// A running process of another user (its uid, when known): the editor that wrote the lock
    /// file is gone and its pid was reused, or the file names someone else's process. Either
    /// way the lock file is stale.
    OtherUser(Option<u32>),
}

/// Whether `pid` is a running process of the current user (see [`PidState`]).
pub fn pid_state(pid: u32) -> PidState {
    #[cfg(unix)]
    {
        if pid == 0 || pid > i32::MAX as u32 {
            return PidState::Gone;
        }
        // SAFETY: kill with signal 0 only checks for existence and permission.
        let r = unsafe { libc::kill(pid as i32, 0) };
        if r != 0 {
            // EPERM: a process we may not signal, so not ours; anything else (ESRCH): gone.
            return match std::io::Error::last_os_error().raw_os_error() {
                Some(libc::EPERM) => PidState::OtherUser(pid_owner(pid)),
                _ => PidState::Gone,
            };
        }
        // A privileged process (root) may signal everyone's: compare the owner as well.
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        match pid_owner(pid) {
            Some(uid) if uid != me => PidState::OtherUser(Some(uid)),
            _ => PidState::Mine,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        PidState::Mine
    }
}

/// Whether `pid` is a running process of the current user ([`PidState::Mine`]).
pub fn pid_alive(pid: u32) -> bool {
    pid_state(pid) == PidState::Mine
}

/// The effective uid a process runs as: the owner of `/proc/<pid>` on Linux.
#[cfg(target_os = "linux")]
fn pid_owner(pid: u32) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(format!("/proc/{pid}"))
        .ok()
        .map(|m| m.uid())
}

/// The uid a process runs as, from `proc_pidinfo` on macOS.
#[cfg(target_os = "macos")]
fn pid_owner(pid: u32) -> Option<u32> {
    let mut info = std::mem::MaybeUninit::<libc::proc_bsdinfo>::zeroed();
    let size = std::mem::size_of::<libc::proc_bsdinfo>() as libc::c_int;
    // SAFETY: the buffer is a proc_bsdinfo of the size passed; the call fills at most that.
    let n = unsafe {
        libc::proc_pidinfo(
            pid as libc::c_int,
            libc::PROC_PIDTBSDINFO,
            0,
            info.as_mut_ptr().cast(),
            size,
        )
    };
    if n != size {
        return None;
    }
    // SAFETY: proc_pidinfo filled the whole structure (n == size).
    Some(unsafe { info.assume_init() }.pbi_uid)
}

/// Elsewhere the owner is unknown: `kill`'s permission check is all there is.
#[cfg(all(unix, not(any(target_os = "linux", target_os = "macos"))))]
fn pid_owner(_pid: u32) -> Option<u32> {
    None
}

/// The largest lock file read (ours are a few hundred bytes; the relay uses the same limit).
const MAX_LOCK_FILE: u64 = 64 << 10;

/// Deletes lock files in `dir` written by an editor of `kind` ([`LockContent::kind`]) whose
/// process is gone. Returns the paths removed. Files of other IDEs and unreadable files are left
/// alone.
pub fn clean_stale(dir: &Path, kind: &str) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return removed;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.extension().and_then(|x| x.to_str()) != Some("lock") {
            continue;
        }
        // Another process may have planted anything here: a symlink, a FIFO or a huge file is
        // skipped, never followed, waited on nor read whole.
        let Ok((bytes, _)) = crate::capfs::read_untrusted_file(&p, MAX_LOCK_FILE) else {
            continue;
        };
        let Ok(c) = serde_json::from_slice::<LockContent>(&bytes) else {
            continue;
        };
        if c.kind() == kind && !pid_alive(c.pid) && std::fs::remove_file(&p).is_ok() {
            removed.push(p);
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn content(token: &str, pid: u32) -> LockContent {
        LockContent {
            pid,
            workspace_folders: vec!["/w".into()],
            ide_name: "Neovim (w, pid 1)".into(),
            transport: "ws".into(),
            auth_token: token.into(),
            ide_kind: Some(KIND.into()),
        }
    }

    #[test]
    fn create_update_remove() {
        let dir = tempfile::tempdir().unwrap();
        let ide = dir.path().join("ide");
        let mut l = LockFile::create(&ide, 12345, content("t", std::process::id())).unwrap();
        let p = l.path().to_path_buf();
        assert_eq!(p, ide.join("12345.lock"));
        let read: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        assert_eq!(read["transport"], "ws");
        assert_eq!(read["ideName"], "Neovim (w, pid 1)");
        assert_eq!(read["ideKind"], "Neovim");
        assert_eq!(read["authToken"], "t");
        assert_eq!(read["workspaceFolders"][0], "/w");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let m = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(m(&p), 0o600);
            assert_eq!(m(&ide), 0o700);
        }
        assert!(!l.update_folders(vec!["/w".into()]).unwrap());
        assert!(l.update_folders(vec!["/x".into(), "/y".into()]).unwrap());
        let read: LockContent = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        assert_eq!(read.workspace_folders, vec!["/x", "/y"]);
        l.remove();
        assert!(!p.exists());
    }

    #[test]
    fn pid_state_of_ours_and_of_none() {
        assert_eq!(pid_state(std::process::id()), PidState::Mine);
        assert!(pid_alive(std::process::id()));
        // Above Linux's pid_max, and the values kill() cannot take.
        assert_eq!(pid_state(0x7fff_fff0), PidState::Gone);
        assert_eq!(pid_state(0), PidState::Gone);
        assert_eq!(pid_state(u32::MAX), PidState::Gone);
    }

    #[test]
    fn debug_output_masks_the_token() {
        let dir = tempfile::tempdir().unwrap();
        let token = "0123456789abcdef0123456789abcdef";
        let l = LockFile::create(dir.path(), 2, content(token, 1)).unwrap();
        let shown = format!("{l:?} {:?}", l.content());
        assert!(shown.contains("0123****"), "{shown}");
        assert!(!shown.contains(&token[4..]), "{shown}");
    }

    #[test]
    fn does_not_delete_a_lock_file_that_is_no_longer_ours() {
        let dir = tempfile::tempdir().unwrap();
        let l = LockFile::create(dir.path(), 1, content("mine", 1)).unwrap();
        let p = l.path().to_path_buf();
        std::fs::write(&p, serde_json::to_vec(&content("theirs", 1)).unwrap()).unwrap();
        drop(l);
        assert!(p.exists());
    }

    #[test]
    fn cleans_only_dead_editors_of_ours() {
        let dir = tempfile::tempdir().unwrap();
        // A pid that cannot exist on Linux (pid_max <= 2^22).
        let dead = 0x7fff_fff0;
        let w = |name: &str, c: LockContent| {
            std::fs::write(dir.path().join(name), serde_json::to_vec(&c).unwrap()).unwrap()
        };
        w("1.lock", content("a", dead));
        w("2.lock", content("b", std::process::id()));
        let mut other = content("c", dead);
        other.ide_name = "Visual Studio Code".into();
        other.ide_kind = None;
        w("3.lock", other);
        std::fs::write(dir.path().join("4.lock"), b"not json").unwrap();
        // Ours whatever the ideName says (a renamed one), and ours from before ideKind existed.
        let mut renamed = content("d", dead);
        renamed.ide_name = "my editor".into();
        w("5.lock", renamed);
        let mut older = content("e", dead);
        older.ide_name = "Neovim".into();
        older.ide_kind = None;
        w("6.lock", older);
        // Another IDE that happens to be called "Neovim (…)" is not ours.
        let mut lookalike = content("f", dead);
        lookalike.ide_kind = Some("Other".into());
        w("7.lock", lookalike);
        // A FIFO planted as a lock file (the lock directory may be shared): skipped at once,
        // not waited on (the editor's start would hang on it).
        #[cfg(unix)]
        {
            let c = std::ffi::CString::new(dir.path().join("8.lock").to_str().unwrap()).unwrap();
            // SAFETY: a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        }
        let mut removed = clean_stale(dir.path(), KIND);
        removed.sort();
        assert_eq!(
            removed,
            vec![
                dir.path().join("1.lock"),
                dir.path().join("5.lock"),
                dir.path().join("6.lock")
            ]
        );
        assert!(dir.path().join("2.lock").exists());
        assert!(dir.path().join("3.lock").exists());
        assert!(dir.path().join("4.lock").exists());
        assert!(dir.path().join("7.lock").exists());
    }
}
