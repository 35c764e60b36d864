//! The `claude-context-mcp` relay against a real bridge (`Server::start` + `NoEditor`): once in
//! process over in-memory pipes, once as the built binary with real stdio.

use crate::common;

use claude_context_core::discovery::{self, Candidate, Query};
use claude_context_core::editor::NoEditor;
use claude_context_core::mcp::catalog::Surface;
use claude_context_core::relay::{self, End, RelayError};
use claude_context_core::server::Server;
use common::bridge::Dirs;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader as StdBufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

struct Bridge {
    server: Option<Server>,
    dirs: Dirs,
}

fn bridge() -> Bridge {
    // A space in the workspace's name, to be sure paths survive.
    let dirs = Dirs::new("work space", &["src/nested"]);
    let server = dirs.start(Arc::new(NoEditor), |_| {});
    Bridge {
        server: Some(server),
        dirs,
    }
}

impl Bridge {
    fn query(&self, cwd: &Path) -> Query {
        Query {
            lock_dir: self.dirs.config_dir.join("ide"),
            cwd: cwd.to_path_buf(),
            sse_port: None,
            ide_name: "Neovim".into(),
            owner_uid: discovery::current_uid(),
        }
    }

    fn port(&self) -> u16 {
        self.server.as_ref().unwrap().port()
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn initialize(id: u64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "relay-test", "version": "0"}}})
    .to_string()
}

fn call(id: u64, tool: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": {}}})
    .to_string()
}

/// The structured answer of getWorkspaceFolders inside a tools/call response.
fn folders_of(resp: &Value) -> Value {
    let r = &resp["result"];
    if !r["structuredContent"].is_null() {
        return r["structuredContent"].clone();
    }
    serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[test]
fn discovery_finds_the_running_bridge_from_a_nested_directory() {
    let b = bridge();
    let f = discovery::discover(&b.query(&b.dirs.workspace.join("src/nested")));
    assert_eq!(f.candidates.len(), 1, "{:?}", f.notes);
    let c = &f.candidates[0];
    assert_eq!(c.port, b.port());
    assert_eq!(c.pid, std::process::id());
    assert_eq!(c.token, b.server.as_ref().unwrap().shared().token());
    assert_eq!(c.folder.as_deref(), Some(b.dirs.workspace.as_path()));
    // Outside the workspace there is nothing.
    let f = discovery::discover(&b.query(&b.dirs.config_dir));
    assert!(f.candidates.is_empty());
}

#[test]
fn relays_requests_and_answers_over_pipes_then_ends_on_input_eof() {
    let b = bridge();
    let c = discovery::discover(&b.query(&b.dirs.workspace))
        .candidates
        .remove(0);
    let shared = b.server.as_ref().unwrap().shared().clone();
    let result = rt().block_on(async {
        let ws = relay::connect(&c).await.unwrap();
        let (mut to_relay, relay_in) = tokio::io::duplex(1 << 16);
        let (relay_out, from_relay) = tokio::io::duplex(1 << 16);
        let task = tokio::spawn(relay::relay(ws, BufReader::new(relay_in), relay_out));
        let mut lines = BufReader::new(from_relay).lines();
        // Blank lines and CRLF endings are tolerated.
        let msg = format!(
            "\n{}\r\n{}\n{}\n",
            initialize(1),
            call(2, "getWorkspaceFolders"),
            call(3, "openDiff")
        );
        to_relay.write_all(msg.as_bytes()).await.unwrap();
        let mut answers = Vec::new();
        while answers.len() < 3 {
            let l = lines.next_line().await.unwrap().expect("a line");
            let v: Value = serde_json::from_str(&l).unwrap();
            answers.push(v);
        }
        // The relay comes in by the MCP-server door.
        let clients = shared.status().clients;
        assert_eq!(clients.len(), 1);
        assert_eq!(clients[0].surface, Surface::Mcp);
        drop(to_relay); // EOF on the relay's stdin
        let end = task.await.unwrap();
        (answers, end)
    });
    let (answers, end) = result;
    assert_eq!(end.unwrap(), End::InputClosed);
    let init = answers.iter().find(|a| a["id"] == 1).unwrap();
    assert!(init["result"]["serverInfo"].is_object(), "{init}");
    let folders = answers.iter().find(|a| a["id"] == 2).unwrap();
    let f = folders_of(folders);
    assert_eq!(
        f["rootPath"],
        b.dirs.workspace.to_string_lossy().as_ref(),
        "{f}"
    );
    // The IDE's diff plumbing is not offered through the relay.
    let diff = answers.iter().find(|a| a["id"] == 3).unwrap();
    assert_eq!(diff["error"]["code"], -32602, "{diff}");
}

#[test]
fn ends_when_the_editor_goes_away() {
    let mut b = bridge();
    let c = discovery::discover(&b.query(&b.dirs.workspace))
        .candidates
        .remove(0);
    let rt = rt();
    let (ws, to_relay, relay_in, relay_out, _from_relay) = rt.block_on(async {
        let ws = relay::connect(&c).await.unwrap();
        let (to_relay, relay_in) = tokio::io::duplex(1 << 16);
        let (relay_out, from_relay) = tokio::io::duplex(1 << 16);
        (ws, to_relay, relay_in, relay_out, from_relay)
    });
    let task = rt.spawn(relay::relay(ws, BufReader::new(relay_in), relay_out));
    // Stop the bridge from outside the runtime (its own runtime shuts down here).
    b.server.take().unwrap().stop();
    let end = rt.block_on(async {
        tokio::time::timeout(std::time::Duration::from_secs(20), task)
            .await
            .expect("the relay noticed the editor leaving")
            .unwrap()
    });
    drop(to_relay);
    assert_eq!(end.unwrap(), End::EditorClosed);
}

#[test]
fn a_wrong_token_is_refused_with_a_clear_error() {
    let b = bridge();
    let mut c = discovery::discover(&b.query(&b.dirs.workspace))
        .candidates
        .remove(0);
    c.token = "0".repeat(32);
    let err = rt().block_on(relay::connect(&c)).err().unwrap();
    match &err {
        RelayError::Refused { status, port, .. } => {
            assert_eq!(*status, 401);
            assert_eq!(*port, b.port());
        }
        other => panic!("expected Refused, got {other:?}"),
    }
    assert!(err.to_string().contains("stale"), "{err}");
}

#[test]
fn connect_first_skips_editors_that_do_not_answer() {
    let b = bridge();
    let good = discovery::discover(&b.query(&b.dirs.workspace))
        .candidates
        .remove(0);
    // A port nobody listens on: bind, note the port, close.
    let dead_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let bad = Candidate {
        port: dead_port,
        ..good.clone()
    };
    let (conn, errors) = rt().block_on(relay::connect_first(&[bad, good.clone()]));
    let (chosen, _ws) = conn.expect("the second editor");
    assert_eq!(chosen.port, good.port);
    assert_eq!(errors.len(), 1);
    assert!(errors[0].to_string().contains(&dead_port.to_string()));
}

// ---- the built binary --------------------------------------------------------------------

fn binary(config_dir: &Path, cwd: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_claude-context-mcp"));
    cmd.current_dir(cwd)
        .env("CLAUDE_CONFIG_DIR", config_dir)
        .env_remove("CLAUDE_CODE_SSE_PORT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

#[test]
fn binary_relays_stdio_and_exits_zero_on_eof() {
    let b = bridge();
    let mut child = binary(&b.dirs.config_dir, &b.dirs.workspace.join("src"))
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = StdBufReader::new(child.stdout.take().unwrap());
    writeln!(stdin, "{}", initialize(1)).unwrap();
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["id"], 1);
    writeln!(stdin, "{}", call(7, "getWorkspaceFolders")).unwrap();
    line.clear();
    out.read_line(&mut line).unwrap();
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["id"], 7);
    assert_eq!(
        folders_of(&v)["rootPath"],
        b.dirs.workspace.to_string_lossy().as_ref()
    );
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("127.0.0.1:{}", b.port())),
        "{stderr}"
    );
}

#[test]
fn binary_uses_claude_code_sse_port_outside_the_workspace() {
    let b = bridge();
    let mut child = binary(&b.dirs.config_dir, &b.dirs.config_dir)
        .env("CLAUDE_CODE_SSE_PORT", b.port().to_string())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{}", call(3, "getWorkspaceFolders")).unwrap();
    let mut out = StdBufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["id"], 3, "{line}");
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn binary_exits_zero_when_the_editor_stops() {
    let mut b = bridge();
    let mut child = binary(&b.dirs.config_dir, &b.dirs.workspace)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{}", initialize(1)).unwrap();
    let mut out = StdBufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap(); // connected and answered
    b.server.take().unwrap().stop();
    let status = child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(err.contains("closed the connection"), "{err}");
    drop(stdin);
}

#[test]
fn binary_without_an_editor_fails_naming_the_lock_dir_and_cwd() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let cwd = root.join("project");
    std::fs::create_dir_all(&cwd).unwrap();
    let config_dir = root.join("claude");
    let o = binary(&config_dir, &cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&config_dir.join("ide").display().to_string()),
        "{err}"
    );
    assert!(err.contains(&cwd.display().to_string()), "{err}");
    assert!(err.contains("no running Neovim"), "{err}");
    assert!(o.stdout.is_empty());
}

#[test]
fn binary_names_each_editor_it_could_not_reach() {
    let b = bridge();
    // The editor's lock file moved to a port nobody listens on: found, but not reachable.
    let dead_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let ide = b.dirs.config_dir.join("ide");
    std::fs::rename(
        ide.join(format!("{}.lock", b.port())),
        ide.join(format!("{dead_port}.lock")),
    )
    .unwrap();
    let o = binary(&b.dirs.config_dir, &b.dirs.workspace)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let head = format!(
        "claude-context-mcp: found 1 editor(s) for {} but could not connect:\n  - ",
        b.dirs.workspace.display()
    );
    assert!(err.starts_with(&head), "{err}");
    assert!(err.contains(&dead_port.to_string()), "{err}");
    assert!(o.stdout.is_empty());
}

#[test]
fn binary_rejects_unknown_arguments_and_answers_help() {
    let tmp = tempfile::tempdir().unwrap();
    let o = binary(tmp.path(), tmp.path())
        .arg("--frobnicate")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--frobnicate"));
    let o = binary(tmp.path(), tmp.path())
        .arg("--help")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("claude mcp add claude-context"));
}

/// The attack: a lock file planted in a lock directory others can write (a shared, world-writable
/// `CLAUDE_CONFIG_DIR/ide`) sends the relay — and the model's traffic — to someone else's server.
/// The relay refuses the directory and says why on stderr.
#[cfg(unix)]
#[test]
fn binary_ignores_a_world_writable_lock_dir_and_says_why() {
    use std::os::unix::fs::PermissionsExt;
    let b = bridge();
    let ide = b.dirs.config_dir.join("ide");
    std::fs::set_permissions(&ide, std::fs::Permissions::from_mode(0o777)).unwrap();
    let o = binary(&b.dirs.config_dir, &b.dirs.workspace)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("writable by everyone") && err.contains("not trusted"),
        "{err}"
    );
    assert!(!err.contains("connected to Neovim"), "{err}");
    std::fs::set_permissions(&ide, std::fs::Permissions::from_mode(0o700)).unwrap();
}

/// The attack: a lock file owned by another uid next to the user's own: it is ignored (with a
/// line on stderr) and the relay connects to the user's editor. Needs root to chown.
#[cfg(unix)]
#[test]
fn binary_ignores_a_lock_file_of_another_uid_and_says_why() {
    if discovery::current_uid() != Some(0) {
        eprintln!(
            "skipped: needs root to give a file another owner (discovery's unit test covers it)"
        );
        return;
    }
    let b = bridge();
    let ide = b.dirs.config_dir.join("ide");
    // A planted lock for the same workspace, newer than the real one, owned by someone else.
    let planted = ide.join("1.lock");
    let real = std::fs::read_dir(&ide)
        .unwrap()
        .flatten()
        .find(|e| e.path().extension().is_some_and(|x| x == "lock"))
        .unwrap()
        .path();
    std::fs::copy(&real, &planted).unwrap();
    std::os::unix::fs::chown(&planted, Some(4242), Some(4242)).unwrap();
    let f = discovery::discover(&b.query(&b.dirs.workspace));
    assert_eq!(f.candidates.len(), 1, "{:?}", f.notes);
    assert_eq!(f.candidates[0].lock_file, real);
    let o = binary(&b.dirs.config_dir, &b.dirs.workspace)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("1.lock") && err.contains("owned by uid 4242"),
        "{err}"
    );
    assert!(err.contains("connected to Neovim"), "{err}");
}

// ---- a hostile or foreign process behind a lock file -----------------------------------------

/// Waits for `child` up to `secs`; kills it and returns None when it is still running.
fn wait_bounded(child: &mut std::process::Child, secs: u64) -> Option<std::process::ExitStatus> {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while std::time::Instant::now() < until {
        if let Some(s) = child.try_wait().unwrap() {
            return Some(s);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// A server on a lock file's port (the editor died and something else took the port) finishes
/// the WebSocket handshake and announces a 2^62-byte frame. The relay reads it with the bridge's
/// size limits: it stops with an error naming the limit, instead of trying to allocate the frame
/// (which aborted the process).
#[test]
fn relay_refuses_huge_frame() {
    use claude_context_core::lockfile::{LockContent, LockFile, KIND};
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let config_dir = root.join("claude");
    let workspace = root.join("w");
    std::fs::create_dir_all(&workspace).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (tcp, _) = listener.accept().unwrap();
        let mut ws = tokio_tungstenite::tungstenite::accept(tcp).unwrap();
        // FIN + text, then the 64-bit length form announcing 2^62 bytes, and no payload.
        let mut frame = vec![0x81u8, 127];
        frame.extend_from_slice(&(1u64 << 62).to_be_bytes());
        let tcp = ws.get_mut();
        tcp.write_all(&frame).unwrap();
        tcp.flush().unwrap();
        // Keep the connection open until the relay is done with it.
        let mut sink = [0u8; 1024];
        while std::io::Read::read(tcp, &mut sink).unwrap_or(0) > 0 {}
    });
    let _lock = LockFile::create(
        &config_dir.join("ide"),
        port,
        LockContent {
            pid: std::process::id(),
            workspace_folders: vec![workspace.to_string_lossy().into_owned()],
            ide_name: "Neovim".into(),
            transport: "ws".into(),
            auth_token: "t".into(),
            ide_kind: Some(KIND.into()),
        },
    )
    .unwrap();
    let mut child = binary(&config_dir, &workspace).spawn().unwrap();
    let stdin = child.stdin.take().unwrap(); // kept open: the relay does not end by EOF
    let status = wait_bounded(&mut child, 60).expect("the relay hung on the huge frame");
    drop(stdin);
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(
        status.code(),
        Some(1),
        "the relay must exit with an error, not crash: {status:?}\n{err}"
    );
    assert!(
        err.contains("over the relay's limit")
            && err.contains(&relay::MAX_MESSAGE_SIZE.to_string()),
        "{err}"
    );
    server.join().unwrap();
}

/// A process of another user, for as long as the guard lives: as root, `sleep` run as nobody
/// (uid 65534); otherwise pid 1 when it is not ours. None (the test is skipped) when neither.
#[cfg(target_os = "linux")]
fn foreign_pid() -> Option<(u32, Option<std::process::Child>)> {
    use std::os::unix::fs::MetadataExt;
    let owner = |pid: u32| {
        std::fs::metadata(format!("/proc/{pid}"))
            .ok()
            .map(|m| m.uid())
    };
    let me = discovery::current_uid()?;
    if me != 0 {
        return (owner(1).is_some_and(|u| u != me)).then_some((1, None));
    }
    let child = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "sleep",
            "120",
        ])
        .stdin(Stdio::null())
        .spawn()
        .ok()?;
    let pid = child.id();
    // setpriv changes its uid and then runs sleep: wait until the process is nobody's.
    for _ in 0..200 {
        if owner(pid) == Some(65534) {
            return Some((pid, Some(child)));
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    None
}

/// A lock file whose pid is a live process of another user (the editor that wrote it is gone
/// and its pid was reused, or the file names someone else's process) is stale: discovery skips
/// it and says why, and the bridge's clean-up removes it.
#[cfg(target_os = "linux")]
#[test]
fn lock_file_of_another_user_is_stale() {
    use claude_context_core::lockfile::{self, LockContent, KIND};
    let Some((pid, guard)) = foreign_pid() else {
        eprintln!(
            "skipped: no process of another user to point at (not root, and pid 1 is yours; \
             setpriv could not run sleep as nobody)"
        );
        return;
    };
    let b = bridge();
    let ide = b.dirs.config_dir.join("ide");
    let real = std::fs::read_dir(&ide)
        .unwrap()
        .flatten()
        .find(|e| e.path().extension().is_some_and(|x| x == "lock"))
        .unwrap()
        .path();
    // The same editor, as far as the file says, but its pid is now another user's process.
    let mut c: LockContent = serde_json::from_slice(&std::fs::read(&real).unwrap()).unwrap();
    c.pid = pid;
    std::fs::write(&real, serde_json::to_vec(&c).unwrap()).unwrap();
    assert!(
        matches!(
            lockfile::pid_state(pid),
            lockfile::PidState::OtherUser(Some(_))
        ),
        "{:?}",
        lockfile::pid_state(pid)
    );
    assert!(!lockfile::pid_alive(pid));
    let q = b.query(&b.dirs.workspace);
    let f = discovery::discover(&q);
    assert!(f.candidates.is_empty(), "{:?}", f.candidates);
    let msg = f.explain(&q);
    assert!(
        msg.contains("another user") && msg.contains(&format!("pid {pid}")),
        "{msg}"
    );
    // The bridge's start-up clean-up treats it as a dead editor's file.
    assert_eq!(lockfile::clean_stale(&ide, KIND), vec![real.clone()]);
    assert!(!real.exists());
    if let Some(mut child) = guard {
        let _ = child.kill();
        let _ = child.wait();
    }
}
