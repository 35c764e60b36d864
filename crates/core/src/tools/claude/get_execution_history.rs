//! `get_execution_history {limit = 10}` — the newest `limit` runs (oldest first), how many are
//! kept (at most 100, persisted across restarts) and the current session id.

use crate::tools::{parse_args, schema_of, Ctx, Run, ToolDef, ToolFuture, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

fn default_limit() -> usize {
    10
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// How many of the newest entries to return. Default 10.
    #[serde(default = "default_limit")]
    pub limit: usize,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "get_execution_history",
        aliases: &[],
        description: "Get the newest Claude CLI runs (default 10, oldest first) with their \
                      prompts, responses, timing and session ids. Returns {success, history, \
                      total_entries, current_session_id}.",
        input_schema: schema_of::<Args>(),
        output_schema: Some(schema_of::<crate::tools::claude::session_compat::History>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> ToolFuture {
    Box::pin(async move {
        let a = parse_args::<Option<Args>>("get_execution_history", args)?;
        let limit = a.map_or_else(default_limit, |a| a.limit);
        ToolOutput::of(&crate::tools::claude::session_compat::History::from(
            ctx.claude
                .history(ctx.project().root.as_deref(), limit)
                .await,
        ))
    })
}
