//! A context file for `execute_claude_with_context`: read inside the project root through the
//! capability layer, size-limited and UTF-8, and put before the prompt on the CLI's stdin.

use super::ClaudeError;
use std::path::Path;

/// The signature of [`read_context_file`]: (project root, file path, byte limit) -> (relative
/// path, content).
pub type ContextReader =
    dyn Fn(Option<&Path>, &str, u64) -> Result<(String, String), ClaudeError> + Send + Sync;

/// The stdin text for a run with a context file: the file (fenced, named) and then the prompt.
pub fn compose_with_context(prompt: &str, rel_path: &str, content: &str) -> String {
    let longest = content.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let nl = if content.ends_with('\n') { "" } else { "\n" };
    format!(
        "Context file: {rel_path}\n\n{fence}\n{content}{nl}{fence}\n\n{prompt}",
        fence = fence
    )
}

/// Why a context file cannot be used; the text names the file and what to do.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ContextFileError {
    #[error(
        "cannot read the context file '{0}': the project root is unavailable (no working \
         directory, MCP_PROJECT_ROOT or setup{{project_root}})"
    )]
    NoRoot(String),
    /// The capability layer refused it (outside the root, not a regular file, …).
    #[error("cannot read the context file: {0}")]
    Refused(String),
    #[error(
        "the context file '{file}' is {size} bytes, over the {limit} byte limit \
         (setup{{claude = {{max_context_bytes = …}}}}); pass a smaller file or an excerpt"
    )]
    TooLarge { file: String, size: u64, limit: u64 },
    #[error("the context file '{file}' grew past the {limit} byte limit while being read")]
    Grew { file: String, limit: u64 },
    #[error("cannot read the context file '{file}': {err}")]
    Io { file: String, err: String },
    #[error("cannot read the context file '{0}': it is not UTF-8 text")]
    NotUtf8(String),
}

/// Resolves `file_path` inside `root`, checks its size and encoding, returns (relative path,
/// content).
pub fn read_context_file(
    root: Option<&Path>,
    file_path: &str,
    limit: u64,
) -> Result<(String, String), ClaudeError> {
    let file = || file_path.to_string();
    let root = root.ok_or_else(|| ContextFileError::NoRoot(file()))?;
    let fail = |e: crate::capfs::CapError| ContextFileError::Refused(e.to_string());
    let dir = crate::capfs::CapDir::open_root(root).map_err(fail)?;
    let rel = dir.rel(file_path).map_err(fail)?;
    // Opened once, without blocking: a FIFO or device is refused at once, so it cannot hold
    // the run queue; the size is checked on the open file and again while reading.
    let (f, meta) = dir.open_regular(&rel).map_err(fail)?;
    if meta.len() > limit {
        return Err(ContextFileError::TooLarge {
            file: file(),
            size: meta.len(),
            limit,
        }
        .into());
    }
    let bytes = crate::capfs::read_capped_from(f, limit).map_err(|e| match e {
        None => ContextFileError::Grew {
            file: file(),
            limit,
        },
        Some(e) => ContextFileError::Io {
            file: file(),
            err: e.to_string(),
        },
    })?;
    let content = String::from_utf8(bytes).map_err(|_| ContextFileError::NotUtf8(file()))?;
    let rel = if rel == Path::new(".") {
        ".".to_string()
    } else {
        rel.to_string_lossy().into_owned()
    };
    Ok((rel, content))
}
