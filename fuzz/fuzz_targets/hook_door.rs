//! The hook door's messages: a `/hook` request body (as `claude-context-mcp hook` sends it, or
//! anything a token holder writes), the hook tool's arguments on `/mcp` (`claudeContextHook`),
//! and the hook process's own reading of Claude Code's input. Each gets a well-formed answer,
//! never a panic; an event is taken only when its `cwd` (if any) resolves inside the editor's
//! root (the fixture's project), so no other folder is walked into the checkpoint store.
//!
//! The first byte picks the form; structured requests build their `cwd` from the fixture's
//! names (links in and out of the root, `..`, dangling ones).
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use claude_context_core::hook;
use claude_context_core::server::hooks::answer_request;
use claude_context_fuzz::{bridge, NAMES};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

/// Every hook event's name (`hook::Event::ALL`, the one list), and two that are none.
fn events() -> Vec<&'static str> {
    hook::Event::ALL
        .iter()
        .map(|e| e.as_str())
        .chain(["", "Other"])
        .collect()
}
const TOOLS: &[&str] = &[
    "Write",
    "Edit",
    "MultiEdit",
    "NotebookEdit",
    "Bash",
    "Read",
    "ExitPlanMode",
    "AskUserQuestion",
    "",
];

fn path(u: &mut Unstructured) -> arbitrary::Result<String> {
    let b = bridge();
    let n = u.int_in_range(0..=5)?;
    let mut parts = Vec::new();
    for _ in 0..n {
        parts.push(*u.choose(NAMES)?);
    }
    Ok(match u.int_in_range(0..=3)? {
        0 => format!("{}/{}", b.root.display(), parts.join("/")),
        1 => format!("{}/{}", b.base.display(), parts.join("/")),
        2 => format!("/{}", parts.join("/")),
        _ => String::arbitrary(u)?,
    })
}

fn field(u: &mut Unstructured, choices: &[&str]) -> arbitrary::Result<Value> {
    Ok(match u.int_in_range(0..=5)? {
        0 => Value::Null,
        1 => Value::from(u64::arbitrary(u)?),
        2 => Value::String(String::arbitrary(u)?),
        _ => Value::String(u.choose(choices)?.to_string()),
    })
}

/// A hook event's params (the door's form: `event`, `session_id`, …).
fn params(u: &mut Unstructured) -> arbitrary::Result<(Value, Option<String>)> {
    let cwd = if bool::arbitrary(u)? {
        Some(path(u)?)
    } else {
        None
    };
    let mut p = json!({
        "event": field(u, &events())?,
        "session_id": field(u, &["s", "t", ""])?,
        "tool_name": field(u, TOOLS)?,
        "file": path(u)?,
        "prompt": String::arbitrary(u)?,
    });
    if let Some(c) = &cwd {
        p["cwd"] = Value::String(c.clone());
    }
    if bool::arbitrary(u)? {
        p["review"] = json!({"kind": field(u, &["plan", "question"])?,
                             "plan": String::arbitrary(u)?});
    }
    Ok((p, cwd))
}

/// Whether `cwd` is a folder inside the fixture's root once its links are resolved.
fn inside_root(cwd: &str) -> bool {
    let b = bridge();
    std::fs::canonicalize(cwd).is_ok_and(|c| c.is_dir() && c.starts_with(&b.root))
}

fn check_answer(text: &str) -> Value {
    let v: Value = serde_json::from_str(text).expect("the answer is JSON");
    assert_eq!(v["jsonrpc"], "2.0", "{v}");
    assert!(v.get("id").is_some(), "{v}");
    assert!(v.get("result").is_some() != v.get("error").is_some(), "{v}");
    if let Some(code) = v["error"]["code"].as_i64() {
        assert_eq!(code, -32602, "{v}");
        assert!(v["error"]["message"].is_string(), "{v}");
    }
    v
}

fuzz_target!(|data: &[u8]| {
    let b = bridge();
    b.tidy();
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let mut u = Unstructured::new(rest);
    match mode % 4 {
        // Raw bytes as the door's request text.
        0 => {
            if let Ok(text) = std::str::from_utf8(rest) {
                check_answer(&answer_request(b.shared(), text));
            }
        }
        // A structured request: taken only with a known cwd (or none).
        1 => {
            let Ok((p, cwd)) = params(&mut u) else { return };
            let req = json!({"jsonrpc": "2.0", "id": 1, "method": hook::METHOD, "params": p});
            let text = req.to_string();
            let v = check_answer(&answer_request(b.shared(), &text));
            if v.get("result").is_some() {
                if let Some(c) = cwd {
                    assert!(inside_root(&c), "took an event naming {c:?}");
                }
            }
        }
        // The hook tool's arguments (as Claude Code's mcp_tool hook interpolates them).
        2 => {
            let Ok((p, cwd)) = params(&mut u) else { return };
            let mut args = p.clone();
            args["hook_event_name"] = p["event"].clone();
            args["file_path"] = p["file"].clone();
            if let Ok(mut ev) = hook::event_from_tool_args(&args) {
                let roots = b.shared().model_roots();
                if hook::admit_cwd(&mut ev, &roots).is_ok() {
                    if let Some(c) = cwd {
                        assert!(inside_root(&c), "took a tool call naming {c:?}");
                    }
                    if let Some(c) = &ev.cwd {
                        assert!(std::path::Path::new(c).starts_with(&b.root), "{c}");
                    }
                }
            }
        }
        // The hook process reading Claude Code's input from stdin.
        _ => {
            let event = u.choose(&events()).copied().unwrap_or("Stop");
            let input = u.take_rest();
            if let Ok(ev) = hook::event_from_input(event, input, Some("main".into())) {
                let _ = hook::review_from_input(&ev, input);
                let text = hook::request_text(&ev);
                check_answer(&answer_request(b.shared(), &text));
            }
        }
    }
});
