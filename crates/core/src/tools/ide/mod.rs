//! What the Claude Code IDE tools share: the hop to their Lua handlers
//! (`lua/claude_context/ide/`, one file per tool) and the protocol's position types.
//!
//! Each IDE tool module is thin: it decodes its arguments (the input schema), forwards them to
//! the Lua handler of the same name on Neovim's main thread ([`forward`]) and shapes the answer
//! exactly as Claude Code expects it (doc/protocol.md, IDE tools): text content, JSON inside
//! the text where the protocol says so. A handler may answer later (`openDiff` waits for the
//! person); nothing blocks meanwhile, and when the client goes away the wait is cancelled
//! ([`crate::mcp::Inflight`]).

pub mod check_document_dirty;
pub mod close_all_diff_tabs;
pub mod close_tab;
pub mod get_current_selection;
pub mod get_diagnostics;
pub mod get_latest_selection;
pub mod get_open_editors;
pub mod open_diff;
pub mod open_file;
pub mod save_document;

use crate::tools::{parse_args, Ctx, ToolError, ToolFuture, ToolOutput};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Calls the editor's handler for `method` and decodes its answer into `T`.
pub async fn forward<T: DeserializeOwned>(
    ctx: &Ctx,
    method: &str,
    params: Value,
) -> Result<T, ToolError> {
    let v = ctx.rpc.call(method, params).await?;
    decode(method, v)
}

/// Runs a selection tool (`getCurrentSelection`, `getLatestSelection`): takes no arguments,
/// forwards to the handler named `tool` and passes its [`SelectionResult`] through.
pub fn forward_selection(ctx: Ctx, tool: &'static str, args: Value) -> ToolFuture {
    if let Err(e) = parse_args::<Option<Empty>>(tool, args) {
        return crate::tools::ready(Err(e));
    }
    Box::pin(async move {
        let r: SelectionResult = forward(&ctx, tool, Value::Object(Default::default())).await?;
        ToolOutput::of(&r)
    })
}

/// An editor's answer that is not what the protocol says (the editor's bug), or one that
/// cannot be passed on: the tool's failure.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    #[error("the editor's answer to {method} is malformed: {err}")]
    Malformed {
        method: String,
        err: serde_json::Error,
    },
    #[error("the editor's answer to getOpenEditors has no tabs")]
    NoTabs,
    #[error("cannot encode the diagnostics: {0}")]
    EncodeDiagnostics(serde_json::Error),
}

impl crate::error::Fault for AnswerError {}

/// Decodes a handler's answer; a malformed one is the editor's bug, reported as a failure.
pub fn decode<T: DeserializeOwned>(method: &str, v: Value) -> Result<T, ToolError> {
    serde_json::from_value(v).map_err(|err| {
        AnswerError::Malformed {
            method: method.to_string(),
            err,
        }
        .into()
    })
}

/// A position in a document: 0-based line, 0-based character (UTF-16 code units, as LSP and
/// VS Code count them).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Position {
    pub line: u64,
    pub character: u64,
}

/// A range in a document; `end` is exclusive.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Range {
    pub start: Position,
    pub end: Position,
}

/// A selection; empty when it is only the cursor.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Selection {
    pub start: Position,
    pub end: Position,
    pub is_empty: bool,
}

/// The answer of `getCurrentSelection` and `getLatestSelection`: `{success: true, text,
/// filePath, fileUrl, selection}` or `{success: false, message}`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SelectionResult {
    pub success: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selection: Option<Selection>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Arguments that are only a file path (`checkDocumentDirty`, `saveDocument`).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FilePathArgs {
    /// The file's path (absolute, or relative to Neovim's working directory).
    pub file_path: String,
}

/// Arguments a tool ignores (Claude Code sends `{}`; unknown keys are tolerated so newer
/// clients keep working).
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct Empty {}

#[cfg(test)]
pub(crate) mod testing {
    //! An [`EditorRpc`] that answers from a closure, recording what it was asked.
    use crate::config::Config;
    use crate::editor::{EditorError, EditorRpc, EditorState, RpcFuture};
    use crate::mcp::Service;
    use crate::state::State;
    use serde_json::Value;
    use std::sync::{Arc, Mutex};

    /// The editor's answer as its Lua handler gives it: a value, or its error message.
    type Answer = dyn Fn(&str, &Value) -> Result<Value, String> + Send + Sync;

    pub struct FakeEditor {
        pub calls: Mutex<Vec<(String, Value)>>,
        answer: Box<Answer>,
    }

    impl EditorRpc for FakeEditor {
        fn call(&self, method: &str, params: Value) -> RpcFuture {
            let r = (self.answer)(method, &params).map_err(EditorError::Handler);
            self.calls
                .lock()
                .unwrap()
                .push((method.to_string(), params));
            Box::pin(async move { r })
        }
    }

    /// A shared state whose editor answers with `answer`.
    pub fn ctx(
        answer: impl Fn(&str, &Value) -> Result<Value, String> + Send + Sync + 'static,
    ) -> (Service, Arc<FakeEditor>) {
        let ed = Arc::new(FakeEditor {
            calls: Mutex::new(Vec::new()),
            answer: Box::new(answer),
        });
        let shared = Service::new(Arc::new(State::new(
            Config::default(),
            EditorState::default(),
            ed.clone(),
        )));
        (shared, ed)
    }

    /// Calls a tool through the MCP dispatch; returns the CallToolResult (or the error).
    pub fn call(shared: &Service, tool: &str, args: Value) -> Result<Value, (i32, String)> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(crate::mcp::call_tool(shared, tool, args))
            .map_err(|e| (e.code, e.message))
    }

    /// The texts of a CallToolResult's content blocks.
    pub fn texts(r: &Value) -> Vec<String> {
        r["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                assert_eq!(c["type"], "text");
                c["text"].as_str().unwrap().to_string()
            })
            .collect()
    }
}
