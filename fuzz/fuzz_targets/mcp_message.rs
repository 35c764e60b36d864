//! The JSON-RPC / MCP layer as a connection feeds it, through both doors (the IDE connection and
//! `/mcp`): any text message gets a well-formed answer (or none, for notifications and
//! responses), never a panic — not even a contained one; and `/mcp` never lists the IDE's diff
//! plumbing.
#![no_main]

use claude_context_core::mcp::catalog::Surface;
use claude_context_core::mcp::{handle_text_in, Inflight};
use claude_context_core::tools::door::DoorRule;
use claude_context_fuzz::{assert_no_contained_panic, bridge};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return; // the WebSocket layer refuses non-UTF-8 text with 1007
    };
    for surface in [Surface::Ide, Surface::Mcp] {
        one(text, surface);
    }
});

fn one(text: &str, surface: Surface) {
    let b = bridge();
    b.tidy();
    let (reply, _events) =
        b.runtime
            .block_on(handle_text_in(b.shared(), text, &Inflight::new(surface)));
    let Some(reply) = reply else {
        return;
    };
    assert_no_contained_panic(&reply);
    let v: Value = serde_json::from_str(&reply).expect("the answer is JSON");
    let check = |r: &Value| {
        assert_eq!(r["jsonrpc"], "2.0", "{r}");
        assert!(r.get("id").is_some(), "{r}");
        assert!(r.get("result").is_some() != r.get("error").is_some(), "{r}");
        if let Some(code) = r["error"]["code"].as_i64() {
            assert!(
                [-32700, -32600, -32601, -32602, -32603].contains(&code),
                "unexpected code {code}"
            );
        }
    };
    let plumbing_hidden = |r: &Value| {
        if surface == Surface::Mcp {
            // The tools whose catalog entry keeps them to the IDE door.
            let ide_only: Vec<&str> = claude_context_core::tools::registry()
                .iter()
                .filter(|e| e.door == DoorRule::IdeOnly)
                .map(|e| e.name)
                .collect();
            for t in r["result"]["tools"].as_array().into_iter().flatten() {
                let name = t["name"].as_str().unwrap_or("");
                assert!(!ide_only.contains(&name), "{name} listed at /mcp");
            }
        }
    };
    match &v {
        Value::Array(items) => {
            assert!(!items.is_empty());
            items.iter().for_each(check);
            items.iter().for_each(plumbing_hidden);
        }
        other => {
            check(other);
            plumbing_hidden(other);
        }
    }
    // A single request with a usable id gets that id back.
    if let Ok(Value::Object(req)) = serde_json::from_str::<Value>(text) {
        if let Some(id @ (Value::String(_) | Value::Number(_))) = req.get("id") {
            if req.get("jsonrpc") == Some(&Value::from("2.0")) && req.get("method").is_some() {
                assert_eq!(&v["id"], id);
            }
        }
    }
}
