//! What the core knows about the editor.
//!
//! * [`EditorState`] is a snapshot Neovim pushes whenever it may have changed (autocmds on
//!   `DirChanged`, `WinEnter`, `BufEnter`, `LspAttach`, …). Hot tools such as
//!   `getWorkspaceFolders` read it without touching Neovim's main thread at all.
//! * [`EditorRpc`] runs a request on Neovim's main thread (through a libuv async handle in the
//!   Neovim crate) for tools that must act on the editor; it answers through a oneshot channel so
//!   the caller awaits without blocking anything.

use serde::Deserialize;
use serde_json::Value;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct EditorState {
    /// The current window's working directory (follows `:cd`, `:tcd`, `:lcd`).
    pub cwd: Option<PathBuf>,
    /// Workspace folders of every attached LSP client, in client order.
    pub lsp_folders: Vec<PathBuf>,
    /// The root directory of the current buffer's (first) LSP client.
    pub lsp_root: Option<PathBuf>,
    /// `vim.version()` as `major.minor.patch`.
    pub nvim_version: String,
}

impl EditorState {
    /// The workspace folders: cwd first, then every LSP folder, without duplicates.
    pub fn workspace_folders(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = Vec::new();
        for p in self.cwd.iter().chain(self.lsp_folders.iter()) {
            let p = strip_trailing_slash(p);
            if !out.contains(&p) {
                out.push(p);
            }
        }
        out
    }
}

fn strip_trailing_slash(p: &std::path::Path) -> PathBuf {
    let s = p.to_string_lossy();
    if s.len() > 1 && s.ends_with('/') {
        PathBuf::from(s.trim_end_matches('/'))
    } else {
        p.to_path_buf()
    }
}

pub type RpcFuture = Pin<Box<dyn Future<Output = Result<Value, String>> + Send>>;

/// Runs `method` with `params` on the editor's main thread.
pub trait EditorRpc: Send + Sync + 'static {
    fn call(&self, method: &str, params: Value) -> RpcFuture;
}

/// An editor that is not there (tests of the core, or the editor went away).
pub struct NoEditor;

impl EditorRpc for NoEditor {
    fn call(&self, method: &str, _params: Value) -> RpcFuture {
        let m = method.to_string();
        Box::pin(async move { Err(format!("no editor is attached to handle '{m}'")) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_cwd_then_lsp_deduplicated() {
        let s = EditorState {
            cwd: Some("/a/".into()),
            lsp_folders: vec!["/b".into(), "/a".into(), "/c".into(), "/b/".into()],
            ..Default::default()
        };
        let f: Vec<_> = s.workspace_folders();
        assert_eq!(f, vec![PathBuf::from("/a"), "/b".into(), "/c".into()]);
    }
}
