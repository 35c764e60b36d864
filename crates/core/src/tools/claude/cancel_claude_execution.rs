//! `cancel_claude_execution {}` — cancel the Claude CLI run in progress (its process group is
//! killed) and every run waiting for its turn; each returns `success: false`. Used by
//! `:ClaudeContext cancel`.

use crate::claude::results::CancelResult;
use crate::tools::{
    parse_args, ready, schema_of, Ctx, NoArgs, Run, ToolDef, ToolFuture, ToolOutput,
};
use serde_json::Value;

pub fn def() -> ToolDef {
    ToolDef {
        name: "cancel_claude_execution",
        aliases: &[],
        description: "Cancel the Claude CLI run in progress and every run waiting for its turn. \
                      Returns {success, cancelled, message}.",
        input_schema: schema_of::<NoArgs>(),
        output_schema: Some(schema_of::<
            crate::tools::claude::session_compat::Named<CancelResult>,
        >()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> ToolFuture {
    ready(
        parse_args::<Option<NoArgs>>("cancel_claude_execution", args).and_then(|_| {
            ToolOutput::of(&crate::tools::claude::session_compat::Named::new(
                "cancel_claude_execution",
                ctx.claude.cancel(),
            ))
        }),
    )
}
