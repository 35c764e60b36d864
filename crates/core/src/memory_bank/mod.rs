//! The memory bank: Markdown/JSON documents kept in the repository so an agent can pick up a task
//! where the last session left it.
//!
//! Layout under the bank root (`<project root>/docs` unless configured, see [`Bank::resolve`]):
//!
//! ```text
//! <root>/rules-<en|ja>.md                 optional: the project's own rules
//! <root>/global-memory-bank/…             the global bank
//! <root>/branch-memory-bank/<branch>/…    one bank per branch ("/" in the name becomes "-")
//! ```
//!
//! Every path a client gives is relative to a bank and opened beneath the bank's directory
//! handle ([`crate::capfs`]): `..`, absolute paths and symbolic links leading out are refused by
//! the kernel, with no window between a check and the open. The default bank (`docs`) is opened
//! beneath the project root, so a repository cannot point it elsewhere with a symlink. Writes are
//! atomic ([`CapDir::write_atomic`]), so two writers to one document leave one complete version.
//! Reading the core files touches only those files: the cost does not depend on how many other
//! documents the bank holds.

pub mod document;
pub mod text;

use crate::capfs::{CapDir, CapError};
use crate::paths::normalize;
use document::{Document, ReadError};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

pub const GLOBAL_DIR: &str = "global-memory-bank";
pub const BRANCHES_DIR: &str = "branch-memory-bank";
/// The environment variable that overrides the bank root.
pub const ROOT_ENV: &str = "MEMORY_BANK_ROOT";

pub const BRANCH_CORE_FILES: [&str; 4] = [
    "branchContext.md",
    "activeContext.md",
    "systemPatterns.md",
    "progress.md",
];
pub const GLOBAL_CORE_FILES: [&str; 6] = [
    "architecture.md",
    "coding-standards.md",
    "domain-models.md",
    "glossary.md",
    "tech-stack.md",
    "user-guide.md",
];

/// Deepest directory nesting `search_documents_by_tags` and `get_recent_branches` descend.
const MAX_DEPTH: usize = 32;

/// The language of the rules, templates and notes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    En,
    Ja,
    Zh,
}

impl Language {
    /// `en`, `ja` or `zh`; anything else is an error that says what is accepted.
    pub fn parse(s: &str) -> Result<Language, String> {
        match s {
            "en" => Ok(Language::En),
            "ja" => Ok(Language::Ja),
            "zh" => Ok(Language::Zh),
            other => Err(format!(
                "unsupported language '{other}': use \"en\", \"ja\" or \"zh\""
            )),
        }
    }

    pub fn code(self) -> &'static str {
        match self {
            Language::En => "en",
            Language::Ja => "ja",
            Language::Zh => "zh",
        }
    }
}

/// Which bank a document belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope<'a> {
    Global,
    Branch(&'a str),
}

impl Scope<'_> {
    fn core_files(self) -> &'static [&'static str] {
        match self {
            Scope::Global => &GLOBAL_CORE_FILES,
            Scope::Branch(_) => &BRANCH_CORE_FILES,
        }
    }

    /// How errors name the bank.
    fn label(self) -> String {
        match self {
            Scope::Global => "the global memory bank".into(),
            Scope::Branch(b) => format!("the memory bank of branch '{b}'"),
        }
    }

    fn label_in(self, lang: Language) -> String {
        match (lang, self) {
            (Language::En, _) => self.label(),
            (Language::Ja, Scope::Global) => "グローバルメモリバンク".into(),
            (Language::Ja, Scope::Branch(b)) => format!("ブランチ '{b}' のメモリバンク"),
            (Language::Zh, Scope::Global) => "全局记忆库".into(),
            (Language::Zh, Scope::Branch(b)) => format!("分支 '{b}' 的记忆库"),
        }
    }
}

/// Where the bank root came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootSource {
    /// `MEMORY_BANK_ROOT`.
    Env,
    /// `setup{memory_bank = {root = …}}`.
    Config,
    /// `<project root>/docs`.
    Default,
}

impl fmt::Display for RootSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RootSource::Env => "MEMORY_BANK_ROOT",
            RootSource::Config => "setup{memory_bank = {root}}",
            RootSource::Default => "<project root>/docs",
        })
    }
}

/// A memory bank rooted at a directory (which need not exist yet).
#[derive(Debug, Clone)]
pub struct Bank {
    pub root: PathBuf,
    pub source: RootSource,
    /// The project root, for the default bank (`<project>/docs`): that bank is opened through
    /// the project's handle, so a `docs` symlink cannot lead it out of the project. A root the
    /// person configured (`MEMORY_BANK_ROOT`, `setup{memory_bank.root}`) is theirs to choose.
    pub project: Option<PathBuf>,
}

/// The largest document, rules file or template the bank reads (as fs-read-file's whole read).
pub const MAX_DOCUMENT_BYTES: u64 = 16 << 20;

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

/// What a write did.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WriteOutcome {
    pub path: String,
    /// The document did not exist before.
    pub created: bool,
    /// The bank did not exist before and was created.
    pub bank_created: bool,
    /// Core files created from templates along with the bank.
    pub seeded: Vec<String>,
    pub bytes_written: u64,
    pub tags: Vec<String>,
    pub last_modified: String,
}

/// The core files of one bank, in core-file order, plus what is missing.
#[derive(Debug, Default)]
pub struct CoreFiles {
    pub docs: Map<String, Value>,
    pub missing: Vec<&'static str>,
    /// The bank directory does not exist.
    pub no_bank: bool,
    /// Where the bank is (or would be).
    pub dir: PathBuf,
}

/// `feature/x` → `feature-x`; refuses names that cannot be a bank directory.
pub fn branch_dir_name(branch: &str) -> Result<String, String> {
    if branch.trim().is_empty() {
        return Err("the branch name is empty: pass the current git branch, e.g. \"main\"".into());
    }
    if branch.chars().any(|c| c.is_control() || c == '\\') {
        return Err(format!(
            "invalid branch name '{}': it contains a control character or a backslash",
            branch.escape_debug()
        ));
    }
    let name = branch.replace('/', "-");
    if name == "." || name == ".." {
        return Err(format!("invalid branch name '{branch}'"));
    }
    Ok(name)
}

fn expand_home(p: &Path) -> PathBuf {
    if let Ok(rest) = p.strip_prefix("~") {
        if let Some(home) = std::env::var_os("HOME") {
            return PathBuf::from(home).join(rest);
        }
    }
    p.to_path_buf()
}

fn io_err(what: &str, path: &Path, e: impl fmt::Display) -> String {
    format!("cannot {what} '{}': {e}", path.display())
}

impl Bank {
    /// The bank root: `MEMORY_BANK_ROOT` when set and non-empty, else `setup{memory_bank =
    /// {root}}`, else `<project root>/docs`. The environment wins over the configuration, as
    /// `MCP_PROJECT_ROOT` does for the project root. A relative root resolves against the
    /// project root; `~/` is expanded.
    pub fn resolve(env: Option<&str>, config: Option<&Path>, project_root: &Path) -> Bank {
        let (p, source) = match (env.filter(|s| !s.is_empty()), config) {
            (Some(e), _) => (expand_home(Path::new(e)), RootSource::Env),
            (None, Some(c)) if !c.as_os_str().is_empty() => (expand_home(c), RootSource::Config),
            _ => (project_root.join("docs"), RootSource::Default),
        };
        let root = if p.is_relative() {
            project_root.join(p)
        } else {
            p
        };
        Bank {
            root: normalize(&root),
            project: (source == RootSource::Default).then(|| project_root.to_path_buf()),
            source,
        }
    }

    pub fn at(root: impl Into<PathBuf>) -> Bank {
        Bank {
            root: root.into(),
            source: RootSource::Config,
            project: None,
        }
    }

    pub fn global_dir(&self) -> PathBuf {
        self.root.join(GLOBAL_DIR)
    }

    pub fn branches_dir(&self) -> PathBuf {
        self.root.join(BRANCHES_DIR)
    }

    /// Where a bank is (lexically; it may not exist).
    pub fn dir(&self, scope: Scope) -> Result<PathBuf, String> {
        Ok(match scope {
            Scope::Global => self.global_dir(),
            Scope::Branch(b) => self.branches_dir().join(branch_dir_name(b)?),
        })
    }

    /// The project's handle and the default bank root relative to it (`docs`).
    fn in_project(&self, project: &Path) -> Result<(CapDir, PathBuf), String> {
        let p = CapDir::open_root(project).map_err(|e| e.to_string())?;
        let rel = self
            .root
            .strip_prefix(project)
            .map(Path::to_path_buf)
            .unwrap_or_else(|_| PathBuf::from("docs"));
        Ok((p, rel))
    }

    /// The bank root's handle, `None` when it does not exist. The default root (`docs`) is
    /// opened beneath the project root: a link that leads out of the project is refused with a
    /// message naming it and its target.
    fn root_dir(&self) -> Result<Option<CapDir>, String> {
        match &self.project {
            Some(project) => {
                let (p, rel) = self.in_project(project)?;
                Ok(p.open_dir(&rel)
                    .map_err(|e| e.to_string())?
                    .map(CapDir::as_root))
            }
            None => match CapDir::open_root(&self.root) {
                Ok(d) => Ok(Some(d)),
                Err(_) if !self.root.exists() => Ok(None),
                // Another writer may have created it between the open and the check.
                Err(_) => CapDir::open_root(&self.root)
                    .map(Some)
                    .map_err(|e| e.to_string()),
            },
        }
    }

    /// The bank root's handle, created when missing (never through a symlink it creates).
    fn root_dir_create(&self) -> Result<CapDir, String> {
        if self.project.is_some() {
            if let Some(d) = self.root_dir()? {
                return Ok(d);
            }
        }
        match &self.project {
            Some(project) => {
                let (p, rel) = self.in_project(project)?;
                Ok(p.create_dir_all(&rel)
                    .map_err(|e| e.to_string())?
                    .0
                    .as_root())
            }
            None => {
                std::fs::create_dir_all(&self.root)
                    .map_err(|e| io_err("create the bank directory", &self.root, e))?;
                CapDir::open_root(&self.root).map_err(|e| e.to_string())
            }
        }
    }

    /// A bank's directory handle, `None` when it does not exist. The bank directories are
    /// opened beneath the bank root, and a branch bank beneath `branch-memory-bank/`: a
    /// symbolic link leading out is refused, naming the link and its target.
    pub fn open(&self, scope: Scope) -> Result<Option<CapDir>, String> {
        let refuse = |e: CapError| format!("cannot read {}: {e}", scope.label());
        let Some(root) = self
            .root_dir()
            .map_err(|e| format!("cannot read {}: {e}", scope.label()))?
        else {
            return Ok(None);
        };
        let dir = match scope {
            Scope::Global => root.open_dir(Path::new(GLOBAL_DIR)).map_err(refuse)?,
            Scope::Branch(b) => {
                let Some(branches) = root.open_dir(Path::new(BRANCHES_DIR)).map_err(refuse)? else {
                    return Ok(None);
                };
                let branches = branches.as_root();
                branches
                    .open_dir(Path::new(&branch_dir_name(b)?))
                    .map_err(refuse)?
            }
        };
        Ok(dir.map(CapDir::as_root))
    }

    /// The rules text for `lang`: `<root>/rules-<lang>.md` when the project has one, else ours.
    /// The file is opened beneath the bank root, regular files only, at most
    /// [`MAX_DOCUMENT_BYTES`].
    pub fn rules(&self, lang: Language) -> Result<String, String> {
        let name = format!("rules-{}.md", lang.code());
        let shown = self.root.join(&name);
        let fail =
            |e: CapError| format!("cannot read the project's rules '{}': {e}", shown.display());
        let Some(root) = self
            .root_dir()
            .map_err(|e| format!("cannot read the project's rules: {e}"))?
        else {
            return Ok(text::rules(lang).to_string());
        };
        match root.read_capped(Path::new(&name), MAX_DOCUMENT_BYTES) {
            Ok(bytes) => String::from_utf8(bytes).map_err(|_| {
                format!(
                    "cannot read the project's rules '{}': it is not UTF-8 text",
                    shown.display()
                )
            }),
            Err(e) if e.is_not_found() => Ok(text::rules(lang).to_string()),
            Err(e) => Err(fail(e)),
        }
    }

    /// Reads the core files of a bank (only those: never a scan of the bank).
    pub fn core_files(&self, scope: Scope) -> Result<CoreFiles, String> {
        let mut out = CoreFiles {
            dir: self.dir(scope)?,
            ..Default::default()
        };
        let Some(dir) = self.open(scope)? else {
            out.no_bank = true;
            out.missing = scope.core_files().to_vec();
            return Ok(out);
        };
        for &name in scope.core_files() {
            match document::read(&dir, Path::new(name), name) {
                Ok(doc) => {
                    out.docs.insert(name.to_string(), doc.into_value());
                }
                Err(ReadError::NotFound) => out.missing.push(name),
                Err(e) => {
                    return Err(format!(
                        "cannot read the core file '{}' of {}: {e}",
                        dir.display(Path::new(name)).display(),
                        scope.label()
                    ))
                }
            }
        }
        Ok(out)
    }

    /// Reads one document of a bank.
    pub fn read(&self, scope: Scope, path: &str) -> Result<Document, String> {
        check_rel(path)?;
        let Some(dir) = self.open(scope)? else {
            let hint = match scope {
                Scope::Global => "write_global_memory_bank creates it",
                Scope::Branch(_) => "write_branch_memory_bank creates it",
            };
            return Err(format!(
                "{} does not exist yet (expected at '{}'); {hint}",
                capitalize(&scope.label()),
                self.dir(scope)?.display()
            ));
        };
        let (rel_path, rel) = confine_doc(&dir, scope, path)?;
        document::read(&dir, &rel_path, &rel).map_err(|e| match e {
            ReadError::NotFound => format!(
                "no document '{rel}' in {} ('{}')",
                scope.label(),
                dir.display(&rel_path).display()
            ),
            e => format!("cannot read '{}': {e}", dir.display(&rel_path).display()),
        })
    }

    /// Writes one document atomically, creating the bank (seeded with the core files from the
    /// templates in `lang`) when it does not exist yet. Every directory and the temp file are
    /// reached through handles: nothing is written outside the bank, whatever links or races.
    pub fn write(
        &self,
        scope: Scope,
        path: &str,
        content: &str,
        lang: Language,
    ) -> Result<WriteOutcome, String> {
        check_rel(path)?;
        if path.to_ascii_lowercase().ends_with(".json") {
            serde_json::from_str::<serde::de::IgnoredAny>(content).map_err(|e| {
                format!("'{path}' is a JSON document but the content is not valid JSON: {e}")
            })?;
        }
        let fail = |e: CapError| e.to_string();
        let bank_rel: PathBuf = match scope {
            Scope::Global => PathBuf::from(GLOBAL_DIR),
            Scope::Branch(b) => Path::new(BRANCHES_DIR).join(branch_dir_name(b)?),
        };
        // Files that run code are refused before anything (a bank directory) is created;
        // checked from the bank root down, so a branch bank named like a protected directory
        // (`.claude`, `.husky`) is caught as well as the document's own path.
        let protected = |rel: &Path| {
            crate::capfs::protected_reason(&normalize(&bank_rel.join(rel)))
                .map(|why| format!("refused: '{path}' {why}; the memory bank holds documents only"))
        };
        if let Some(e) = protected(Path::new(path)) {
            return Err(e);
        }
        let root = self.root_dir_create()?;
        // Refuses a bank directory that is a link leading out before creating anything.
        let existing = self.open(scope)?;
        let (dir, bank_created) = match existing {
            Some(d) => (d, false),
            None => {
                let (d, created) = root.create_dir_all(&bank_rel).map_err(fail)?;
                (d.as_root(), created)
            }
        };
        let (rel_path, rel) = confine_doc(&dir, scope, path)?;
        if let Some(e) = protected(&rel_path) {
            return Err(e);
        }
        let written = dir
            .write_atomic(&rel_path, content.as_bytes(), true)
            .map_err(fail)?;
        let mtime = modified(&dir, &rel_path).unwrap_or_else(SystemTime::now);
        let seeded = if bank_created {
            seed(&dir, scope, lang, &rel).map_err(|e| {
                format!("'{rel}' was written, but seeding the core files failed: {e}")
            })?
        } else {
            Vec::new()
        };
        Ok(WriteOutcome {
            tags: document::tags_of(&rel, content),
            path: rel,
            created: written.created,
            bank_created,
            seeded,
            bytes_written: content.len() as u64,
            last_modified: document::rfc3339(mtime),
        })
    }

    /// The branch banks there are (directory names), unordered.
    fn branch_names(&self) -> Result<Vec<String>, String> {
        let dir = self.branches_dir();
        let Some(root) = self.root_dir()? else {
            return Ok(Vec::new());
        };
        let rd = match root.read_dir(Path::new(BRANCHES_DIR)) {
            Ok(rd) => rd,
            Err(e) if e.is_not_found() => return Ok(Vec::new()),
            Err(e) => return Err(e.to_string()),
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
    ) -> Result<Vec<SearchHit>, String> {
        let wanted: Vec<String> = tags
            .iter()
            .map(|t| t.trim().trim_start_matches('#').to_lowercase())
            .filter(|t| !t.is_empty())
            .collect();
        if wanted.is_empty() {
            return Err("give at least one tag to search for, e.g. [\"core\"]".into());
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
                    Err(e) => return Err(e.to_string()),
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
    pub fn recent_branches(&self, limit: usize) -> Result<Vec<BranchInfo>, String> {
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
    ) -> Result<Vec<ListedDocument>, String> {
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
    ) -> Result<Vec<(&'static str, Option<String>, CapDir)>, String> {
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
                None if scope == SearchScope::Branch => {
                    return Err("scope \"branch\" needs the branch".into())
                }
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

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// A document path must be relative to the bank.
fn check_rel(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("the document path is empty: give a path relative to the bank, e.g. \"activeContext.md\"".into());
    }
    if Path::new(path).is_absolute() || path.starts_with('/') || path.starts_with('\\') {
        return Err(format!(
            "refused: '{path}' is an absolute path; give a path relative to the bank, e.g. \"activeContext.md\""
        ));
    }
    Ok(())
}

/// Checks `input` lexically against the bank directory `dir` (symlinks are confined by the
/// kernel when the document is opened); returns the relative path and the path to report
/// ("/"-separated).
fn confine_doc(dir: &CapDir, scope: Scope, input: &str) -> Result<(PathBuf, String), String> {
    check_rel(input)?;
    let rel = dir.rel(input).map_err(|e| match e {
        CapError::Outside { .. } => format!(
            "refused: '{input}' leads outside {} ('{}'). Paths must stay inside the bank: no \
             '..' above it, no absolute paths, no symbolic links leading out.",
            scope.label(),
            dir.path().display()
        ),
        e => e.to_string(),
    })?;
    if rel == Path::new(".") {
        return Err(format!(
            "'{input}' is the bank directory itself, not a document"
        ));
    }
    let shown = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/");
    Ok((rel, shown))
}

fn is_document(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    l.ends_with(".md") || l.ends_with(".json")
}

/// When `rel` (beneath `dir`) was last modified, if it can be told.
fn modified(dir: &CapDir, rel: &Path) -> Option<SystemTime> {
    dir.metadata(rel)
        .ok()?
        .modified()
        .ok()
        .map(|t| t.into_std())
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
) -> Result<(), String> {
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
        Err(e) => return Err(e.to_string()),
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

/// Creates the core files of a new bank from the templates, never replacing a file that exists
/// (another writer may have created it meanwhile). Skips `except` (the document being written).
fn seed(dir: &CapDir, scope: Scope, lang: Language, except: &str) -> Result<Vec<String>, CapError> {
    let mut seeded = Vec::new();
    for &name in scope.core_files() {
        if name == except {
            continue;
        }
        let Some(body) = text::template(lang, name) else {
            continue;
        };
        if dir.write_new(Path::new(name), body.as_bytes())? {
            seeded.push(name.to_string());
        }
    }
    Ok(seeded)
}

/// Notes `read_context` adds when a bank or core files are missing, in the chosen language.
pub fn notes_for(core: &CoreFiles, scope: Scope, lang: Language) -> Vec<String> {
    let label = scope.label_in(lang);
    let create = match scope {
        Scope::Global => "write_global_memory_bank",
        Scope::Branch(_) => "write_branch_memory_bank",
    };
    if core.no_bank {
        return vec![match lang {
            Language::En => format!(
                "{} does not exist yet (expected at {}). {create} creates it and seeds the core \
                 files from templates.",
                capitalize(&label),
                core.dir.display()
            ),
            Language::Ja => format!(
                "{label}はまだありません（場所: {}）。{create} で作成すると、コアファイルがテンプレートから作られます。",
                core.dir.display()
            ),
            Language::Zh => format!(
                "{label}还不存在（位置：{}）。用 {create} 创建时，核心文件会从模板生成。",
                core.dir.display()
            ),
        }];
    }
    if core.missing.is_empty() {
        return Vec::new();
    }
    let files = core.missing.join(", ");
    vec![match lang {
        Language::En => format!("{} has no {files} yet.", capitalize(&label)),
        Language::Ja => format!("{label}には {files} がまだありません。"),
        Language::Zh => format!("{label}还没有 {files}。"),
    }]
}

#[cfg(test)]
mod tests;
