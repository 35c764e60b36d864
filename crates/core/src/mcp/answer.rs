//! What a request answers, and its reply's text on the wire.
//!
//! Most results are `Value`s that serde_json writes at the end. A tool's small success is
//! written straight to its JSON text instead ([`tool_answer`]): its structured content is the
//! very JSON its text block holds, so it is written once and copied, and neither the result's
//! maps nor the reply's envelope are built only to be written and dropped. These are the
//! answers Claude Code asks for most (the editor's state, from the snapshot), where building
//! and writing the JSON is most of what a call costs beyond the transport.

use crate::jsonrpc::{error_response, json_text, response, result_envelope, RpcError};
use crate::tools::ToolOutput;
use serde_json::{Map, Value};

/// A request's result.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Value(Value),
    /// The result's JSON text, already written.
    Json(String),
    /// The same, shared (kept by the tool for the snapshot it answers from).
    Shared(std::sync::Arc<str>),
}

impl From<Value> for Answer {
    fn from(v: Value) -> Self {
        Answer::Value(v)
    }
}

impl Answer {
    /// Whether it is a tool's failure (`isError: true`).
    pub fn is_tool_error(&self) -> bool {
        matches!(self, Answer::Value(v) if v.get("isError") == Some(&Value::Bool(true)))
    }
}

/// A success as MCP wants it: the JSON (or given text) as text content (then any further text
/// blocks), plus `structuredContent` when the value is an object.
///
/// This is exactly what rmcp's `CallToolResult::success` serializes to (a test holds the two
/// together), built by moving the values in: going through `serde_json::to_value` would copy the
/// text and the structured content once more on every call.
pub fn tool_result(out: ToolOutput) -> Value {
    if let Some(v) = out
        .rendered
        .as_deref()
        .and_then(|r| serde_json::from_str(r).ok())
    {
        // (What the tool kept is this output's result already.)
        return v;
    }
    let text_block = |text: String| {
        let mut block = Map::with_capacity(2);
        block.insert("type".into(), Value::from("text"));
        block.insert("text".into(), Value::String(text));
        Value::Object(block)
    };
    let text = out.text.unwrap_or_else(|| json_text(&out.value));
    let mut content = Vec::with_capacity(1 + out.extra_text.len());
    content.push(text_block(text));
    content.extend(out.extra_text.into_iter().map(text_block));
    let mut r = Map::with_capacity(3);
    r.insert("content".into(), Value::Array(content));
    if out.value.is_object() {
        r.insert("structuredContent".into(), out.value);
    }
    r.insert("isError".into(), Value::Bool(false));
    Value::Object(r)
}

/// A tool's JSON up to this many bytes is answered straight; a bigger one goes as a `Value`
/// through [`crate::jsonrpc::reply_text`], which reuses the text of a big answer asked again.
const STRAIGHT_MAX: usize = 64 * 1024;

/// A tool's success: the bytes [`tool_result`] would give once written; written straight
/// when the tool has them already or its output is the common shape and small (see
/// [`ToolOutput::result_json_of`]).
pub fn tool_answer(out: ToolOutput) -> Answer {
    if let Some(r) = out.rendered {
        return Answer::Shared(r);
    }
    if !out.straight() {
        return Answer::Value(tool_result(out));
    }
    let text = json_text(&out.value);
    if text.len() > STRAIGHT_MAX {
        // (The text is not written again.)
        return Answer::Value(tool_result(ToolOutput {
            text: Some(text),
            ..out
        }));
    }
    Answer::Json(ToolOutput::result_json_of(&text))
}

/// The reply to request `id`: `{"jsonrpc":"2.0","id":…,"result":…}` or its `error`.
pub fn reply(id: &Value, r: Result<Answer, RpcError>) -> String {
    match r {
        Ok(Answer::Json(result)) => result_envelope(id, &result),
        Ok(Answer::Shared(result)) => result_envelope(id, &result),
        Ok(Answer::Value(v)) => crate::jsonrpc::reply_text(response(id, v)),
        Err(e) => json_text(&error_response(id, &e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{CallToolResult, ContentBlock as Content};
    use serde_json::json;

    /// The rmcp rendering `tool_result` replaces (kept here as the reference).
    fn rmcp_tool_result(out: ToolOutput) -> Value {
        let text = out.text.unwrap_or_else(|| out.value.to_string());
        let mut content = vec![Content::text(text)];
        content.extend(out.extra_text.into_iter().map(Content::text));
        let mut r = CallToolResult::success(content);
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
                ..Default::default()
            },
            ToolOutput {
                value: json!("FILE_SAVED"),
                text: Some("FILE_SAVED".into()),
                extra_text: vec!["final contents\n".into(), "more".into()],
                ..Default::default()
            },
        ];
        for out in cases {
            let ours = tool_result(out.clone());
            let theirs = rmcp_tool_result(out);
            assert_eq!(ours, theirs);
            // Same bytes on the wire, key order included.
            assert_eq!(json_text(&ours), theirs.to_string());
        }
    }

    /// Written straight or not, a reply is the bytes serde_json writes for the `Value` reply.
    #[test]
    fn a_straight_answer_is_the_text_of_the_value_reply() {
        let quoted = "\"q\" \\ \n\t\u{1b}[201~ 日本語 \u{7f}";
        let big = "x".repeat(STRAIGHT_MAX + 1);
        let cases = [
            (
                ToolOutput::json(json!({"success": true, "folders": [{"name": quoted}]})),
                true,
            ),
            (ToolOutput::json(json!({})), true),
            (ToolOutput::json(json!({"big": big})), false),
            (ToolOutput::json(json!(["not", "an", "object"])), false),
            (ToolOutput::json(json!("just text")), false),
            (
                ToolOutput {
                    value: json!({"k": 1}),
                    text: Some("custom".into()),
                    ..Default::default()
                },
                false,
            ),
            (
                ToolOutput {
                    value: json!({"k": 1}),
                    extra_text: vec!["more".into()],
                    ..Default::default()
                },
                false,
            ),
        ];
        // A tool's kept rendering is copied as it is.
        let mut kept = ToolOutput::json(json!({"success": true}));
        let text = json_text(&kept.value);
        kept.rendered = Some(ToolOutput::result_json_of(&text).into());
        assert!(matches!(tool_answer(kept.clone()), Answer::Shared(_)));
        assert_eq!(
            reply(&json!(9), Ok(tool_answer(kept.clone()))),
            json_text(&response(&json!(9), tool_result(kept)))
        );
        for (out, straight) in cases {
            let want = json_text(&response(&json!(9), tool_result(out.clone())));
            let a = tool_answer(out);
            assert_eq!(matches!(a, Answer::Json(_)), straight, "{a:?}");
            assert_eq!(reply(&json!(9), Ok(a)), want);
        }
        let e = RpcError::new(rmcp::model::ErrorCode::INVALID_PARAMS, "bad");
        assert_eq!(
            reply(&json!("x"), Err(e.clone())),
            json_text(&error_response(&json!("x"), &e))
        );
    }
}
