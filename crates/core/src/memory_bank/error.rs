//! What can go wrong in the memory bank, one variant per situation. Each message says what was
//! asked, where, and what to do; the tools pass it on as it is (one conversion to
//! [`crate::tools::ToolError`]).

use super::document::ReadError;
use crate::capfs::CapError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum BankError {
    #[error("unsupported language '{0}': use \"en\", \"ja\" or \"zh\"")]
    UnsupportedLanguage(String),

    #[error("the branch name is empty: pass the current git branch, e.g. \"main\"")]
    EmptyBranch,
    /// The name, escaped for the message.
    #[error("invalid branch name '{0}': it contains a control character or a backslash")]
    BranchCharacters(String),
    #[error("invalid branch name '{0}'")]
    InvalidBranch(String),
    #[error("scope \"branch\" needs the branch")]
    BranchNeeded,

    #[error(
        "the document path is empty: give a path relative to the bank, e.g. \"activeContext.md\""
    )]
    EmptyPath,
    #[error(
        "refused: '{0}' is an absolute path; give a path relative to the bank, e.g. \"activeContext.md\""
    )]
    AbsolutePath(String),
    #[error(
        "refused: '{input}' leads outside {bank} ('{}'). Paths must stay inside the bank: no \
         '..' above it, no absolute paths, no symbolic links leading out.",
        dir.display()
    )]
    Outside {
        input: String,
        bank: String,
        dir: PathBuf,
    },
    #[error("'{0}' is the bank directory itself, not a document")]
    BankItself(String),
    /// A file that runs code (`why` says which kind).
    #[error("refused: '{path}' {why}; the memory bank holds documents only")]
    Protected { path: String, why: &'static str },
    #[error("'{path}' is a JSON document but the content is not valid JSON: {source}")]
    InvalidJson {
        path: String,
        source: serde_json::Error,
    },
    #[error("give at least one tag to search for, e.g. [\"core\"]")]
    NoTags,

    /// `bank` is capitalised ("The global memory bank"); `hint` names the tool that creates it.
    #[error("{bank} does not exist yet (expected at '{}'); {hint}", dir.display())]
    NoBank {
        bank: String,
        dir: PathBuf,
        hint: &'static str,
    },
    #[error("no document '{rel}' in {bank} ('{}')", path.display())]
    NoDocument {
        rel: String,
        bank: String,
        path: PathBuf,
    },
    #[error("cannot read '{}': {source}", path.display())]
    Document { path: PathBuf, source: ReadError },
    #[error("cannot read the core file '{}' of {bank}: {source}", path.display())]
    CoreFile {
        path: PathBuf,
        bank: String,
        source: ReadError,
    },
    /// The project's `rules-<lang>.md` is not text.
    #[error("cannot read the project's rules '{}': it is not UTF-8 text", path.display())]
    RulesNotText { path: PathBuf },
    /// `what` says which part ("the global memory bank", "the project's rules '…'").
    #[error("cannot read {what}: {source}")]
    Read {
        what: String,
        source: Box<BankError>,
    },
    #[error("'{rel}' was written, but seeding the core files failed: {source}")]
    SeedFailed { rel: String, source: CapError },
    #[error("cannot {what} '{}': {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Cap(#[from] CapError),
}

/// The memory bank's errors are the tool's failure, said to the model as they are.
impl crate::error::Fault for BankError {}

impl BankError {
    /// `e` as the cause of not being able to read `what`.
    pub(crate) fn reading(what: impl Into<String>, e: impl Into<BankError>) -> BankError {
        BankError::Read {
            what: what.into(),
            source: Box::new(e.into()),
        }
    }
}
