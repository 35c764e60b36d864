//! `get_current_session {}` — Get the Claude session the next run resumes. Returns {success, session_id, has_session}.

use crate::claude::results::SessionResult;
use crate::tools::{parse_args, schema_of, Ctx, NoArgs, Run, ToolDef, ToolFuture, ToolOutput};
use serde_json::Value;

pub fn def() -> ToolDef {
    ToolDef {
        name: "get_current_session",
        aliases: &[],
        description: "Get the Claude session the next run resumes. Returns {success, session_id, has_session}.",
        input_schema: schema_of::<NoArgs>(),
        output_schema: Some(schema_of::<crate::tools::claude::session_compat::Named<SessionResult>>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> ToolFuture {
    Box::pin(async move {
        parse_args::<Option<NoArgs>>("get_current_session", args)?;
        ToolOutput::of(&crate::tools::claude::session_compat::Named::new(
            "get_current_session",
            ctx.claude
                .current_session(ctx.project().root.as_deref())
                .await,
        ))
    })
}
