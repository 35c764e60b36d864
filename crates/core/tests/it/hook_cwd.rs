//! The hook door (`/hook`) and the hook tool (`claudeContextHook` on `/mcp`) take an event's
//! `cwd` only when it is a folder the editor knows (its working directory, the project root, the
//! roots the person allowed): a session's first prompt walks that folder into the checkpoint
//! store, so a token holder naming any other folder is refused, with a clear message, and
//! nothing is recorded or walked.

use claude_context_core::config::Config;
use claude_context_core::discovery::Candidate;
use claude_context_core::editor::{EditorRpc, EditorState, RpcFuture};
use claude_context_core::server::Server;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

struct Quiet;

impl EditorRpc for Quiet {
    fn call(&self, _method: &str, _params: Value) -> RpcFuture {
        Box::pin(async { Ok(Value::Null) })
    }
}

struct Bridge {
    server: Server,
    base: PathBuf,
    project: PathBuf,
    _tmp: tempfile::TempDir,
}

fn bridge() -> Bridge {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let project = base.join("project");
    std::fs::create_dir_all(project.join("sub")).unwrap();
    std::fs::write(project.join("a.txt"), "a\n").unwrap();
    // A folder the editor does not know, with something worth walking.
    std::fs::create_dir_all(base.join("other/.git")).unwrap();
    std::fs::write(base.join("other/secret.txt"), "not the project's\n").unwrap();
    std::os::unix::fs::symlink(base.join("other"), project.join("link_out")).unwrap();
    let cfg = Config {
        lock_dir: Some(base.join("claude").join("ide")),
        state_dir: Some(base.join("state")),
        ..Config::default()
    };
    let state = EditorState {
        cwd: Some(project.clone()),
        nvim_version: "0.11.4".into(),
        ..Default::default()
    };
    let server = Server::start(cfg, state, std::sync::Arc::new(Quiet)).unwrap();
    Bridge {
        server,
        base,
        project,
        _tmp: tmp,
    }
}

impl Bridge {
    /// One request on `/hook`, as `claude-context-mcp hook` sends it; the answer's error text.
    fn door(&self, event: &str, session: &str, cwd: &Path) -> Result<Value, String> {
        let c = Candidate {
            port: self.server.port(),
            token: self.server.shared().token().to_string(),
            pid: std::process::id(),
            lock_file: PathBuf::new(),
            folder: None,
        };
        let text = json!({"jsonrpc": "2.0", "id": 1, "method": claude_context_core::hook::METHOD,
            "params": {"event": event, "session_id": session, "cwd": cwd, "prompt": "hi"}})
        .to_string();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(claude_context_core::hook::exchange(
            &c,
            text,
            Duration::from_secs(30),
        ))
        .map_err(|e| e.to_string())
    }

    /// Claude Code's `mcp_tool` hook: a `tools/call` of the hook tool on `/mcp`.
    fn tool(&self, cwd: &Path) -> Value {
        use claude_context_core::mcp::{catalog::Surface, handle_text_in, Inflight};
        let req = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": claude_context_core::hook::MCP_TOOL, "arguments": {
                "hook_event_name": "PreToolUse", "session_id": "t", "cwd": cwd,
                "tool_name": "Write", "file_path": cwd.join("x.txt")}}});
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (answer, _) = rt.block_on(handle_text_in(
            &self.server.shared().mcp,
            &req.to_string(),
            &Inflight::new(Surface::Mcp),
        ));
        serde_json::from_str(&answer.unwrap()).unwrap()
    }

    fn sessions(&self) -> Vec<String> {
        self.server
            .shared()
            .sessions
            .sessions(0)
            .iter()
            .map(|s| s.id.clone())
            .collect()
    }

    /// Whether a file under the state folder holds the other folder's secret.
    fn stored_secret(&self) -> bool {
        const SECRET: &[u8] = b"not the project's";
        fn walk(d: &Path, hit: &mut bool) {
            for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, hit);
                } else if std::fs::read(&p)
                    .map(|b| b.windows(SECRET.len()).any(|w| w == SECRET))
                    .unwrap_or(false)
                {
                    *hit = true;
                }
            }
        }
        let mut hit = false;
        walk(&self.base.join("state"), &mut hit);
        hit
    }
}

#[test]
fn the_hook_door_refuses_a_cwd_the_editor_does_not_know() {
    let b = bridge();
    let refused = |r: Result<Value, String>, what: &str| {
        let e = r.expect_err(what);
        assert!(
            e.contains("is not a folder this editor knows"),
            "{what}: a clear refusal, got {e:?}"
        );
    };
    let other = b.base.join("other");
    refused(b.door("UserPromptSubmit", "s", &other), "another project");
    refused(
        b.door("UserPromptSubmit", "s", &b.project.join("link_out")),
        "a link out of the project",
    );
    refused(
        b.door("UserPromptSubmit", "s", &b.base.join("missing")),
        "a folder that does not exist",
    );
    refused(b.door("Stop", "s", Path::new("/")), "the root folder");
    assert!(
        b.sessions().is_empty(),
        "nothing recorded: {:?}",
        b.sessions()
    );
    // The editor's own folders are taken: its working directory and below.
    b.door("SessionStart", "s", &b.project).unwrap();
    b.door("SessionStart", "u", &b.project.join("sub")).unwrap();
    let mut ids = b.sessions();
    ids.sort();
    assert_eq!(ids, ["s", "u"]);
    assert!(!b.stored_secret(), "the other folder was walked");
}

#[test]
fn the_hook_tool_refuses_a_cwd_the_editor_does_not_know() {
    let b = bridge();
    let r = b.tool(&b.base.join("other"));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let msg = r["error"]["message"].as_str().unwrap_or("");
    assert!(
        msg.contains("is not a folder this editor knows"),
        "a clear refusal: {r}"
    );
    assert!(b.sessions().is_empty());
    let r = b.tool(&b.project);
    assert_eq!(r["result"]["content"][0]["text"], "{}", "{r}");
    assert_eq!(b.sessions(), ["t"]);
}
