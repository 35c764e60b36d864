//! `reset_session {}` — Forget the current Claude session: the next run starts a new conversation. Returns {success, message, old_session_id}.

use crate::claude::results::ResetResult;
use crate::tools::{parse_args, schema_of, Ctx, NoArgs, Run, ToolDef, ToolFuture, ToolOutput};
use serde_json::Value;

pub fn def() -> ToolDef {
    ToolDef {
        name: "reset_session",
        aliases: &[],
        description: "Forget the current Claude session: the next run starts a new conversation. Returns {success, message, old_session_id}.",
        input_schema: schema_of::<NoArgs>(),
        output_schema: Some(schema_of::<crate::tools::claude::session_compat::Named<ResetResult>>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> ToolFuture {
    Box::pin(async move {
        parse_args::<Option<NoArgs>>("reset_session", args)?;
        ToolOutput::of(&crate::tools::claude::session_compat::Named::new(
            "reset_session",
            ctx.claude
                .reset_session(ctx.project().root.as_deref())
                .await,
        ))
    })
}
