//! What the editor asks: change sets, rewinds, the turn list.

use super::{pathcode, project_root, Journal, Project, RewindRecord, TurnError, TurnRecord};

/// Paths as the editor is given them ([`pathcode::shown`]).
fn shown(v: &[PathBuf]) -> Vec<String> {
    v.iter().map(|p| pathcode::shown(p)).collect()
}
use crate::checkpoint::{tree, Change, CheckpointId, FileState, Kind, RestoreRequest, Store};
use crate::turns::Tracker as State;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Which turns a change set or rewind is about.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct TurnQuery {
    /// The last `n` turns (default 1).
    pub n: Option<usize>,
    pub session: Option<String>,
    /// The project (any directory in it; default: the bridge's project root).
    pub root: Option<String>,
    /// Rewind: overwrite files the person changed since.
    pub overwrite: bool,
    /// Change set: only this turn (its id), instead of the last `n`.
    pub turn: Option<String>,
    /// Restoring one file ([`restore_file`]): its path relative to the root, in the journal's
    /// form (a change set's `key`: [`pathcode::encode`], so any bytes).
    pub path: Option<String>,
    /// Restoring one file: the checkpoint whose content is written back, and the one the file
    /// must still match (else the person changed it: kept, a conflict).
    pub target: Option<CheckpointId>,
    pub expected: Option<CheckpointId>,
}

/// The journal's finished turns of `q.session` (all when none), oldest first.
fn finished(j: &Journal, session: Option<&str>) -> Vec<TurnRecord> {
    j.turns
        .iter()
        .filter(|t| t.start.is_some() && t.end.is_some())
        .filter(|t| session.is_none_or(|s| t.session == s))
        .cloned()
        .collect()
}

/// The project for a query: its root, resolved like a session's cwd.
pub fn query_project(shared: &Arc<State>, q: &TurnQuery) -> Result<Arc<Project>, TurnError> {
    let dir = match &q.root {
        Some(r) => PathBuf::from(r),
        None => shared.project().root.ok_or(TurnError::NoProjectRoot)?,
    };
    let root = project_root(&dir).ok_or_else(|| TurnError::NotAProject(dir.clone()))?;
    shared.checkpoints.project(&root)
}

const BINARY_PROBE: usize = 8000;

fn is_binary(b: &[u8]) -> bool {
    b[..b.len().min(BINARY_PROBE)].contains(&0) || std::str::from_utf8(b).is_err()
}

/// The change set of the last `q.n` turns (the review's source), as the editor's JSON.
pub fn changeset(p: &Project, q: &TurnQuery) -> Result<Value, TurnError> {
    let j = p.journal()?;
    let all = finished(&j, q.session.as_deref());
    let n = q.n.unwrap_or(1).max(1);
    let turns: Vec<TurnRecord> = match &q.turn {
        Some(id) => all.iter().filter(|t| &t.id == id).cloned().collect(),
        None => all[all.len().saturating_sub(n)..].to_vec(),
    };
    let (Some(first), Some(last)) = (turns.first(), turns.last()) else {
        return Ok(json!({"root": pathcode::shown(&p.root), "turns": [], "files": []}));
    };
    let (before, after) = (first.start.unwrap_or(0), last.end.unwrap_or(0));
    // Only what the turns changed: not another session's files (its turns may lie between or
    // overlap them), nor the person's edits between two turns.
    let theirs: HashSet<&Path> = turns
        .iter()
        .flat_map(|t| t.files.iter().map(PathBuf::as_path))
        .collect();
    let shared: HashSet<&Path> = turns
        .iter()
        .flat_map(|t| t.shared.iter().map(PathBuf::as_path))
        .collect();
    let mut store = p.store();
    let mut changes = store.diff(before, after)?;
    changes.retain(|c| theirs.contains(c.path.as_path()));
    let renames = tree::renames(&changes);
    let renamed_from: HashMap<&Path, &Path> = renames
        .iter()
        .map(|(from, to)| (to.as_path(), from.as_path()))
        .collect();
    let gone: HashSet<&Path> = renames.iter().map(|(f, _)| f.as_path()).collect();
    let mut files = Vec::new();
    for c in &changes {
        if gone.contains(c.path.as_path()) {
            continue;
        }
        let mut f = review_file(
            &mut store,
            p,
            c,
            renamed_from.get(c.path.as_path()),
            before,
            after,
        )?;
        if shared.contains(c.path.as_path()) {
            f["shared"] = true.into();
        }
        let commands = commands_of(&turns, &c.path);
        if !commands.is_empty() {
            f["commands"] = commands.into();
        }
        files.push(f);
    }
    let turns: Vec<Value> = turns.iter().map(turn_json).collect();
    Ok(json!({
        "root": pathcode::shown(&p.root),
        "turns": turns,
        "files": files,
        "checkpoints": {"before": before, "after": after},
    }))
}

/// The Bash commands of `turns` that changed `path`, in order, each with its hunks' ranges
/// (`{command, hunks = {{old_start, old_lines, new_start, new_lines}}}`).
fn commands_of(turns: &[TurnRecord], path: &Path) -> Vec<Value> {
    turns
        .iter()
        .flat_map(|t| &t.commands)
        .filter(|b| b.path == path)
        .map(|b| json!({"command": b.command, "hunks": b.hunks}))
        .collect()
}

fn turn_json(t: &TurnRecord) -> Value {
    json!({
        "id": t.id,
        "session": t.session,
        "terminal": t.terminal,
        "prompt": t.prompt,
        "started_ms": t.started_ms,
        "ended_ms": t.ended_ms,
        "files": shown(&t.files),
        "shared": shown(&t.shared),
        "not_kept": shown(&t.not_kept),
    })
}

fn review_file(
    store: &mut Store,
    p: &Project,
    c: &Change,
    old: Option<&&Path>,
    before_ck: CheckpointId,
    after_ck: CheckpointId,
) -> Result<Value, TurnError> {
    let path = pathcode::shown(&c.path);
    let old_path = old.map(|o| pathcode::shown(o));
    if c.path.to_str().is_none() || old.is_some_and(|o| o.to_str().is_none()) {
        // A name that is not UTF-8: shown escaped; the review takes it whole, by its bytes
        // (`key`, for [`restore_file`]).
        return Ok(json!({
            "path": path,
            "key": pathcode::encode(&c.path),
            "absolute": pathcode::shown(&p.root.join(&c.path)),
            "old_path": old_path,
            "status": "odd_name",
            "before": Value::Null,
            "after": Value::Null,
        }));
    }
    let read = |store: &mut Store, ck: CheckpointId, path: &str, st: &Option<FileState>| match st {
        Some(s) if s.kind.has_content() => store.file_at(ck, path),
        _ => Ok(None),
    };
    let before_path = old_path.clone().unwrap_or_else(|| path.clone());
    let before_state = match old {
        Some(_) => store.state_at(before_ck, &before_path)?,
        None => c.before,
    };
    let before = read(store, before_ck, &before_path, &before_state)?;
    let after = read(store, after_ck, &path, &c.after)?;
    let over = [before_state, c.after]
        .iter()
        .any(|s| s.is_some_and(|s| s.kind == Kind::OverCap));
    let binary = [&before, &after]
        .iter()
        .any(|b| b.as_deref().is_some_and(is_binary));
    let status = if over {
        "too_large"
    } else if binary {
        "binary"
    } else if old.is_some() {
        "renamed"
    } else if before_state.is_none() {
        "added"
    } else if c.after.is_none() {
        "deleted"
    } else {
        "modified"
    };
    let text = |b: Option<Vec<u8>>| -> Option<String> {
        if over || binary {
            return None;
        }
        b.and_then(|b| String::from_utf8(b).ok())
    };
    Ok(json!({
        "path": path,
        "key": pathcode::encode(&c.path),
        "absolute": pathcode::shown(&p.root.join(&c.path)),
        "old_path": old_path,
        "status": status,
        "before": text(before),
        "after": text(after),
    }))
}

/// The project's finished turns, oldest first (`:ClaudeContext checkpoints`).
pub fn list_turns(p: &Project, q: &TurnQuery) -> Result<Value, TurnError> {
    let j = p.journal()?;
    let turns: Vec<Value> = finished(&j, q.session.as_deref())
        .iter()
        .map(turn_json)
        .collect();
    let undo = j
        .rewinds
        .iter()
        .rev()
        .find(|r| !r.undone)
        .map(|r| json!({"time_ms": r.time_ms, "turn": r.turn, "paths": shown(&r.paths)}));
    Ok(json!({"root": pathcode::shown(&p.root), "turns": turns, "undo": undo}))
}

fn report_json(p: &Project, r: &crate::checkpoint::RestoreReport) -> Value {
    let abs = |v: &[PathBuf]| -> Vec<String> {
        v.iter().map(|x| pathcode::shown(&p.root.join(x))).collect()
    };
    let kept = |v: &[crate::checkpoint::Kept]| -> Vec<Value> {
        v.iter()
            .map(|k| json!({"path": pathcode::shown(&p.root.join(&k.path)), "why": k.why}))
            .collect()
    };
    json!({
        "root": pathcode::shown(&p.root),
        "written": abs(&r.written),
        "removed": abs(&r.removed),
        "conflicts": kept(&r.conflicts),
        "failed": kept(&r.failed),
        "checkpoints": {"before": r.before, "after": r.after},
    })
}

/// Restores one file, `q.path`, to what it held at checkpoint `q.target`, while it still holds
/// what it held at `q.expected` (else it is the person's now: kept, a conflict): the review's
/// reject of a file it shows whole (binary, too large, a name that is not UTF-8), and the undo
/// of that (the report's `checkpoints` the other way round). The project is checkpointed first.
pub fn restore_file(p: &Project, q: &TurnQuery) -> Result<Value, TurnError> {
    let path = q
        .path
        .as_deref()
        .ok_or(TurnError::FileRestoreNeeds("a path"))?;
    let path = pathcode::decode(path).ok_or(TurnError::FileRestoreNeeds(
        "a path in the change set's form (its `key`)",
    ))?;
    let (Some(target), Some(expected)) = (q.target, q.expected) else {
        return Err(TurnError::FileRestoreNeeds(
            "target and expected checkpoints",
        ));
    };
    let report = p.store().restore(&RestoreRequest {
        target,
        expected,
        paths: Some(vec![path]),
        overwrite_changed: false,
    })?;
    Ok(report_json(p, &report))
}

/// Restores the project's files to before the `q.n`-th last turn (of `q.session`, else of every
/// session). Only the paths those turns changed are touched; a file that differs from what the
/// last turn left (the person changed it since) is kept unless `q.overwrite`. The restore is a
/// checkpoint of its own, recorded so that [`rewind_undo`] can undo it.
pub fn rewind(p: &Project, q: &TurnQuery) -> Result<Value, TurnError> {
    let j = p.journal()?;
    let all = finished(&j, q.session.as_deref());
    let n = q.n.unwrap_or(1).max(1);
    if n > all.len() {
        return Err(TurnError::TooFewTurns {
            have: all.len(),
            n,
            root: p.root.clone(),
        });
    }
    let turns = &all[all.len() - n..];
    let (first, last) = (&turns[0], &turns[turns.len() - 1]);
    let mut paths: Vec<PathBuf> = turns.iter().flat_map(|t| t.files.clone()).collect();
    paths.sort();
    paths.dedup();
    // What another session's overlapping turn (not rewound with these) edited too stays.
    let rewound: HashSet<&str> = turns.iter().map(|t| t.id.as_str()).collect();
    let mut others: Vec<(PathBuf, String)> = turns
        .iter()
        .flat_map(|t| &t.others)
        .filter(|c| !rewound.contains(c.turn.as_str()))
        .map(|c| (c.path.clone(), c.turn.clone()))
        .collect();
    others.sort();
    others.dedup_by(|a, b| a.0 == b.0);
    paths.retain(|x| others.binary_search_by(|(o, _)| o.cmp(x)).is_err());
    let mut value = restore(
        p,
        first.start.unwrap_or(0),
        last.end.unwrap_or(0),
        paths,
        q.overwrite,
        &first.id,
    )?;
    value["turn"] = turn_json(first);
    value["others"] = others
        .iter()
        .map(|(path, turn)| {
            json!({
                "path": pathcode::shown(&p.root.join(path)),
                "why": format!("another session's turn ({turn}) edited it too"),
            })
        })
        .collect();
    Ok(value)
}

fn restore(
    p: &Project,
    target: CheckpointId,
    expected: CheckpointId,
    paths: Vec<PathBuf>,
    overwrite: bool,
    turn: &str,
) -> Result<Value, TurnError> {
    let report = p.store().restore(&RestoreRequest {
        target,
        expected,
        paths: Some(paths),
        overwrite_changed: overwrite,
    })?;
    let changed: Vec<PathBuf> = report
        .written
        .iter()
        .chain(&report.removed)
        .cloned()
        .collect();
    if !changed.is_empty() {
        let rec = RewindRecord {
            time_ms: crate::turns::now_ms(),
            turn: turn.to_string(),
            before: report.before,
            after: report.after,
            paths: changed,
            undone: false,
            group: None,
        };
        p.update_journal(|j| j.rewinds.push(rec))?;
    }
    Ok(report_json(p, &report))
}

/// Undoes the last rewind not undone yet: the files it wrote get back what they held right
/// before it (a file changed since the rewind is kept unless `overwrite`). The editor's writes
/// of one batch (a land: one `group`) are undone together, the last first.
pub fn rewind_undo(p: &Project, overwrite: bool) -> Result<Value, TurnError> {
    let j = p.journal()?;
    let Some(at) = j.rewinds.iter().rposition(|r| !r.undone) else {
        return Err(TurnError::NothingToUndo(p.root.clone()));
    };
    let group = j.rewinds[at].group.clone();
    let steps: Vec<RewindRecord> = match &group {
        None => vec![j.rewinds[at].clone()],
        Some(g) => j.rewinds[..=at]
            .iter()
            .rev()
            .filter(|r| !r.undone)
            .take_while(|r| r.group.as_ref() == Some(g))
            .cloned()
            .collect(),
    };
    let mut all = crate::checkpoint::RestoreReport::default();
    let mut undone = Vec::new();
    for r in &steps {
        let report = p.store().restore(&RestoreRequest {
            target: r.before,
            expected: r.after,
            paths: Some(r.paths.clone()),
            overwrite_changed: overwrite,
        })?;
        if report.conflicts.is_empty() {
            undone.push(r.clone());
        }
        if all.before == 0 {
            all.before = report.before;
        }
        all.after = report.after;
        all.written.extend(report.written);
        all.removed.extend(report.removed);
        all.conflicts.extend(report.conflicts);
        all.failed.extend(report.failed);
    }
    if !undone.is_empty() {
        p.update_journal(|j| {
            for x in j.rewinds.iter_mut().filter(|x| undone.contains(x)) {
                x.undone = true;
            }
        })?;
    }
    let mut v = report_json(p, &all);
    if let Some(g) = group {
        v["group"] = Value::String(g);
    }
    Ok(v)
}
