//! `claude-context-mcp hook <Event>` (the built binary) against a real bridge: an event reaches
//! the session registry with its session id and goes on to the editor; the binary prints
//! nothing on stdout and exits 0 whether the bridge is there, gone, or hung; the hook door
//! takes only the token's holders and only hook events, and its connections are not clients.

use crate::common;

use common::bridge::{Dirs, Recorder};

use claude_context_core::server::Server;
use claude_context_core::turns::SessionState;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::Output;
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Bridge {
    server: Option<Server>,
    editor: Arc<Recorder>,
    dirs: Dirs,
}

fn bridge() -> Bridge {
    let dirs = Dirs::new("project", &[]);
    let editor = Arc::new(Recorder::default());
    let server = dirs.start(editor.clone(), |_| {});
    Bridge {
        server: Some(server),
        editor,
        dirs,
    }
}

impl Bridge {
    fn server(&self) -> &Server {
        self.server.as_ref().unwrap()
    }

    fn lock_file(&self) -> PathBuf {
        self.dirs
            .config_dir
            .join("ide")
            .join(format!("{}.lock", self.server().port()))
    }

    /// Runs the binary's hook mode with `input` on stdin, as Claude Code runs a hook.
    fn hook(&self, event: &str, input: &Value, port: Option<u16>) -> Output {
        self.dirs.hook(event, input, port)
    }
}

fn event(name: &str, session: &str, extra: Value) -> Value {
    let mut v = json!({
        "session_id": session,
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/p",
        "hook_event_name": name,
    });
    if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
        for (k, x) in e {
            o.insert(k.clone(), x.clone());
        }
    }
    v
}

fn assert_quiet_success(out: &Output) {
    assert!(out.status.success(), "exit status {:?}", out.status);
    assert!(
        out.stdout.is_empty(),
        "a hook's stdout can become Claude's context; it printed {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
}

fn session_state(b: &Bridge, id: &str) -> Option<SessionState> {
    b.server()
        .shared()
        .status()
        .sessions
        .into_iter()
        .find(|s| s.id == id)
        .map(|s| s.state)
}

#[test]
fn events_reach_the_registry_with_their_session_and_go_on_to_the_editor() {
    let b = bridge();
    let port = Some(b.server().port());
    let out = b.hook(
        "UserPromptSubmit",
        &event(
            "UserPromptSubmit",
            "s-1",
            json!({"prompt": "rename the parser\nplease"}),
        ),
        port,
    );
    assert_quiet_success(&out);
    assert_eq!(session_state(&b, "s-1"), Some(SessionState::Working));

    // A second session (another tab) in between, found by the workspace folder alone.
    let out = b.hook(
        "UserPromptSubmit",
        &event("UserPromptSubmit", "s-2", json!({"prompt": "other"})),
        None,
    );
    assert_quiet_success(&out);

    // The hook before a Write carries the whole content on stdin: read, and only the path kept.
    let big = "x".repeat(2 << 20);
    let file = b.dirs.workspace.join("a.rs").to_string_lossy().into_owned();
    let out = b.hook(
        "PreToolUse",
        &event(
            "PreToolUse",
            "s-1",
            json!({"tool_name": "Write", "tool_input": {"file_path": file, "content": big}}),
        ),
        port,
    );
    assert_quiet_success(&out);
    // The Write happens: the turn's end checkpoint shows it changed too.
    std::fs::write(&file, "fn a() {}\n").unwrap();
    assert_quiet_success(&b.hook("Stop", &event("Stop", "s-1", json!({})), port));

    assert_eq!(session_state(&b, "s-1"), Some(SessionState::Done));
    assert_eq!(session_state(&b, "s-2"), Some(SessionState::Working));
    let turns = b.server().shared().sessions.turns(Some("s-1"));
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0].files, vec![file]);
    assert_eq!(turns[0].name.as_deref(), Some("main"));
    assert!(turns[0].end_ms.is_some());
    assert_eq!(b.server().shared().sessions.turns(Some("s-2")).len(), 1);

    // The hook door's connections are not clients.
    assert!(b.server().shared().status().clients.is_empty());

    // The editor heard of every change, each with its session's id.
    let deadline = Instant::now() + Duration::from_secs(20);
    let states = loop {
        let calls = b.editor.calls.lock().unwrap().clone();
        let states: Vec<(String, String)> = calls
            .iter()
            .filter(|(m, _)| m == "session_state")
            .map(|(_, p)| {
                (
                    p["session"]["id"].as_str().unwrap_or("").to_string(),
                    p["session"]["state"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        if states.len() >= 4 || Instant::now() > deadline {
            break states;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let of = |id: &str| -> Vec<&str> {
        states
            .iter()
            .filter(|(s, _)| s == id)
            .map(|(_, st)| st.as_str())
            .collect()
    };
    assert_eq!(of("s-1"), vec!["working", "working", "done"]);
    assert_eq!(of("s-2"), vec!["working"]);
}

#[test]
fn with_the_bridge_gone_or_hung_the_hook_exits_zero_and_prints_nothing() {
    let mut b = bridge();
    let port = b.server().port();
    let lock = std::fs::read(b.lock_file()).unwrap();
    b.server.take().unwrap().stop();
    // No lock file: nothing to reach.
    assert_quiet_success(&b.hook("Stop", &event("Stop", "s", json!({})), Some(port)));

    // A lock file left behind by an editor whose port is closed (its pid, ours, is alive).
    let lock_path = b.dirs.config_dir.join("ide").join(format!("{port}.lock"));
    write_private(&lock_path, &lock);
    assert_quiet_success(&b.hook("Stop", &event("Stop", "s", json!({})), Some(port)));
    std::fs::remove_file(&lock_path).unwrap();

    // A "bridge" that accepts and never answers: the hook gives up by itself.
    let hung = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let hung_port = hung.local_addr().unwrap().port();
    let text = String::from_utf8(lock).unwrap();
    let lock_path = b
        .dirs
        .config_dir
        .join("ide")
        .join(format!("{hung_port}.lock"));
    write_private(&lock_path, text.as_bytes());
    let held = std::thread::spawn(move || {
        let (mut s, _) = hung.accept().unwrap();
        let mut buf = [0u8; 1024];
        // Read the handshake and keep the socket open without answering.
        let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
        let _ = s.read(&mut buf);
        std::thread::sleep(Duration::from_secs(3));
    });
    assert_quiet_success(&b.hook("Stop", &event("Stop", "s", json!({})), Some(hung_port)));
    let _ = held.join();

    // Input that is not a hook's: still exit 0, nothing on stdout.
    assert_quiet_success(&b.hook("Stop", &json!([1, 2]), Some(port)));
}

fn write_private(path: &std::path::Path, bytes: &[u8]) {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .unwrap();
    f.write_all(bytes).unwrap();
}

#[test]
fn the_hook_door_wants_the_token_and_hook_events_only() {
    let b = bridge();
    let port = b.server().port();
    let token = b.server().shared().token().to_string();
    // No token: refused at the handshake.
    let refused = common::Raw::try_connect_path(port, "/hook", &[]);
    assert!(refused.is_err() || refused.unwrap().0.contains(" 401 "));
    // The token, but not a hook event: an error answer, and nothing recorded.
    let (status, mut raw) =
        common::Raw::try_connect_path(port, "/hook", &[(common::AUTH_HEADER, &token)]).unwrap();
    assert!(status.contains(" 101 "), "{status}");
    let answer = raw.roundtrip(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#);
    assert_eq!(answer["id"], 7);
    assert!(answer["error"]["message"]
        .as_str()
        .unwrap()
        .contains("claude-context/hook"));
    // A hook event: answered, recorded.
    let (_, mut raw) =
        common::Raw::try_connect_path(port, "/hook", &[(common::AUTH_HEADER, &token)]).unwrap();
    let answer = raw.roundtrip(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "claude-context/hook",
                "params": {"event": "SessionStart", "session_id": "x", "model": "m"}})
        .to_string(),
    );
    assert_eq!(answer["result"], json!({}));
    let s = b.server().shared().status().sessions;
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].model.as_deref(), Some("m"));
    assert_eq!(s[0].state, SessionState::Idle);
}
