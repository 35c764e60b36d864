//! The CLI's answer: `claude -p --output-format json` prints one JSON object with `result`,
//! `session_id`, `is_error`, `total_cost_usd`, `usage` and `duration_ms`. With `--verbose` it
//! prints an array of messages instead; the last `{"type": "result"}` element is the answer.

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct Reply {
    pub result: Option<String>,
    pub session_id: Option<String>,
    pub is_error: bool,
    pub subtype: Option<String>,
    pub total_cost_usd: Option<f64>,
    pub usage: Option<Usage>,
    pub duration_ms: Option<u64>,
    pub num_turns: Option<u64>,
}

/// Parses the CLI's stdout. `None` when nothing in it is the expected JSON object.
pub fn parse(stdout: &[u8]) -> Option<Reply> {
    let text = String::from_utf8_lossy(stdout);
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return from_value(v);
    }
    // Something printed before the JSON (a warning on stdout): the last line that parses wins.
    text.lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .find_map(from_value)
}

fn from_value(v: Value) -> Option<Reply> {
    match v {
        Value::Object(ref o) if o.contains_key("result") || o.contains_key("session_id") => {
            serde_json::from_value(v).ok()
        }
        Value::Array(items) => items
            .into_iter()
            .rev()
            .find(|m| m.get("type").and_then(Value::as_str) == Some("result"))
            .and_then(|m| serde_json::from_value(m).ok()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_json_object_and_the_verbose_array() {
        let r = parse(
            br#"{"type":"result","subtype":"success","is_error":false,"duration_ms":12,
                "result":"4","session_id":"abc-1","total_cost_usd":0.5,
                "usage":{"input_tokens":10,"output_tokens":2}}"#,
        )
        .unwrap();
        assert_eq!(r.result.as_deref(), Some("4"));
        assert_eq!(r.session_id.as_deref(), Some("abc-1"));
        assert_eq!(r.usage.unwrap().input_tokens, 10);
        assert_eq!(r.duration_ms, Some(12));
        let r = parse(
            br#"[{"type":"system"},{"type":"result","result":"x","session_id":"s2","is_error":true}]"#,
        )
        .unwrap();
        assert_eq!((r.result.as_deref(), r.is_error), (Some("x"), true));
        let r = parse(b"warning: something\n{\"result\":\"ok\",\"session_id\":\"s\"}\n").unwrap();
        assert_eq!(r.result.as_deref(), Some("ok"));
    }

    #[test]
    fn garbage_is_none() {
        assert_eq!(parse(b""), None);
        assert_eq!(parse(b"hello world"), None);
        assert_eq!(parse(b"[1,2]"), None);
        assert_eq!(parse(br#"{"other": 1}"#), None);
        assert_eq!(parse(br#"{"result": 5}"#), None);
    }
}
