//! `claudeContextHook` ([`crate::hook::MCP_TOOL`]) — Claude Code's `mcp_tool` hook of a tool
//! call, on `/mcp` only and offered to no one ([`DoorRule::Hook`]): the hook input's fields,
//! recorded with the session's turns ([`crate::turns::record_tool_call`]). It answers `{}`.
//!
//! [`DoorRule::Hook`]: crate::tools::door::DoorRule::Hook

use crate::tools::{Run, Schema, ToolDef, ToolError, ToolFuture, ToolOutput};
use crate::turns::Tracker;
use serde_json::{json, Value};
use std::sync::Arc;

pub fn def() -> ToolDef {
    ToolDef {
        name: "claudeContextHook",
        aliases: &[],
        description: "Claude Code's hook before each tool (not offered to the model): records \
                      the tool call with its session's turn.",
        input_schema: Schema(|| json!({"type": "object"})),
        output_schema: None,
        run: Run::Turns(run),
    }
}

fn run(turns: Arc<Tracker>, args: Value) -> ToolFuture {
    Box::pin(async move {
        // A capture reads and stores a file: off the runtime's threads.
        let done =
            tokio::task::spawn_blocking(move || crate::turns::record_tool_call(&turns, &args))
                .await;
        match done {
            Ok(Ok(())) => Ok(ToolOutput::texts(["{}".to_string()])),
            Ok(Err(e)) => Err(ToolError::InvalidParams(format!("Invalid params: {e}"))),
            // A panic while recording (contained by the blocking pool): ours, not the caller's.
            Err(e) => Err(ToolError::Internal(format!(
                "the hook could not be recorded: {e}"
            ))),
        }
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_tool_is_the_hook_tool_claude_code_is_told_of() {
        assert_eq!(super::def().name, crate::hook::MCP_TOOL);
    }
}
