//! `lsp_references` — every place a symbol is used, from the person's language servers
//! (`textDocument/references`), grouped by file and capped. Handler:
//! `lua/claude_context/code/lsp.lua`.

use crate::editor::methods;
use crate::tools::code::{output_schema, run_targeted, Target};
use crate::tools::{schema_of, Ctx, Run, ToolDef, ToolFuture};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Args {
    #[serde(flatten)]
    pub target: Target,
    /// List the declaration itself among the references (default false).
    #[serde(default)]
    pub include_declaration: bool,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "lsp_references",
        aliases: &[],
        description: "Every place a symbol is used (LSP find-references), from the language \
                      servers already running in the editor: exact, not text matches. Name the \
                      symbol (`symbol`, optionally `file` and `kind`) or a place (`file` + \
                      1-based `line` + `column` in characters or `text` on that line). Answers \
                      project-relative path:line:col with each line's text, grouped by file, \
                      capped by `limit` with the count of the rest. Prefer this to grep for \
                      finding usages.",
        input_schema: schema_of::<Args>(),
        output_schema: Some(output_schema()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> ToolFuture {
    run_targeted::<Args>(ctx, methods::LSP_REFERENCES, args, |a| &a.target)
}
