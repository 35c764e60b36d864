//! JSON-RPC 2.0 wire helpers shared by every layer: the error object, JSON text, and the texts
//! of contained panics and of names a client sent. A leaf: it uses no other module of the crate.

use rmcp::model::ErrorCode;
use serde_json::Value;

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i32,
    pub message: String,
    /// The error's `data` member, when it has one.
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        RpcError {
            code: code.0,
            message: message.into(),
            data: None,
        }
    }

    /// The same error with a `data` member.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
}

/// The JSON text of `v`. `serde_json::to_string` writes straight into a byte buffer; `Display`
/// (`v.to_string()`) goes through `fmt::Write` fragment by fragment, about twice the work —
/// and every answer is rendered this way (its text content once more).
pub fn json_text(v: &Value) -> String {
    // Serializing a `Value` cannot fail (its keys are strings); fall back to Display anyway.
    serde_json::to_string(v).unwrap_or_else(|_| v.to_string())
}

/// The text of a panic payload.
pub fn panic_message(e: impl std::fmt::Debug) -> String {
    format!("internal error (a panic was contained and logged): {e:?}")
}

/// The text of a caught panic's payload.
pub fn payload_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".into())
}

/// `s` cut to at most `max` bytes (on a character boundary) with `…` when cut: names a client
/// sent are echoed in errors and logs, and a 64 MiB method name must not come back in full.
pub fn shorten(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if s.len() <= max {
        return s.into();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end]).into()
}
