//! `get_execution_stats {}` — Get Claude CLI run statistics: runs, successes, failures, total cost (USD), input/output tokens and mean duration, from the CLI's JSON. Returns {success, runs, successes, failures, total_cost_usd, input_tokens, output_tokens, mean_duration_ms, ...}.

use crate::claude::results::StatsResult;
use crate::tools::{parse_args, schema_of, Ctx, NoArgs, Run, ToolDef, ToolFuture, ToolOutput};
use serde_json::Value;

pub fn def() -> ToolDef {
    ToolDef {
        name: "get_execution_stats",
        aliases: &[],
        description: "Get Claude CLI run statistics: runs, successes, failures, total cost (USD), input/output tokens and mean duration, from the CLI's JSON. Returns {success, runs, successes, failures, total_cost_usd, input_tokens, output_tokens, mean_duration_ms, ...}.",
        input_schema: schema_of::<NoArgs>(),
        output_schema: Some(schema_of::<crate::tools::claude::session_compat::Named<StatsResult>>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> ToolFuture {
    Box::pin(async move {
        parse_args::<Option<NoArgs>>("get_execution_stats", args)?;
        ToolOutput::of(&crate::tools::claude::session_compat::Named::new(
            "get_execution_stats",
            ctx.claude.stats(ctx.project().root.as_deref()).await,
        ))
    })
}
