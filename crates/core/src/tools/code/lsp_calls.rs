//! `lsp_calls` — who calls a function and what it calls, from the person's language servers
//! (`callHierarchy/incomingCalls`, `callHierarchy/outgoingCalls`). Handler:
//! `lua/claude_context/code/lsp.lua`.

use crate::editor::methods;
use crate::tools::code::{output_schema, run_targeted, Target};
use crate::tools::{schema_of, Ctx, Run, ToolDef, ToolFuture};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// The callers.
    Incoming,
    /// The callees.
    Outgoing,
    #[default]
    Both,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Args {
    #[serde(flatten)]
    pub target: Target,
    /// `incoming` (callers), `outgoing` (callees) or `both` (the default).
    #[serde(default)]
    pub direction: Direction,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "lsp_calls",
        aliases: &[],
        description: "The calls into and out of a function or method (LSP call hierarchy), \
                      from the editor's language servers: `incoming` lists the callers, \
                      `outgoing` the functions it calls (default both). Name the symbol \
                      (`symbol`, optionally `file` and `kind`) or a place (`file` + 1-based \
                      `line` + `column` or `text`). Answers path:line:col with the line's text.",
        input_schema: schema_of::<Args>(),
        output_schema: Some(output_schema()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> ToolFuture {
    run_targeted::<Args>(ctx, methods::LSP_CALLS, args, |a| &a.target)
}
