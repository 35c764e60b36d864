//! `lsp_diagnostics` — the language servers' diagnostics of files, open or not: a file no
//! buffer holds is loaded into a hidden buffer, the server's `publishDiagnostics` awaited within
//! `timeout_ms`, then the buffer is unloaded. Handler: `lua/claude_context/code/diagnostics.lua`.

use crate::editor::methods;
use crate::tools::code::{output_schema, run_with, CodeError};
use crate::tools::{schema_of, Ctx, Run, ToolDef, ToolFuture};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The most files one call may ask about.
pub const MAX_FILES: usize = 50;

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Args {
    /// One file (project-relative or absolute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Several files (at most 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<String>>,
    /// How long to wait for a server's diagnostics of a file that was not open, in
    /// milliseconds (default 5000, at most 30000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 30000))]
    pub timeout_ms: Option<u64>,
    /// At most this many diagnostics are listed (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 2000))]
    pub limit: Option<usize>,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "lsp_diagnostics",
        aliases: &[],
        description: "Errors and warnings from the editor's language servers for the given \
                      files, whether or not they are open in the editor (a closed file is \
                      opened out of sight, checked and closed again). Answers path:line:col \
                      with severity, message and the line's text.",
        input_schema: schema_of::<Args>(),
        output_schema: Some(output_schema()),
        run: Run::State(run),
    }
}

fn check(a: &Args, tool: &'static str) -> Result<(), CodeError> {
    let n = a.file.iter().count() + a.files.as_ref().map_or(0, Vec::len);
    if n == 0 {
        return Err(CodeError::NoFiles { tool });
    }
    if n > MAX_FILES {
        return Err(CodeError::TooManyFiles {
            tool,
            max: MAX_FILES,
            given: n,
        });
    }
    Ok(())
}

fn run(ctx: Ctx, args: Value) -> ToolFuture {
    run_with::<Args>(ctx, methods::LSP_DIAGNOSTICS, args, check)
}
