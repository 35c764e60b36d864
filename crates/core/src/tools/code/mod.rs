//! The editor's code intelligence for the model: the person's own language servers (Neovim's
//! `vim.lsp` clients) and tree-sitter, asked through the Lua handlers in
//! `lua/claude_context/code/`.
//!
//! Every tool here has the same three steps:
//! 1. the arguments: a `symbol` name (with an optional `file` and `kind`), or a `file` with a
//!    1-based `line` and a `column` in characters or a `text` to find on that line. A `file` is
//!    checked against the door ([`Door`]: the project root and the workspace folders, symlinks
//!    resolved) on both connections, before the editor is asked;
//! 2. the editor's handler runs the requests asynchronously (a file that is not open is loaded
//!    into a hidden buffer so the person's server attaches, then unloaded) and answers raw
//!    locations: paths, 0-based positions in the server's own offset encoding, and the line's
//!    text when a buffer holds the file ([`RawAnswer`]);
//! 3. here, off the main thread: each location outside the door is reduced to `path:line`; the
//!    others get their line's text (the buffer's when the editor sent it, else the file's, read
//!    through the capability layer), columns in characters (1-based), a project-relative path;
//!    then grouped by file, sorted, de-duplicated and capped ([`Answer`]).

pub mod answer;
pub mod code_outline;
pub mod index;
pub mod lsp_calls;
pub mod lsp_definition;
pub mod lsp_diagnostics;
pub mod lsp_hover;
pub mod lsp_implementations;
pub mod lsp_references;
pub mod lsp_symbols;
pub mod lsp_type_definition;

use crate::capfs::CapDir;
use crate::tools::door::Door;
use crate::tools::{on_blocking_pool, parse_args, Ctx, ToolError, ToolFuture, ToolOutput};
use answer::{render, shape, Answer, RawAnswer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// How many locations a section lists unless `limit` says otherwise.
pub const DEFAULT_LIMIT: usize = 100;
/// The most `limit` may ask for.
pub const MAX_LIMIT: usize = 2000;
/// The largest file whose lines are read for an answer (or sent to the outline).
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;
/// A line's text is cut to this many characters in answers.
pub const MAX_LINE_CHARS: usize = 240;

/// What the position tools take: where the symbol is.
#[derive(Debug, Default, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Target {
    /// The symbol's name (`area`, `Shape.area`'s `area`): looked up in `file`'s symbols when a
    /// file is given, else with the servers' workspace symbol search and, where a server has
    /// none, in the project's outline (its functions, classes, …). Several symbols of that name
    /// are all answered for (narrow with `file` and `kind`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// A file: project-relative or absolute, inside the project or the workspace folders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The symbol's kind, to choose among symbols of the same name: function, method, class,
    /// variable, field, interface, module, … (as the LSP names them, case-insensitive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// 1-based line in `file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub line: Option<u64>,
    /// 1-based column on `line`, in characters (not bytes, not UTF-16 units).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub column: Option<u64>,
    /// Text to find on `line` (its first occurrence); the position is its start. Use this or
    /// `column`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// At most this many locations are listed (default 100); the answer says how many more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 2000))]
    pub limit: Option<usize>,
}

/// What goes wrong in this module before or after the editor is asked.
#[derive(Debug, thiserror::Error)]
pub enum CodeError {
    #[error(
        "{tool}: give a `symbol` name (optionally with `file` and `kind`), or a `file` with a \
         1-based `line` and a `column` or a `text` on that line"
    )]
    NoPlace { tool: &'static str },
    #[error("{tool}: `line` needs a `file`")]
    LineWithoutFile { tool: &'static str },
    #[error("{tool}: `line` and `column` are 1-based")]
    ZeroBased { tool: &'static str },
    #[error("{tool}: give a `file` (its symbols) or a `query` (a workspace search)")]
    NoFileNorQuery { tool: &'static str },
    #[error("{tool}: give a `file` or `files`")]
    NoFiles { tool: &'static str },
    #[error("{tool}: at most {max} files per call ({given} given)")]
    TooManyFiles {
        tool: &'static str,
        max: usize,
        given: usize,
    },
    #[error("{tool}: `file` is empty")]
    EmptyFile { tool: &'static str },
    #[error(
        "{tool}: {arg} is relative and there is no project root to take it from; give an \
         absolute path"
    )]
    Relative { tool: &'static str, arg: String },
    #[error(
        "{tool}: refused: {path} is outside the project and the workspace folders ({roots}); \
         the code tools reach files inside them only"
    )]
    Outside {
        tool: &'static str,
        path: String,
        roots: String,
    },
    /// The editor's handler failed (its message says why: no server, a timeout, …).
    #[error(transparent)]
    Editor(#[from] crate::editor::EditorError),
}

/// Arguments that name no place, or too much, are the caller's mistake (-32602); a path the
/// door refuses and the editor's failure are the tool's (`isError: true`).
impl crate::error::Fault for CodeError {
    fn is_callers(&self) -> bool {
        match self {
            CodeError::NoPlace { .. }
            | CodeError::LineWithoutFile { .. }
            | CodeError::ZeroBased { .. }
            | CodeError::NoFileNorQuery { .. }
            | CodeError::NoFiles { .. }
            | CodeError::TooManyFiles { .. }
            | CodeError::EmptyFile { .. } => true,
            CodeError::Relative { .. } | CodeError::Outside { .. } | CodeError::Editor(_) => false,
        }
    }
}

impl Target {
    /// The refusal of arguments that name no place.
    pub fn check(&self, tool: &'static str) -> Result<(), CodeError> {
        if self.symbol.as_deref().is_none_or(str::is_empty) && self.line.is_none() {
            return Err(CodeError::NoPlace { tool });
        }
        if self.line.is_some() && self.file.is_none() {
            return Err(CodeError::LineWithoutFile { tool });
        }
        if self.line == Some(0) || self.column == Some(0) {
            return Err(CodeError::ZeroBased { tool });
        }
        Ok(())
    }
}

/// The `run` of the tools whose arguments are a [`Target`] (`target` finds it in them) plus
/// options of the tool's own (`lsp_references`, `lsp_calls`, …): checked and forwarded alike.
pub fn run_targeted<A>(
    ctx: Ctx,
    tool: &'static str,
    args: Value,
    target: fn(&A) -> &Target,
) -> ToolFuture
where
    A: serde::de::DeserializeOwned + Serialize + Send + 'static,
{
    run_with::<A>(ctx, tool, args, move |a, tool| target(a).check(tool))
}

/// The schema of [`Answer`], every tool's `outputSchema`.
pub fn output_schema() -> crate::tools::Schema {
    crate::tools::schema_of::<Answer>()
}

/// Parses `args` as `A`, then runs [`forward`] with them.
pub fn run_with<A>(
    ctx: Ctx,
    tool: &'static str,
    args: Value,
    check: impl FnOnce(&A, &'static str) -> Result<(), CodeError>,
) -> ToolFuture
where
    A: serde::de::DeserializeOwned + Serialize + Send + 'static,
{
    let a: A = match parse_args(tool, args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    if let Err(e) = check(&a, tool) {
        return crate::tools::ready(Err(e.into()));
    }
    let params = serde_json::to_value(&a).unwrap_or_default();
    Box::pin(forward(ctx, tool, params))
}

/// Checks `file` (and each of `files`) against the door, hands the editor's handler `tool` the
/// arguments with absolute paths and the door's roots, and shapes its answer.
pub async fn forward(
    ctx: Ctx,
    tool: &'static str,
    mut params: Value,
) -> Result<ToolOutput, ToolError> {
    let c = ctx.clone();
    let door = on_blocking_pool(move || Ok(Door::of(&c))).await?;
    let limit = params
        .get("limit")
        .and_then(Value::as_u64)
        .map(|n| (n as usize).clamp(1, MAX_LIMIT))
        .unwrap_or(DEFAULT_LIMIT);
    let (door2, p) = (door.clone(), params.clone());
    params =
        on_blocking_pool(move || confine_args(&door2, tool, p).map_err(ToolError::from)).await?;
    if let Some(o) = params.as_object_mut() {
        let roots: Vec<Value> = door
            .roots()
            .iter()
            .map(|r| Value::String(r.to_string_lossy().into_owned()))
            .collect();
        o.insert("roots".into(), Value::Array(roots));
        if tool == crate::editor::methods::CODE_OUTLINE {
            // The file's text for the parser, read here through the capability layer (the
            // handler prefers a buffer's unsaved state when one holds the file).
            let file = o.get("file").and_then(Value::as_str).map(PathBuf::from);
            if let Some(f) = file {
                let d = door.clone();
                let src = on_blocking_pool(move || Ok(read_text(&d, &f))).await?;
                if let Some(src) = src {
                    o.insert("source".into(), Value::String(src));
                }
            }
        }
    }
    let mut v = ctx
        .rpc
        .call(tool, params.clone())
        .await
        .map_err(CodeError::from)?;
    if v.get("need_candidates").and_then(Value::as_bool) == Some(true) {
        // No running server searches the workspace: the files that hold the name, for the
        // editor to find the definitions in (their outline), then asked again.
        v = ask_with_candidates(&ctx, tool, &door, params).await?;
    }
    let raw: RawAnswer = crate::tools::ide::decode(tool, v)?;
    let answer = on_blocking_pool(move || Ok(shape(&door, raw, limit))).await?;
    let text = render(&answer);
    let mut out = ToolOutput::of(&answer)?;
    out.text = Some(text);
    Ok(out)
}

/// Asks `tool` again with the project's files that hold the symbol's name
/// ([`index::search`], off the main thread) as `candidates`.
async fn ask_with_candidates(
    ctx: &Ctx,
    tool: &'static str,
    door: &Door,
    mut params: Value,
) -> Result<Value, ToolError> {
    let symbol = params
        .get("symbol")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let roots = door.roots().to_vec();
    let found = on_blocking_pool(move || Ok(index::search(&roots, &symbol))).await?;
    if let Some(o) = params.as_object_mut() {
        o.insert(
            "candidates".into(),
            serde_json::to_value(&found.candidates).unwrap_or_default(),
        );
        o.insert("indexed_files".into(), Value::from(found.files));
        o.insert("candidates_truncated".into(), Value::Bool(found.truncated));
    }
    let v = ctx.rpc.call(tool, params).await.map_err(CodeError::from)?;
    Ok(v)
}

/// The arguments with `file` / `files` made absolute, or the refusal of one outside the door.
fn confine_args(door: &Door, tool: &'static str, mut params: Value) -> Result<Value, CodeError> {
    let Some(o) = params.as_object_mut() else {
        return Ok(params);
    };
    let check = |arg: &str| -> Result<String, CodeError> {
        let abs = door.absolute(arg).ok_or_else(|| CodeError::Relative {
            tool,
            arg: arg.to_string(),
        })?;
        if door.admits(&abs) {
            Ok(abs.to_string_lossy().into_owned())
        } else {
            Err(CodeError::Outside {
                tool,
                path: abs.display().to_string(),
                roots: describe(door),
            })
        }
    };
    if let Some(f) = o.get("file").and_then(Value::as_str).map(String::from) {
        if f.is_empty() {
            o.remove("file");
        } else {
            o.insert("file".into(), Value::String(check(&f)?));
        }
    }
    if let Some(list) = o.get("files").and_then(Value::as_array).cloned() {
        let mut out = Vec::new();
        for f in list {
            let f = f.as_str().unwrap_or_default();
            out.push(Value::String(check(f)?));
        }
        o.insert("files".into(), Value::Array(out));
    }
    Ok(params)
}

fn describe(door: &Door) -> String {
    if door.roots().is_empty() {
        return "no project root is available".into();
    }
    door.roots()
        .iter()
        .map(|r| r.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The text of an admitted file, read through the capability layer from its root; `None` when
/// it is outside, missing, too large or not a regular file.
fn read_text(door: &Door, path: &Path) -> Option<String> {
    let (root, rel) = door.locate(path)?;
    let dir = CapDir::open_root(&root).ok()?;
    let rel = if rel.as_os_str().is_empty() {
        return None;
    } else {
        rel
    };
    let bytes = dir.read_capped(&rel, MAX_FILE_BYTES).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The `run` of the tools whose arguments are a [`Target`] only.
pub fn run_target(ctx: Ctx, tool: &'static str, args: Value) -> ToolFuture {
    run_targeted::<Target>(ctx, tool, args, |t| t)
}

#[cfg(test)]
mod tests;
