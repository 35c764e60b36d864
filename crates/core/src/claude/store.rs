//! What survives a restart, per project: the newest history entries, the current session id
//! and the run counters behind `get_execution_stats`. One JSON file per project root under
//! `state_dir/claude_sessions/`, written atomically; another project never sees it.
//!
//! Bounded on disk and in memory: at most [`HISTORY_LIMIT`] entries and [`HISTORY_BYTES`]
//! bytes of them, each prompt, response and error cut to [`FIELD_BYTES`] in the stored copy
//! with a marker saying so. A file is read only up to [`LOAD_BYTES`]; a larger one is moved
//! aside, not read.

use super::results::{Counters, HistoryEntry};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::io::Read;
use std::path::{Path, PathBuf};

/// History entries kept per project (doc/protocol.md, Limits).
pub const HISTORY_LIMIT: usize = 100;
/// The most bytes of history (as stored JSON) kept per project; the oldest entries go first.
pub const HISTORY_BYTES: usize = 1 << 20;
/// The most bytes of one prompt, response or error in the stored copy.
pub const FIELD_BYTES: usize = 16 << 10;
/// The largest per-project file read at start; a larger one is moved aside (`*.toolarge`).
pub const LOAD_BYTES: u64 = 4 << 20;
/// The folder of the per-project files, under `state_dir`.
pub const DIR_NAME: &str = "claude_sessions";
const VERSION: u32 = 2;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct Persisted {
    pub version: u32,
    /// The project root this state belongs to.
    pub project_root: Option<PathBuf>,
    pub current_session_id: Option<String>,
    /// The directory the current session was started in (the project root).
    pub session_cwd: Option<PathBuf>,
    pub history: VecDeque<HistoryEntry>,
    pub stats: Counters,
}

impl Default for Persisted {
    fn default() -> Self {
        Persisted {
            version: VERSION,
            project_root: None,
            current_session_id: None,
            session_cwd: None,
            history: VecDeque::new(),
            stats: Counters::default(),
        }
    }
}

/// Cuts `s` to at most `max` bytes, the marker included (on a character boundary), with a
/// marker saying how much the original had; a cut string is not cut again. True when it cut.
pub fn cut_field(s: &mut String, max: usize) -> bool {
    if s.len() <= max {
        return false;
    }
    let total = s.len();
    // The marker is well under 120 bytes.
    let mut end = max.saturating_sub(120);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s.push_str(&format!(
        "\n[… cut in the stored history: the first {end} of {total} bytes are kept]"
    ));
    true
}

/// The stored copy of an entry: prompt, response and error cut to [`FIELD_BYTES`].
pub fn bound_entry(e: &mut HistoryEntry) {
    cut_field(&mut e.result.prompt, FIELD_BYTES);
    if let Some(r) = e.result.response.as_mut() {
        cut_field(r, FIELD_BYTES);
    }
    if let Some(r) = e.result.error.as_mut() {
        cut_field(r, FIELD_BYTES);
    }
}

fn entry_bytes(e: &HistoryEntry) -> usize {
    serde_json::to_vec(e).map_or(0, |v| v.len() + 1)
}

impl Persisted {
    pub fn push(&mut self, mut e: HistoryEntry) {
        bound_entry(&mut e);
        self.history.push_back(e);
        self.bound();
    }

    /// Applies every bound: fields, entry count, bytes (the oldest entries go first).
    pub fn bound(&mut self) {
        for e in self.history.iter_mut() {
            bound_entry(e);
        }
        while self.history.len() > HISTORY_LIMIT {
            self.history.pop_front();
        }
        let mut total: usize = self.history.iter().map(entry_bytes).sum();
        while total > HISTORY_BYTES {
            match self.history.pop_front() {
                Some(e) => total -= entry_bytes(&e),
                None => break,
            }
        }
    }
}

/// FNV-1a, 64 bits: a stable name for a project root's file.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The file of the project at `root`: `<state_dir>/claude_sessions/<name>-<hash>.json`.
pub fn project_file(state_dir: &Path, root: &Path) -> PathBuf {
    let name: String = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(40)
        .collect();
    let hash = fnv1a(root.as_os_str().as_encoded_bytes());
    state_dir
        .join(DIR_NAME)
        .join(format!("{}-{hash:016x}.json", name.trim_start_matches('.')))
}

/// Reads at most `limit` bytes of `path`; `Ok(None)` when the file is larger.
fn read_bounded(path: &Path, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    let f = std::fs::File::open(path)?;
    let mut out = Vec::new();
    f.take(limit + 1).read_to_end(&mut out)?;
    Ok((out.len() as u64 <= limit).then_some(out))
}

/// Moves `path` aside to `<path>.<ext>` (a numbered name when that exists), so nothing of the
/// person's is overwritten.
fn move_aside(path: &Path, ext: &str) -> PathBuf {
    let mut target = PathBuf::from(format!("{}.{ext}", path.display()));
    let mut n = 1;
    while target.exists() && n < 100 {
        target = PathBuf::from(format!("{}.{ext}.{n}", path.display()));
        n += 1;
    }
    let _ = std::fs::rename(path, &target);
    target
}

/// Loads a project's state; a missing file is a fresh start. A file that does not parse (or is
/// another project's, or is too large to read) is moved aside so the next write does not
/// destroy what a person may want to look at. Whatever loads is bounded.
pub fn load(path: &Path, root: &Path) -> Persisted {
    let fresh = || Persisted {
        project_root: Some(root.to_path_buf()),
        ..Persisted::default()
    };
    let bytes = match read_bounded(path, LOAD_BYTES) {
        Ok(Some(b)) => b,
        Ok(None) => {
            let to = move_aside(path, "toolarge");
            tracing::warn!(path = %path.display(), moved_to = %to.display(),
                "the Claude session state is over {LOAD_BYTES} bytes; starting afresh");
            return fresh();
        }
        Err(e) => {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(path = %path.display(), error = %e, "cannot read the Claude session state");
            }
            return fresh();
        }
    };
    match serde_json::from_slice::<Persisted>(&bytes) {
        Ok(p) if p.project_root.as_deref().is_some_and(|r| r != root) => {
            let to = move_aside(path, "other");
            tracing::warn!(path = %path.display(), moved_to = %to.display(),
                "the Claude session state belongs to another project; starting afresh");
            fresh()
        }
        Ok(mut p) => {
            p.version = VERSION;
            p.project_root = Some(root.to_path_buf());
            p.bound();
            p
        }
        Err(e) => {
            let to = move_aside(path, "bad");
            tracing::warn!(path = %path.display(), error = %e, moved_to = %to.display(),
                "the Claude session state does not parse; starting afresh");
            fresh()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claude::results::ExecResult;

    fn entry(prompt: &str, ts: &str, sid: Option<&str>, resumed: Option<&str>) -> HistoryEntry {
        HistoryEntry {
            result: ExecResult {
                success: true,
                prompt: prompt.into(),
                response: Some(format!("answer to {prompt}")),
                execution_time: 1.0,
                timestamp: ts.into(),
                error: None,
                context_file: None,
            },
            tool: "execute_claude".into(),
            session_id: sid.map(String::from),
            resumed_session_id: resumed.map(String::from),
            total_cost_usd: None,
            input_tokens: None,
            output_tokens: None,
            duration_ms: None,
        }
    }

    #[test]
    fn long_fields_are_cut_with_a_marker_and_bytes_are_bounded() {
        let mut p = Persisted::default();
        let big = "é".repeat(4 << 20); // 8 MB, two bytes a character
        for i in 0..4 {
            let mut e = entry(&big, &format!("2026-01-0{i}"), None, None);
            e.result.response = Some(big.clone());
            p.push(e);
        }
        let e = &p.history[0];
        assert!(e.result.prompt.len() <= FIELD_BYTES);
        assert!(
            e.result.prompt.contains("cut in the stored history"),
            "marker"
        );
        assert!(e.result.prompt.contains(&format!("of {} bytes", big.len())));
        assert!(e
            .result
            .response
            .as_ref()
            .unwrap()
            .contains("cut in the stored history"));
        let bytes = serde_json::to_vec(&p).unwrap().len();
        assert!(bytes < HISTORY_BYTES, "{bytes}");
        // Many entries: the byte bound drops the oldest.
        for i in 0..200 {
            let mut e = entry(
                &"x".repeat(FIELD_BYTES * 2),
                &format!("t{i:03}"),
                None,
                None,
            );
            e.result.response = Some("y".repeat(FIELD_BYTES * 2));
            p.push(e);
        }
        let bytes = serde_json::to_vec(&p).unwrap().len();
        assert!(bytes <= HISTORY_BYTES + 1024, "{bytes}");
        assert!(p.history.len() < HISTORY_LIMIT);
        assert_eq!(p.history.back().unwrap().result.timestamp, "t199");
        // Short fields are untouched.
        let mut s = "short".to_string();
        assert!(!cut_field(&mut s, 10));
        assert_eq!(s, "short");
    }

    #[test]
    fn a_file_over_the_load_bound_is_moved_aside_unread() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("p.json");
        let big = vec![b' '; LOAD_BYTES as usize + 10];
        std::fs::write(&f, &big).unwrap();
        let p = load(&f, Path::new("/w"));
        assert!(p.history.is_empty());
        assert!(!f.exists());
        assert_eq!(
            std::fs::metadata(d.path().join("p.json.toolarge"))
                .unwrap()
                .len(),
            big.len() as u64
        );
    }

    #[test]
    fn project_files_differ_per_root() {
        let s = Path::new("/state");
        let a = project_file(s, Path::new("/w/a"));
        let b = project_file(s, Path::new("/x/a"));
        assert_ne!(a, b);
        assert!(a.starts_with("/state/claude_sessions"));
        assert!(a.file_name().unwrap().to_string_lossy().starts_with("a-"));
        assert_eq!(a, project_file(s, Path::new("/w/a")));
    }
}
