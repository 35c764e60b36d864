//! The state the tools read: the configuration, the editor (its pushed [`EditorState`], the
//! [`Snapshot`] of what the read-only IDE tools answer from, and the hop to its main thread),
//! the Claude-session manager and the write policy; and, in [`client`], the connection a
//! request came on, so that a tool can ask its client (elicitation, sampling).
//!
//! The modules depend on each other one way only (`tests/it/layout.rs` checks it, ARCHITECTURE.md
//! lists the layers):
//!
//! ```text
//! state  <-  tools, turns  <-  mcp  <-  server
//! ```
//!
//! (all of them over the lower modules: configuration, the editor, the project root, storage,
//! the hooks' events, and the JSON-RPC wire helpers in [`crate::jsonrpc`]).
//!
//! [`State`] knows nothing of connections nor of Claude Code's sessions: the server's own tables
//! (clients, the lock file, the shutdown signal, the auth token) stay in the server's `Shared`;
//! the sessions and checkpoints in [`crate::turns::Tracker`], which holds this state; and the
//! tool catalog in [`crate::mcp::Service`], which holds the tracker and hands the state to each
//! tool as its [`crate::tools::Ctx`].

pub mod client;

use crate::capfs::WritePolicy;
use crate::claude::manager::Manager;
use crate::config::Config;
use crate::editor::{EditorRpc, EditorState, Snapshot};
use crate::project::ProjectRoot;
use arc_swap::ArcSwap;
use std::path::PathBuf;
use std::sync::Arc;

/// What every tool may read (and, for the editor, ask).
pub struct State {
    pub config: Config,
    pub rpc: Arc<dyn EditorRpc>,
    /// The Claude-session tools' state (history, current session, the run queue).
    pub claude: Manager,
    /// Which protected files tools may write (`setup{security = {allow_write}}`).
    pub write_policy: WritePolicy,
    editor: ArcSwap<EditorState>,
    /// What the read-only IDE tools read without Neovim's main thread.
    pub snapshot: Arc<Snapshot>,
}

/// There is no project root to work in (see [`State::project_root_dir`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the project root is unavailable: the editor's working directory no longer exists and no \
     MCP_PROJECT_ROOT or setup{{project_root}} is set"
)]
pub struct NoProjectRoot;

impl crate::error::Fault for NoProjectRoot {}

impl State {
    pub fn new(config: Config, initial: EditorState, rpc: Arc<dyn EditorRpc>) -> State {
        let claude = Manager::new(config.claude.clone(), config.state_dir().ok().as_deref());
        // Validated by Config::validate; an invalid list here protects everything.
        let write_policy = WritePolicy::new(&config.security.allow_write).unwrap_or_default();
        State {
            rpc,
            claude,
            write_policy,
            editor: ArcSwap::from_pointee(initial),
            snapshot: Arc::default(),
            config,
        }
    }

    /// The editor state Neovim pushed last.
    pub fn editor_state(&self) -> Arc<EditorState> {
        self.editor.load_full()
    }

    /// Stores a new editor state; returns the one it replaces.
    pub fn set_editor_state(&self, st: EditorState) -> Arc<EditorState> {
        self.editor.swap(Arc::new(st))
    }

    pub fn project(&self) -> ProjectRoot {
        let p = self.default_project();
        // fs-set-project-root, for this connection only.
        match crate::project::connection_root() {
            Some(root) => ProjectRoot {
                root: Some(root),
                source: "explicit",
                ..p
            },
            None => p,
        }
    }

    /// The project root as the person's setup gives it (MCP_PROJECT_ROOT, setup, LSP, git,
    /// cwd), ignoring any connection's `fs-set-project-root`.
    pub fn default_project(&self) -> ProjectRoot {
        crate::project::resolve(
            std::env::var("MCP_PROJECT_ROOT").ok(),
            self.config.project_root.as_deref(),
            &self.editor_state(),
        )
    }

    /// The project root directory, or why there is none (a tool error, through `?`).
    pub fn project_root_dir(&self) -> Result<PathBuf, NoProjectRoot> {
        self.project().root.ok_or(NoProjectRoot)
    }

    /// The directories the model (a client of `/mcp`) may reach, each with its symlinks
    /// resolved (those that do not exist are left out): the project root the setup gives, the
    /// editor's working directory, `setup{workspace = {extra_roots}}`, and the language
    /// servers' workspace folders only with `setup{workspace = {allow_lsp_roots = true}}`.
    /// `fs-set-project-root` and the `/mcp` door of the IDE tools admit these and what lies
    /// below them. Blocking (it resolves paths on disk).
    pub fn model_roots(&self) -> Vec<PathBuf> {
        let default = self.default_project();
        let st = self.editor_state();
        let mut dirs: Vec<PathBuf> = default.root.into_iter().chain(default.cwd).collect();
        dirs.extend(self.config.workspace.extra_roots.iter().cloned());
        if self.config.workspace.allow_lsp_roots {
            dirs.extend(st.lsp_folders.iter().cloned());
        }
        let mut out: Vec<PathBuf> = Vec::new();
        for d in dirs {
            if let Ok(c) = d.canonicalize() {
                if c.is_dir() && !out.contains(&c) {
                    out.push(c);
                }
            }
        }
        out
    }

    /// The workspace folders as text (for the lock file and `status()`).
    pub fn folders(&self) -> Vec<String> {
        self.editor_state()
            .workspace_folders()
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect()
    }
}
