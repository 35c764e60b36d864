//! `clear_execution_history {}` — Clear the Claude CLI run history (the current session is kept). Returns {success, message, cleared_count}.

use crate::claude::results::ClearResult;
use crate::tools::{parse_args, schema_of, Ctx, NoArgs, Run, ToolDef, ToolFuture, ToolOutput};
use serde_json::Value;

pub fn def() -> ToolDef {
    ToolDef {
        name: "clear_execution_history",
        aliases: &[],
        description: "Clear the Claude CLI run history (the current session is kept). Returns {success, message, cleared_count}.",
        input_schema: schema_of::<NoArgs>(),
        output_schema: Some(schema_of::<crate::tools::claude::session_compat::Named<ClearResult>>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> ToolFuture {
    Box::pin(async move {
        parse_args::<Option<NoArgs>>("clear_execution_history", args)?;
        ToolOutput::of(&crate::tools::claude::session_compat::Named::new(
            "clear_execution_history",
            ctx.claude
                .clear_history(ctx.project().root.as_deref())
                .await,
        ))
    })
}
