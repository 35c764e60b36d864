//! `lsp_hover` — a symbol's signature and documentation (`textDocument/hover`). Handler: `lua/claude_context/code/lsp.lua`.

use crate::editor::methods;
use crate::tools::code::{output_schema, run_target, Target};
use crate::tools::{schema_of, Ctx, Run, ToolDef, ToolFuture};
use serde_json::Value;

pub fn def() -> ToolDef {
    ToolDef {
        name: "lsp_hover",
        aliases: &[],
        description: "A symbol's signature, type and documentation, from the editor's language servers (LSP hover). Name the symbol (`symbol`, optionally `file` and `kind`) or a place (`file` + 1-based `line` + `column` or `text`).",
        input_schema: schema_of::<Target>(),
        output_schema: Some(output_schema()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> ToolFuture {
    run_target(ctx, methods::LSP_HOVER, args)
}
