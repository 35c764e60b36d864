//! A context file for `execute_claude_with_context`: read inside the project root through the
//! capability layer, size-limited and UTF-8, and put before the prompt on the CLI's stdin.

use std::path::Path;

/// The signature of [`read_context_file`]: (project root, file path, byte limit) -> (relative
/// path, content).
pub type ContextReader =
    dyn Fn(Option<&Path>, &str, u64) -> Result<(String, String), String> + Send + Sync;

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

/// Resolves `file_path` inside `root`, checks its size and encoding, returns (relative path,
/// content). Errors name the file and what to do.
pub fn read_context_file(
    root: Option<&Path>,
    file_path: &str,
    limit: u64,
) -> Result<(String, String), String> {
    let root = root.ok_or_else(|| {
        format!(
            "cannot read the context file '{file_path}': the project root is unavailable \
             (no working directory, MCP_PROJECT_ROOT or setup{{project_root}})"
        )
    })?;
    let fail = |e: crate::capfs::CapError| format!("cannot read the context file: {e}");
    let dir = crate::capfs::CapDir::open_root(root).map_err(fail)?;
    let rel = dir.rel(file_path).map_err(fail)?;
    // Opened once, without blocking: a FIFO or device is refused at once, so it cannot hold
    // the run queue; the size is checked on the open file and again while reading.
    let (file, meta) = dir.open_regular(&rel).map_err(fail)?;
    if meta.len() > limit {
        return Err(format!(
            "the context file '{file_path}' is {} bytes, over the {limit} byte limit \
             (setup{{claude = {{max_context_bytes = …}}}}); pass a smaller file or an excerpt",
            meta.len()
        ));
    }
    let bytes = crate::capfs::read_capped_from(file, limit).map_err(|e| match e {
        None => format!(
            "the context file '{file_path}' grew past the {limit} byte limit while being read"
        ),
        Some(e) => format!("cannot read the context file '{file_path}': {e}"),
    })?;
    let content = String::from_utf8(bytes)
        .map_err(|_| format!("cannot read the context file '{file_path}': it is not UTF-8 text"))?;
    let rel = if rel == Path::new(".") {
        ".".to_string()
    } else {
        rel.to_string_lossy().into_owned()
    };
    Ok((rel, content))
}
