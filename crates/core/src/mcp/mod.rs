//! JSON-RPC 2.0 / MCP dispatch. Protocol types (results, tools, error codes) come from `rmcp`;
//! the dispatch itself is here because the bridge must answer things a strict typed decoder
//! cannot: malformed JSON (-32700, and the connection goes on), batches, odd ids, notifications
//! Claude Code invents (`ide_connected`), and it must do so in microseconds.

use crate::server::Shared;
use crate::tools::{ToolDef, ToolError, ToolOutput};
use futures_util::FutureExt;
use rmcp::model::{
    CallToolResult, ContentBlock as Content, ErrorCode, Implementation, InitializeResult,
    ProtocolVersion, ServerCapabilities, Tool, ToolsCapability,
};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

/// Protocol versions we speak; a client asking for one of these gets it back.
pub const SUPPORTED_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The tools and their `tools/list` answer, built once.
pub struct Catalog {
    tools: Vec<ToolDef>,
    by_name: HashMap<&'static str, usize>,
    list: Value,
}

impl Catalog {
    pub fn new(tools: Vec<ToolDef>) -> Catalog {
        let mut by_name = HashMap::new();
        for (i, t) in tools.iter().enumerate() {
            by_name.insert(t.name, i);
            for a in t.aliases {
                by_name.entry(*a).or_insert(i);
            }
        }
        let list = json!({ "tools": tools.iter().map(describe).collect::<Vec<_>>() });
        Catalog {
            tools,
            by_name,
            list,
        }
    }

    pub fn get(&self, name: &str) -> Option<&ToolDef> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.tools.iter().map(|t| t.name)
    }
}

fn as_object(v: &Value) -> Arc<Map<String, Value>> {
    Arc::new(v.as_object().cloned().unwrap_or_default())
}

fn describe(t: &ToolDef) -> Value {
    let mut tool = Tool::new(t.name, t.description, as_object(&t.input_schema));
    if let Some(o) = &t.output_schema {
        tool = tool.with_raw_output_schema(as_object(o));
    }
    serde_json::to_value(tool).unwrap_or(Value::Null)
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i32,
    pub message: String,
}

impl RpcError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        RpcError {
            code: code.0,
            message: message.into(),
        }
    }
}

/// The JSON-RPC envelope of a success.
pub fn response(id: &Value, result: Value) -> Value {
    envelope(id, "result", result)
}

/// The JSON-RPC envelope of an error.
pub fn error_response(id: &Value, e: &RpcError) -> Value {
    let mut err = Map::with_capacity(2);
    err.insert("code".into(), e.code.into());
    err.insert("message".into(), e.message.clone().into());
    envelope(id, "error", Value::Object(err))
}

/// `{"jsonrpc": "2.0", "id": id, key: value}`, moving `value` in. (`json!` would serialize an
/// interpolated `Value` into a deep copy: a whole extra copy of every answer.)
fn envelope(id: &Value, key: &str, value: Value) -> Value {
    let mut m = Map::with_capacity(3);
    m.insert("jsonrpc".into(), Value::from("2.0"));
    m.insert("id".into(), id.clone());
    m.insert(key.into(), value);
    Value::Object(m)
}

/// The text of a panic payload.
pub fn panic_message(e: impl std::fmt::Debug) -> String {
    format!("internal error (a panic was contained and logged): {e:?}")
}

fn payload_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".into())
}

/// Per-connection protocol facts (for `:ClaudeContext status` and logs).
#[derive(Debug, Default, Clone)]
pub struct Peer {
    pub client_name: Option<String>,
    pub client_version: Option<String>,
    pub protocol_version: Option<String>,
    pub ide_connected_pid: Option<u64>,
}

/// What the connection learns from a message.
pub enum PeerEvent {
    Initialized {
        name: String,
        version: String,
        protocol: String,
    },
    IdeConnected {
        pid: Option<u64>,
    },
}

/// Handles one WebSocket text message; returns the reply text, if any, and what was learned.
pub async fn handle_text(shared: &Arc<Shared>, text: &str) -> (Option<String>, Vec<PeerEvent>) {
    let mut events = Vec::new();
    let v: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            let err = RpcError::new(ErrorCode::PARSE_ERROR, format!("Parse error: {e}"));
            return (Some(json_text(&error_response(&Value::Null, &err))), events);
        }
    };
    let reply = match v {
        Value::Array(items) if items.is_empty() => Some(error_response(
            &Value::Null,
            &RpcError::new(ErrorCode::INVALID_REQUEST, "Invalid Request: empty batch"),
        )),
        Value::Array(items) => {
            let futs = items.into_iter().map(|m| handle_value(shared, m));
            let results = futures_util::future::join_all(futs).await;
            let mut out = Vec::new();
            for (r, ev) in results {
                out.extend(r);
                events.extend(ev);
            }
            (!out.is_empty()).then_some(Value::Array(out))
        }
        v => {
            let (r, ev) = handle_value(shared, v).await;
            events.extend(ev);
            r
        }
    };
    (reply.map(|r| json_text(&r)), events)
}

/// The JSON text of `v`. `serde_json::to_string` writes straight into a byte buffer; `Display`
/// (`v.to_string()`) goes through `fmt::Write` fragment by fragment, about twice the work —
/// and every answer is rendered this way (its text content once more).
pub fn json_text(v: &Value) -> String {
    // Serializing a `Value` cannot fail (its keys are strings); fall back to Display anyway.
    serde_json::to_string(v).unwrap_or_else(|_| v.to_string())
}

fn valid_id(id: &Value) -> bool {
    matches!(id, Value::String(_) | Value::Number(_) | Value::Null)
}

/// Handles one JSON-RPC message (an element of a batch or a whole message).
pub async fn handle_value(shared: &Arc<Shared>, v: Value) -> (Option<Value>, Vec<PeerEvent>) {
    let mut events = Vec::new();
    let Value::Object(mut m) = v else {
        let e = RpcError::new(ErrorCode::INVALID_REQUEST, "Invalid Request: not an object");
        return (Some(error_response(&Value::Null, &e)), events);
    };
    let id = m.remove("id");
    let reply_id = id.clone().filter(valid_id).unwrap_or(Value::Null);
    if m.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        let e = RpcError::new(
            ErrorCode::INVALID_REQUEST,
            "Invalid Request: jsonrpc must be \"2.0\"",
        );
        return (Some(error_response(&reply_id, &e)), events);
    }
    if id.as_ref().is_some_and(|i| !valid_id(i)) {
        let e = RpcError::new(
            ErrorCode::INVALID_REQUEST,
            "Invalid Request: id must be a string, a number or null",
        );
        return (Some(error_response(&Value::Null, &e)), events);
    }
    let method = match m.remove("method") {
        Some(Value::String(s)) => s,
        None if m.contains_key("result") || m.contains_key("error") => {
            // A response to a request we never make: ignore.
            return (None, events);
        }
        _ => {
            let e = RpcError::new(
                ErrorCode::INVALID_REQUEST,
                "Invalid Request: method must be a string",
            );
            return (Some(error_response(&reply_id, &e)), events);
        }
    };
    let params = m.remove("params");
    let Some(id) = id else {
        notification(&method, params.as_ref(), &mut events);
        return (None, events);
    };
    let result = request(shared, &method, params, &mut events).await;
    let out = match result {
        Ok(r) => response(&id, r),
        Err(e) => error_response(&id, &e),
    };
    (Some(out), events)
}

fn notification(method: &str, params: Option<&Value>, events: &mut Vec<PeerEvent>) {
    match method {
        "ide_connected" => events.push(PeerEvent::IdeConnected {
            pid: params.and_then(|p| p.get("pid")).and_then(Value::as_u64),
        }),
        "notifications/initialized" | "notifications/cancelled" => {}
        other => tracing::debug!(method = other, "ignoring unknown notification"),
    }
}

fn params_object(params: Option<Value>) -> Result<Map<String, Value>, RpcError> {
    match params {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(o)) => Ok(o),
        Some(_) => Err(RpcError::new(
            ErrorCode::INVALID_PARAMS,
            "Invalid params: params must be an object",
        )),
    }
}

async fn request(
    shared: &Arc<Shared>,
    method: &str,
    params: Option<Value>,
    events: &mut Vec<PeerEvent>,
) -> Result<Value, RpcError> {
    match method {
        "initialize" => {
            let p = params_object(params)?;
            let asked = p
                .get("protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or("");
            let version = if SUPPORTED_VERSIONS.contains(&asked) {
                asked
            } else {
                SUPPORTED_VERSIONS[0]
            };
            let client = p.get("clientInfo");
            let field = |k| {
                client
                    .and_then(|c| c.get(k))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            events.push(PeerEvent::Initialized {
                name: field("name"),
                version: field("version"),
                protocol: version.to_string(),
            });
            Ok(initialize_result(version))
        }
        "ping" => Ok(json!({})),
        "tools/list" => {
            params_object(params)?;
            Ok(shared.catalog.list.clone())
        }
        "tools/call" => {
            let mut p = params_object(params)?;
            let name = match p.remove("name") {
                Some(Value::String(s)) => s,
                _ => {
                    return Err(RpcError::new(
                        ErrorCode::INVALID_PARAMS,
                        "Invalid params: tools/call needs a string 'name'",
                    ))
                }
            };
            let args = match p.remove("arguments") {
                None | Some(Value::Null) => Value::Object(Map::new()),
                Some(a @ Value::Object(_)) => a,
                Some(_) => {
                    return Err(RpcError::new(
                        ErrorCode::INVALID_PARAMS,
                        "Invalid params: 'arguments' must be an object",
                    ))
                }
            };
            call_tool(shared, &name, args).await
        }
        _ => Err(RpcError::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )),
    }
}

fn initialize_result(version: &str) -> Value {
    let mut caps = ServerCapabilities::default();
    caps.tools = Some(ToolsCapability::default());
    let r = InitializeResult::new(caps)
        .with_protocol_version(
            ProtocolVersion::KNOWN_VERSIONS
                .iter()
                .find(|v| v.as_str() == version)
                .cloned()
                .unwrap_or(ProtocolVersion::V_2025_11_25),
        )
        .with_server_info(Implementation::new("claude-context.nvim", crate::VERSION))
        .with_instructions(
            "Neovim bridge: workspace folders, project info and files inside the project root.",
        );
    serde_json::to_value(r).unwrap_or(Value::Null)
}

/// Runs a tool, containing panics; `InvalidParams` becomes -32602, failures `isError: true`.
pub async fn call_tool(shared: &Arc<Shared>, name: &str, args: Value) -> Result<Value, RpcError> {
    let Some(tool) = shared.catalog.get(name) else {
        return Err(RpcError::new(
            ErrorCode::INVALID_PARAMS,
            format!("Unknown tool: {name}"),
        ));
    };
    let fut = AssertUnwindSafe(async { (tool.run)(shared.clone(), args).await });
    let outcome = match AssertUnwindSafe(fut).catch_unwind().await {
        Ok(r) => r,
        Err(p) => {
            let msg = payload_text(p.as_ref());
            tracing::error!(tool = name, panic = %msg, "tool panicked");
            Err(ToolError::Failed(format!(
                "internal error in {name}: {msg} (the panic was contained; see :ClaudeContext log)"
            )))
        }
    };
    match outcome {
        Ok(out) => Ok(tool_result(out)),
        Err(ToolError::InvalidParams(m)) => Err(RpcError::new(ErrorCode::INVALID_PARAMS, m)),
        Err(ToolError::Failed(m)) => {
            Ok(
                serde_json::to_value(CallToolResult::error(vec![Content::text(m)]))
                    .unwrap_or(Value::Null),
            )
        }
    }
}

/// A success as MCP wants it: the JSON (or given text) as text content, plus
/// `structuredContent` when the value is an object.
///
/// This is exactly what rmcp's `CallToolResult::success` serializes to (a test holds the two
/// together), built by moving the values in: going through `serde_json::to_value` would copy the
/// text and the structured content once more on every call.
pub fn tool_result(out: ToolOutput) -> Value {
    let text = out.text.unwrap_or_else(|| json_text(&out.value));
    let mut block = Map::with_capacity(2);
    block.insert("type".into(), Value::from("text"));
    block.insert("text".into(), Value::String(text));
    let mut r = Map::with_capacity(3);
    r.insert("content".into(), Value::Array(vec![Value::Object(block)]));
    if out.value.is_object() {
        r.insert("structuredContent".into(), out.value);
    }
    r.insert("isError".into(), Value::Bool(false));
    Value::Object(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rmcp rendering `tool_result` replaces (kept here as the reference).
    fn rmcp_tool_result(out: ToolOutput) -> Value {
        let text = out.text.unwrap_or_else(|| out.value.to_string());
        let mut r = CallToolResult::success(vec![Content::text(text)]);
        if out.value.is_object() {
            r.structured_content = Some(out.value);
        }
        r.result_type = None;
        serde_json::to_value(r).unwrap()
    }

    #[test]
    fn tool_result_is_what_rmcp_serializes() {
        let cases = [
            ToolOutput::json(
                json!({"success": true, "folders": [{"name": "a b", "uri": "file:///a%20b"}]}),
            ),
            ToolOutput::json(json!(["not", "an", "object"])),
            ToolOutput::json(json!("just text")),
            ToolOutput {
                value: json!({"k": 1}),
                text: Some("custom text".into()),
            },
        ];
        for out in cases {
            let ours = tool_result(out.clone());
            let theirs = rmcp_tool_result(out);
            assert_eq!(ours, theirs);
            // Same bytes on the wire, key order included.
            assert_eq!(ours.to_string(), theirs.to_string());
        }
    }

    #[test]
    fn envelopes_keep_the_jsonrpc_shape() {
        let r = response(&json!(7), json!({"a": [1, 2]}));
        assert_eq!(
            r.to_string(),
            r#"{"jsonrpc":"2.0","id":7,"result":{"a":[1,2]}}"#
        );
        let e = error_response(
            &json!("x"),
            &RpcError::new(ErrorCode::METHOD_NOT_FOUND, "Method not found: nope"),
        );
        assert_eq!(
            e.to_string(),
            r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"Method not found: nope"}}"#
        );
        assert_eq!(
            e,
            json!({"jsonrpc": "2.0", "id": "x", "error": {"code": -32601, "message": "Method not found: nope"}})
        );
    }
}
