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

mod cache;
pub mod document;
pub mod edit;
mod error;
mod listing;
pub mod text;

use crate::capfs::{CapDir, CapError};
use crate::paths::normalize;
pub use cache::SETTLE as CACHE_SETTLE;
use document::{Document, ReadError};
pub use edit::{branch_for, current_branch, DocScope, DocumentError, Edit, Edited};
pub use error::BankError;
pub use listing::{BranchInfo, ListedDocument, SearchHit, SearchScope};
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

/// `"ja"` — the memory bank tools' language when neither the call nor the configuration names
/// one (the original servers' default; the bridge always passes the configured language:
/// doc/protocol.md, Language).
pub fn default_language() -> String {
    "ja".into()
}

/// The language of the rules, templates and notes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    En,
    Ja,
    Zh,
}

impl Language {
    /// `en`, `ja` or `zh`; anything else is an error that says what is accepted.
    pub fn parse(s: &str) -> Result<Language, BankError> {
        match s {
            "en" => Ok(Language::En),
            "ja" => Ok(Language::Ja),
            "zh" => Ok(Language::Zh),
            other => Err(BankError::UnsupportedLanguage(other.to_string())),
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
    /// `branch`'s bank, or the global bank when `None`.
    pub fn of(branch: &Option<String>) -> Scope<'_> {
        match branch {
            Some(b) => Scope::Branch(b),
            None => Scope::Global,
        }
    }

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

/// A bank whose root is open: its parts are read beneath one handle ([`Bank::opened`]).
pub struct Opened<'a> {
    bank: &'a Bank,
    root: Option<CapDir>,
}

impl Opened<'_> {
    /// [`Bank::rules`].
    pub fn rules(&self, lang: Language) -> Result<String, BankError> {
        self.bank.rules_in(self.root.as_ref(), lang)
    }

    /// [`Bank::core_files`].
    pub fn core_files(&self, scope: Scope) -> Result<CoreFiles, BankError> {
        let dir = self.bank.open_in(self.root.as_ref(), scope)?;
        self.bank.core_files_of(dir, scope)
    }
}

/// `feature/x` → `feature-x`; refuses names that cannot be a bank directory.
pub fn branch_dir_name(branch: &str) -> Result<String, BankError> {
    if branch.trim().is_empty() {
        return Err(BankError::EmptyBranch);
    }
    if branch.chars().any(|c| c.is_control() || c == '\\') {
        return Err(BankError::BranchCharacters(
            branch.escape_debug().to_string(),
        ));
    }
    let name = branch.replace('/', "-");
    if name == "." || name == ".." {
        return Err(BankError::InvalidBranch(branch.to_string()));
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

fn io_err(what: &'static str, path: &Path, source: std::io::Error) -> BankError {
    BankError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
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
    pub fn dir(&self, scope: Scope) -> Result<PathBuf, BankError> {
        Ok(match scope {
            Scope::Global => self.global_dir(),
            Scope::Branch(b) => self.branches_dir().join(branch_dir_name(b)?),
        })
    }

    /// The project's handle and the default bank root relative to it (`docs`).
    fn in_project(&self, project: &Path) -> Result<(CapDir, PathBuf), BankError> {
        let p = CapDir::open_root(project)?;
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
    fn root_dir(&self) -> Result<Option<CapDir>, BankError> {
        match &self.project {
            Some(project) => {
                let (p, rel) = self.in_project(project)?;
                Ok(p.open_dir(&rel)?.map(CapDir::as_root))
            }
            None => match CapDir::open_root(&self.root) {
                Ok(d) => Ok(Some(d)),
                Err(_) if !self.root.exists() => Ok(None),
                // Another writer may have created it between the open and the check.
                Err(_) => Ok(Some(CapDir::open_root(&self.root)?)),
            },
        }
    }

    /// The bank root's handle, created when missing (never through a symlink it creates).
    fn root_dir_create(&self) -> Result<CapDir, BankError> {
        if self.project.is_some() {
            if let Some(d) = self.root_dir()? {
                return Ok(d);
            }
        }
        match &self.project {
            Some(project) => {
                let (p, rel) = self.in_project(project)?;
                Ok(p.create_dir_all(&rel)?.0.as_root())
            }
            None => {
                std::fs::create_dir_all(&self.root)
                    .map_err(|e| io_err("create the bank directory", &self.root, e))?;
                Ok(CapDir::open_root(&self.root)?)
            }
        }
    }

    /// A bank's directory handle, `None` when it does not exist. The bank directories are
    /// opened beneath the bank root, and a branch bank beneath `branch-memory-bank/`: a
    /// symbolic link leading out is refused, naming the link and its target.
    pub fn open(&self, scope: Scope) -> Result<Option<CapDir>, BankError> {
        let root = self
            .root_dir()
            .map_err(|e| BankError::reading(scope.label(), e))?;
        self.open_in(root.as_ref(), scope)
    }

    /// [`Bank::open`] beneath the bank root's handle (`None`: there is no root).
    fn open_in(&self, root: Option<&CapDir>, scope: Scope) -> Result<Option<CapDir>, BankError> {
        let refuse = |e: CapError| BankError::reading(scope.label(), e);
        let Some(root) = root else {
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
    pub fn rules(&self, lang: Language) -> Result<String, BankError> {
        let root = self
            .root_dir()
            .map_err(|e| BankError::reading("the project's rules", e))?;
        self.rules_in(root.as_ref(), lang)
    }

    /// [`Bank::rules`] beneath the bank root's handle (`None`: there is no root).
    fn rules_in(&self, root: Option<&CapDir>, lang: Language) -> Result<String, BankError> {
        let name = format!("rules-{}.md", lang.code());
        let shown = self.root.join(&name);
        let fail = |e: CapError| {
            BankError::reading(format!("the project's rules '{}'", shown.display()), e)
        };
        let Some(root) = root else {
            return Ok(text::rules(lang).to_string());
        };
        match root.read_capped(Path::new(&name), MAX_DOCUMENT_BYTES) {
            Ok(bytes) => {
                String::from_utf8(bytes).map_err(|_| BankError::RulesNotText { path: shown })
            }
            Err(e) if e.is_not_found() => Ok(text::rules(lang).to_string()),
            Err(e) => Err(fail(e)),
        }
    }

    /// Reads the core files of a bank (only those: never a scan of the bank). A core file that
    /// has not changed since it was last read is not read again (see [`cache`]).
    pub fn core_files(&self, scope: Scope) -> Result<CoreFiles, BankError> {
        let dir = self.open(scope)?;
        self.core_files_of(dir, scope)
    }

    /// The bank root opened once, to read several parts of the bank (`read_context`). `Err`
    /// when the root cannot be opened; the methods of the parts then say which part failed.
    pub fn opened(&self) -> Result<Opened<'_>, BankError> {
        Ok(Opened {
            bank: self,
            root: self.root_dir()?,
        })
    }

    fn core_files_of(&self, dir: Option<CapDir>, scope: Scope) -> Result<CoreFiles, BankError> {
        let mut out = CoreFiles {
            dir: self.dir(scope)?,
            ..Default::default()
        };
        let Some(dir) = dir else {
            out.no_bank = true;
            out.missing = scope.core_files().to_vec();
            return Ok(out);
        };
        for &name in scope.core_files() {
            match cache::read_cached(&dir, Path::new(name), name) {
                Ok(doc) => {
                    out.docs.insert(name.to_string(), doc.into_value());
                }
                Err(ReadError::NotFound) => out.missing.push(name),
                Err(source) => {
                    return Err(BankError::CoreFile {
                        path: dir.display(Path::new(name)),
                        bank: scope.label(),
                        source,
                    })
                }
            }
        }
        Ok(out)
    }

    /// Reads one document of a bank.
    pub fn read(&self, scope: Scope, path: &str) -> Result<Document, BankError> {
        check_rel(path)?;
        let Some(dir) = self.open(scope)? else {
            let hint = match scope {
                Scope::Global => "write_global_memory_bank creates it",
                Scope::Branch(_) => "write_branch_memory_bank creates it",
            };
            return Err(BankError::NoBank {
                bank: capitalize(&scope.label()),
                dir: self.dir(scope)?,
                hint,
            });
        };
        let (rel_path, rel) = confine_doc(&dir, scope, path)?;
        document::read(&dir, &rel_path, &rel).map_err(|e| match e {
            ReadError::NotFound => BankError::NoDocument {
                bank: scope.label(),
                path: dir.display(&rel_path),
                rel: rel.clone(),
            },
            source => BankError::Document {
                path: dir.display(&rel_path),
                source,
            },
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
    ) -> Result<WriteOutcome, BankError> {
        check_rel(path)?;
        if path.to_ascii_lowercase().ends_with(".json") {
            serde_json::from_str::<serde::de::IgnoredAny>(content).map_err(|source| {
                BankError::InvalidJson {
                    path: path.to_string(),
                    source,
                }
            })?;
        }
        let bank_rel: PathBuf = match scope {
            Scope::Global => PathBuf::from(GLOBAL_DIR),
            Scope::Branch(b) => Path::new(BRANCHES_DIR).join(branch_dir_name(b)?),
        };
        // Files that run code are refused before anything (a bank directory) is created;
        // checked from the bank root down, so a branch bank named like a protected directory
        // (`.claude`, `.husky`) is caught as well as the document's own path.
        let protected = |rel: &Path| {
            crate::capfs::protected_reason(&normalize(&bank_rel.join(rel))).map(|why| {
                BankError::Protected {
                    path: path.to_string(),
                    why,
                }
            })
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
                let (d, created) = root.create_dir_all(&bank_rel)?;
                (d.as_root(), created)
            }
        };
        let (rel_path, rel) = confine_doc(&dir, scope, path)?;
        if let Some(e) = protected(&rel_path) {
            return Err(e);
        }
        let written = dir.write_atomic(&rel_path, content.as_bytes(), true)?;
        let mtime = modified(&dir, &rel_path).unwrap_or_else(SystemTime::now);
        let seeded = if bank_created {
            seed(&dir, scope, lang, &rel).map_err(|source| BankError::SeedFailed {
                rel: rel.clone(),
                source,
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
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// A document path must be relative to the bank.
fn check_rel(path: &str) -> Result<(), BankError> {
    if path.is_empty() {
        return Err(BankError::EmptyPath);
    }
    if Path::new(path).is_absolute() || path.starts_with('/') || path.starts_with('\\') {
        return Err(BankError::AbsolutePath(path.to_string()));
    }
    Ok(())
}

/// Checks `input` lexically against the bank directory `dir` (symlinks are confined by the
/// kernel when the document is opened); returns the relative path and the path to report
/// ("/"-separated).
fn confine_doc(dir: &CapDir, scope: Scope, input: &str) -> Result<(PathBuf, String), BankError> {
    check_rel(input)?;
    let rel = dir.rel(input).map_err(|e| match e {
        CapError::Outside { .. } => BankError::Outside {
            input: input.to_string(),
            bank: scope.label(),
            dir: dir.path().to_path_buf(),
        },
        e => BankError::Cap(e),
    })?;
    if rel == Path::new(".") {
        return Err(BankError::BankItself(input.to_string()));
    }
    let shown = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/");
    Ok((rel, shown))
}

/// When `rel` (beneath `dir`) was last modified, if it can be told.
fn modified(dir: &CapDir, rel: &Path) -> Option<SystemTime> {
    dir.metadata(rel)
        .ok()?
        .modified()
        .ok()
        .map(|t| t.into_std())
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
