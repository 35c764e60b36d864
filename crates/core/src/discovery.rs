//! Finding a running editor from outside it (the `claude-context-mcp` relay): read the lock
//! files Claude Code reads (`<lock dir>/<port>.lock`, see [`crate::lockfile`]) and pick the one
//! this process belongs to.
//!
//! Order of preference:
//! 1. `CLAUDE_CODE_SSE_PORT=<port>` (set in terminals the editor starts): that port's lock file,
//!    when it is ours (`ideName` matches) and its editor is alive.
//! 2. Lock files whose `workspaceFolders` contain the current directory; the deepest folder wins
//!    (a nested project beats its parent), then the most recently written file.
//!
//! Lock files of other IDEs, of dead processes and unreadable ones are skipped; every skip is
//! remembered so that "nothing found" can say what was looked at.
//!
//! Trust (Unix): a lock file hands us a port and a token, so only the user's own lock files are
//! believed. The lock directory must belong to the user and be neither group- nor
//! world-writable (else nothing in it is used), and each lock file must be a regular file owned
//! by the user (opened without following a symlink and without blocking). Every refusal is in
//! [`Found::refused`] and says why.

use crate::lockfile::{self, LockContent};
use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;

/// One editor we can connect to.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub port: u16,
    pub token: String,
    pub pid: u32,
    pub lock_file: PathBuf,
    /// The workspace folder that matched the cwd (`None` when chosen by port).
    pub folder: Option<PathBuf>,
}

/// What [`discover`] looks at; [`Query::from_env`] fills it from the process environment.
#[derive(Debug, Clone)]
pub struct Query {
    pub lock_dir: PathBuf,
    pub cwd: PathBuf,
    /// The raw value of `CLAUDE_CODE_SSE_PORT`, if set and not empty.
    pub sse_port: Option<String>,
    /// `ideName` to accept (the bridge writes "Neovim").
    pub ide_name: String,
    /// The uid lock files and their directory must belong to (the effective uid); `None`
    /// checks no ownership (not Unix).
    pub owner_uid: Option<u32>,
}

/// The effective uid on Unix, `None` elsewhere.
pub fn current_uid() -> Option<u32> {
    #[cfg(unix)]
    {
        // SAFETY: geteuid has no preconditions and cannot fail.
        Some(unsafe { libc::geteuid() })
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Why the editors cannot be looked for, or a lock directory is not trusted.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    /// Neither `CLAUDE_CONFIG_DIR` nor `HOME` says where the lock files are.
    #[error(transparent)]
    LockDir(#[from] lockfile::LockError),
    #[error("cannot read the current directory: {0}")]
    Cwd(std::io::Error),
    #[error(
        "{dir}: the lock directory belongs to uid {owner}, not to you (uid {uid}); its lock \
         files are not trusted"
    )]
    ForeignOwner { dir: String, owner: u32, uid: u32 },
    #[error(
        "{dir}: the lock directory is writable by {by} (mode {mode:04o}), so anyone could plant \
         a lock file there; its lock files are not trusted (chmod go-w it, 0700 is usual)"
    )]
    Writable {
        dir: String,
        by: &'static str,
        mode: u32,
    },
    /// A lock file that is a symbolic link (never followed).
    #[error("a symlink, not a lock file: ignored")]
    LockFileLink,
    #[error("not a regular file: ignored")]
    LockFileNotRegular,
    #[error("owned by uid {owner}, not by you (uid {uid}): not trusted, ignored")]
    LockFileForeign { owner: u32, uid: u32 },
    #[error("unreadable (over {MAX_LOCK_FILE} bytes)")]
    LockFileTooLarge,
    #[error("unreadable ({0})")]
    LockFileIo(std::io::Error),
    #[error("unreadable ({0})")]
    LockFileUnreadable(crate::capfs::CapError),
}

impl crate::error::Fault for DiscoveryError {}

impl DiscoveryError {
    /// Whether a lock file was refused for trust (said at once), not merely unreadable (a note).
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            DiscoveryError::LockFileLink
                | DiscoveryError::LockFileNotRegular
                | DiscoveryError::LockFileForeign { .. }
        )
    }
}

/// The most bytes read from one lock file (they are a few hundred).
const MAX_LOCK_FILE: u64 = 64 << 10;

impl Query {
    /// `$CLAUDE_CONFIG_DIR/ide` (or `~/.claude/ide`), the current directory and
    /// `CLAUDE_CODE_SSE_PORT`.
    pub fn from_env() -> Result<Query, DiscoveryError> {
        let lock_dir = lockfile::default_lock_dir()?;
        let cwd = std::env::current_dir().map_err(DiscoveryError::Cwd)?;
        let sse_port = std::env::var("CLAUDE_CODE_SSE_PORT")
            .ok()
            .filter(|s| !s.trim().is_empty());
        Ok(Query {
            lock_dir,
            cwd,
            sse_port,
            ide_name: "Neovim".into(),
            owner_uid: current_uid(),
        })
    }
}

/// The outcome of a search: the candidates in order of preference, and notes on what was
/// skipped (for the error message when the list is empty or every candidate fails).
#[derive(Debug, Default)]
pub struct Found {
    pub candidates: Vec<Candidate>,
    pub notes: Vec<String>,
    pub lock_files_seen: usize,
    /// Lock files (or the whole directory) not trusted, and why; also in `notes`. The relay
    /// prints these on stderr even when it finds an editor.
    pub refused: Vec<String>,
}

impl Found {
    fn refuse(&mut self, why: String) {
        self.notes.push(why.clone());
        self.refused.push(why);
    }
}

impl Found {
    /// The message for "no editor": names the lock directory, the cwd and what was skipped.
    pub fn explain(&self, q: &Query) -> String {
        let mut s = format!(
            "no running Neovim with claude-context.nvim has a workspace folder containing {} \
             (looked in {}: {} lock file{})",
            q.cwd.display(),
            q.lock_dir.display(),
            self.lock_files_seen,
            if self.lock_files_seen == 1 { "" } else { "s" },
        );
        for n in &self.notes {
            s.push_str("\n  - ");
            s.push_str(n);
        }
        s.push_str(
            "\nStart Neovim in this project (with require(\"claude_context\").setup() or \
             :ClaudeContext start), or set CLAUDE_CODE_SSE_PORT to the bridge's port \
             (:ClaudeContext status shows it).",
        );
        s
    }
}

/// Lexical normalisation: drops `.`, resolves `..` against earlier components. Used when a
/// path cannot be canonicalised (a workspace folder that was deleted).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(c);
                }
            }
            other => out.push(other),
        }
    }
    out
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| normalize(p))
}

/// Whether `dir` is `folder` or below it (whole components: `/a/bc` is not inside `/a/b`).
pub fn contains(folder: &Path, dir: &Path) -> bool {
    dir.starts_with(folder)
}

struct Lock {
    path: PathBuf,
    port: u16,
    content: LockContent,
    mtime: SystemTime,
}

/// Whether the lock directory may be trusted: owned by `uid`, not writable by group or others.
#[cfg(unix)]
fn check_dir(dir: &Path, uid: Option<u32>) -> Result<(), DiscoveryError> {
    use std::os::unix::fs::MetadataExt;
    let Some(uid) = uid else { return Ok(()) };
    // Following a symlinked lock directory is fine; what it points at is judged.
    // A directory that cannot be read is reported by the listing that follows.
    let Ok(m) = std::fs::metadata(dir) else {
        return Ok(());
    };
    if m.uid() != uid {
        return Err(DiscoveryError::ForeignOwner {
            dir: dir.display().to_string(),
            owner: m.uid(),
            uid,
        });
    }
    if m.mode() & 0o022 != 0 {
        return Err(DiscoveryError::Writable {
            dir: dir.display().to_string(),
            by: if m.mode() & 0o002 != 0 {
                "everyone"
            } else {
                "its group"
            },
            mode: m.mode() & 0o7777,
        });
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_dir(_dir: &Path, _uid: Option<u32>) -> Result<(), DiscoveryError> {
    Ok(())
}

/// Reads one lock file: a regular file owned by `uid` (no symlink followed, no blocking open),
/// at most [`MAX_LOCK_FILE`] bytes; the error is a trust refusal
/// ([`DiscoveryError::is_refusal`]) or an unreadable file.
fn read_lock_file(path: &Path, uid: Option<u32>) -> Result<Vec<u8>, DiscoveryError> {
    use crate::capfs::{read_untrusted_file, CapError, SYMLINK};
    let (bytes, m) = read_untrusted_file(path, MAX_LOCK_FILE).map_err(|e| match e {
        CapError::NotRegular { kind: SYMLINK, .. } => DiscoveryError::LockFileLink,
        CapError::NotRegular { .. } => DiscoveryError::LockFileNotRegular,
        CapError::TooLarge { .. } => DiscoveryError::LockFileTooLarge,
        CapError::Io { err, .. } => DiscoveryError::LockFileIo(err),
        e => DiscoveryError::LockFileUnreadable(e),
    })?;
    #[cfg(unix)]
    if let Some(uid) = uid {
        use std::os::unix::fs::MetadataExt;
        if m.uid() != uid {
            return Err(DiscoveryError::LockFileForeign {
                owner: m.uid(),
                uid,
            });
        }
    }
    #[cfg(not(unix))]
    let _ = (uid, m);
    Ok(bytes)
}

fn read_locks(dir: &Path, uid: Option<u32>, found: &mut Found) -> Vec<Lock> {
    let mut out = Vec::new();
    if let Err(why) = check_dir(dir, uid) {
        found.refuse(why.to_string());
        return out;
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            found
                .notes
                .push(format!("cannot read {}: {e}", dir.display()));
            return out;
        }
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().and_then(|x| x.to_str()) != Some("lock") {
            continue;
        }
        found.lock_files_seen += 1;
        let name = path.display().to_string();
        let Some(port) = path
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(|s| s.parse::<u16>().ok())
            .filter(|p| *p != 0)
        else {
            found
                .notes
                .push(format!("{name}: the name is not <port>.lock"));
            continue;
        };
        let bytes = match read_lock_file(&path, uid) {
            Ok(b) => b,
            Err(why) if why.is_refusal() => {
                found.refuse(format!("{name}: {why}"));
                continue;
            }
            Err(why) => {
                found.notes.push(format!("{name}: {why}"));
                continue;
            }
        };
        let content = match serde_json::from_slice::<LockContent>(&bytes) {
            Ok(c) => c,
            Err(err) => {
                found.notes.push(format!("{name}: unreadable ({err})"));
                continue;
            }
        };
        let mtime = e
            .metadata()
            .and_then(|m| m.modified())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        out.push(Lock {
            path,
            port,
            content,
            mtime,
        });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

fn candidate(l: &Lock, folder: Option<PathBuf>) -> Candidate {
    Candidate {
        port: l.port,
        token: l.content.auth_token.clone(),
        pid: l.content.pid,
        lock_file: l.path.clone(),
        folder,
    }
}

/// Searches `q.lock_dir` (see the module docs for the order). Never fails: problems become
/// notes, and an empty candidate list means "no editor".
pub fn discover(q: &Query) -> Found {
    let mut found = Found::default();
    let locks = read_locks(&q.lock_dir, q.owner_uid, &mut found);

    // 1. The port the editor's terminal told us.
    let mut by_port: Option<u16> = None;
    if let Some(raw) = &q.sse_port {
        match raw.trim().parse::<u16>() {
            Ok(p) if p != 0 => {
                by_port = Some(p);
                match locks.iter().find(|l| l.port == p) {
                    Some(l) if usable(q, l, &mut found) => {
                        found.candidates.push(candidate(l, None));
                    }
                    Some(_) => {}
                    None => found.notes.push(format!(
                        "CLAUDE_CODE_SSE_PORT={p}: there is no {p}.lock in {}",
                        q.lock_dir.display()
                    )),
                }
            }
            _ => found.notes.push(format!(
                "CLAUDE_CODE_SSE_PORT={raw:?} is not a port number; ignored"
            )),
        }
    }

    // 2. Workspace folders containing the cwd, deepest first, then newest.
    let cwd = canonical(&q.cwd);
    let mut matches: Vec<(usize, SystemTime, &Lock, PathBuf)> = Vec::new();
    for l in &locks {
        if Some(l.port) == by_port {
            continue; // already judged above
        }
        let best = l
            .content
            .workspace_folders
            .iter()
            .filter(|f| Path::new(f).is_absolute())
            .map(|f| canonical(Path::new(f)))
            .filter(|f| contains(f, &cwd))
            .max_by_key(|f| f.components().count());
        let Some(folder) = best else {
            continue;
        };
        if !usable(q, l, &mut found) {
            continue;
        }
        matches.push((folder.components().count(), l.mtime, l, folder));
    }
    matches.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    found.candidates.extend(
        matches
            .into_iter()
            .map(|(_, _, l, folder)| candidate(l, Some(folder))),
    );
    found
}

/// Whether lock `l` is an editor `q` may use: its IDE, WebSocket transport, a live process of
/// this user; why not goes to `found`'s notes.
fn usable(q: &Query, l: &Lock, found: &mut Found) -> bool {
    let name = l.path.display();
    if l.content.kind() != q.ide_name {
        found.notes.push(format!(
            "{name}: belongs to {:?}, not {}",
            l.content.ide_name, q.ide_name
        ));
        return false;
    }
    if l.content.transport != "ws" {
        found.notes.push(format!(
            "{name}: transport {:?} is not \"ws\"",
            l.content.transport
        ));
        return false;
    }
    match lockfile::pid_state(l.content.pid) {
        lockfile::PidState::Mine => true,
        lockfile::PidState::Gone => {
            found.notes.push(format!(
                "{name}: its editor (pid {}) is no longer running",
                l.content.pid
            ));
            false
        }
        lockfile::PidState::OtherUser(uid) => {
            found.notes.push(format!(
                "{name}: stale: pid {} is a process of another user{}, not your editor",
                l.content.pid,
                uid.map(|u| format!(" (uid {u})")).unwrap_or_default()
            ));
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEAD: u32 = 0x7fff_fff0; // above Linux's pid_max

    struct Env {
        _tmp: tempfile::TempDir,
        locks: PathBuf,
        root: PathBuf,
    }

    fn env() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let locks = root.join("ide");
        std::fs::create_dir_all(&locks).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&locks, std::fs::Permissions::from_mode(0o700)).unwrap();
        }
        Env {
            _tmp: tmp,
            locks,
            root,
        }
    }

    impl Env {
        fn dir(&self, rel: &str) -> PathBuf {
            let d = self.root.join(rel);
            std::fs::create_dir_all(&d).unwrap();
            d
        }

        fn lock(&self, port: u16, pid: u32, ide: &str, folders: &[&Path], token: &str) {
            let c = LockContent {
                pid,
                workspace_folders: folders
                    .iter()
                    .map(|f| f.to_string_lossy().into_owned())
                    .collect(),
                ide_name: ide.into(),
                transport: "ws".into(),
                auth_token: token.into(),
                ide_kind: None,
            };
            std::fs::write(
                self.locks.join(format!("{port}.lock")),
                serde_json::to_vec(&c).unwrap(),
            )
            .unwrap();
        }

        fn query(&self, cwd: &Path, port: Option<&str>) -> Query {
            Query {
                lock_dir: self.locks.clone(),
                cwd: cwd.to_path_buf(),
                sse_port: port.map(String::from),
                ide_name: "Neovim".into(),
                owner_uid: current_uid(),
            }
        }
    }

    fn me() -> u32 {
        std::process::id()
    }

    fn ports(f: &Found) -> Vec<u16> {
        f.candidates.iter().map(|c| c.port).collect()
    }

    #[test]
    fn finds_the_editor_whose_folder_contains_the_cwd() {
        let e = env();
        let proj = e.dir("proj");
        let other = e.dir("other");
        let sub = e.dir("proj/src/deep");
        e.lock(20001, me(), "Neovim", &[&other], "t1");
        e.lock(20002, me(), "Neovim", &[&proj], "t2");
        let f = discover(&e.query(&sub, None));
        assert_eq!(ports(&f), vec![20002]);
        let c = &f.candidates[0];
        assert_eq!(c.token, "t2");
        assert_eq!(c.pid, me());
        assert_eq!(c.folder.as_deref(), Some(proj.as_path()));
        assert_eq!(c.lock_file, e.locks.join("20002.lock"));
        assert_eq!(f.lock_files_seen, 2);
    }

    #[test]
    fn the_deepest_folder_wins() {
        let e = env();
        let outer = e.dir("mono");
        let inner = e.dir("mono/packages/app");
        let cwd = e.dir("mono/packages/app/lib");
        e.lock(20010, me(), "Neovim", &[&outer], "outer");
        e.lock(20011, me(), "Neovim", &[&inner], "inner");
        // A lock with several folders is judged by its deepest matching one.
        e.lock(20012, me(), "Neovim", &[&e.dir("x"), &outer], "outer2");
        let f = discover(&e.query(&cwd, None));
        assert_eq!(f.candidates[0].port, 20011);
        assert_eq!(f.candidates.len(), 3);
        // From the outer folder only the outer editors match.
        let f = discover(&e.query(&outer, None));
        let mut p = ports(&f);
        p.sort();
        assert_eq!(p, vec![20010, 20012]);
    }

    #[test]
    fn component_boundaries_matter() {
        let e = env();
        let ab = e.dir("a/b");
        let abc = e.dir("a/bc");
        e.lock(20020, me(), "Neovim", &[&ab], "t");
        let f = discover(&e.query(&abc, None));
        assert!(f.candidates.is_empty(), "{:?}", f.candidates);
        assert!(contains(&ab, &ab.join("x")));
        assert!(!contains(&ab, &abc));
    }

    #[test]
    fn skips_dead_editors_other_ides_and_garbage_and_says_so() {
        let e = env();
        let proj = e.dir("proj");
        e.lock(20030, DEAD, "Neovim", &[&proj], "dead");
        e.lock(20031, me(), "Visual Studio Code", &[&proj], "vscode");
        std::fs::write(e.locks.join("20032.lock"), b"{not json").unwrap();
        std::fs::write(e.locks.join("notaport.lock"), b"{}").unwrap();
        std::fs::write(e.locks.join("README"), b"ignored").unwrap();
        let q = e.query(&proj, None);
        let f = discover(&q);
        assert!(f.candidates.is_empty(), "{:?}", f.candidates);
        assert_eq!(f.lock_files_seen, 4);
        let msg = f.explain(&q);
        assert!(msg.contains(&e.locks.display().to_string()), "{msg}");
        assert!(msg.contains(&proj.display().to_string()), "{msg}");
        assert!(
            msg.contains("20030.lock") && msg.contains("no longer running"),
            "{msg}"
        );
        assert!(msg.contains("Visual Studio Code"), "{msg}");
        assert!(
            msg.contains("20032.lock") && msg.contains("unreadable"),
            "{msg}"
        );
        assert!(msg.contains("notaport.lock"), "{msg}");
        // Nothing was deleted: that is the CLI's and the editor's business.
        assert!(e.locks.join("20030.lock").exists());
    }

    #[test]
    fn a_named_neovim_is_found_by_its_ide_kind() {
        let e = env();
        let proj = e.dir("proj");
        // The lock files this plugin writes: ideName tells two Neovims apart, ideKind says Neovim.
        let write = |port: u16, name: &str, kind: Option<&str>| {
            let c = LockContent {
                pid: me(),
                workspace_folders: vec![proj.to_string_lossy().into_owned()],
                ide_name: name.into(),
                transport: "ws".into(),
                auth_token: "t".into(),
                ide_kind: kind.map(String::from),
            };
            std::fs::write(
                e.locks.join(format!("{port}.lock")),
                serde_json::to_vec(&c).unwrap(),
            )
            .unwrap();
        };
        write(20050, "Neovim (proj, pid 1)", Some("Neovim"));
        write(20051, "my editor", Some("Neovim"));
        // Named like us, written by something else.
        write(20052, "Neovim (proj, pid 2)", Some("Other"));
        let mut p = ports(&discover(&e.query(&proj, None)));
        p.sort();
        assert_eq!(p, vec![20050, 20051]);
    }

    #[test]
    fn a_missing_lock_dir_is_an_explained_empty_result() {
        let e = env();
        let mut q = e.query(&e.root, None);
        q.lock_dir = e.root.join("nope");
        let f = discover(&q);
        assert!(f.candidates.is_empty());
        let msg = f.explain(&q);
        assert!(msg.contains("cannot read"), "{msg}");
        assert!(msg.contains("0 lock files"), "{msg}");
        assert!(
            f.refused.is_empty(),
            "a missing directory is no trust refusal"
        );
    }

    #[test]
    fn sse_port_comes_first_even_outside_the_workspace() {
        let e = env();
        let proj = e.dir("proj");
        let elsewhere = e.dir("elsewhere");
        e.lock(20040, me(), "Neovim", &[&proj], "byport");
        e.lock(20041, me(), "Neovim", &[&elsewhere], "bycwd");
        let f = discover(&e.query(&elsewhere, Some("20040")));
        assert_eq!(ports(&f), vec![20040, 20041]);
        assert_eq!(f.candidates[0].token, "byport");
        assert_eq!(f.candidates[0].folder, None);
        // The same lock is not listed twice when it also matches by folder.
        let f = discover(&e.query(&proj, Some("20040")));
        assert_eq!(ports(&f), vec![20040]);
    }

    #[test]
    fn a_bad_or_unknown_sse_port_falls_back_to_the_cwd() {
        let e = env();
        let proj = e.dir("proj");
        e.lock(20050, me(), "Neovim", &[&proj], "t");
        e.lock(20051, DEAD, "Neovim", &[&proj], "dead");
        for (port, note) in [
            ("abc", "not a port number"),
            ("0", "not a port number"),
            ("20059", "no 20059.lock"),
            ("20051", "no longer running"),
        ] {
            let q = e.query(&proj, Some(port));
            let f = discover(&q);
            assert_eq!(ports(&f), vec![20050], "port {port}");
            assert!(
                f.notes.iter().any(|n| n.contains(note)),
                "{port}: {:?}",
                f.notes
            );
        }
    }

    #[test]
    fn sse_port_of_another_ide_is_not_used() {
        let e = env();
        let proj = e.dir("proj");
        e.lock(20060, me(), "Visual Studio Code", &[&proj], "vscode");
        let f = discover(&e.query(&proj, Some("20060")));
        assert!(f.candidates.is_empty());
    }

    #[test]
    fn ties_go_to_the_newest_lock_file() {
        let e = env();
        let proj = e.dir("proj");
        e.lock(20070, me(), "Neovim", &[&proj], "old");
        e.lock(20071, me(), "Neovim", &[&proj], "new");
        let old = std::fs::File::options()
            .write(true)
            .open(e.locks.join("20070.lock"))
            .unwrap();
        old.set_modified(SystemTime::now() - std::time::Duration::from_secs(3600))
            .unwrap();
        let f = discover(&e.query(&proj, None));
        assert_eq!(ports(&f), vec![20071, 20070]);
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_cwd_and_relative_segments_are_resolved() {
        let e = env();
        let proj = e.dir("proj");
        let sub = e.dir("proj/sub");
        let link = e.root.join("link");
        std::os::unix::fs::symlink(&sub, &link).unwrap();
        // The folder is written with a `..` segment; the cwd is reached through a symlink.
        let odd = e.root.join("proj/sub/../");
        e.lock(20080, me(), "Neovim", &[&odd], "t");
        let f = discover(&e.query(&link, None));
        assert_eq!(ports(&f), vec![20080]);
        assert_eq!(f.candidates[0].folder.as_deref(), Some(proj.as_path()));
        // Relative folders are ignored, never matched against the cwd.
        e.lock(20081, me(), "Neovim", &[Path::new("proj")], "rel");
        let f = discover(&e.query(&proj, None));
        assert_eq!(ports(&f), vec![20080]);
    }

    /// The attack: another local user (or a process of one) plants `<port>.lock` in a shared,
    /// world-writable lock directory pointing the relay at its own server.
    #[cfg(unix)]
    #[test]
    fn a_lock_in_a_world_or_group_writable_dir_is_not_trusted() {
        use std::os::unix::fs::PermissionsExt;
        let e = env();
        let proj = e.dir("proj");
        e.lock(20090, me(), "Neovim", &[&proj], "planted");
        for (mode, who) in [
            (0o777, "everyone"),
            (0o1777, "everyone"),
            (0o770, "its group"),
        ] {
            std::fs::set_permissions(&e.locks, std::fs::Permissions::from_mode(mode)).unwrap();
            let q = e.query(&proj, Some("20090"));
            let f = discover(&q);
            assert!(f.candidates.is_empty(), "{mode:o}: {:?}", f.candidates);
            assert_eq!(f.refused.len(), 1, "{:?}", f.refused);
            assert!(
                f.refused[0].contains(&format!("writable by {who}"))
                    && f.refused[0].contains("not trusted"),
                "{:?}",
                f.refused
            );
            assert!(f.explain(&q).contains("writable by"));
        }
        std::fs::set_permissions(&e.locks, std::fs::Permissions::from_mode(0o700)).unwrap();
        let f = discover(&e.query(&proj, None));
        assert_eq!(ports(&f), vec![20090]);
        assert!(f.refused.is_empty());
        // A 0700 directory that is someone else's is not trusted either.
        let mut q = e.query(&proj, None);
        if current_uid() == Some(0) {
            std::os::unix::fs::chown(&e.locks, Some(54_321), None).unwrap();
        } else {
            q.owner_uid = Some(54_321);
        }
        let f = discover(&q);
        assert!(f.candidates.is_empty());
        assert!(
            f.refused[0].contains("belongs to uid") && f.refused[0].contains("not trusted"),
            "{:?}",
            f.refused
        );
    }

    /// The attack: a lock file that is not the user's (another uid) — its token and port are the
    /// other party's. As root we chown a real file to another uid; otherwise the expected owner
    /// is set to another uid, so the user's own file is the foreign one.
    #[cfg(unix)]
    #[test]
    fn a_lock_file_owned_by_another_uid_is_not_trusted() {
        let e = env();
        let proj = e.dir("proj");
        e.lock(20100, me(), "Neovim", &[&proj], "theirs");
        e.lock(20101, me(), "Neovim", &[&proj], "mine");
        let mut q = e.query(&proj, Some("20100"));
        let other = 54_321;
        if current_uid() == Some(0) {
            std::os::unix::fs::chown(e.locks.join("20100.lock"), Some(other), Some(other)).unwrap();
        } else {
            // Nothing can be chowned away without root: make our own uid the foreign one and
            // check the other lock fails the same way.
            q.owner_uid = Some(other);
        }
        let f = discover(&q);
        if current_uid() == Some(0) {
            assert_eq!(ports(&f), vec![20101], "{:?}", f.notes);
            assert_eq!(f.refused.len(), 1, "{:?}", f.refused);
            assert!(
                f.refused[0].contains("20100.lock")
                    && f.refused[0].contains(&format!("owned by uid {other}"))
                    && f.refused[0].contains("not trusted"),
                "{:?}",
                f.refused
            );
        } else {
            assert!(f.candidates.is_empty());
            assert!(f.refused.iter().any(|r| r.contains("not trusted")));
        }
    }

    /// The attack: a FIFO or a symlink named `<port>.lock` (to /dev/zero, a FIFO, another user's
    /// file) that would block or mislead the relay.
    #[cfg(unix)]
    #[test]
    fn a_fifo_or_symlink_lock_is_refused_without_blocking() {
        let e = env();
        let proj = e.dir("proj");
        let fifo = e.locks.join("20110.lock");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        std::os::unix::fs::symlink("/dev/zero", e.locks.join("20111.lock")).unwrap();
        e.lock(20112, me(), "Neovim", &[&proj], "real");
        let f = discover(&e.query(&proj, None));
        assert_eq!(ports(&f), vec![20112]);
        assert!(
            f.refused
                .iter()
                .any(|r| r.contains("20110.lock") && r.contains("not a regular file")),
            "{:?}",
            f.refused
        );
        assert!(
            f.refused
                .iter()
                .any(|r| r.contains("20111.lock") && r.contains("symlink")),
            "{:?}",
            f.refused
        );
    }

    #[test]
    fn normalize_is_lexical() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(normalize(Path::new("/a/b/..")), PathBuf::from("/a"));
    }
}
