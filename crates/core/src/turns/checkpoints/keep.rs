//! The review's own writes (a reject, an undo in the view) keep what they replace: before the
//! editor writes or removes a project file, its current content goes into the project's store
//! (a checkpoint like the last one, with that file as it is now), and after the write the new
//! state is recorded beside it as an undoable step in the journal (`:ClaudeContext rewind
//! undo` puts the file back, keeping a later change of the person's). A rewind and its undo
//! checkpoint the project themselves before writing ([`crate::checkpoint::Store::restore`]).
//! In a project with no checkpoint yet (a land before any turn ran) the first capture stands on
//! an empty checkpoint ([`crate::checkpoint::Store::empty`]): such a write is undoable too. The
//! writes of one batch (a land) share a `group` and are undone together. [`kept_write`] runs one
//! such write; the binding (src/api_fs.rs) only converts its arguments.

use super::{project_root, Checkpoints, Project, RewindRecord, TurnError};
use crate::capfs::CapError;
use crate::checkpoint::CheckpointId;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What [`before_write`] kept, for [`after_write`].
pub struct Kept {
    project: Arc<Project>,
    before: CheckpointId,
    rel: PathBuf,
    group: Option<String>,
}

/// Keeps the current content of `path` (absolute, in the project of `root`) in the store before
/// the review writes it. `Ok(None)`: nothing to keep in (no checkpointed project there). `group`
/// names the batch the write belongs to (undone with the rest of it), if any.
pub fn before_write(
    cps: &Checkpoints,
    root: &Path,
    path: &Path,
    group: Option<&str>,
) -> Result<Option<Kept>, TurnError> {
    let Some(root) = project_root(root) else {
        return Ok(None);
    };
    let project = match cps.project(&root) {
        Ok(p) => p,
        Err(TurnError::NoStateDir) => return Ok(None),
        Err(e) => return Err(e),
    };
    let Some(text) = path.to_str() else {
        return Err(TurnError::NotAProject(path.to_path_buf()));
    };
    let before = {
        let mut store = project.store();
        let last = match store.latest()? {
            Some(last) => last,
            None => store.empty("before the first write of the editor's")?,
        };
        store.capture_file(last, text)?
    };
    let rel = path
        .strip_prefix(&project.root)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.to_path_buf());
    Ok(Some(Kept {
        project,
        before,
        rel,
        group: group.map(str::to_string),
    }))
}

/// After the review's write of a file [`before_write`] kept: the file as it is now, and the
/// step recorded so that it can be undone.
pub fn after_write(kept: Kept) -> Result<(), TurnError> {
    let Kept {
        project,
        before,
        rel,
        group,
    } = kept;
    let after = project
        .store()
        .capture_file(before, &project.root.join(&rel).to_string_lossy())?;
    let rec = RewindRecord {
        time_ms: crate::turns::now_ms(),
        turn: group.clone().unwrap_or_else(|| "review".into()),
        before,
        after,
        paths: vec![rel],
        undone: false,
        group,
    };
    project.update_journal(|j| j.rewinds.push(rec))
}

/// Runs the review's write `op` of `path` (relative to the project `root`, or absolute; on the
/// file thread) keeping what it replaces first: the file's current content goes into the
/// project's checkpoint store, and the write is recorded so that `:ClaudeContext rewind undo`
/// can undo it ([`before_write`], [`after_write`]). When the store cannot keep it, the write is
/// refused. Without a running bridge (`cps` `None`) there is no store to keep it in: the write
/// runs as asked. `group` names the batch (a land) whose writes one undo takes back together.
pub fn kept_write<T>(
    cps: Option<&Checkpoints>,
    root: &Path,
    path: &Path,
    group: Option<&str>,
    op: impl FnOnce() -> Result<T, CapError>,
) -> Result<T, CapError> {
    let abs = root.join(path);
    let kept = match cps {
        None => None,
        Some(cps) => before_write(cps, root, &abs, group).map_err(|e| CapError::Io {
            what: "keep its content in the checkpoint store before the review writes it",
            path: abs.clone(),
            err: std::io::Error::other(e.to_string()),
        })?,
    };
    let out = op()?;
    if let Some(k) = kept {
        if let Err(e) = after_write(k) {
            tracing::warn!(error = %e, path = %abs.display(), "the review's write is kept but not recorded for undo");
        }
    }
    Ok(out)
}
