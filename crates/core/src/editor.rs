//! What the core knows about the editor.
//!
//! * [`EditorState`] is a snapshot Neovim pushes whenever it may have changed (autocmds on
//!   `DirChanged`, `WinEnter`, `BufEnter`, `LspAttach`, …). Hot tools such as
//!   `getWorkspaceFolders` read it without touching Neovim's main thread at all.
//! * [`Snapshot`] mirrors what the read-only IDE tools read — buffers (name, filetype, modified,
//!   listed, loaded, line count), the active editor's buffer, diagnostics, the latest selection,
//!   how many diff views of ours are open — kept current by *deltas* Neovim's autocmds push
//!   (`lua/claude_context/ide/snapshot.lua`): `getOpenEditors`, `getDiagnostics`,
//!   `checkDocumentDirty`, `getLatestSelection` and `closeAllDiffTabs` (with no diff open)
//!   answer from it on the bridge's threads, even while Neovim sits at a hit-enter prompt.
//! * [`EditorRpc`] runs a request on Neovim's main thread (through a libuv async handle in the
//!   Neovim crate) for tools that must act on the editor; it answers through a oneshot channel so
//!   the caller awaits without blocking anything.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

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

/// One buffer as the snapshot knows it (a row of `lua/claude_context/ide/snapshot.lua`).
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct BufRow {
    pub buf: u64,
    /// The full name (`nvim_buf_get_name`).
    pub name: String,
    pub filetype: String,
    pub modified: bool,
    pub listed: bool,
    pub loaded: bool,
    /// Lines (0 when not loaded).
    pub lines: u64,
    /// A file buffer: `buftype` empty and a name that is not a URI.
    pub file: bool,
}

/// A change Neovim reports (JSON `{"k": …}`). Each carries the full new value of what changed,
/// so applying it never needs the editor.
#[derive(Debug, Deserialize)]
#[serde(tag = "k", rename_all = "snake_case")]
pub enum Delta {
    /// Forget everything: the snapshot is live from here on (a full scan of the buffers
    /// follows; sent when the bridge starts).
    Reset,
    /// Buffers added or changed (renamed, modified, loaded, unlisted, …).
    Buf { rows: Vec<BufRow> },
    /// Buffers wiped out.
    Gone { bufs: Vec<u64> },
    /// The active editor's buffer (the current window's, or the file window used last).
    Active { buf: Option<u64> },
    /// A buffer's diagnostics, in the protocol's shape (`getDiagnostics` items), sorted.
    Diag { buf: u64, items: Vec<Value> },
    /// The latest selection (`getLatestSelection`'s answer, `success: true`).
    Selection { sel: Value },
    /// A slice of the text of a big selection being read (`j` numbers the read): appended.
    SelPart { j: u64, t: String },
    /// Read `j` is complete: the latest selection is its slices' text with `meta`
    /// (`filePath`, `fileUrl`, `selection`).
    SelEnd {
        j: u64,
        meta: serde_json::Map<String, Value>,
    },
    /// How many diff views of this plugin are open.
    Diffs { n: u64 },
}

/// How `lua/claude_context/ide/snapshot.lua` starts a [`Delta::Diag`].
const DIAG_PREFIX: &str = r#"{"k":"diag","#;

/// A [`Delta::Diag`] whose items stay JSON text (serde cannot keep a [`RawValue`] inside an
/// internally tagged enum).
#[derive(Deserialize)]
struct DiagDelta {
    buf: u64,
    items: Box<RawValue>,
}

/// The mirrored state; see [`Snapshot`].
#[derive(Debug, Default)]
pub struct SnapState {
    /// A [`Delta::Reset`] arrived: the snapshot follows the editor.
    pub live: bool,
    /// File buffers by number (`nvim_list_bufs` order).
    pub bufs: BTreeMap<u64, BufRow>,
    by_name: HashMap<String, u64>,
    pub active: Option<u64>,
    /// Each buffer's diagnostics as the JSON array `getDiagnostics` answers with, kept as text:
    /// an answer copies them rather than encoding 18,000 values again at every call.
    pub diags: HashMap<u64, Box<RawValue>>,
    /// Shared: a reader takes it out from under the lock and encodes it after (a selection of
    /// 150 MB would hold every other reader for the whole encoding).
    pub selection: Option<Arc<Value>>,
    /// The selection a sliced read ([`Delta::SelEnd`]) made, until its notification is
    /// encoded ([`Snapshot::selection_params`]): sent even when a newer one came meanwhile.
    unsent_read: Option<(u64, Arc<Value>)>,
    /// The big selection being read ([`Delta::SelPart`]): its number and its text so far.
    sel_job: u64,
    sel_text: String,
    pub diffs: u64,
    /// Deltas applied so far.
    pub applied: u64,
}

impl SnapState {
    pub fn apply(&mut self, d: Delta) {
        self.applied += 1;
        match d {
            Delta::Reset => {
                *self = SnapState {
                    live: true,
                    applied: self.applied,
                    ..Default::default()
                };
            }
            Delta::Buf { rows } => {
                for r in rows {
                    if let Some(old) = self.bufs.remove(&r.buf) {
                        if self.by_name.get(&old.name) == Some(&r.buf) {
                            self.by_name.remove(&old.name);
                        }
                    }
                    if r.file {
                        self.by_name.insert(r.name.clone(), r.buf);
                        self.bufs.insert(r.buf, r);
                    }
                }
            }
            Delta::Gone { bufs } => {
                for b in bufs {
                    if let Some(old) = self.bufs.remove(&b) {
                        if self.by_name.get(&old.name) == Some(&b) {
                            self.by_name.remove(&old.name);
                        }
                    }
                    self.diags.remove(&b);
                    if self.active == Some(b) {
                        self.active = None;
                    }
                }
            }
            Delta::Active { buf } => self.active = buf,
            Delta::Diag { buf, items } => match serde_json::value::to_raw_value(&items) {
                Ok(raw) => self.set_diags(buf, raw),
                Err(e) => tracing::warn!(error = %e, "ignoring diagnostics that do not encode"),
            },
            Delta::Selection { sel } => self.selection = Some(Arc::new(sel)),
            Delta::SelPart { j, t } => {
                if j != self.sel_job {
                    self.sel_job = j;
                    self.sel_text.clear();
                }
                self.sel_text.push_str(&t);
            }
            Delta::SelEnd { j, meta } => {
                if j == self.sel_job {
                    let mut sel = serde_json::Map::new();
                    sel.insert("success".into(), Value::Bool(true));
                    sel.insert("text".into(), std::mem::take(&mut self.sel_text).into());
                    sel.extend(meta);
                    let sel = Arc::new(Value::Object(sel));
                    self.unsent_read = Some((j, sel.clone()));
                    self.selection = Some(sel);
                }
                self.sel_job = 0;
                self.sel_text = String::new();
            }
            Delta::Diffs { n } => self.diffs = n,
        }
    }

    /// `buf`'s diagnostics are now `items` (a JSON array; `[]` clears them).
    fn set_diags(&mut self, buf: u64, items: Box<RawValue>) {
        if items.get().trim() == "[]" {
            self.diags.remove(&buf);
        } else {
            self.diags.insert(buf, items);
        }
    }

    /// The file buffer holding `path` (absolute, normalised): by name, else by real path
    /// (symlinks), as `util.find_buf` finds it. Touches the file system only on a miss.
    pub fn find(&self, path: &str) -> Option<&BufRow> {
        if let Some(b) = self.by_name.get(path) {
            return self.bufs.get(b);
        }
        let real = std::fs::canonicalize(path).ok()?;
        self.bufs.values().find(|r| {
            Path::new(&r.name) == real
                || std::fs::canonicalize(&r.name)
                    .map(|p| p == real)
                    .unwrap_or(false)
        })
    }
}

/// The editor state the read-only tools read without Neovim's main thread.
///
/// Neovim's side only ever *queues* a delta (its JSON text, unparsed: a short lock that only
/// another push or a drain holds, never a reader's work); the deltas are parsed and applied on
/// the bridge's threads — by a drain task woken at each push, and by every reader before it
/// reads — so the editor never waits for a reader, however big the snapshot.
#[derive(Debug, Default)]
pub struct Snapshot {
    queue: Mutex<Vec<String>>,
    state: Mutex<SnapState>,
    wake: tokio::sync::Notify,
    /// `openDiff` calls on their way to the editor (a diff view may open any moment).
    diff_calls: AtomicUsize,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Snapshot {
    /// Queues a delta (JSON of a [`Delta`]); called on Neovim's main thread, returns at once.
    pub fn push(&self, delta: String) {
        lock(&self.queue).push(delta);
        self.wake.notify_one();
    }

    /// Applies every queued delta; returns the state, locked.
    pub fn state(&self) -> MutexGuard<'_, SnapState> {
        let mut st = lock(&self.state);
        let pending = std::mem::take(&mut *lock(&self.queue));
        for text in pending {
            // Diagnostics (the bulk of what is pushed) are kept as the JSON text they came in.
            if text.starts_with(DIAG_PREFIX) {
                if let Ok(d) = serde_json::from_str::<DiagDelta>(&text) {
                    st.applied += 1;
                    st.set_diags(d.buf, d.items);
                    continue;
                }
            }
            match serde_json::from_str::<Delta>(&text) {
                Ok(d) => st.apply(d),
                Err(e) => tracing::warn!(error = %e, "ignoring a malformed editor snapshot delta"),
            }
        }
        st
    }

    /// Applies deltas as they come (spawned on the bridge runtime), so that the queue stays
    /// short even when no tool reads for a long time.
    pub async fn drain_forever(&self) {
        loop {
            self.wake.notified().await;
            drop(self.state());
        }
    }

    /// The params of a `selection_changed` notification for the latest selection —
    /// `{text, filePath, fileUrl, selection}` — encoded here, on the bridge's threads. With
    /// `job`, the selection that sliced read made (once: `None` after), even if a newer one
    /// came since (that one's notification follows it).
    pub fn selection_params(&self, job: Option<u64>) -> Option<String> {
        let sel = {
            let mut st = self.state();
            match job {
                Some(j) => match st.unsent_read.take() {
                    Some((k, sel)) if k == j => sel,
                    other => {
                        st.unsent_read = other;
                        return None;
                    }
                },
                None => st.selection.clone()?,
            }
        };
        let obj = sel.as_object()?;
        let mut out = String::with_capacity(
            obj.get("text")
                .and_then(Value::as_str)
                .map_or(0, |t| t.len() + t.len() / 8)
                + 512,
        );
        out.push('{');
        for k in ["text", "filePath", "fileUrl", "selection"] {
            if let Some(v) = obj.get(k) {
                if out.len() > 1 {
                    out.push(',');
                }
                out.push_str(&Value::from(k).to_string());
                out.push(':');
                out.push_str(&v.to_string());
            }
        }
        out.push('}');
        Some(out)
    }

    /// Marks an `openDiff` on its way to the editor until the guard is dropped.
    pub fn diff_call(self: &Arc<Self>) -> DiffCall {
        self.diff_calls.fetch_add(1, Ordering::SeqCst);
        DiffCall(self.clone())
    }

    /// No diff view of ours is open and none is on its way: `closeAllDiffTabs` has nothing to
    /// close. `None` when the snapshot is not live (ask the editor).
    pub fn no_diffs(&self) -> Option<bool> {
        let st = self.state();
        st.live
            .then(|| st.diffs == 0 && self.diff_calls.load(Ordering::SeqCst) == 0)
    }
}

/// See [`Snapshot::diff_call`].
pub struct DiffCall(Arc<Snapshot>);

impl Drop for DiffCall {
    fn drop(&mut self) {
        self.0.diff_calls.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A path as `util.abspath` makes it: `file://` URIs decoded, `~` expanded, relative paths
/// against `cwd`, `.` and `..` folded.
pub fn abspath(p: &str, cwd: Option<&Path>) -> String {
    let mut p: String = match crate::uri::uri_to_path(p) {
        Some(path) if p.starts_with("file://") => path.to_string_lossy().into_owned(),
        _ => p.to_string(),
    };
    if p == "~" || p.starts_with("~/") {
        p = format!("{}{}", std::env::var("HOME").unwrap_or_default(), &p[1..]);
    }
    let path = if p.starts_with('/') {
        PathBuf::from(p)
    } else {
        cwd.unwrap_or(Path::new("/")).join(p)
    };
    let n = crate::paths::normalize(&path)
        .to_string_lossy()
        .into_owned();
    if n.len() > 1 {
        n.trim_end_matches('/').to_string()
    } else {
        n
    }
}

/// Why the editor did not answer a request ([`EditorRpc::call`]).
#[derive(Debug, Clone, thiserror::Error)]
pub enum EditorError {
    /// No editor is attached (tests of the core, or the editor went away).
    #[error("no editor is attached to handle '{method}'")]
    NotAttached { method: String },
    /// The editor's main thread is gone: the request could not be queued.
    #[error("the editor is not running")]
    NotRunning,
    /// The main thread could not start the request in time (a prompt is up, or a long command
    /// runs); nothing was done.
    #[error(
        "Neovim is busy and could not run {method} (waited {waited_ms} ms): it is waiting at a \
         prompt (\"Press ENTER\", \"-- More --\", a question) or running a long command. \
         Nothing was done; try again once the editor is free."
    )]
    Busy { method: String, waited_ms: u64 },
    /// The request could not be handed to the Lua handler (its Lua error, as text).
    #[error("the editor failed to handle {method}: {lua}")]
    Dispatch { method: String, lua: String },
    /// No answer came within `waited_ms` (the caller stopped waiting).
    #[error("the editor did not answer {method} within {waited_ms} ms")]
    Timeout { method: String, waited_ms: u64 },
    /// The handler ended without answering.
    #[error("the editor dropped the request '{method}' without answering")]
    Dropped { method: String },
    /// The handler answered with text that is not JSON.
    #[error("the editor answered with invalid JSON: {0}")]
    InvalidJson(Arc<serde_json::Error>),
    /// The handler refused or failed; its own message says why (`respond(nil, message)`).
    #[error("{0}")]
    Handler(String),
}

impl crate::error::Fault for EditorError {}

pub type RpcFuture = Pin<Box<dyn Future<Output = Result<Value, EditorError>> + Send>>;

/// Runs `method` with `params` on the editor's main thread.
pub trait EditorRpc: Send + Sync + 'static {
    fn call(&self, method: &str, params: Value) -> RpcFuture;
}

/// An editor that is not there (tests of the core, or the editor went away).
pub struct NoEditor;

impl EditorRpc for NoEditor {
    fn call(&self, method: &str, _params: Value) -> RpcFuture {
        let method = method.to_string();
        Box::pin(async move { Err(EditorError::NotAttached { method }) })
    }
}

/// The methods the core calls on the editor (`EditorRpc::call`), one constant each. The editor's
/// side routes each to its module through one table (`lua/claude_context/rpc/methods.lua`);
/// `tests/nvim/rpc_spec.lua` ties the two by [`methods::ALL`] (the native module's
/// `editor_methods`).
pub mod methods {
    /// The IDE tools the editor answers (`lua/claude_context/ide/<tool in snake case>.lua`).
    pub const OPEN_FILE: &str = "openFile";
    pub const OPEN_DIFF: &str = "openDiff";
    pub const GET_CURRENT_SELECTION: &str = "getCurrentSelection";
    pub const GET_LATEST_SELECTION: &str = "getLatestSelection";
    pub const GET_OPEN_EDITORS: &str = "getOpenEditors";
    pub const GET_DIAGNOSTICS: &str = "getDiagnostics";
    pub const CHECK_DOCUMENT_DIRTY: &str = "checkDocumentDirty";
    pub const SAVE_DOCUMENT: &str = "saveDocument";
    pub const CLOSE_TAB: &str = "close_tab";
    pub const CLOSE_ALL_DIFF_TABS: &str = "closeAllDiffTabs";
    /// A Claude Code session is ready for notifications.
    pub const IDE_CONNECTED: &str = "ide_connected";
    /// The code tools (`lua/claude_context/code/`): the method is the tool's name.
    pub const LSP_DEFINITION: &str = "lsp_definition";
    pub const LSP_REFERENCES: &str = "lsp_references";
    pub const LSP_IMPLEMENTATIONS: &str = "lsp_implementations";
    pub const LSP_TYPE_DEFINITION: &str = "lsp_type_definition";
    pub const LSP_HOVER: &str = "lsp_hover";
    pub const LSP_SYMBOLS: &str = "lsp_symbols";
    pub const LSP_CALLS: &str = "lsp_calls";
    pub const CODE_OUTLINE: &str = "code_outline";
    pub const LSP_DIAGNOSTICS: &str = "lsp_diagnostics";
    /// The hooks' asks: a permission, a plan.
    pub const PERMISSION_REQUEST: &str = "permission_request";
    pub const PLAN_REVIEW: &str = "plan_review";
    /// What the turns tell the editor.
    pub const SESSION_STATE: &str = "session_state";
    pub const TOOL_CALL: &str = "tool_call";
    pub const CHECKPOINT_ERROR: &str = "checkpoint_error";
    pub const CHECKPOINT_PROGRESS: &str = "checkpoint_progress";
    pub const TURN_CHECKPOINTED: &str = "turn_checkpointed";
    /// Test only (the `test-tools` feature's `test_panic`): a handler that throws.
    pub const TEST_PANIC: &str = "test/panic";

    /// Every method, `TEST_PANIC` aside (the editor's table has no module for it).
    pub const ALL: &[&str] = &[
        OPEN_FILE,
        OPEN_DIFF,
        GET_CURRENT_SELECTION,
        GET_LATEST_SELECTION,
        GET_OPEN_EDITORS,
        GET_DIAGNOSTICS,
        CHECK_DOCUMENT_DIRTY,
        SAVE_DOCUMENT,
        CLOSE_TAB,
        CLOSE_ALL_DIFF_TABS,
        IDE_CONNECTED,
        LSP_DEFINITION,
        LSP_REFERENCES,
        LSP_IMPLEMENTATIONS,
        LSP_TYPE_DEFINITION,
        LSP_HOVER,
        LSP_SYMBOLS,
        LSP_CALLS,
        CODE_OUTLINE,
        LSP_DIAGNOSTICS,
        PERMISSION_REQUEST,
        PLAN_REVIEW,
        SESSION_STATE,
        TOOL_CALL,
        CHECKPOINT_ERROR,
        CHECKPOINT_PROGRESS,
        TURN_CHECKPOINTED,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_editors_failures_keep_their_texts() {
        let m = || "openDiff".to_string();
        let texts = [
            (
                EditorError::NotAttached { method: m() },
                "no editor is attached to handle 'openDiff'",
            ),
            (EditorError::NotRunning, "the editor is not running"),
            (
                EditorError::Busy {
                    method: m(),
                    waited_ms: 1500,
                },
                "Neovim is busy and could not run openDiff (waited 1500 ms): it is waiting at a \
                 prompt (\"Press ENTER\", \"-- More --\", a question) or running a long command. \
                 Nothing was done; try again once the editor is free.",
            ),
            (
                EditorError::Dispatch {
                    method: m(),
                    lua: "boom".into(),
                },
                "the editor failed to handle openDiff: boom",
            ),
            (
                EditorError::Dropped { method: m() },
                "the editor dropped the request 'openDiff' without answering",
            ),
            (
                EditorError::Handler("File not found: /nope".into()),
                "File not found: /nope",
            ),
        ];
        for (e, want) in texts {
            assert_eq!(e.to_string(), want);
        }
        let bad = serde_json::from_str::<Value>("{").unwrap_err();
        let e = EditorError::InvalidJson(Arc::new(bad)).to_string();
        assert!(
            e.starts_with("the editor answered with invalid JSON: EOF"),
            "{e}"
        );
    }

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

    fn row(buf: u64, name: &str) -> String {
        serde_json::json!({"k": "buf", "rows": [{"buf": buf, "name": name, "filetype": "rust",
            "modified": false, "listed": true, "loaded": true, "lines": 3, "file": true}]})
        .to_string()
    }

    #[test]
    fn snapshot_follows_deltas_and_is_live_only_after_a_reset() {
        let s = Snapshot::default();
        s.push(row(1, "/p/a.rs"));
        assert!(
            !s.state().live,
            "deltas before the reset do not make it live"
        );
        s.push(r#"{"k":"reset"}"#.into());
        assert!(s.state().live && s.state().bufs.is_empty());
        s.push(row(1, "/p/a.rs"));
        s.push(row(2, "/p/b.rs"));
        assert_eq!(s.state().find("/p/a.rs").map(|r| r.buf), Some(1));
        // Renamed: the old name no longer finds it.
        s.push(row(1, "/p/c.rs"));
        assert!(s.state().find("/p/a.rs").is_none());
        assert_eq!(s.state().find("/p/c.rs").map(|r| r.buf), Some(1));
        // No longer a file buffer (buftype set): dropped.
        s.push(r#"{"k":"buf","rows":[{"buf":2,"name":"/p/b.rs","file":false}]}"#.into());
        assert!(s.state().find("/p/b.rs").is_none());
        s.push(r#"{"k":"diag","buf":1,"items":[{"message":"m"}]}"#.into());
        s.push(r#"{"k":"active","buf":1}"#.into());
        assert_eq!(s.state().diags[&1].get(), r#"[{"message":"m"}]"#);
        s.push(r#"{"k":"diag","buf":1,"items":[]}"#.into());
        assert!(s.state().diags.is_empty(), "cleared diagnostics");
        s.push(r#"{"k":"diag","buf":1,"items":[{"message":"m"}]}"#.into());
        s.push("not json".into());
        // The notification of a sliced read is encoded here, once, even when a newer selection
        // came meanwhile; without a read number, the latest selection.
        {
            let s = Snapshot::default();
            s.push(r#"{"k":"reset"}"#.into());
            s.push(r#"{"k":"sel_part","j":7,"t":"x\"y"}"#.into());
            s.push(r#"{"k":"sel_part","j":7,"t":"\nz"}"#.into());
            s.push(r#"{"k":"sel_end","j":7,"meta":{"filePath":"/p/a.rs","fileUrl":"file:///p/a.rs","selection":{"x":1}}}"#.into());
            s.push(
                r#"{"k":"selection","sel":{"success":true,"text":"newer","filePath":"/p/b.rs"}}"#
                    .into(),
            );
            let p = s
                .selection_params(Some(7))
                .expect("the read's notification");
            let v: Value = serde_json::from_str(&p).unwrap();
            assert_eq!(
                v,
                serde_json::json!({"text": "x\"y\nz", "filePath": "/p/a.rs",
                    "fileUrl": "file:///p/a.rs", "selection": {"x": 1}})
            );
            assert!(!p.contains("success"), "{p}");
            assert_eq!(s.selection_params(Some(7)), None, "once");
            assert_eq!(s.selection_params(Some(8)), None, "another read");
            let latest: Value = serde_json::from_str(&s.selection_params(None).unwrap()).unwrap();
            assert_eq!(
                latest,
                serde_json::json!({"text": "newer", "filePath": "/p/b.rs"})
            );
        }
        // A big selection comes in slices, then its end; an abandoned read's slices are dropped.
        s.push(r#"{"k":"sel_part","j":1,"t":"lost"}"#.into());
        s.push(r#"{"k":"sel_part","j":2,"t":"a\nb"}"#.into());
        s.push(r#"{"k":"sel_part","j":2,"t":"\nc\u00e9"}"#.into());
        s.push(r#"{"k":"sel_end","j":2,"meta":{"filePath":"/p/a.rs","selection":{"x":1}}}"#.into());
        assert_eq!(
            s.state().selection.as_deref(),
            Some(&serde_json::json!({"success": true, "text": "a\nb\ncé",
                "filePath": "/p/a.rs", "selection": {"x": 1}}))
        );
        s.push(r#"{"k":"sel_part","j":3,"t":"half"}"#.into());
        s.push(r#"{"k":"sel_end","j":4,"meta":{"filePath":"/p/b.rs"}}"#.into());
        assert_eq!(
            s.state().selection.as_ref().unwrap()["filePath"],
            "/p/a.rs",
            "an end without its slices changes nothing"
        );
        s.push(r#"{"k":"gone","bufs":[1]}"#.into());
        let st = s.state();
        assert!(st.bufs.is_empty() && st.diags.is_empty() && st.active.is_none());
        drop(st);
        // Diff views: none open and none on the way.
        assert_eq!(
            Snapshot::default().no_diffs(),
            None,
            "not live: ask the editor"
        );
        let s = Arc::new(Snapshot::default());
        s.push(r#"{"k":"reset"}"#.into());
        assert_eq!(s.no_diffs(), Some(true));
        let g = s.diff_call();
        assert_eq!(s.no_diffs(), Some(false), "an openDiff is on its way");
        drop(g);
        s.push(r#"{"k":"diffs","n":1}"#.into());
        assert_eq!(s.no_diffs(), Some(false));
    }

    #[test]
    fn abspath_is_util_abspath() {
        let cwd = Some(Path::new("/w/p"));
        assert_eq!(abspath("a/../b.rs", cwd), "/w/p/b.rs");
        assert_eq!(abspath("/x/./y/", cwd), "/x/y");
        assert_eq!(abspath("file:///a%20b/c.rs", cwd), "/a b/c.rs");
        let home = std::env::var("HOME").unwrap_or_default();
        assert_eq!(abspath("~/f", cwd), format!("{home}/f"));
    }
}
