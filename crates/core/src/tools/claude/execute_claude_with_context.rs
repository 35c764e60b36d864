//! `execute_claude_with_context {prompt, file_path, timeout = 300, options?}` — like
//! `execute_claude`, with a file (relative to the project root, confined to it, size-limited)
//! sent to the CLI on stdin before the prompt. The result adds `context_file`.

use crate::claude::args::RunOptions;
use crate::tools::claude::execute_claude::{result_schema, run_as, ExecArgs, RunParts};
use crate::tools::{schema_of, Ctx, Run, ToolDef, ToolFuture};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The prompt for Claude.
    pub prompt: String,
    /// The context file: relative to the project root, or absolute inside it.
    pub file_path: String,
    /// Seconds before the CLI (its whole process group) is killed. Default 300.
    #[serde(default = "crate::tools::claude::execute_claude::default_timeout")]
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
        output_schema: Some(result_schema()),
        run: Run::State(run),
    }
}

impl ExecArgs for Args {
    fn into_parts(self) -> RunParts {
        (
            self.prompt,
            Some(self.file_path),
            self.timeout,
            self.options,
        )
    }
}

fn run(ctx: Ctx, args: Value) -> ToolFuture {
    run_as::<Args>(ctx, "execute_claude_with_context", args)
}
