//! What survives a restart: the newest 100 history entries, the current session id (and the
//! directory it was started in, since the CLI finds sessions by working directory), and the
//! run counters behind `get_execution_stats`. One JSON file under `state_dir`, written
//! atomically.

use super::{Counters, HistoryEntry};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

/// History entries kept (doc/protocol.md, Limits).
pub const HISTORY_LIMIT: usize = 100;
/// The file name under `state_dir`.
pub const FILE_NAME: &str = "claude_session.json";
const VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct Persisted {
    pub version: u32,
    pub current_session_id: Option<String>,
    pub session_cwd: Option<PathBuf>,
    pub history: VecDeque<HistoryEntry>,
    pub stats: Counters,
}

impl Default for Persisted {
    fn default() -> Self {
        Persisted {
            version: VERSION,
            current_session_id: None,
            session_cwd: None,
            history: VecDeque::new(),
            stats: Counters::default(),
        }
    }
}

impl Persisted {
    pub fn push(&mut self, e: HistoryEntry) {
        self.history.push_back(e);
        while self.history.len() > HISTORY_LIMIT {
            self.history.pop_front();
        }
    }
}

/// Loads the state; a missing file is a fresh start. A file that does not parse is moved aside
/// (`*.bad`) so the next write does not destroy what a person may want to look at.
pub fn load(path: &Path) -> Persisted {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(path = %path.display(), error = %e, "cannot read the Claude session state");
            }
            return Persisted::default();
        }
    };
    match serde_json::from_slice::<Persisted>(&bytes) {
        Ok(mut p) => {
            p.version = VERSION;
            while p.history.len() > HISTORY_LIMIT {
                p.history.pop_front();
            }
            p
        }
        Err(e) => {
            let bad = path.with_extension("json.bad");
            tracing::warn!(path = %path.display(), error = %e, moved_to = %bad.display(),
                "the Claude session state does not parse; starting afresh");
            let _ = std::fs::rename(path, &bad);
            Persisted::default()
        }
    }
}

pub fn save(path: &Path, p: &Persisted) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let bytes = serde_json::to_vec(p).map_err(std::io::Error::other)?;
    crate::fsutil::write_atomic(path, &bytes, 0o600)
}
