//! `lsp_implementations` — the implementations of an interface, abstract method or type (`textDocument/implementation`). Handler: `lua/claude_context/code/lsp.lua`.

use crate::editor::methods;
use crate::tools::code::{output_schema, run_target, Target};
use crate::tools::{schema_of, Ctx, Run, ToolDef, ToolFuture};
use serde_json::Value;

pub fn def() -> ToolDef {
    ToolDef {
        name: "lsp_implementations",
        aliases: &[],
        description: "The implementations of an interface, abstract method or type, from the editor's language servers (LSP go-to-implementation). Name the symbol (`symbol`, optionally `file` and `kind`) or a place (`file` + 1-based `line` + `column` or `text`). Answers path:line:col with the line's text, grouped by file.",
        input_schema: schema_of::<Target>(),
        output_schema: Some(output_schema()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> ToolFuture {
    run_target(ctx, methods::LSP_IMPLEMENTATIONS, args)
}
