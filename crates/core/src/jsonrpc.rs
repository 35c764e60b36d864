//! JSON-RPC 2.0 wire helpers shared by every layer: the error object, JSON text, and the texts
//! of contained panics and of names a client sent. A leaf: it uses no other module of the crate.

use rmcp::model::ErrorCode;
use serde_json::{Map, Value};

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

/// The JSON-RPC envelope of a success. Every envelope the crate sends is made by one of
/// [`response`], [`error_response`], [`request`], [`notification`] (or written straight as text
/// by [`result_envelope`] and [`notification_text`]).
pub fn response(id: &Value, result: Value) -> Value {
    envelope(id, "result", result)
}

/// The JSON-RPC envelope of an error.
pub fn error_response(id: &Value, e: &RpcError) -> Value {
    let mut err = Map::with_capacity(3);
    err.insert("code".into(), e.code.into());
    err.insert("message".into(), e.message.clone().into());
    if let Some(d) = &e.data {
        err.insert("data".into(), d.clone());
    }
    envelope(id, "error", Value::Object(err))
}

/// The JSON-RPC envelope of request `id` of `method`.
pub fn request(id: &Value, method: &str, params: Value) -> Value {
    let mut m = envelope(id, "method", Value::from(method));
    if let Value::Object(m) = &mut m {
        m.insert("params".into(), params);
    }
    m
}

/// The JSON-RPC envelope of a notification of `method`.
pub fn notification(method: &str, params: Value) -> Value {
    let mut m = Map::with_capacity(3);
    m.insert("jsonrpc".into(), Value::from("2.0"));
    m.insert("method".into(), Value::from(method));
    m.insert("params".into(), params);
    Value::Object(m)
}

/// The text of a notification of `method` whose params are the JSON text `params` (already
/// encoded, not parsed again).
pub fn notification_text(method: &str, params: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":{},"params":{params}}}"#,
        json_text(&Value::from(method))
    )
}

/// `{"jsonrpc": "2.0", "id": id, key: value}`, moving `value` in. (`json!` would serialize an
/// interpolated `Value` into a deep copy: a whole extra copy of every answer.)
fn envelope(id: &Value, key: &str, value: Value) -> Value {
    let mut m = Map::with_capacity(4);
    m.insert("jsonrpc".into(), Value::from("2.0"));
    m.insert("id".into(), id.clone());
    m.insert(key.into(), value);
    Value::Object(m)
}

/// The JSON text of `v`. `serde_json::to_string` writes straight into a byte buffer; `Display`
/// (`v.to_string()`) goes through `fmt::Write` fragment by fragment, about twice the work —
/// and every answer is rendered this way (its text content once more).
pub fn json_text(v: &Value) -> String {
    // Serializing a `Value` cannot fail (its keys are strings); fall back to Display anyway.
    serde_json::to_string(v).unwrap_or_else(|_| v.to_string())
}

/// Answers at least this big are kept (their result's text) for [`reply_text`] to reuse.
const REUSE_MIN: usize = 64 * 1024;
/// Answers bigger than this are not kept (the memory held would outweigh a rare reuse).
const REUSE_MAX: usize = 1024 * 1024;

/// The text of a JSON-RPC response `{"jsonrpc", "id", "result"}` (any other value: its
/// [`json_text`]). A big result equal to the last big one, in the same order, reuses that one's
/// text instead of being written again: a model reads the same context (`read_context`, 340 KB
/// of JSON with its text content escaped inside) again and again, and writing it costs several
/// times more than comparing it. Only the `result` is reused; the envelope and the `id` are
/// written each time.
pub fn reply_text(r: Value) -> String {
    use std::sync::Mutex;
    static LAST: Mutex<Option<(Value, String)>> = Mutex::new(None);
    let mut m = match r {
        Value::Object(m) if is_result_envelope(&m) => m,
        other => return json_text(&other),
    };
    let id = m["id"].clone();
    let envelope = |result_text: &str| result_envelope(&id, result_text);
    let result = m.remove("result").unwrap_or(Value::Null);
    {
        let last = LAST.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((lv, text)) = last.as_ref() {
            if same_in_order(lv, &result) {
                return envelope(text);
            }
        }
    }
    let text = json_text(&result);
    let out = envelope(&text);
    if (REUSE_MIN..=REUSE_MAX).contains(&text.len()) {
        *LAST.lock().unwrap_or_else(|e| e.into_inner()) = Some((result, text));
    }
    out
}

/// `{"jsonrpc":"2.0","id":…,"result":…}` around a result's JSON text, in the order
/// serde_json writes a response's keys.
pub fn result_envelope(id: &Value, result: &str) -> String {
    use std::fmt::Write;
    const HEAD: &str = "{\"jsonrpc\":\"2.0\",\"id\":";
    const MID: &str = ",\"result\":";
    // (An id as a client sends one is short; one longer than this costs a reallocation.)
    let id_room = 24;
    let mut out = String::with_capacity(HEAD.len() + id_room + MID.len() + result.len() + 1);
    out.push_str(HEAD);
    // (`Value`'s Display is its compact JSON, written in place.)
    let _ = write!(out, "{id}");
    out.push_str(MID);
    out.push_str(result);
    out.push('}');
    out
}

/// A reply `{"jsonrpc":"2.0","id":…,"result":…}` with its keys in that order.
fn is_result_envelope(m: &serde_json::Map<String, Value>) -> bool {
    m.keys().map(String::as_str).eq(["jsonrpc", "id", "result"]) && m["jsonrpc"] == "2.0"
}

/// Equal values whose objects also list their keys in the same order (`==` on objects ignores
/// the order, the text does not).
pub fn same_in_order(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((ka, va), (kb, vb))| ka == kb && same_in_order(va, vb))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_in_order(p, q))
        }
        _ => a == b,
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The envelope is written once into room made for it: a reply's text was written,
    /// outgrew its buffer by one byte and was copied into a new one, on every call.
    #[test]
    fn result_envelope_is_written_into_its_room() {
        let result = r#"{"content":[{"type":"text","text":"x"}]}"#;
        for id in [json!(7), json!("request-17"), Value::Null] {
            let out = result_envelope(&id, result);
            assert_eq!(
                out,
                json_text(&response(id.clone(), serde_json::from_str(result).unwrap()))
            );
            assert!(
                out.capacity() - out.len() <= 24,
                "{id}: {} of {}",
                out.len(),
                out.capacity()
            );
        }
    }

    fn response(id: Value, result: Value) -> Value {
        let mut m = serde_json::Map::new();
        m.insert("jsonrpc".into(), "2.0".into());
        m.insert("id".into(), id);
        m.insert("result".into(), result);
        Value::Object(m)
    }

    /// A reused result gives exactly the bytes writing it would: the id of each call, a result
    /// that differs (even only in its keys' order) written anew, small answers as they are.
    #[test]
    fn reply_text_is_the_json_text_of_every_reply() {
        let big = "\"quoted\"\n日本語 \\ text ".repeat(8_000);
        let a = json!({"content": [{"type": "text", "text": big}], "structuredContent": {"a": big, "b": 1}, "isError": false});
        let mut swapped = serde_json::Map::new();
        swapped.insert("isError".into(), false.into());
        for (k, v) in a.as_object().unwrap() {
            if k != "isError" {
                swapped.insert(k.clone(), v.clone());
            }
        }
        let swapped = Value::Object(swapped);
        assert_eq!(a, swapped, "equal values, other key order");
        let mut changed = a.clone();
        changed["structuredContent"]["b"] = json!(2);
        let cases = [
            response(json!(1), a.clone()),
            response(json!("two"), a.clone()),
            response(json!(3), swapped.clone()),
            response(json!(4), a.clone()),
            response(json!(5), changed.clone()),
            response(json!(6), a.clone()),
            response(json!(7), json!({"small": true})),
            response(Value::Null, a.clone()),
            json!({"jsonrpc": "2.0", "id": 8, "error": {"code": 1, "message": "m"}}),
            json!([1, 2]),
        ];
        for r in cases {
            let want = json_text(&r);
            assert_eq!(reply_text(r.clone()), want, "{}", shorten(&want, 200));
        }
    }
}
