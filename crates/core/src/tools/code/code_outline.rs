//! `code_outline` — a file's structure (classes, functions, methods, … with their line ranges)
//! from tree-sitter, no language server needed. The file is read here (capability layer) and
//! parsed by the editor (its buffer's unsaved state when one holds it); with no parser for the
//! language, a language server's document symbols stand in, and with neither the answer says
//! so. Handler: `lua/claude_context/code/outline.lua`.

use crate::editor::methods;
use crate::tools::code::{output_schema, run_with, CodeError};
use crate::tools::{schema_of, Ctx, Run, ToolDef, ToolFuture};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Args {
    /// The file: project-relative or absolute, inside the project or the workspace folders.
    pub file: String,
    /// At most this many entries are listed (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 2000))]
    pub limit: Option<usize>,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "code_outline",
        aliases: &[],
        description: "A file's structure: its classes, functions, methods, … nested, each with \
                      its line range, from the editor's tree-sitter parsers (no language server \
                      needed). Cheaper than reading the file to find where things are.",
        input_schema: schema_of::<Args>(),
        output_schema: Some(output_schema()),
        run: Run::State(run),
    }
}

fn check(a: &Args, tool: &'static str) -> Result<(), CodeError> {
    if a.file.is_empty() {
        return Err(CodeError::EmptyFile { tool });
    }
    Ok(())
}

fn run(ctx: Ctx, args: Value) -> ToolFuture {
    run_with::<Args>(ctx, methods::CODE_OUTLINE, args, check)
}
