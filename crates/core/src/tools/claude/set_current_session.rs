//! `set_current_session {session_id}` — make the next run resume this Claude session (for
//! example one taken from `get_execution_history`). Returns `{success, message, session_id,
//! old_session_id}`.

use crate::tools::{parse_args, schema_of, Ctx, Run, ToolDef, ToolError, ToolFuture, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The Claude session id to resume next.
    pub session_id: String,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "set_current_session",
        aliases: &[],
        description: "Make the next Claude CLI run resume the given session id (e.g. one from \
                      get_execution_history). Returns {success, message, session_id, \
                      old_session_id}.",
        input_schema: schema_of::<Args>(),
        output_schema: Some(schema_of::<crate::tools::claude::session_compat::SetSession>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> ToolFuture {
    Box::pin(async move {
        let a: Args = parse_args("set_current_session", args)?;
        let r = ctx
            .claude
            .set_session(ctx.project().root.as_deref(), a.session_id.trim())
            .await
            .map_err(|e| ToolError::InvalidParams(format!("set_current_session: {e}")))?;
        ToolOutput::of(&crate::tools::claude::session_compat::SetSession::from(r))
    })
}
