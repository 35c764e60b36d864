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

/// Why a path is left alone.
enum Hold {
    Conflict(String),
    Failed(String),
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
        let before = self.snapshot(Origin::BeforeRestore, "before restore", &extra, None)?;
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
            if let Some(hold) = self.held_back(&rel, &cur, &exp, req.overwrite_changed) {
                match hold {
                    Hold::Conflict(why) => report.conflicts.push(Kept { path: rel, why }),
                    Hold::Failed(why) => report.failed.push(Kept { path: rel, why }),
                }
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
        report.after = self.snapshot(Origin::AfterRestore, "after restore", &extra, None)?;
        Ok(report)
    }

    /// Why `rel` (`cur` at the checkpoint taken before the restore, `exp` expected) is not to
    /// be written: the person changed it (a conflict), or it cannot be read again now (failed,
    /// listed; the rest of the restore goes on).
    fn held_back(
        &self,
        rel: &Path,
        cur: &Option<FileState>,
        exp: &Option<FileState>,
        overwrite: bool,
    ) -> Option<Hold> {
        if !same(cur, exp) && !overwrite {
            return Some(Hold::Conflict(
                "changed since the checkpoint it was expected to match (kept; confirm to \
                 overwrite)"
                    .into(),
            ));
        }
        if cur.is_some_and(|c| c.kind == Kind::OverCap) {
            return Some(Hold::Conflict(
                "over the size cap now, so its content could not be saved first (kept)".into(),
            ));
        }
        // Neither a file nor a link now (a FIFO, a directory, …): nothing of it could be kept
        // first, so it is not written over.
        if let Some(what) = self.not_a_file(rel) {
            return Some(Hold::Failed(format!(
                "is {what} now, not a file (left as it is)"
            )));
        }
        // Changed between the checkpoint above and now (the person saving)?
        match self.probe_again(rel) {
            Ok(again) if same(&again, cur) => None,
            Ok(_) => Some(Hold::Conflict(
                "changed while the restore ran (kept)".into(),
            )),
            Err(e) => Some(Hold::Failed(format!(
                "could not be read again before writing it (left as it is): {e}"
            ))),
        }
    }

    pub(super) fn probe_again(&self, rel: &Path) -> Result<Option<FileState>, CheckpointError> {
        #[cfg(test)]
        if tests::FAIL_PROBE.with(|f| f.borrow().as_deref() == Some(rel)) {
            return Err(CheckpointError::Io {
                what: "read",
                path: self.root.display(rel),
                err: std::io::Error::from_raw_os_error(13),
            });
        }
        probe::probe(&self.root, &self.objects, rel, self.opts.max_file_bytes)
    }

    /// What `rel` is when it is there but neither a regular file nor a link.
    fn not_a_file(&self, rel: &Path) -> Option<&'static str> {
        let (dir, name) = self.root.parent_nofollow(rel).ok()??;
        match dir.stat_nofollow(&name).ok()?.0 {
            crate::capfs::EntryType::Dir => Some("a directory"),
            crate::capfs::EntryType::Special => Some("a FIFO, socket or device"),
            _ => None,
        }
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::cell::RefCell;

    thread_local! {
        /// A path whose re-read before the write fails (as a permission denied would), in
        /// this thread's restores: the root cannot be denied a read by its permissions.
        pub static FAIL_PROBE: RefCell<Option<PathBuf>> = const { RefCell::new(None) };
    }

    /// A project holding `files` (name, text) and its store.
    fn project_with(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf, Store) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("project");
        std::fs::create_dir_all(&root).unwrap();
        let root = root.canonicalize().unwrap();
        for (name, text) in files {
            std::fs::write(root.join(name), text).unwrap();
        }
        let store = Store::open(&tmp.path().join("state"), &root, StoreOptions::default()).unwrap();
        (tmp, root, store)
    }

    #[test]
    fn a_file_that_cannot_be_read_again_is_listed_failed_and_the_rest_restored() {
        let (_tmp, root, mut store) =
            project_with(&[("a.txt", "a before\n"), ("b.txt", "b before\n")]);
        let start = store.checkpoint("start").unwrap();
        for name in ["a.txt", "b.txt"] {
            std::fs::write(root.join(name), format!("{name} by Claude\n")).unwrap();
        }
        let end = store.checkpoint("end").unwrap();
        FAIL_PROBE.with(|f| *f.borrow_mut() = Some(PathBuf::from("a.txt")));
        let report = store
            .restore(&RestoreRequest {
                target: start,
                expected: end,
                paths: Some(vec![PathBuf::from("a.txt"), PathBuf::from("b.txt")]),
                overwrite_changed: false,
            })
            .expect("one file's failure does not fail the restore");
        FAIL_PROBE.with(|f| *f.borrow_mut() = None);
        assert_eq!(report.written, vec![PathBuf::from("b.txt")]);
        assert_eq!(report.failed.len(), 1, "{report:?}");
        assert_eq!(report.failed[0].path, PathBuf::from("a.txt"));
        assert!(
            report.failed[0].why.contains("could not be read again"),
            "{}",
            report.failed[0].why
        );
        assert_eq!(
            std::fs::read_to_string(root.join("b.txt")).unwrap(),
            "b before\n"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("a.txt")).unwrap(),
            "a.txt by Claude\n",
            "the file that could not be checked is left as it is"
        );
    }

    #[test]
    fn a_file_the_walk_skips_that_cannot_be_read_fails_alone_not_the_whole_restore() {
        // Ignored: the walk never reads it; the restore asks for it by name.
        let (_tmp, root, mut store) = project_with(&[
            (".gitignore", "secret.cfg\n"),
            ("secret.cfg", "s before\n"),
            ("b.txt", "b before\n"),
        ]);
        let start = store.checkpoint("start").unwrap();
        let start = store
            .capture_file(start, root.join("secret.cfg").to_str().unwrap())
            .unwrap();
        for name in ["secret.cfg", "b.txt"] {
            std::fs::write(root.join(name), format!("{name} by Claude\n")).unwrap();
        }
        let end = store
            .checkpoint_with("end", &["secret.cfg".into()])
            .unwrap();
        // Unreadable now (as a permission denied would make it).
        FAIL_PROBE.with(|f| *f.borrow_mut() = Some(PathBuf::from("secret.cfg")));
        let report = store.restore(&RestoreRequest {
            target: start,
            expected: end,
            paths: Some(vec![PathBuf::from("secret.cfg"), PathBuf::from("b.txt")]),
            overwrite_changed: true,
        });
        FAIL_PROBE.with(|f| *f.borrow_mut() = None);
        let report = report.expect("one unreadable file does not fail the restore");
        assert_eq!(report.written, vec![PathBuf::from("b.txt")]);
        assert_eq!(report.failed.len(), 1, "{report:?}");
        assert_eq!(report.failed[0].path, PathBuf::from("secret.cfg"));
        assert_eq!(
            std::fs::read_to_string(root.join("secret.cfg")).unwrap(),
            "secret.cfg by Claude\n"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("b.txt")).unwrap(),
            "b before\n"
        );
    }
}
