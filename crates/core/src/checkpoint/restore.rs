//! Writing a checkpoint back ([`super::Store::restore`]): the project is checkpointed first, a
//! file the person changed since the expected checkpoint is kept unless told, links are replaced,
//! never written through.

use super::*;

/// What a restore should do.
#[derive(Debug, Clone)]
pub struct RestoreRequest {
    /// The checkpoint whose content is written back.
    pub target: CheckpointId,
    /// What the files are expected to hold now (for a rewind: the checkpoint at the end of
    /// the last turn). A file whose content differs was changed by the person since, and is
    /// kept unless `overwrite_changed`.
    pub expected: CheckpointId,
    /// The paths to restore (relative to the project root or absolute inside it; any bytes,
    /// not only UTF-8); `None`: every path that differs between `target` and now.
    pub paths: Option<Vec<PathBuf>>,
    pub overwrite_changed: bool,
}

/// A path a restore left alone, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    pub path: PathBuf,
    pub why: String,
}

/// What a restore did.
#[derive(Debug, Clone, Default)]
pub struct RestoreReport {
    /// The project right before the restore: restore it to undo this one.
    pub before: CheckpointId,
    /// The project right after.
    pub after: CheckpointId,
    pub written: Vec<PathBuf>,
    pub removed: Vec<PathBuf>,
    /// Changed by the person since `expected`: kept.
    pub conflicts: Vec<Kept>,
    /// Could not be restored (over the cap when checkpointed, an error writing).
    pub failed: Vec<Kept>,
}

/// `p` relative to the root (see [`CapDir::rel`]), for any bytes: a UTF-8 path is checked by
/// `rel`; another must be relative (or absolute under the root) with plain names only.
fn rel_bytes(root: &CapDir, p: &Path) -> Result<PathBuf, CheckpointError> {
    if let Some(s) = p.to_str() {
        return Ok(root.rel(s)?);
    }
    let rest = if p.is_absolute() {
        p.strip_prefix(root.path())
            .map_err(|_| CheckpointError::BadPath {
                path: p.to_path_buf(),
            })?
    } else {
        p
    };
    let plain = rest
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    if !plain || rest.as_os_str().is_empty() || rest.as_os_str().as_encoded_bytes().contains(&0) {
        return Err(CheckpointError::BadPath {
            path: p.to_path_buf(),
        });
    }
    Ok(rest.to_path_buf())
}

impl Inner {
    pub(super) fn restore(
        &mut self,
        req: &RestoreRequest,
    ) -> Result<RestoreReport, CheckpointError> {
        let target = self.info(req.target)?.tree;
        let expected = self.info(req.expected)?.tree;
        let rels: Option<Vec<PathBuf>> = match &req.paths {
            Some(ps) => Some(
                ps.iter()
                    .map(|p| rel_bytes(&self.root, p))
                    .collect::<Result<_, _>>()?,
            ),
            None => None,
        };
        // (A name that is not UTF-8 is found by the walk, unless ignored: then it is not kept.)
        let extra: Vec<String> = rels
            .iter()
            .flatten()
            .filter_map(|p| p.to_str().map(str::to_string))
            .collect();
        // The state being replaced is checkpointed first: nothing is lost, and this undoes it.
        let before = self.snapshot(Origin::BeforeRestore, "before restore", &extra)?;
        let now = self.info(before)?.tree;
        let paths: Vec<PathBuf> = match rels {
            Some(r) => r,
            None => tree::diff(&self.objects, &now, &target)?
                .into_iter()
                .map(|c| c.path)
                .collect(),
        };
        let mut report = RestoreReport {
            before,
            ..Default::default()
        };
        for rel in paths {
            let want = tree::lookup(&self.objects, &target, &rel)?;
            let cur = tree::lookup(&self.objects, &now, &rel)?;
            let exp = tree::lookup(&self.objects, &expected, &rel)?;
            if same(&cur, &want) {
                continue;
            }
            if !same(&cur, &exp) && !req.overwrite_changed {
                report.conflicts.push(Kept {
                    path: rel,
                    why: "changed since the checkpoint it was expected to match (kept; \
                          confirm to overwrite)"
                        .into(),
                });
                continue;
            }
            if cur.is_some_and(|c| c.kind == Kind::OverCap) {
                report.conflicts.push(Kept {
                    path: rel,
                    why: "over the size cap now, so its content could not be saved first \
                          (kept)"
                        .into(),
                });
                continue;
            }
            // Changed between the checkpoint above and now (the person saving)?
            let again = probe::probe(&self.root, &self.objects, &rel, self.opts.max_file_bytes)?;
            if !same(&again, &cur) {
                report.conflicts.push(Kept {
                    path: rel,
                    why: "changed while the restore ran (kept)".into(),
                });
                continue;
            }
            match self.write_back(&rel, want) {
                Ok(true) => report.written.push(rel),
                Ok(false) => report.removed.push(rel),
                Err(e) => report.failed.push(Kept {
                    path: rel,
                    why: e.to_string(),
                }),
            }
        }
        report.after = self.snapshot(Origin::AfterRestore, "after restore", &extra)?;
        Ok(report)
    }

    /// Writes `want` at `rel` (`None`: removes what is there). `Ok(true)`: written.
    pub(super) fn write_back(
        &mut self,
        rel: &Path,
        want: Option<FileState>,
    ) -> Result<bool, CheckpointError> {
        let Some(w) = want else {
            self.root.remove_file_nofollow(rel)?;
            // Directories the removal left empty go too.
            let mut p = rel.parent();
            while let Some(d) = p.filter(|d| !d.as_os_str().is_empty()) {
                if !self.root.remove_empty_dir_nofollow(d)? {
                    break;
                }
                p = d.parent();
            }
            return Ok(false);
        };
        match w.kind {
            Kind::File | Kind::Exec => {
                let bytes = self.blob(&w)?;
                // A link there is replaced, never written through.
                if let Ok(Some((d, name))) = self.root.parent_nofollow(rel) {
                    if let Ok((crate::capfs::EntryType::Symlink, _)) = d.stat_nofollow(&name) {
                        self.root.remove_file_nofollow(rel)?;
                    }
                }
                self.root.write_atomic(rel, &bytes, true)?;
                #[cfg(unix)]
                self.root
                    .set_executable_nofollow(rel, w.kind == Kind::Exec)?;
                Ok(true)
            }
            Kind::Symlink => {
                let bytes = self.blob(&w)?;
                #[cfg(unix)]
                {
                    self.root
                        .symlink_atomic(rel, &PathBuf::from(tree::bytes_os(&bytes)))?;
                    Ok(true)
                }
                #[cfg(not(unix))]
                {
                    let _ = bytes;
                    Err(CheckpointError::BadPath {
                        path: rel.to_path_buf(),
                    })
                }
            }
            Kind::OverCap => Err(CheckpointError::Corrupt {
                path: self.root.display(rel),
                what: "it was over the size cap when checkpointed, so its content was not \
                       stored"
                    .into(),
            }),
            Kind::Dir => Ok(false),
        }
    }
}

pub(super) fn same(a: &Option<FileState>, b: &Option<FileState>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => x.kind == y.kind && x.id == y.id,
        _ => false,
    }
}
