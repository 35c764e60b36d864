//! The store file, its lock, and the operations the WRAP tools perform on it.

use crate::memory_bank::document::now_rfc3339;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// What `get_current_status` says when no issue is defined, word for word (doc/protocol.md,
/// WRAP decisions).
pub const NO_ISSUE: &str = "課題が定義されていません";

/// The store format this code writes and reads.
const FORMAT: u64 = 1;
/// Replaced issues kept in `history`.
pub const HISTORY_LIMIT: usize = 100;
/// Backups `reset` keeps per project.
pub const BACKUPS_KEPT: usize = 10;
/// How long an update waits for another editor's lock.
const LOCK_WAIT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Issue {
    pub id: String,
    pub title: String,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constraints: Vec<String>,
    pub created_at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DecisionOption {
    pub id: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supplementary_info: Option<String>,
    pub created_at: String,
}

/// An issue that a later `define_issue` replaced, with the options it had.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    pub issue: Issue,
    #[serde(default)]
    pub options: Vec<DecisionOption>,
    pub replaced_at: String,
}

/// The whole store file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreData {
    pub version: u64,
    pub project_root: String,
    pub issue: Option<Issue>,
    #[serde(default)]
    pub options: Vec<DecisionOption>,
    #[serde(default)]
    pub history: Vec<HistoryEntry>,
    /// The Widen Options step the last `register_options` named (mcp-decisive's
    /// `widenOptionsStep`); cleared by `define_issue`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub widen_options_step: Option<WidenOptionsStep>,
    /// Withdrawal criteria per option (`make_tripwire`); cleared when the issue or the options
    /// change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tripwires: Vec<Value>,
    pub updated_at: String,
}

/// The Widen Options steps of mcp-decisive, in order: `{type, description}` with the
/// description fixed by the type.
pub const WIDEN_OPTIONS_STEPS: [(&str, &str); 5] = [
    ("initial_registered", "初期登録した"),
    ("laddered", "ラダリングした"),
    ("analogical_research_done", "類推解決策調査した"),
    ("elimination_tested", "消去テストした"),
    ("fixed", "fixした"),
];

/// Which Widen Options step a `register_options` call belongs to (`{type, description}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WidenOptionsStep {
    /// `initial_registered`, `laddered`, `analogical_research_done`, `elimination_tested` or
    /// `fixed`.
    #[serde(rename = "type")]
    #[schemars(extend("enum" = ["initial_registered", "laddered", "analogical_research_done", "elimination_tested", "fixed"]))]
    pub kind: String,
    /// The step's Japanese name (`初期登録した`, …), filled in from the type.
    pub description: String,
}

impl WidenOptionsStep {
    /// The step of this type (`{type}` or the bare type string as given); an unknown type is
    /// an error listing the known ones.
    pub fn parse(v: &Value) -> Result<WidenOptionsStep, UnknownStep> {
        let kind = match v {
            Value::String(s) => s.as_str(),
            Value::Object(o) => o.get("type").and_then(Value::as_str).unwrap_or(""),
            _ => "",
        };
        WIDEN_OPTIONS_STEPS
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(k, d)| WidenOptionsStep {
                kind: (*k).into(),
                description: (*d).into(),
            })
            .ok_or_else(|| UnknownStep(v.clone()))
    }

    /// The name mcp-decisive's workflow state gives the step (`options_fixed` for `fixed`, …).
    pub fn workflow_state(&self) -> &str {
        match self.kind.as_str() {
            "initial_registered" => "initial_options_registered",
            "fixed" => "options_fixed",
            k => k,
        }
    }
}

/// A `widenOptionsStep` of no known type (the value given); the text lists the known ones.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "widenOptionsStep: unknown step {given}; use {{\"type\": …}} with one of {known}",
    given = .0,
    known = WIDEN_OPTIONS_STEPS.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
)]
pub struct UnknownStep(pub Value);

/// An option as `register_options` accepts it: a string, or `{text, supplementaryInfo}`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OptionInput {
    Text(String),
    Detailed {
        text: String,
        #[serde(default, rename = "supplementaryInfo")]
        supplementary_info: Option<String>,
    },
}

/// Where the WRAP process stands, derived from the store.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Workflow {
    /// `widen-options` (issue defined, fewer than 3 options) or `reality-test`.
    pub step: &'static str,
    pub next_action: &'static str,
}

pub fn workflow(options: usize) -> Workflow {
    if options < 3 {
        Workflow {
            step: "widen-options",
            next_action: "選択肢を広げる（Widen your options）: register_options で3つ以上の選択肢を登録してください。",
        }
    } else {
        Workflow {
            step: "reality-test",
            next_action: "前提を現実で検証する（Reality-test your assumptions）: 各選択肢の前提を確かめ、判断から距離を置き（Attain distance）、失敗に備えてください（Prepare to be wrong）。",
        }
    }
}

#[derive(Debug)]
pub enum StoreError {
    Io {
        path: PathBuf,
        action: &'static str,
        err: std::io::Error,
    },
    Corrupt {
        path: PathBuf,
        reason: String,
    },
    Newer {
        path: PathBuf,
        version: u64,
    },
    Locked {
        path: PathBuf,
    },
    NoIssue,
    Invalid(String),
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Io { path, action, err } => write!(
                f,
                "cannot {action} the decision store '{}': {err}",
                path.display()
            ),
            StoreError::Corrupt { path, reason } => write!(
                f,
                "the decision store '{}' is corrupt ({reason}). It was left untouched: repair or \
                 remove it, or call reset to move it into a backup and start over.",
                path.display()
            ),
            StoreError::Newer { path, version } => write!(
                f,
                "the decision store '{}' has format {version}, written by a newer \
                 claude-context.nvim; it was left untouched. Update the plugin, or call reset to \
                 move it into a backup and start over.",
                path.display()
            ),
            StoreError::Locked { path } => write!(
                f,
                "the decision store '{}' stayed locked by another editor for {} s; try again",
                path.display(),
                LOCK_WAIT.as_secs()
            ),
            StoreError::NoIssue => write!(f, "{NO_ISSUE}: call define_issue first"),
            StoreError::Invalid(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for StoreError {}

/// The decision store's errors are the tool's failure, said to the model as they are.
impl crate::error::Fault for StoreError {}

/// FNV-1a, 64 bits: stable across Rust releases (unlike `DefaultHasher`).
fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// `<state_dir>/decisions/<project dir name>-<hash of the full root>.json`.
pub fn store_path(state_dir: &Path, project_root: &Path) -> PathBuf {
    let hash = fnv1a64(project_root.as_os_str().as_encoded_bytes());
    let base = crate::paths::name_part(project_root, &['.']);
    let base = if base.is_empty() || base.starts_with('.') {
        format!("root{base}")
    } else {
        base
    };
    state_dir
        .join("decisions")
        .join(format!("{base}-{hash:016x}.json"))
}

/// One project's decision store.
#[derive(Debug, Clone)]
pub struct Store {
    pub path: PathBuf,
    project_root: PathBuf,
}

fn io<'a>(path: &'a Path, action: &'static str) -> impl FnOnce(std::io::Error) -> StoreError + 'a {
    move |err| StoreError::Io {
        path: path.to_path_buf(),
        action,
        err,
    }
}

fn non_empty(field: &str, v: &str) -> Result<String, StoreError> {
    let t = v.trim();
    if t.is_empty() {
        Err(StoreError::Invalid(format!("'{field}' must not be empty")))
    } else {
        Ok(t.to_string())
    }
}

impl Store {
    pub fn new(state_dir: &Path, project_root: &Path) -> Store {
        Store {
            path: store_path(state_dir, project_root),
            project_root: project_root.to_path_buf(),
        }
    }

    fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }

    fn lock_path(&self) -> PathBuf {
        self.path.with_extension("lock")
    }

    /// The store's content; `None` when nothing was stored yet.
    pub fn load(&self) -> Result<Option<StoreData>, StoreError> {
        let bytes = match std::fs::read(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(&self.path, "read")(e)),
        };
        let corrupt = |reason: String| StoreError::Corrupt {
            path: self.path.clone(),
            reason,
        };
        let v: Value =
            serde_json::from_slice(&bytes).map_err(|e| corrupt(format!("not valid JSON: {e}")))?;
        match v.get("version").and_then(Value::as_u64) {
            Some(FORMAT) => {}
            Some(n) if n > FORMAT => {
                return Err(StoreError::Newer {
                    path: self.path.clone(),
                    version: n,
                })
            }
            _ => return Err(corrupt("no valid \"version\" field".into())),
        }
        serde_json::from_value(v)
            .map(Some)
            .map_err(|e| corrupt(format!("unexpected content: {e}")))
    }

    /// Runs `f` while holding the store's exclusive lock (waiting up to [`LOCK_WAIT`]).
    fn locked<R>(&self, f: impl FnOnce() -> Result<R, StoreError>) -> Result<R, StoreError> {
        let dir = self.dir();
        std::fs::create_dir_all(dir).map_err(io(dir, "create the directory of"))?;
        let lp = self.lock_path();
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lp)
            .map_err(io(&lp, "open the lock file of"))?;
        let _hold = LockHold::take(file, LOCK_WAIT).map_err(|e| match e {
            Some(e) => io(&lp, "lock")(e),
            None => StoreError::Locked {
                path: self.path.clone(),
            },
        })?;
        f()
    }

    fn save(&self, data: &StoreData) -> Result<(), StoreError> {
        let bytes = serde_json::to_vec_pretty(data).map_err(|e| StoreError::Io {
            path: self.path.clone(),
            action: "encode",
            err: std::io::Error::other(e),
        })?;
        crate::fsutil::write_atomic(&self.path, &bytes, 0o600).map_err(io(&self.path, "write"))
    }

    fn empty(&self) -> StoreData {
        StoreData {
            version: FORMAT,
            project_root: self.project_root.to_string_lossy().into_owned(),
            issue: None,
            options: Vec::new(),
            history: Vec::new(),
            widen_options_step: None,
            tripwires: Vec::new(),
            updated_at: now_rfc3339(),
        }
    }

    /// Stores a new issue (new id, new `createdAt`); the one it replaces moves into `history`
    /// with its options.
    pub fn define_issue(
        &self,
        title: &str,
        description: &str,
        context: Option<&str>,
        constraints: Vec<String>,
    ) -> Result<Issue, StoreError> {
        let issue = Issue {
            id: uuid::Uuid::new_v4().to_string(),
            title: non_empty("title", title)?,
            description: non_empty("description", description)?,
            context: context
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(String::from),
            constraints: constraints
                .iter()
                .map(|c| c.trim())
                .filter(|c| !c.is_empty())
                .map(String::from)
                .collect(),
            created_at: now_rfc3339(),
        };
        self.locked(|| {
            let mut data = self.load()?.unwrap_or_else(|| self.empty());
            if let Some(old) = data.issue.take() {
                data.history.push(HistoryEntry {
                    issue: old,
                    options: std::mem::take(&mut data.options),
                    replaced_at: issue.created_at.clone(),
                });
                let excess = data.history.len().saturating_sub(HISTORY_LIMIT);
                data.history.drain(..excess);
            }
            data.options.clear();
            data.widen_options_step = None;
            data.tripwires.clear();
            data.issue = Some(issue.clone());
            data.updated_at = now_rfc3339();
            self.save(&data)?;
            Ok(issue)
        })
    }

    /// Registers the options for the current issue (replacing earlier ones); at least 3.
    /// `step` (when given) is kept as the current Widen Options step.
    pub fn register_options(
        &self,
        inputs: Vec<OptionInput>,
        step: Option<WidenOptionsStep>,
    ) -> Result<(Issue, Vec<DecisionOption>), StoreError> {
        if inputs.len() < 3 {
            return Err(StoreError::Invalid(format!(
                "register at least 3 options (got {}): widening the options is the point",
                inputs.len()
            )));
        }
        let now = now_rfc3339();
        let mut options = Vec::with_capacity(inputs.len());
        for (i, o) in inputs.into_iter().enumerate() {
            let (text, info) = match o {
                OptionInput::Text(t) => (t, None),
                OptionInput::Detailed {
                    text,
                    supplementary_info,
                } => (text, supplementary_info),
            };
            options.push(DecisionOption {
                id: uuid::Uuid::new_v4().to_string(),
                text: non_empty(&format!("options[{i}].text"), &text)?,
                supplementary_info: info.map(|s| s.trim().to_string()).filter(|s| !s.is_empty()),
                created_at: now.clone(),
            });
        }
        self.locked(|| {
            let mut data = self.load()?.ok_or(StoreError::NoIssue)?;
            let issue = data.issue.clone().ok_or(StoreError::NoIssue)?;
            data.options = options.clone();
            data.tripwires.clear();
            if step.is_some() {
                data.widen_options_step = step;
            }
            data.updated_at = now_rfc3339();
            self.save(&data)?;
            Ok((issue, options))
        })
    }

    /// Narrows the current issue's options to those whose id is in `ids` (the person's choice
    /// through elicitation, `register_options`); at least 3 must remain. Returns the kept ones.
    pub fn keep_options(&self, ids: &[String]) -> Result<Vec<DecisionOption>, StoreError> {
        self.locked(|| {
            let mut data = self.load()?.ok_or(StoreError::NoIssue)?;
            let kept: Vec<DecisionOption> = data
                .options
                .iter()
                .filter(|o| ids.contains(&o.id))
                .cloned()
                .collect();
            if kept.len() < 3 {
                return Err(StoreError::Invalid(format!(
                    "keep at least 3 options (got {})",
                    kept.len()
                )));
            }
            data.options = kept.clone();
            data.tripwires.clear();
            data.updated_at = now_rfc3339();
            self.save(&data)?;
            Ok(kept)
        })
    }

    /// Keeps the withdrawal criteria (`make_tripwire`) of the current issue's options.
    pub fn set_tripwires(&self, tripwires: Vec<Value>) -> Result<(), StoreError> {
        self.locked(|| {
            let mut data = self.load()?.ok_or(StoreError::NoIssue)?;
            if data.issue.is_none() {
                return Err(StoreError::NoIssue);
            }
            data.tripwires = tripwires;
            data.updated_at = now_rfc3339();
            self.save(&data)
        })
    }

    /// Moves the store (even a corrupt one) into a backup next to it, so the project starts
    /// over; returns the backup's path, `None` when there was nothing to reset. Keeps the newest
    /// [`BACKUPS_KEPT`] backups.
    pub fn reset(&self) -> Result<Option<PathBuf>, StoreError> {
        self.locked(|| {
            match std::fs::symlink_metadata(&self.path) {
                Ok(m) if m.is_file() => {}
                Ok(_) => {
                    return Err(StoreError::Invalid(format!(
                        "the decision store '{}' is not a regular file; it was left untouched",
                        self.path.display()
                    )))
                }
                Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(io(&self.path, "inspect")(e)),
            }
            // `<stem>.backup-<UTC time to the millisecond>-<sequence>.json`: fixed-width fields,
            // so name order is age order even when several resets share a millisecond.
            let stamp = format!(
                "{}{}-",
                self.backup_prefix(),
                now_rfc3339().replace(':', "-")
            );
            let seq = self
                .backups()
                .iter()
                .filter_map(|p| {
                    let name = p.file_name()?.to_str()?;
                    name.strip_prefix(&stamp)?
                        .strip_suffix(".json")?
                        .parse::<u32>()
                        .ok()
                })
                .max()
                .map_or(0, |n| n + 1);
            let backup = self.dir().join(format!("{stamp}{seq:04}.json"));
            std::fs::rename(&self.path, &backup).map_err(io(&self.path, "back up"))?;
            self.prune_backups();
            Ok(Some(backup))
        })
    }

    fn backup_prefix(&self) -> String {
        let stem = self
            .path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        format!("{stem}.backup-")
    }

    /// The backups of this store, oldest first.
    pub fn backups(&self) -> Vec<PathBuf> {
        let prefix = self.backup_prefix();
        let mut out: Vec<PathBuf> = std::fs::read_dir(self.dir())
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
            .map(|e| e.path())
            .collect();
        // Fixed-width `<time>-<sequence>` names (see reset): name order is age order.
        out.sort();
        out
    }

    fn prune_backups(&self) {
        let b = self.backups();
        let excess = b.len().saturating_sub(BACKUPS_KEPT);
        for p in &b[..excess] {
            if let Err(e) = std::fs::remove_file(p) {
                tracing::warn!(path = %p.display(), error = %e, "cannot remove an old decision backup");
            }
        }
    }
}

/// The store's exclusive lock, held by a helper thread blocked in `flock` until it is released.
///
/// A blocking wait is woken by the kernel as soon as the lock is free, so a waiter is never
/// starved by others that happen to retry at the right moment (as polling `try_write` was, past
/// [`LOCK_WAIT`] on a loaded machine); the deadline is enforced here, on the channel. Dropping it
/// releases the lock before returning.
struct LockHold {
    release: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LockHold {
    /// Takes the exclusive lock on `file`, waiting up to `wait`: `Err(None)` when it stayed
    /// held. A helper that gives up keeps waiting in `flock` and lets go as soon as it gets it.
    fn take(file: std::fs::File, wait: Duration) -> Result<LockHold, Option<std::io::Error>> {
        let (got_tx, got_rx) = mpsc::channel::<std::io::Result<()>>();
        let (release, release_rx) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("decision-store-lock".into())
            .spawn(move || {
                let mut lock = fd_lock::RwLock::new(file);
                let guard = loop {
                    match lock.write() {
                        Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                        other => break other,
                    }
                };
                match guard {
                    // Held until the holder drops `release` (or gave up waiting).
                    Ok(_guard) => {
                        if got_tx.send(Ok(())).is_ok() {
                            let _ = release_rx.recv();
                        }
                    }
                    Err(e) => {
                        let _ = got_tx.send(Err(e));
                    }
                }
            })
            .map_err(Some)?;
        match got_rx.recv_timeout(wait) {
            Ok(Ok(())) => Ok(LockHold {
                release: Some(release),
                thread: Some(thread),
            }),
            Ok(Err(e)) => Err(Some(e)),
            Err(mpsc::RecvTimeoutError::Timeout) => Err(None),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                Err(Some(std::io::Error::other("the lock thread ended")))
            }
        }
    }
}

impl Drop for LockHold {
    fn drop(&mut self) {
        drop(self.release.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests;
