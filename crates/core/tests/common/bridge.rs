//! A real bridge for the hook tests: an editor that records what it is asked, the bridge's
//! folders (a `$CLAUDE_CONFIG_DIR` whose `ide/` holds the lock file, a workspace), and the built
//! `claude-context-mcp hook <Event>` run as Claude Code runs a hook.

use claude_context_core::config::Config;
use claude_context_core::editor::{EditorRpc, EditorState, RpcFuture};
use claude_context_core::server::Server;
use serde_json::Value;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// An editor that records the requests it gets and answers each with null.
#[derive(Default)]
pub struct Recorder {
    pub calls: Mutex<Vec<(String, Value)>>,
}

impl EditorRpc for Recorder {
    fn call(&self, method: &str, params: Value) -> RpcFuture {
        self.calls
            .lock()
            .unwrap()
            .push((method.to_string(), params));
        Box::pin(async { Ok(Value::Null) })
    }
}

/// A bridge's folders, under a temporary directory (canonical: no symlinked /tmp).
pub struct Dirs {
    pub tmp: tempfile::TempDir,
    /// `$CLAUDE_CONFIG_DIR`: lock files go to `<config>/ide`.
    pub config_dir: PathBuf,
    /// The editor's working directory.
    pub workspace: PathBuf,
}

impl Dirs {
    /// The folders, the workspace named `workspace` (made, with its `subdirs`).
    pub fn new(workspace: &str, subdirs: &[&str]) -> Dirs {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let config_dir = root.join("claude");
        let workspace = root.join(workspace);
        std::fs::create_dir_all(&workspace).unwrap();
        for d in subdirs {
            std::fs::create_dir_all(workspace.join(d)).unwrap();
        }
        Dirs {
            tmp,
            config_dir,
            workspace,
        }
    }

    /// A bridge over `editor` in these folders (`cfg` changes the configuration further).
    pub fn start(&self, editor: Arc<dyn EditorRpc>, cfg: impl FnOnce(&mut Config)) -> Server {
        let mut c = Config {
            lock_dir: Some(self.config_dir.join("ide")),
            // The sessions' checkpoints go here, not to the person's state folder.
            state_dir: Some(self.config_dir.with_file_name("state")),
            ..Config::default()
        };
        cfg(&mut c);
        let state = EditorState {
            cwd: Some(self.workspace.clone()),
            nvim_version: "0.11.4".into(),
            ..Default::default()
        };
        Server::start(c, state, editor).unwrap()
    }

    /// The built binary's hook mode for `event`, as Claude Code runs a hook (its environment:
    /// the terminal's port when given; no token anywhere but the lock file), stdio piped.
    pub fn hook_command(&self, event: &str, port: Option<u16>) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_claude-context-mcp"));
        cmd.args(["hook", event])
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.config_dir)
            .env("CLAUDE_CONFIG_DIR", &self.config_dir)
            .env("CLAUDE_CONTEXT_SESSION", "main")
            .current_dir(&self.workspace)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(p) = port {
            cmd.env("CLAUDE_CODE_SSE_PORT", p.to_string());
        }
        cmd
    }

    /// Starts the hook for `event` with `input` on stdin (left open).
    /// A `cwd` of "/p" stands for the workspace: the hook door takes no folder the editor does
    /// not know (tests/it/hook_cwd.rs).
    pub fn spawn_hook(&self, event: &str, input: &Value, port: Option<u16>) -> Child {
        let mut input = input.clone();
        if input["cwd"] == "/p" {
            input["cwd"] = self.workspace.to_string_lossy().into();
        }
        let mut child = self.hook_command(event, port).spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input.to_string().as_bytes()).unwrap();
        child
    }

    /// Runs the hook for `event` with `input` on stdin to its end.
    pub fn hook(&self, event: &str, input: &Value, port: Option<u16>) -> Output {
        let mut child = self.spawn_hook(event, input, port);
        // A stall, not a timing assertion: the hook must end by itself.
        let deadline = Instant::now() + Duration::from_secs(30);
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("the hook did not end");
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        child.wait_with_output().unwrap()
    }
}
