//! What survives a restart, per project: the newest history entries, the current session id
//! and the run counters behind `get_execution_stats`. One JSON file per project root under
//! `state_dir/claude_sessions/`, written atomically; another project never sees it.
//!
//! Bounded on disk and in memory: at most [`HISTORY_LIMIT`] entries and [`HISTORY_BYTES`]
//! bytes of them, each prompt, response and error cut to [`FIELD_BYTES`] in the stored copy
//! with a marker saying so. A file is read only up to [`LOAD_BYTES`]; a larger one is moved
//! aside, not read.
//!
//! The one global file of earlier versions (`claude_session.json`) is split per directory once
//! ([`migrate`]): each entry goes to the project its session ran in, and the old file is kept,
//! renamed to [`LEGACY_BACKUP`].

use super::results::{Counters, HistoryEntry};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, VecDeque};
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
/// The largest legacy global file split by [`migrate`]; a larger one is only kept as the backup.
pub const LEGACY_LOAD_BYTES: u64 = 256 << 20;
/// The global file of earlier versions, under `state_dir`.
pub const LEGACY_FILE_NAME: &str = "claude_session.json";
/// What the global file is renamed to once it has been split.
pub const LEGACY_BACKUP: &str = "claude_session.json.pre-per-project";
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

/// The working directory the CLI recorded for `session` in its own session files
/// (`<config>/projects/*/<session>.jsonl`, a `cwd` field near the start), read bounded.
fn session_dir_from_cli(cli_config: &Path, session: &str) -> Option<PathBuf> {
    if !super::args::valid_session_id(session) {
        return None;
    }
    let projects = cli_config.join("projects");
    for d in std::fs::read_dir(&projects).ok()?.flatten().take(10_000) {
        let Ok(file) = std::fs::File::open(d.path().join(format!("{session}.jsonl"))) else {
            continue;
        };
        // Its start only: the `cwd` field is on the first lines.
        let mut buf = Vec::new();
        if file.take(256 << 10).read_to_end(&mut buf).is_ok() {
            if let Some(c) = cwd_in(&buf) {
                return Some(c);
            }
        }
    }
    None
}

fn cwd_in(bytes: &[u8]) -> Option<PathBuf> {
    bytes.split(|b| *b == b'\n').find_map(|line| {
        let v: serde_json::Value = serde_json::from_slice(line).ok()?;
        let c = v.get("cwd")?.as_str()?;
        Path::new(c).is_absolute().then(|| PathBuf::from(c))
    })
}

/// What [`migrate`] did.
#[derive(Debug, Default, PartialEq)]
pub struct Migration {
    /// Entries written to each project's file (merged with what it held).
    pub projects: BTreeMap<PathBuf, usize>,
    /// Entries whose directory could not be told: they stay in the backup only.
    pub unplaced: usize,
    /// Where the old file is now.
    pub backup: Option<PathBuf>,
}

/// Splits the global file of earlier versions per directory, once: every entry whose session's
/// directory can be told (the current session's recorded directory, sessions linked to it by
/// `--resume`, the CLI's own session files under `cli_config`) is merged into that project's
/// file, the current session goes to its directory, and the global file is renamed to
/// [`LEGACY_BACKUP`] (kept: nothing is deleted). Running it again after a crash half-way merges
/// the same entries again without duplicating them.
pub fn migrate(state_dir: &Path, cli_config: Option<&Path>) -> Option<Migration> {
    let legacy = state_dir.join(LEGACY_FILE_NAME);
    if !legacy.exists() {
        return None;
    }
    let backup_to = |m: &mut Migration| {
        let mut target = state_dir.join(LEGACY_BACKUP);
        let mut n = 1;
        while target.exists() && n < 100 {
            target = state_dir.join(format!("{LEGACY_BACKUP}.{n}"));
            n += 1;
        }
        match std::fs::rename(&legacy, &target) {
            Ok(()) => m.backup = Some(target),
            Err(e) => {
                tracing::warn!(path = %legacy.display(), error = %e, "cannot rename the old Claude session state")
            }
        }
    };
    let mut m = Migration::default();
    let old: Persisted = match read_bounded(&legacy, LEGACY_LOAD_BYTES) {
        Ok(Some(b)) => match serde_json::from_slice(&b) {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(path = %legacy.display(), error = %e,
                    "the old Claude session state does not parse; kept as it is");
                backup_to(&mut m);
                return Some(m);
            }
        },
        Ok(None) => {
            tracing::warn!(path = %legacy.display(),
                "the old Claude session state is over {LEGACY_LOAD_BYTES} bytes; kept, not split");
            backup_to(&mut m);
            return Some(m);
        }
        Err(e) => {
            tracing::warn!(path = %legacy.display(), error = %e, "cannot read the old Claude session state");
            return None;
        }
    };
    // Sessions linked by --resume ran in the same directory (the CLI finds them by directory).
    let mut dir_of: HashMap<String, PathBuf> = HashMap::new();
    if let (Some(s), Some(d)) = (&old.current_session_id, &old.session_cwd) {
        dir_of.insert(s.clone(), d.clone());
    }
    if let Some(cfg) = cli_config {
        let ids: Vec<String> = old
            .history
            .iter()
            .flat_map(|e| [e.session_id.clone(), e.resumed_session_id.clone()])
            .flatten()
            .collect();
        for s in ids {
            if !dir_of.contains_key(&s) && s != old.current_session_id.clone().unwrap_or_default() {
                if let Some(d) = session_dir_from_cli(cfg, &s) {
                    dir_of.insert(s, d);
                }
            }
        }
    }
    loop {
        let mut changed = false;
        for e in &old.history {
            let (Some(a), Some(b)) = (&e.session_id, &e.resumed_session_id) else {
                continue;
            };
            match (dir_of.get(a).cloned(), dir_of.get(b).cloned()) {
                (Some(d), None) => {
                    dir_of.insert(b.clone(), d);
                    changed = true;
                }
                (None, Some(d)) => {
                    dir_of.insert(a.clone(), d);
                    changed = true;
                }
                _ => {}
            }
        }
        if !changed {
            break;
        }
    }
    let mut by_dir: BTreeMap<PathBuf, Vec<HistoryEntry>> = BTreeMap::new();
    for e in &old.history {
        let d = e
            .session_id
            .as_ref()
            .and_then(|s| dir_of.get(s))
            .or_else(|| e.resumed_session_id.as_ref().and_then(|s| dir_of.get(s)));
        match d {
            Some(d) => by_dir.entry(d.clone()).or_default().push(e.clone()),
            None => m.unplaced += 1,
        }
    }
    if let Some(d) = &old.session_cwd {
        by_dir.entry(d.clone()).or_default();
    }
    for (dir, entries) in by_dir {
        let file = project_file(state_dir, &dir);
        let mut p = load(&file, &dir);
        let n = entries.len();
        for e in entries {
            let dup = p.history.iter().any(|h| {
                h.result.timestamp == e.result.timestamp
                    && h.session_id == e.session_id
                    && h.tool == e.tool
            });
            if !dup {
                p.history.push_back(e);
            }
        }
        p.history
            .make_contiguous()
            .sort_by(|a, b| a.result.timestamp.cmp(&b.result.timestamp));
        p.bound();
        if old.session_cwd.as_deref() == Some(dir.as_path()) && p.current_session_id.is_none() {
            p.current_session_id = old.current_session_id.clone();
            p.session_cwd = Some(dir.clone());
        }
        if let Err(e) = save(&file, &p) {
            tracing::warn!(path = %file.display(), error = %e, "cannot write a project's Claude session state; the old file is kept");
            return Some(m);
        }
        m.projects.insert(dir, n);
    }
    backup_to(&mut m);
    Some(m)
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

    fn legacy(state: &Path, a: &Path, b: &Path) -> Persisted {
        let mut old = Persisted::default();
        // Project A: s1 then s2 resuming s1; s2 is current, its directory recorded.
        old.history
            .push_back(entry("a1", "2026-01-01T00:00:01", Some("s1"), None));
        old.history
            .push_back(entry("b1", "2026-01-01T00:00:02", Some("t1"), None));
        old.history
            .push_back(entry("a2", "2026-01-01T00:00:03", Some("s2"), Some("s1")));
        old.history
            .push_back(entry("lost", "2026-01-01T00:00:04", None, None));
        old.current_session_id = Some("s2".into());
        old.session_cwd = Some(a.to_path_buf());
        old.stats.runs = 4;
        std::fs::create_dir_all(state).unwrap();
        std::fs::write(
            state.join(LEGACY_FILE_NAME),
            serde_json::to_vec(&old).unwrap(),
        )
        .unwrap();
        let _ = b;
        old
    }

    #[test]
    fn migration_splits_the_global_file_per_directory_and_keeps_it() {
        let d = tempfile::tempdir().unwrap();
        let state = d.path().join("state");
        let (a, b) = (d.path().join("A"), d.path().join("B"));
        legacy(&state, &a, &b);
        // The CLI's own session file tells t1's directory.
        let cli = d.path().join("cli");
        std::fs::create_dir_all(cli.join("projects/-B")).unwrap();
        std::fs::write(
            cli.join("projects/-B/t1.jsonl"),
            format!(
                "{{\"type\":\"summary\"}}\n{{\"cwd\":{},\"sessionId\":\"t1\"}}\n",
                serde_json::to_string(&b).unwrap()
            ),
        )
        .unwrap();
        let original = std::fs::read(state.join(LEGACY_FILE_NAME)).unwrap();
        let m = migrate(&state, Some(&cli)).unwrap();
        assert_eq!(m.projects.get(&a), Some(&2));
        assert_eq!(m.projects.get(&b), Some(&1));
        assert_eq!(m.unplaced, 1);
        // The old file is kept byte for byte.
        assert_eq!(std::fs::read(m.backup.unwrap()).unwrap(), original);
        assert!(!state.join(LEGACY_FILE_NAME).exists());
        let pa = load(&project_file(&state, &a), &a);
        let prompts: Vec<_> = pa
            .history
            .iter()
            .map(|e| e.result.prompt.as_str())
            .collect();
        assert_eq!(prompts, ["a1", "a2"]);
        assert_eq!(pa.current_session_id.as_deref(), Some("s2"));
        let pb = load(&project_file(&state, &b), &b);
        assert_eq!(pb.history.len(), 1);
        assert_eq!(pb.current_session_id, None);
        // Nothing more to do.
        assert_eq!(migrate(&state, Some(&cli)), None);
    }

    #[test]
    fn migration_is_idempotent_after_a_crash_half_way() {
        let d = tempfile::tempdir().unwrap();
        let state = d.path().join("state");
        let (a, b) = (d.path().join("A"), d.path().join("B"));
        legacy(&state, &a, &b);
        let copy = std::fs::read(state.join(LEGACY_FILE_NAME)).unwrap();
        migrate(&state, None).unwrap();
        // As if the process died before the rename: the old file is back.
        std::fs::write(state.join(LEGACY_FILE_NAME), &copy).unwrap();
        let m = migrate(&state, None).unwrap();
        assert_eq!(m.projects.get(&a), Some(&2));
        let pa = load(&project_file(&state, &a), &a);
        assert_eq!(pa.history.len(), 2, "no duplicates");
        // Both copies of the old file are kept.
        assert!(state.join(LEGACY_BACKUP).exists());
        assert!(state.join(format!("{LEGACY_BACKUP}.1")).exists());
    }

    #[test]
    fn an_unreadable_legacy_file_is_kept_not_split() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(LEGACY_FILE_NAME), "{not json").unwrap();
        let m = migrate(d.path(), None).unwrap();
        assert!(m.projects.is_empty());
        assert_eq!(
            std::fs::read_to_string(d.path().join(LEGACY_BACKUP)).unwrap(),
            "{not json"
        );
    }
}
