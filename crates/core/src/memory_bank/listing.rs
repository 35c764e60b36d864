//! Listing a bank: the branch banks there are, documents by tag, every document, the branches
//! most recently worked on. Symbolic links and hidden entries are skipped; a walk goes at most
//! [`MAX_DEPTH`] directories deep.

use super::{branch_dir_name, document, io_err, modified, Bank, BankError, Scope, BRANCHES_DIR};
use crate::capfs::CapDir;
use schemars::JsonSchema;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Deepest directory nesting `search_documents_by_tags` and `get_recent_branches` descend.
const MAX_DEPTH: usize = 32;

/// One result of [`Bank::search`].
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// `global` or `branch`.
    pub scope: &'static str,
    /// The branch bank's directory name (for `scope = "branch"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    pub path: String,
    pub tags: Vec<String>,
    pub last_modified: String,
}

/// One branch bank, for [`Bank::recent_branches`].
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BranchInfo {
    /// The bank's directory name (the branch name with "/" written as "-").
    pub name: String,
    /// The newest modification time of the bank or any document in it, RFC 3339 UTC.
    pub last_modified: String,
    /// How many documents (`.md`, `.json`) the bank holds.
    pub documents: usize,
}

impl Bank {
    /// The branch banks there are (directory names), unordered.
    fn branch_names(&self) -> Result<Vec<String>, BankError> {
        let dir = self.branches_dir();
        let Some(root) = self.root_dir()? else {
            return Ok(Vec::new());
        };
        let rd = match root.read_dir(Path::new(BRANCHES_DIR)) {
            Ok(rd) => rd,
            Err(e) if e.is_not_found() => return Ok(Vec::new()),
            Err(e) => return Err(e.into()),
        };
        let mut out = Vec::new();
        for entry in rd {
            let entry = entry.map_err(|e| io_err("list", &dir, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                out.push(name);
            }
        }
        Ok(out)
    }

    /// Documents whose tags match `tags` (any of them, or all with `all`), case-insensitively.
    /// `branch = None` with [`SearchScope::Branch`] is an error; with [`SearchScope::All`] it
    /// means every branch bank. Symbolic links and hidden files are skipped.
    pub fn search(
        &self,
        tags: &[String],
        all: bool,
        scope: SearchScope,
        branch: Option<&str>,
    ) -> Result<Vec<SearchHit>, BankError> {
        let wanted: Vec<String> = tags
            .iter()
            .map(|t| t.trim().trim_start_matches('#').to_lowercase())
            .filter(|t| !t.is_empty())
            .collect();
        if wanted.is_empty() {
            return Err(BankError::NoTags);
        }
        let banks = self.banks(scope, branch)?;
        let mut hits = Vec::new();
        for (kind, branch, dir) in banks {
            let mut files = Vec::new();
            walk(&dir, Path::new(""), 0, &mut files)?;
            files.sort();
            for (rel_path, rel) in files {
                let (doc_tags, mtime) = match document::read_tags(&dir, &rel_path, &rel) {
                    Ok(t) => t,
                    Err(e) if e.is_not_found() => continue,
                    Err(e) => return Err(e.into()),
                };
                let lower: Vec<String> = doc_tags.iter().map(|t| t.to_lowercase()).collect();
                let ok = if all {
                    wanted.iter().all(|w| lower.contains(w))
                } else {
                    wanted.iter().any(|w| lower.contains(w))
                };
                if ok {
                    hits.push(SearchHit {
                        scope: kind,
                        branch: branch.clone(),
                        path: rel,
                        tags: doc_tags,
                        last_modified: document::rfc3339(mtime),
                    });
                }
            }
        }
        Ok(hits)
    }

    /// Branch banks by their newest modification (the bank directory or any document in it),
    /// newest first, at most `limit`.
    pub fn recent_branches(&self, limit: usize) -> Result<Vec<BranchInfo>, BankError> {
        let mut out: Vec<(SystemTime, BranchInfo)> = Vec::new();
        for name in self.branch_names()? {
            let Some(dir) = self.open(Scope::Branch(&name))? else {
                continue;
            };
            let mut newest = mtime_of(&dir, Path::new("."));
            let mut files = Vec::new();
            walk(&dir, Path::new(""), 0, &mut files)?;
            for (rel_path, _) in &files {
                newest = newest.max(mtime_of(&dir, rel_path));
            }
            out.push((
                newest,
                BranchInfo {
                    name,
                    last_modified: document::rfc3339(newest),
                    documents: files.len(),
                },
            ));
        }
        out.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
        Ok(out.into_iter().take(limit).map(|(_, b)| b).collect())
    }
}

/// One document of [`Bank::list`].
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListedDocument {
    /// `global` or `branch`.
    pub scope: &'static str,
    /// The branch bank's directory name (for `scope = "branch"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    pub path: String,
    /// The file, for editors to open.
    pub absolute_path: String,
    pub last_modified: String,
}

impl Bank {
    /// Every document of the chosen banks (no symlinks, no hidden files), sorted by bank and
    /// path. `branch = None` with [`SearchScope::Branch`] is an error; with
    /// [`SearchScope::All`] it means every branch bank.
    pub fn list(
        &self,
        scope: SearchScope,
        branch: Option<&str>,
    ) -> Result<Vec<ListedDocument>, BankError> {
        let mut out = Vec::new();
        for (kind, name, dir) in self.banks(scope, branch)? {
            let mut files = Vec::new();
            walk(&dir, Path::new(""), 0, &mut files)?;
            files.sort();
            for (rel_path, rel) in files {
                let mtime = mtime_of(&dir, &rel_path);
                out.push(ListedDocument {
                    scope: kind,
                    branch: name.clone(),
                    path: rel,
                    absolute_path: dir.display(&rel_path).to_string_lossy().into_owned(),
                    last_modified: document::rfc3339(mtime),
                });
            }
        }
        Ok(out)
    }

    /// The banks a scope covers: (kind, branch directory name, directory).
    #[allow(clippy::type_complexity)]
    fn banks(
        &self,
        scope: SearchScope,
        branch: Option<&str>,
    ) -> Result<Vec<(&'static str, Option<String>, CapDir)>, BankError> {
        let mut banks = Vec::new();
        if matches!(scope, SearchScope::Global | SearchScope::All) {
            if let Some(dir) = self.open(Scope::Global)? {
                banks.push(("global", None, dir));
            }
        }
        if matches!(scope, SearchScope::Branch | SearchScope::All) {
            match branch {
                Some(b) => {
                    let name = branch_dir_name(b)?;
                    if let Some(dir) = self.open(Scope::Branch(b))? {
                        banks.push(("branch", Some(name), dir));
                    }
                }
                None if scope == SearchScope::Branch => return Err(BankError::BranchNeeded),
                None => {
                    let mut names = self.branch_names()?;
                    names.sort();
                    for n in names {
                        if let Some(d) = self.open(Scope::Branch(&n))? {
                            banks.push(("branch", Some(n), d));
                        }
                    }
                }
            }
        }
        Ok(banks)
    }
}

/// Where `search_documents_by_tags` looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchScope {
    Global,
    Branch,
    All,
}

fn is_document(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    l.ends_with(".md") || l.ends_with(".json")
}

fn mtime_of(dir: &CapDir, rel: &Path) -> SystemTime {
    modified(dir, rel).unwrap_or(SystemTime::UNIX_EPOCH)
}

/// Collects the documents under `prefix` of `dir` (no symlinks, no hidden entries), as
/// (relative path, "/"-separated string).
fn walk(
    dir: &CapDir,
    prefix: &Path,
    depth: usize,
    out: &mut Vec<(PathBuf, String)>,
) -> Result<(), BankError> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    let at = if prefix.as_os_str().is_empty() {
        Path::new(".")
    } else {
        prefix
    };
    let rd = match dir.read_dir(at) {
        Ok(rd) => rd,
        Err(e) if e.is_not_found() => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    for entry in rd {
        let entry = entry.map_err(|e| io_err("list", &dir.display(at), e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let Ok(ft) = entry.file_type() else { continue };
        let rel = prefix.join(&name);
        if ft.is_dir() {
            walk(dir, &rel, depth + 1, out)?;
        } else if ft.is_file() && is_document(&name) {
            let shown = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            out.push((rel, shown));
        }
    }
    Ok(())
}
