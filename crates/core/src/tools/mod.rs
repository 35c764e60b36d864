//! Tools: one module per tool, each exporting `def() -> ToolDef`. [`registry`] lists them all.
//!
//! A tool receives its arguments as JSON and the shared server state, and returns a
//! [`ToolOutput`] (sent as JSON text content plus `structuredContent`) or a [`ToolError`]
//! (`InvalidParams` → JSON-RPC -32602, `Failed` → a result with `isError: true`).

use crate::server::Shared;
use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;

pub mod cancel_claude_execution;
pub mod clear_execution_history;
pub mod execute_claude;
pub mod execute_claude_with_context;
pub mod fs_get_project_info;
pub mod fs_list_directory;
pub mod fs_read_file;
pub mod fs_write_file;
pub mod get_current_session;
pub mod get_execution_history;
pub mod get_execution_stats;
pub mod get_workspace_folders;
pub mod reset_session;
pub mod set_current_session;
pub mod test_claude_cli;
#[cfg(feature = "test-tools")]
pub mod test_panic;

pub type ToolFuture = BoxFuture<'static, Result<ToolOutput, ToolError>>;
pub type Ctx = Arc<Shared>;

/// What a tool returns on success.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// The structured result; sent as `structuredContent` when it is an object.
    pub value: Value,
    /// The text content; the JSON of `value` when `None`.
    pub text: Option<String>,
}

impl ToolOutput {
    pub fn json(value: Value) -> Self {
        ToolOutput { value, text: None }
    }

    pub fn of<T: serde::Serialize>(v: &T) -> Result<Self, ToolError> {
        serde_json::to_value(v)
            .map(Self::json)
            .map_err(|e| ToolError::Failed(format!("cannot encode the result: {e}")))
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolError {
    /// The arguments do not fit the tool's input schema (JSON-RPC -32602).
    #[error("{0}")]
    InvalidParams(String),
    /// The tool ran and failed; the message says what to do about it (`isError: true`).
    #[error("{0}")]
    Failed(String),
}

/// A tool's description and entry point.
pub struct ToolDef {
    pub name: &'static str,
    /// Other names `tools/call` accepts (not listed by `tools/list`).
    pub aliases: &'static [&'static str],
    pub description: &'static str,
    pub input_schema: Value,
    pub output_schema: Option<Value>,
    pub run: fn(Ctx, Value) -> ToolFuture,
}

/// Every tool the bridge serves, in `tools/list` order.
pub fn registry() -> Vec<ToolDef> {
    #[allow(unused_mut)]
    let mut tools = vec![
        get_workspace_folders::def(),
        fs_get_project_info::def(),
        fs_read_file::def(),
        fs_list_directory::def(),
        fs_write_file::def(),
        execute_claude::def(),
        execute_claude_with_context::def(),
        get_execution_history::def(),
        clear_execution_history::def(),
        get_current_session::def(),
        reset_session::def(),
        set_current_session::def(),
        test_claude_cli::def(),
        get_execution_stats::def(),
        cancel_claude_execution::def(),
    ];
    #[cfg(feature = "test-tools")]
    tools.push(test_panic::def());
    tools
}

/// Decodes a tool's arguments; the error names the tool and what was wrong.
pub fn parse_args<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, ToolError> {
    serde_json::from_value(args)
        .map_err(|e| ToolError::InvalidParams(format!("invalid arguments for {tool}: {e}")))
}

/// The JSON Schema of `T`, as MCP wants it (an object schema, no `$schema` noise).
pub fn schema_of<T: JsonSchema>() -> Value {
    let mut v = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.remove("$schema");
        o.remove("title");
        o.entry("type").or_insert_with(|| "object".into());
    }
    v
}

/// Runs blocking work (file system) on tokio's blocking pool.
pub fn blocking<F>(f: F) -> ToolFuture
where
    F: FnOnce() -> Result<ToolOutput, ToolError> + Send + 'static,
{
    Box::pin(async move {
        tokio::task::spawn_blocking(f)
            .await
            .unwrap_or_else(|e| Err(ToolError::Failed(crate::mcp::panic_message(e))))
    })
}

/// Wraps an immediate result.
pub fn ready(r: Result<ToolOutput, ToolError>) -> ToolFuture {
    Box::pin(std::future::ready(r))
}

#[derive(serde::Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}
