//! JSON-RPC 2.0 edge cases over a real connection: batches, wrong `jsonrpc`, odd ids, absent or
//! mistyped params, 100,000-level nesting, huge numbers, NUL bytes. Each gets the error the spec
//! prescribes (or no answer, for notifications and responses) and the connection goes on.

use crate::common;

use common::Raw;
use serde_json::{json, Value};

const PARSE: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;

/// Sends `text`, then a `ping` sentinel; returns what arrived for `text` (`None` if nothing did).
/// Answers may come in any order (each message is handled on its own task).
fn exchange(c: &mut Raw, n: usize, text: &str, expect_reply: bool) -> Option<Value> {
    c.send_text(text).expect("send");
    let sentinel = format!("sentinel-{n}");
    c.send_text(&json!({"jsonrpc": "2.0", "id": sentinel, "method": "ping"}).to_string())
        .expect("send");
    let (mut got, mut seen) = (None, false);
    while !(seen && (got.is_some() || !expect_reply)) {
        let v = c.recv_json();
        if v.get("id") == Some(&json!(sentinel)) {
            assert_eq!(v["result"], json!({}));
            seen = true;
        } else {
            assert!(got.is_none(), "two answers to one message: {got:?} and {v}");
            got = Some(v);
        }
    }
    got
}

fn err_code(v: &Value) -> i64 {
    v["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {v}"))
}

fn nested(depth: usize, open: char, close: char) -> String {
    let mut s = String::with_capacity(depth * 2);
    s.extend(std::iter::repeat_n(open, depth));
    s.extend(std::iter::repeat_n(close, depth));
    s
}

#[test]
fn malformed_and_odd_messages_get_the_right_error_and_the_connection_goes_on() {
    let srv = common::start(json!({}));
    let mut c = srv.client();
    // (message, expected code or None for success, expected id of the answer)
    let deep_array = nested(100_000, '[', ']');
    let deep_object = format!("{}{}", "{\"a\":".repeat(100_000), "}".repeat(100_000));
    let deep_params = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"x":{}}}}}"#,
        nested(100_000, '[', ']')
    );
    let cases: Vec<(String, Option<i64>, Value)> = vec![
        // Not JSON at all.
        ("".into(), Some(PARSE), Value::Null),
        ("   ".into(), Some(PARSE), Value::Null),
        ("{".into(), Some(PARSE), Value::Null),
        (r#"{"jsonrpc":"2.0","id":1,"method":"ping""#.into(), Some(PARSE), Value::Null),
        ("\u{0}".into(), Some(PARSE), Value::Null),
        ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi\u{0}ng\"}".into(), Some(PARSE), Value::Null),
        (deep_array, Some(PARSE), Value::Null),
        (deep_object, Some(PARSE), Value::Null),
        (deep_params, Some(PARSE), Value::Null),
        (r#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#.into(), Some(PARSE), Value::Null),
        (r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"n":-1e999}}"#.into(), Some(PARSE), Value::Null),
        // JSON, but not a request object.
        ("null".into(), Some(INVALID_REQUEST), Value::Null),
        ("42".into(), Some(INVALID_REQUEST), Value::Null),
        (r#""ping""#.into(), Some(INVALID_REQUEST), Value::Null),
        ("true".into(), Some(INVALID_REQUEST), Value::Null),
        ("{}".into(), Some(INVALID_REQUEST), Value::Null),
        // Wrong or missing jsonrpc.
        (r#"{"id":1,"method":"ping"}"#.into(), Some(INVALID_REQUEST), json!(1)),
        (r#"{"jsonrpc":"1.0","id":2,"method":"ping"}"#.into(), Some(INVALID_REQUEST), json!(2)),
        (r#"{"jsonrpc":2.0,"id":3,"method":"ping"}"#.into(), Some(INVALID_REQUEST), json!(3)),
        (r#"{"jsonrpc":null,"id":4,"method":"ping"}"#.into(), Some(INVALID_REQUEST), json!(4)),
        (r#"{"jsonrpc":"2.0 ","id":5,"method":"ping"}"#.into(), Some(INVALID_REQUEST), json!(5)),
        // Odd ids: objects, arrays and booleans are not ids.
        (r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#.into(), Some(INVALID_REQUEST), Value::Null),
        (r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#.into(), Some(INVALID_REQUEST), Value::Null),
        (r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#.into(), Some(INVALID_REQUEST), Value::Null),
        (r#"{"jsonrpc":"2.0","id":false,"method":"ping"}"#.into(), Some(INVALID_REQUEST), Value::Null),
        // … numbers and strings are, whatever they look like.
        (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#.into(), None, json!(1.5)),
        (r#"{"jsonrpc":"2.0","id":-0.25e-3,"method":"ping"}"#.into(), None, json!(-0.00025)),
        (r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#.into(), None, json!(u64::MAX)),
        (r#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"}"#.into(), None, json!(i64::MIN)),
        (r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}"#.into(), None, json!(1.2345678901234568e29)),
        (r#"{"jsonrpc":"2.0","id":"","method":"ping"}"#.into(), None, json!("")),
        (r#"{"jsonrpc":"2.0","id":"\u0000nul\u0000","method":"ping"}"#.into(), None, json!("\u{0}nul\u{0}")),
        (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.into(), None, Value::Null),
        (format!(r#"{{"jsonrpc":"2.0","id":"{}","method":"ping"}}"#, "i".repeat(100_000)), None, json!("i".repeat(100_000))),
        // Method problems.
        (r#"{"jsonrpc":"2.0","id":6}"#.into(), Some(INVALID_REQUEST), json!(6)),
        (r#"{"jsonrpc":"2.0","id":7,"method":7}"#.into(), Some(INVALID_REQUEST), json!(7)),
        (r#"{"jsonrpc":"2.0","id":8,"method":null}"#.into(), Some(INVALID_REQUEST), json!(8)),
        (r#"{"jsonrpc":"2.0","id":9,"method":"nope"}"#.into(), Some(NOT_FOUND), json!(9)),
        (r#"{"jsonrpc":"2.0","id":10,"method":"pi\u0000ng"}"#.into(), Some(NOT_FOUND), json!(10)),
        (r#"{"jsonrpc":"2.0","id":11,"method":""}"#.into(), Some(NOT_FOUND), json!(11)),
        // Params: absent is fine where nothing is needed; the wrong type is -32602.
        (r#"{"jsonrpc":"2.0","id":12,"method":"tools/list"}"#.into(), None, json!(12)),
        (r#"{"jsonrpc":"2.0","id":13,"method":"tools/list","params":null}"#.into(), None, json!(13)),
        (r#"{"jsonrpc":"2.0","id":14,"method":"tools/list","params":[]}"#.into(), Some(INVALID_PARAMS), json!(14)),
        (r#"{"jsonrpc":"2.0","id":15,"method":"initialize","params":"x"}"#.into(), Some(INVALID_PARAMS), json!(15)),
        (r#"{"jsonrpc":"2.0","id":16,"method":"initialize","params":{"protocolVersion":7,"clientInfo":[]}}"#.into(), None, json!(16)),
        (r#"{"jsonrpc":"2.0","id":17,"method":"tools/call"}"#.into(), Some(INVALID_PARAMS), json!(17)),
        (r#"{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{}}"#.into(), Some(INVALID_PARAMS), json!(18)),
        (r#"{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":5}}"#.into(), Some(INVALID_PARAMS), json!(19)),
        (r#"{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"nope"}}"#.into(), Some(INVALID_PARAMS), json!(20)),
        (r#"{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"fs-read-file","arguments":[]}}"#.into(), Some(INVALID_PARAMS), json!(21)),
        (r#"{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"fs-read-file","arguments":{}}}"#.into(), Some(INVALID_PARAMS), json!(22)),
        (r#"{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"fs-read-file","arguments":{"path":5}}}"#.into(), Some(INVALID_PARAMS), json!(23)),
        (r#"{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{"name":"fs-read-file","arguments":{"path":"README.md","bogus":1}}}"#.into(), Some(INVALID_PARAMS), json!(24)),
        (r#"{"jsonrpc":"2.0","id":25,"method":"tools/call","params":{"name":"fs-read-file","arguments":{"path":"README.md","limit":-1}}}"#.into(), Some(INVALID_PARAMS), json!(25)),
        (r#"{"jsonrpc":"2.0","id":26,"method":"tools/call","params":{"name":"fs-read-file","arguments":{"path":"README.md","offset":18446744073709551616}}}"#.into(), Some(INVALID_PARAMS), json!(26)),
        (r#"{"jsonrpc":"2.0","id":27,"method":"tools/call","params":{"name":"fs-read-file","arguments":{"path":"README.md","offset":1.5}}}"#.into(), Some(INVALID_PARAMS), json!(27)),
        (r#"{"jsonrpc":"2.0","id":28,"method":"tools/call","params":{"name":"fs-get-project-info","arguments":{"stats":"yes"}}}"#.into(), Some(INVALID_PARAMS), json!(28)),
        (r#"{"jsonrpc":"2.0","id":29,"method":"tools/call","params":{"name":"getWorkspaceFolders","arguments":{"x":1}}}"#.into(), Some(INVALID_PARAMS), json!(29)),
        // Huge but valid numbers in arguments.
        (r#"{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"fs-read-file","arguments":{"path":"README.md","offset":18446744073709551615,"limit":18446744073709551615}}}"#.into(), None, json!(30)),
        (r#"{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"fs-read-file","arguments":{"path":"README.md","offset":0,"limit":1e300}}}"#.into(), Some(INVALID_PARAMS), json!(31)),
        // NUL bytes inside argument strings are refused by the tool, not by the transport.
        (r#"{"jsonrpc":"2.0","id":32,"method":"tools/call","params":{"name":"fs-read-file","arguments":{"path":"README.md\u0000/etc/passwd"}}}"#.into(), None, json!(32)),
        (r#"{"jsonrpc":"2.0","id":33,"method":"tools/call","params":{"name":"fs-write-file","arguments":{"path":"a\u0000b","content":"x"}}}"#.into(), None, json!(33)),
    ];
    for (n, (text, code, id)) in cases.into_iter().enumerate() {
        let shown: String = text.chars().take(120).collect();
        let r = exchange(&mut c, n, &text, true).unwrap_or_else(|| panic!("no answer to {shown}"));
        assert_eq!(r["jsonrpc"], "2.0", "{shown}: {r}");
        assert_eq!(r["id"], id, "{shown}: {r}");
        match code {
            Some(code) => {
                assert_eq!(err_code(&r), code, "{shown}: {r}");
                assert!(r.get("result").is_none(), "{shown}: {r}");
                assert!(r["error"]["message"]
                    .as_str()
                    .is_some_and(|m| !m.is_empty()));
            }
            None => assert!(r.get("result").is_some(), "{shown}: {r}"),
        }
    }
    // Tool-level refusals are results with isError, naming what was wrong.
    let r = c.call(
        "tools/call",
        json!({"name": "fs-read-file", "arguments": {"path": "README.md\u{0}x"}}),
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(r.to_string().contains("NUL"), "{r}");
    assert!(!srv.root.join("a").exists());
    c.assert_alive();
}

#[test]
fn notifications_and_responses_get_no_answer() {
    let srv = common::start(json!({}));
    let mut c = srv.client();
    let silent = [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        r#"{"jsonrpc":"2.0","method":"ide_connected","params":{"pid":"not a number"}}"#,
        r#"{"jsonrpc":"2.0","method":"ide_connected","params":[]}"#,
        r#"{"jsonrpc":"2.0","method":"ide_connected"}"#,
        r#"{"jsonrpc":"2.0","method":"some/unknown/notification","params":{"a":[1,2,3]}}"#,
        r#"{"jsonrpc":"2.0","method":"tools/list","params":"mistyped"}"#,
        r#"{"jsonrpc":"2.0","id":99,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":99,"error":{"code":-32000,"message":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":null,"result":null}"#,
        r#"[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","method":"x"}]"#,
        r#"[{"jsonrpc":"2.0","id":5,"result":1}]"#,
    ];
    for (n, text) in silent.iter().enumerate() {
        assert_eq!(exchange(&mut c, n, text, false), None, "{text}");
    }
    c.assert_alive();
}

#[test]
fn batches_answer_every_request_and_no_notification() {
    let srv = common::start(json!({}));
    let mut c = srv.client();

    // An empty batch is one Invalid Request error (not an array).
    let r = exchange(&mut c, 0, "[]", true).unwrap();
    assert!(r.is_object(), "{r}");
    assert_eq!(
        (err_code(&r), r["id"].clone()),
        (INVALID_REQUEST, Value::Null)
    );

    // A batch of invalid entries: one error each, in an array.
    let r = exchange(
        &mut c,
        1,
        r#"[1, "x", null, [], {}, [{"jsonrpc":"2.0","id":1,"method":"ping"}]]"#,
        true,
    )
    .unwrap();
    let arr = r.as_array().unwrap_or_else(|| panic!("not an array: {r}"));
    assert_eq!(arr.len(), 6, "{r}");
    for e in arr {
        assert_eq!(
            (err_code(e), e["id"].clone()),
            (INVALID_REQUEST, Value::Null),
            "{e}"
        );
    }

    // Mixed: requests (good and bad), notifications, a response. Answers match ids.
    let batch = json!([
        {"jsonrpc": "2.0", "id": "a", "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "b", "method": "tools/call",
         "params": {"name": "fs-read-file", "arguments": {"path": "README.md"}}},
        {"jsonrpc": "2.0", "id": "c", "method": "no/such/method"},
        {"jsonrpc": "2.0", "method": "ide_connected", "params": {"pid": 4242}},
        {"jsonrpc": "1.0", "id": "d", "method": "ping"},
        {"jsonrpc": "2.0", "id": "e", "method": "tools/call",
         "params": {"name": "fs-read-file", "arguments": {"path": "../outside"}}},
        {"jsonrpc": "2.0", "id": 77, "result": {}},
        {"jsonrpc": "2.0", "id": "f", "method": "tools/call", "params": {"name": "getWorkspaceFolders"}},
        7
    ]);
    let r = exchange(&mut c, 2, &batch.to_string(), true).unwrap();
    let arr = r.as_array().unwrap_or_else(|| panic!("not an array: {r}"));
    let by_id = |id: Value| -> Value {
        arr.iter()
            .find(|e| e["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no answer for {id} in {r}"))
    };
    assert_eq!(
        arr.len(),
        7,
        "5 requests + 1 bad request + 1 non-object: {r}"
    );
    assert_eq!(by_id(json!("a"))["result"], json!({}));
    assert_eq!(
        by_id(json!("b"))["result"]["structuredContent"]["content"],
        "# test project\n"
    );
    assert_eq!(err_code(&by_id(json!("c"))), NOT_FOUND);
    assert_eq!(err_code(&by_id(json!("d"))), INVALID_REQUEST);
    let e = by_id(json!("e"));
    assert_eq!(e["result"]["isError"], true, "{e}");
    assert!(e.to_string().contains("outside the project root"), "{e}");
    assert!(by_id(json!("f"))["result"]["structuredContent"].is_object());
    assert_eq!(arr.iter().filter(|e| e["id"].is_null()).count(), 1, "{r}");
    // The ide_connected notification inside the batch was applied.
    let st = srv.server.shared().status();
    assert_eq!(st.clients[0].ide_connected_pid, Some(4242));

    // A large batch of pings: every id comes back exactly once.
    let n = 2000;
    let batch: Vec<Value> = (0..n)
        .map(|i| json!({"jsonrpc": "2.0", "id": i, "method": "ping"}))
        .collect();
    let r = exchange(&mut c, 3, &Value::Array(batch).to_string(), true).unwrap();
    let mut ids: Vec<i64> = r
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_i64().unwrap())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..n).collect::<Vec<_>>());
    c.assert_alive();
}

#[test]
fn a_huge_method_name_is_not_echoed_back_in_full() {
    let srv = common::start(json!({}));
    let mut c = srv.client();
    let method = "m".repeat(1 << 20);
    let text = json!({"jsonrpc": "2.0", "id": 1, "method": method}).to_string();
    let r = exchange(&mut c, 0, &text, true).unwrap();
    assert_eq!(err_code(&r), NOT_FOUND);
    let msg = r["error"]["message"].as_str().unwrap();
    assert!(msg.starts_with("Method not found: mmm"), "{msg:.200}");
    assert!(msg.len() < 1024, "the error echoes {} bytes", msg.len());
}

#[test]
fn a_batch_whose_answers_would_exceed_the_message_limit_gets_one_error() {
    let srv = common::start(json!({"max_message_size": 4096}));
    let mut c = srv.client();
    // Ten tools/list requests fit in 4 KiB but their answers (the tool catalogue) do not.
    let batch: Vec<Value> = (0..10)
        .map(|i| json!({"jsonrpc": "2.0", "id": i, "method": "tools/list"}))
        .collect();
    let text = Value::Array(batch).to_string();
    assert!(text.len() <= 4096);
    let r = exchange(&mut c, 0, &text, true).unwrap();
    assert!(r.is_object(), "one error, not an array: {r:.300}");
    assert_eq!(
        (err_code(&r), r["id"].clone()),
        (INVALID_REQUEST, Value::Null)
    );
    assert!(r["error"]["message"]
        .as_str()
        .unwrap()
        .contains("fewer requests per batch"));
    // A batch whose answers fit is answered in full.
    let batch: Vec<Value> = (0..10)
        .map(|i| json!({"jsonrpc": "2.0", "id": i, "method": "ping"}))
        .collect();
    let r = exchange(&mut c, 1, &Value::Array(batch).to_string(), true).unwrap();
    assert_eq!(r.as_array().map(Vec::len), Some(10), "{r}");
}

#[test]
fn large_messages_are_parsed_and_answered() {
    // Messages over 1 MiB are parsed off the runtime's workers; the answer is the same.
    let srv = common::start(json!({}));
    let mut c = srv.client();
    let id = "k".repeat(3 << 20);
    let text = json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string();
    let r = exchange(&mut c, 0, &text, true).unwrap();
    assert_eq!(r["id"].as_str().map(str::len), Some(3 << 20));
    assert_eq!(r["result"], json!({}));
    let bad = format!("{text}x");
    let r = exchange(&mut c, 1, &bad, true).unwrap();
    assert_eq!(err_code(&r), PARSE);
}
