//! `lsp_symbols` — a file's symbols (`textDocument/documentSymbol`, nested) or a search of the
//! workspace's (`workspace/symbol`), from the person's language servers. Handler:
//! `lua/claude_context/code/lsp.lua`.

use crate::editor::methods;
use crate::tools::code::{output_schema, run_with, CodeError};
use crate::tools::{schema_of, Ctx, Run, ToolDef, ToolFuture};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Args {
    /// A file: its symbols, nested (classes, their methods, …) with their line ranges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Without `file`: search the workspace's symbols for this name (servers match loosely).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// Keep only symbols of this kind (function, class, method, …; case-insensitive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// At most this many symbols are listed (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 2000))]
    pub limit: Option<usize>,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "lsp_symbols",
        aliases: &[],
        description: "Symbols from the editor's language servers: with `file`, that file's \
                      classes, functions, methods, … nested, with their line ranges; with \
                      `query`, a search of the whole workspace's symbols by name. Answers \
                      path:line:col with kind and name.",
        input_schema: schema_of::<Args>(),
        output_schema: Some(output_schema()),
        run: Run::State(run),
    }
}

fn check(a: &Args, tool: &'static str) -> Result<(), CodeError> {
    let empty = |s: &Option<String>| s.as_deref().is_none_or(str::is_empty);
    if empty(&a.file) && empty(&a.query) {
        return Err(CodeError::NoFileNorQuery { tool });
    }
    Ok(())
}

fn run(ctx: Ctx, args: Value) -> ToolFuture {
    run_with::<Args>(ctx, methods::LSP_SYMBOLS, args, check)
}
