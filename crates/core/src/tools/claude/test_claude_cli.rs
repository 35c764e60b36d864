//! `test_claude_cli {}` — Find the Claude Code CLI (setup{claude.cmd}, PATH, common install locations, CLAUDE_PATH) and run `claude --version`. Returns {success, path, source, version, error}.

use crate::tools::{parse_args, schema_of, Ctx, NoArgs, Run, ToolDef, ToolFuture, ToolOutput};
use serde_json::Value;

pub fn def() -> ToolDef {
    ToolDef {
        name: "test_claude_cli",
        aliases: &[],
        description: "Find the Claude Code CLI (setup{claude.cmd}, PATH, common install locations, CLAUDE_PATH) and run `claude --version`. Returns {success, path, source, version, error}.",
        input_schema: schema_of::<NoArgs>(),
        output_schema: Some(schema_of::<crate::tools::claude::session_compat::CliTest>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> ToolFuture {
    Box::pin(async move {
        parse_args::<Option<NoArgs>>("test_claude_cli", args)?;
        ToolOutput::of(&crate::tools::claude::session_compat::CliTest::from(
            ctx.claude.test_cli().await,
        ))
    })
}
