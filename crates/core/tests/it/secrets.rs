//! Secrets: the auth token never reaches the log (even at trace level, even when clients
//! present wrong or near-miss tokens), `status()` shows it masked, it is in no process's
//! arguments and in no file but the 0600 lock file; lock files of dead editors of ours are
//! removed when the bridge starts.
// Unix only: it measures file modes and /proc.
#![cfg(unix)]

use crate::common;

use claude_context_core::config::Config;
use claude_context_core::editor::{EditorState, NoEditor};
use claude_context_core::lockfile::LockContent;
use claude_context_core::server::Server;
use common::{Raw, AUTH_HEADER};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(t) if t.is_file() => out.push(p),
                _ => {}
            }
        }
    }
    out
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// Every process's arguments (ours and any children included).
fn all_cmdlines() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.chars().all(|c| c.is_ascii_digit()) {
            if let Ok(c) = std::fs::read(e.path().join("cmdline")) {
                out.push((name, c));
            }
        }
    }
    out
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[cfg(target_os = "linux")]
#[test]
fn the_token_stays_out_of_logs_status_arguments_and_other_files() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log/claude-context.log");
    claude_context_core::logging::init(Some(log.clone()), "trace").unwrap();
    let state_dir = dir.path().join("state");
    let srv = common::start(json!({"state_dir": state_dir}));
    let token = srv.token.clone();
    assert_eq!(token.len(), 32);
    // The part of the token that masking hides: this must never appear anywhere but the lock.
    let secret = &token[4..];

    // A busy session: good and bad handshakes, every tool, odd messages, a clean close.
    let mut c = srv.client();
    c.call(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "clientInfo": {"name": "secrets", "version": "1"}}),
    );
    c.send_text(r#"{"jsonrpc":"2.0","method":"ide_connected","params":{"pid":1}}"#)
        .unwrap();
    c.call("tools/list", json!({}));
    c.tool("getWorkspaceFolders", json!({}));
    c.tool("fs-get-project-info", json!({"stats": true}));
    c.tool("fs-read-file", json!({"path": "README.md"}));
    c.tool("fs-list-directory", json!({"path": "."}));
    c.tool(
        "fs-write-file",
        json!({"path": "out/new.txt", "content": "hello"}),
    );
    c.tool("fs-read-file", json!({"path": "../../etc/passwd"}));
    c.roundtrip("not json");
    c.roundtrip(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{token}"}}"#));
    let mut near_miss = token.clone().into_bytes();
    near_miss[31] = if near_miss[31] == b'0' { b'1' } else { b'0' };
    let near_miss = String::from_utf8(near_miss).unwrap();
    for headers in [
        vec![(AUTH_HEADER, near_miss.as_str())],
        vec![(AUTH_HEADER, &token[..31])],
        vec![
            (AUTH_HEADER, token.as_str()),
            ("Origin", "http://evil.invalid"),
        ],
        vec![("Authorization", token.as_str())],
    ] {
        let (status, _) = Raw::try_connect(srv.port, &headers).unwrap();
        assert!(!status.contains("101"), "{status}");
    }
    c.send_raw(&common::encode(true, 0, 0x8, &[0x03, 0xe8], true, None))
        .unwrap();
    c.expect_close();

    // status(): masked.
    let st = srv.server.shared().status();
    assert!(st.token.starts_with(&token[..4]), "{}", st.token);
    assert!(!st.token.contains(secret));
    let st_json = serde_json::to_string(&st).unwrap();
    assert!(!st_json.contains(secret), "{st_json}");
    assert!(!format!("{st:?}").contains(secret));

    // Process arguments: no process shows it.
    for (pid, cmd) in all_cmdlines() {
        assert!(
            !contains(&cmd, secret),
            "process {pid} has the token in its arguments"
        );
    }

    // Files: only the lock file (0600, in a 0700 directory) holds it.
    let lock = PathBuf::from(st.lock_file.clone().unwrap());
    let mut holders = Vec::new();
    for f in files_under(dir.path())
        .into_iter()
        .chain(files_under(srv.dir.path()))
    {
        if contains(&std::fs::read(&f).unwrap_or_default(), secret) {
            holders.push(f);
        }
    }
    assert_eq!(holders, vec![lock.clone()]);
    assert_eq!(mode(&lock), 0o600);
    assert_eq!(mode(lock.parent().unwrap()), 0o700);
    let lc: LockContent = serde_json::from_slice(&std::fs::read(&lock).unwrap()).unwrap();
    assert_eq!(lc.auth_token, token);

    // The log saw the whole session at trace level, and never the token.
    let lock_dir = srv.lock_dir.clone();
    drop(srv); // stop: the lock file goes away
    assert!(!lock.exists());
    let text = std::fs::read_to_string(&log).unwrap();
    for expected in [
        "client connected",
        "handshake refused",
        "initialized",
        "ide_connected",
        "bridge stopped",
    ] {
        assert!(
            text.contains(expected),
            "no '{expected}' in the log:\n{text}"
        );
    }
    assert!(!text.contains(secret), "the token is in the log");
    assert!(
        !text.contains(&near_miss[4..]),
        "a presented token is in the log"
    );
    // After stopping, no file anywhere in the session's directories holds it.
    for f in files_under(dir.path())
        .into_iter()
        .chain(files_under(&lock_dir))
    {
        assert!(
            !contains(&std::fs::read(&f).unwrap_or_default(), secret),
            "{}",
            f.display()
        );
    }
    claude_context_core::logging::init(None, "info").unwrap();
}

#[cfg(unix)]
#[test]
fn lock_files_of_dead_editors_of_ours_are_removed_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let lock_dir = dir.path().join("ide");
    std::fs::create_dir_all(&lock_dir).unwrap();
    let dead = 0x7fff_fff0; // above any Linux pid_max
    let write = |name: &str, pid: u32, ide: &str| {
        let c = LockContent {
            pid,
            workspace_folders: vec!["/w".into()],
            ide_name: ide.into(),
            transport: "ws".into(),
            auth_token: "t".into(),
            ide_kind: None,
        };
        std::fs::write(lock_dir.join(name), serde_json::to_vec(&c).unwrap()).unwrap();
    };
    write("1.lock", dead, "Neovim"); // ours, dead: removed
    write("2.lock", dead - 1, "Neovim"); // ours, dead: removed
    write("3.lock", std::process::id(), "Neovim"); // ours, alive: kept
    write("4.lock", 1, "Neovim"); // alive (init): kept
    write("5.lock", dead, "Visual Studio Code"); // another IDE's: kept
    std::fs::write(lock_dir.join("6.lock"), b"{ not json").unwrap(); // unreadable: kept
    write("7.json", dead, "Neovim"); // not a lock file: kept
    let config = Config::from_json(&json!({"lock_dir": lock_dir}).to_string()).unwrap();
    let srv = Server::start(config, EditorState::default(), Arc::new(NoEditor)).unwrap();
    let mut left: Vec<String> = std::fs::read_dir(&lock_dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    let ours = format!("{}.lock", srv.port());
    let mut want: Vec<String> = [
        "3.lock",
        "4.lock",
        "5.lock",
        "6.lock",
        "7.json",
        ours.as_str(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    want.sort();
    assert_eq!(left, want);
    // Our own lock file is written with our pid.
    let lc: LockContent =
        serde_json::from_slice(&std::fs::read(lock_dir.join(&ours)).unwrap()).unwrap();
    assert_eq!(lc.pid, std::process::id());
    srv.stop();
    assert!(!lock_dir.join(&ours).exists());
    assert!(lock_dir.join("3.lock").exists());
}
