//! `execute_claude {prompt, timeout = 300, options?}` — run the Claude Code CLI with the prompt,
//! resuming the current session (`--resume`), one run at a time in call order. Returns the
//! session server's object: `success`, `prompt`, `response` (the CLI's `result`),
//! `execution_time`, `timestamp`, `error` (doc/protocol.md, Answers).

use crate::claude::args::{RunOptions, DEFAULT_TIMEOUT_SECS, MAX_TIMEOUT_SECS};
use crate::claude::manager::ExecRequest;
use crate::claude::results::ExecResult;
use crate::tools::{
    parse_args, schema_of, Ctx, Run, Schema, ToolDef, ToolError, ToolFuture, ToolOutput,
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use std::time::Duration;

/// The `timeout` of the execute tools when none is given.
pub fn default_timeout() -> f64 {
    DEFAULT_TIMEOUT_SECS as f64
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The prompt for Claude.
    pub prompt: String,
    /// Seconds before the CLI (its whole process group) is killed. Default 300.
    #[serde(default = "default_timeout")]
    pub timeout: f64,
    /// Optional CLI flags for this run.
    #[serde(default)]
    pub options: Option<RunOptions>,
}

/// What is wrong with an execute tool's run (`tool` names the tool): the caller's mistake
/// (-32602), said as it is.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("{tool}: prompt must not be empty")]
    EmptyPrompt { tool: &'static str },
    #[error("{tool}: prompt contains a NUL byte")]
    NulInPrompt { tool: &'static str },
    #[error(
        "{tool}: timeout must be a number of seconds in (0, {MAX_TIMEOUT_SECS}], got {timeout}"
    )]
    Timeout { tool: &'static str, timeout: f64 },
    #[error("{tool}: file_path must not be empty")]
    EmptyFilePath { tool: &'static str },
    /// An option, or the tools asked for beyond what the person allowed.
    #[error("{tool}: {err}")]
    Options {
        tool: &'static str,
        err: crate::claude::ClaudeError,
    },
}

impl crate::error::Fault for ExecError {
    fn is_callers(&self) -> bool {
        true
    }
}

/// Checks prompt, timeout and options; the error names what is wrong.
pub fn validate(
    tool: &'static str,
    prompt: &str,
    timeout: f64,
    options: &Option<RunOptions>,
) -> Result<Duration, ExecError> {
    if prompt.trim().is_empty() {
        return Err(ExecError::EmptyPrompt { tool });
    }
    if prompt.contains('\0') {
        return Err(ExecError::NulInPrompt { tool });
    }
    if !(timeout.is_finite() && timeout > 0.0 && timeout <= MAX_TIMEOUT_SECS as f64) {
        return Err(ExecError::Timeout { tool, timeout });
    }
    if let Some(o) = options {
        o.validate()
            .map_err(|err| ExecError::Options { tool, err })?;
    }
    Ok(Duration::from_secs_f64(timeout))
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "execute_claude",
        aliases: &[],
        description:
            "Run the Claude Code CLI with a prompt and return its answer. The conversation \
                      continues across calls (the CLI's session is resumed) until reset_session. \
                      Runs are one at a time, in call order. Returns {success, prompt, response, \
                      execution_time, timestamp, error}. Optional options {model, max_turns, \
                      allowed_tools, append_system_prompt}.",
        input_schema: schema_of::<Args>(),
        output_schema: Some(result_schema()),
        run: Run::State(run),
    }
}

/// The output schema of the execute tools: the session server's answer.
pub fn result_schema() -> Schema {
    schema_of::<crate::tools::claude::session_compat::Named<ExecResult>>()
}

impl ExecArgs for Args {
    fn into_parts(self) -> RunParts {
        (self.prompt, None, self.timeout, self.options)
    }
}

fn run(ctx: Ctx, args: Value) -> ToolFuture {
    run_as::<Args>(ctx, "execute_claude", args)
}

/// What an execute tool's arguments ask for: the prompt, the context file, the timeout and the
/// CLI options.
pub type RunParts = (String, Option<String>, f64, Option<RunOptions>);

/// The arguments of a tool that runs the sub-agent.
pub trait ExecArgs: DeserializeOwned + Send + 'static {
    fn into_parts(self) -> RunParts;
}

/// The entry point of the execute tools: `args` decoded as `A`, and the [`SubAgentRun`] they ask
/// for.
pub fn run_as<A: ExecArgs>(ctx: Ctx, tool: &'static str, args: Value) -> ToolFuture {
    Box::pin(async move {
        let (prompt, file_path, timeout, options) = parse_args::<A>(tool, args)?.into_parts();
        let run = SubAgentRun {
            tool,
            prompt,
            file_path,
            timeout,
            options,
        };
        run.execute(&ctx).await
    })
}

/// One run of the sub-agent as a tool asks for it: `execute_claude`, or
/// `execute_claude_with_context` with its file.
pub struct SubAgentRun {
    /// The tool asking (errors name it).
    pub tool: &'static str,
    pub prompt: String,
    pub file_path: Option<String>,
    pub timeout: f64,
    pub options: Option<RunOptions>,
}

impl SubAgentRun {
    /// Checks the run and queues it; the answer in the session server's shape.
    pub async fn execute(self, ctx: &Ctx) -> Result<ToolOutput, ToolError> {
        let tool = self.tool;
        let timeout = validate(tool, &self.prompt, self.timeout, &self.options)?;
        if self.file_path.as_ref().is_some_and(|f| f.trim().is_empty()) {
            return Err(ExecError::EmptyFilePath { tool }.into());
        }
        let options = self.options.unwrap_or_default();
        // A caller can only narrow the tools the person allowed the sub-agent.
        ctx.claude
            .narrow_tools(&options)
            .map_err(|err| ExecError::Options { tool, err })?;
        let req = ExecRequest {
            prompt: self.prompt,
            file_path: self.file_path,
            timeout,
            options,
            project_root: ctx.project().root,
        };
        ToolOutput::of(&crate::tools::claude::session_compat::Named::new(
            tool,
            ctx.claude.execute(req).await,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_run_is_the_callers_mistake_in_the_same_words() {
        let said = |e: ExecError| match ToolError::from(e) {
            ToolError::InvalidParams(m) => m,
            other => panic!("not the caller's mistake: {other:?}"),
        };
        let tool = "execute_claude";
        let no_options = &None;
        let e = validate(tool, " ", 5.0, no_options).unwrap_err();
        assert_eq!(said(e), "execute_claude: prompt must not be empty");
        let e = validate(tool, "a\0b", 5.0, no_options).unwrap_err();
        assert_eq!(said(e), "execute_claude: prompt contains a NUL byte");
        let e = validate(tool, "x", 0.5e9, no_options).unwrap_err();
        assert_eq!(
            said(e),
            format!(
                "execute_claude: timeout must be a number of seconds in (0, {MAX_TIMEOUT_SECS}], \
                 got 500000000"
            )
        );
        assert_eq!(
            said(ExecError::EmptyFilePath {
                tool: "execute_claude_with_context"
            }),
            "execute_claude_with_context: file_path must not be empty"
        );
    }
}
