//! `execute_claude_with_context {prompt, file_path, timeout = 300, options?}` — like
//! `execute_claude`, with a file (relative to the project root, confined to it, size-limited)
//! sent to the CLI on stdin before the prompt. The result adds `context_file`.

use crate::claude::args::RunOptions;
use crate::claude::results::ExecResult;
use crate::tools::claude::execute_claude::Run;
use crate::tools::{parse_args, schema_of, Ctx, ToolDef, ToolFuture};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

fn default_timeout() -> f64 {
    crate::claude::args::DEFAULT_TIMEOUT_SECS as f64
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The prompt for Claude.
    pub prompt: String,
    /// The context file: relative to the project root, or absolute inside it.
    pub file_path: String,
    /// Seconds before the CLI (its whole process group) is killed. Default 300.
    #[serde(default = "default_timeout")]
    pub timeout: f64,
    /// Optional CLI flags for this run.
    #[serde(default)]
    pub options: Option<RunOptions>,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "execute_claude_with_context",
        aliases: &[],
        description: "Run the Claude Code CLI with a prompt and a file from the project as \
                      context (relative paths resolve against the project root). Continues the \
                      current conversation like execute_claude. Returns {success, prompt, \
                      response, execution_time, timestamp, error, context_file}.",
        input_schema: schema_of::<Args>(),
        output_schema: Some(schema_of::<
            crate::tools::claude::session_compat::Named<ExecResult>,
        >()),
        run,
    }
}

fn run(ctx: Ctx, args: Value) -> ToolFuture {
    Box::pin(async move {
        let a: Args = parse_args("execute_claude_with_context", args)?;
        let run = Run {
            tool: "execute_claude_with_context",
            prompt: a.prompt,
            file_path: Some(a.file_path),
            timeout: a.timeout,
            options: a.options,
        };
        run.execute(&ctx).await
    })
}
