//! Helpers for the context tools' tests: seeded banks and a server to call tools through.

use crate::config::Config;
use crate::editor::{EditorState, NoEditor};
use crate::memory_bank::{Bank, Language, Scope};
use crate::server::Server;
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;
use tempfile::TempDir;

/// A bank under a temporary project (`<tmp>/project/docs`) with the global bank and `branch`'s
/// bank seeded from the Japanese templates, plus one `notes.md` in each.
pub fn seeded_bank(branch: &str) -> (TempDir, Bank) {
    let d = tempfile::tempdir().unwrap();
    let project = d.path().canonicalize().unwrap().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let bank = Bank::at(project.join("docs"));
    bank.write(
        Scope::Branch(branch),
        "notes.md",
        "# Notes\n\ntags: #note #branch\n",
        Language::Ja,
    )
    .unwrap();
    bank.write(
        Scope::Global,
        "notes.md",
        "# Notes\n\ntags: #note #global\n",
        Language::Ja,
    )
    .unwrap();
    (d, bank)
}

pub fn is_rfc3339_utc(s: &str) -> bool {
    s.ends_with('Z') && humantime::parse_rfc3339(s).is_ok()
}

/// A running server whose project root is `project` and state directory `state`.
pub struct TestServer {
    pub server: Server,
    pub rt: tokio::runtime::Runtime,
    _lock_dir: TempDir,
}

impl TestServer {
    pub fn new(project: &Path, state: &Path) -> TestServer {
        let lock_dir = tempfile::tempdir().unwrap();
        let config = Config {
            project_root: Some(project.to_string_lossy().into_owned()),
            lock_dir: Some(lock_dir.path().to_path_buf()),
            state_dir: Some(state.to_path_buf()),
            ..Config::default()
        };
        let st = EditorState {
            cwd: Some(project.to_path_buf()),
            ..Default::default()
        };
        let server = Server::start(config, st, Arc::new(NoEditor)).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        TestServer {
            server,
            rt,
            _lock_dir: lock_dir,
        }
    }

    /// `tools/call` as a client sees it: the CallToolResult, or `{"error": {code, message}}`.
    pub fn call(&self, name: &str, args: Value) -> Value {
        let shared = self.server.shared().clone();
        self.rt.block_on(async move {
            match crate::mcp::call_tool(&shared, name, args).await {
                Ok(v) => v,
                Err(e) => serde_json::json!({"error": {"code": e.code, "message": e.message}}),
            }
        })
    }
}

/// The text of a CallToolResult's first content block.
pub fn text_of(r: &Value) -> &str {
    r["content"][0]["text"].as_str().unwrap_or("")
}

pub fn is_error(r: &Value) -> bool {
    r["isError"].as_bool().unwrap_or(false)
}
