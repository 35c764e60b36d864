//! `lsp_definition` — where a symbol is defined, from the person's language servers (`textDocument/definition`). Handler: `lua/claude_context/code/lsp.lua`.

use crate::editor::methods;
use crate::tools::code::{output_schema, run_target, Target};
use crate::tools::{schema_of, Ctx, Run, ToolDef, ToolFuture};
use serde_json::Value;

pub fn def() -> ToolDef {
    ToolDef {
        name: "lsp_definition",
        aliases: &[],
        description: "Where a symbol is defined, from the editor's language servers (LSP go-to-definition). Name the symbol (`symbol`, optionally `file` and `kind`) or a place (`file` + 1-based `line` + `column` in characters or `text` on that line). Answers project-relative path:line:col with the line's text, grouped by file. Prefer this to grep for finding definitions.",
        input_schema: schema_of::<Target>(),
        output_schema: Some(output_schema()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> ToolFuture {
    run_target(ctx, methods::LSP_DEFINITION, args)
}
