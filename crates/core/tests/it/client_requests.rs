//! Requests from the bridge to its clients: `register_options` asks the person to
//! narrow more than five options through MCP elicitation, `make_tripwire` asks the client's
//! model through MCP sampling — each only when the client declared the capability in
//! `initialize`, and falling back to what it does without when the client declines, errs, does
//! not answer in time, or goes away.

use crate::common;

use serde_json::{json, Value};

/// A connected client that declared `capabilities`, with an issue defined.
fn client(s: &common::TestServer, capabilities: Value) -> common::Raw {
    let mut c = s.client();
    let r = c.call(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": capabilities,
               "clientInfo": {"name": "test", "version": "1"}}),
    );
    assert!(r["result"].is_object(), "{r}");
    c.send_text(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .unwrap();
    let r = c.tool("define_issue", json!({"title": "どのDBにするか"}));
    assert_eq!(r["isError"], false, "{r}");
    c
}

const SIX: [&str; 6] = ["A", "B", "C", "D", "E", "F"];

fn send_register(c: &mut common::Raw, id: &str, options: &[&str]) {
    let m = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "register_options", "arguments": {"options": options}}});
    c.send_text(&m.to_string()).unwrap();
}

/// The next message, asserted to be a request of ours for `method`.
fn expect_request(c: &mut common::Raw, method: &str) -> Value {
    let m = c.recv_json();
    assert_eq!(m["method"], method, "{m}");
    let id = m["id"].as_str().expect("a string id");
    assert!(id.starts_with("cc-"), "our own id space: {m}");
    m
}

fn stored_options(c: &mut common::Raw) -> Vec<String> {
    let st = c.tool("get_current_status", json!({}));
    st["structuredContent"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["text"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn elicitation_accept_narrows_the_registered_options() {
    let s = common::start(json!({}));
    let mut c = client(&s, json!({"elicitation": {}}));
    send_register(&mut c, "reg", &SIX);
    let req = expect_request(&mut c, "elicitation/create");
    let schema = &req["params"]["requestedSchema"];
    assert_eq!(schema["type"], "object");
    let props = schema["properties"].as_object().unwrap();
    assert_eq!(props.len(), 6, "{schema}");
    // One flat boolean per option, titled with its text.
    for (i, name) in SIX.iter().enumerate() {
        let p = &props[&format!("option_{}", i + 1)];
        assert_eq!(p["type"], "boolean");
        assert_eq!(p["title"], *name);
    }
    assert!(req["params"]["message"].as_str().unwrap().contains("6"));
    // The person keeps A, C, E and F.
    let answer = json!({"jsonrpc": "2.0", "id": req["id"], "result": {"action": "accept",
        "content": {"option_1": true, "option_2": false, "option_3": true, "option_4": false,
                    "option_5": true, "option_6": true}}});
    c.send_text(&answer.to_string()).unwrap();
    let r = c.recv_json();
    assert_eq!(r["id"], "reg", "{r}");
    let out = &r["result"]["structuredContent"];
    assert_eq!(r["result"]["isError"], false, "{r}");
    let texts: Vec<&str> = out["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["A", "C", "E", "F"]);
    assert_eq!(out["elicitation"]["action"], "accept");
    assert_eq!(out["elicitation"]["offered"], 6);
    assert_eq!(out["elicitation"]["kept"], 4);
    assert_eq!(stored_options(&mut c), ["A", "C", "E", "F"]);
}

#[test]
fn elicitation_decline_or_a_client_error_keeps_all() {
    let s = common::start(json!({}));
    let mut c = client(&s, json!({"elicitation": {}}));
    send_register(&mut c, "reg", &SIX);
    let req = expect_request(&mut c, "elicitation/create");
    let answer = json!({"jsonrpc": "2.0", "id": req["id"], "result": {"action": "decline"}});
    c.send_text(&answer.to_string()).unwrap();
    let r = c.recv_json();
    let out = &r["result"]["structuredContent"];
    assert_eq!(out["options"].as_array().unwrap().len(), 6, "{r}");
    assert_eq!(out["elicitation"]["action"], "decline");
    assert!(out["elicitation"]["note"]
        .as_str()
        .unwrap()
        .contains("all options kept"));
    assert_eq!(stored_options(&mut c).len(), 6);
    // Fewer than 3 chosen: all kept, and said so.
    send_register(&mut c, "reg2", &SIX);
    let req = expect_request(&mut c, "elicitation/create");
    let answer = json!({"jsonrpc": "2.0", "id": req["id"], "result": {"action": "accept",
        "content": {"option_1": true, "option_2": false, "option_3": false, "option_4": false,
                    "option_5": false, "option_6": false}}});
    c.send_text(&answer.to_string()).unwrap();
    let r = c.recv_json();
    let out = &r["result"]["structuredContent"];
    assert_eq!(out["options"].as_array().unwrap().len(), 6, "{r}");
    assert!(out["elicitation"]["note"]
        .as_str()
        .unwrap()
        .contains("at least 3"));
    // The client answers with an error: all kept.
    send_register(&mut c, "reg3", &SIX);
    let req = expect_request(&mut c, "elicitation/create");
    let answer = json!({"jsonrpc": "2.0", "id": req["id"],
        "error": {"code": -32601, "message": "no"}});
    c.send_text(&answer.to_string()).unwrap();
    let r = c.recv_json();
    let out = &r["result"]["structuredContent"];
    assert_eq!(out["options"].as_array().unwrap().len(), 6, "{r}");
    assert_eq!(out["elicitation"]["action"], "error");
    c.assert_alive();
}

#[test]
fn without_the_capability_or_with_few_options_nobody_is_asked() {
    let s = common::start(json!({}));
    let mut c = client(&s, json!({}));
    // The next message is the tool's answer, not a request of ours.
    let r = c.tool("register_options", json!({"options": SIX}));
    assert_eq!(
        r["structuredContent"]["options"].as_array().unwrap().len(),
        6
    );
    assert_eq!(r["structuredContent"]["elicitation"], Value::Null);
    // A client that can be asked, with five options: not asked.
    let mut c = client(&s, json!({"elicitation": {}}));
    let r = c.tool("register_options", json!({"options": &SIX[..5]}));
    assert_eq!(
        r["structuredContent"]["options"].as_array().unwrap().len(),
        5
    );
    assert_eq!(r["structuredContent"]["elicitation"], Value::Null);
}

#[test]
fn a_client_that_never_answers_gets_the_answer_after_the_timeout() {
    let s = common::start(json!({"client_request_timeout_ms": 300}));
    let mut c = client(&s, json!({"elicitation": {}}));
    send_register(&mut c, "reg", &SIX);
    let req = expect_request(&mut c, "elicitation/create");
    // Not answered: the bridge cancels its request, then answers the tool call keeping all.
    let cancel = c.recv_json();
    assert_eq!(cancel["method"], "notifications/cancelled", "{cancel}");
    assert_eq!(cancel["params"]["requestId"], req["id"]);
    let r = c.recv_json();
    assert_eq!(r["id"], "reg", "{r}");
    let out = &r["result"]["structuredContent"];
    assert_eq!(out["options"].as_array().unwrap().len(), 6);
    assert_eq!(out["elicitation"]["action"], "timeout");
    // A late answer is ignored; the connection goes on.
    let late = json!({"jsonrpc": "2.0", "id": req["id"], "result": {"action": "accept"}});
    c.send_text(&late.to_string()).unwrap();
    c.assert_alive();
    assert_eq!(stored_options(&mut c).len(), 6);
}

#[test]
fn a_client_that_goes_away_leaves_nothing_waiting() {
    let s = common::start(json!({}));
    let mut c = client(&s, json!({"elicitation": {}}));
    send_register(&mut c, "reg", &SIX);
    expect_request(&mut c, "elicitation/create");
    drop(c);
    // The options were registered before the question; another client sees them, and the
    // server still serves.
    let mut d = s.client();
    assert_eq!(stored_options(&mut d).len(), 6);
}

fn tripwire_answer(ids: &[String]) -> String {
    let list: Vec<Value> = ids
        .iter()
        .map(|id| {
            json!({"optionId": id, "criteria": [{"description": "遅すぎる", "type": "performance",
                "threshold": "p99 > 200ms", "severity": "high"}]})
        })
        .collect();
    format!("```json\n{}\n```", Value::Array(list))
}

#[test]
fn make_tripwire_samples_the_clients_model_when_offered() {
    let s = common::start(json!({}));
    let mut c = client(&s, json!({"sampling": {}}));
    let r = c.tool("register_options", json!({"options": ["A", "B", "C"]}));
    let ids: Vec<String> = r["structuredContent"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap().to_string())
        .collect();
    let m = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "make-tripwire", "arguments": {}}});
    c.send_text(&m.to_string()).unwrap();
    let req = expect_request(&mut c, "sampling/createMessage");
    let text = req["params"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    for id in &ids {
        assert!(
            text.contains(id.as_str()),
            "the options are in the prompt: {text}"
        );
    }
    assert!(req["params"]["maxTokens"].as_u64().unwrap() > 0);
    let answer = json!({"jsonrpc": "2.0", "id": req["id"], "result": {"role": "assistant",
        "model": "stub", "content": {"type": "text", "text": tripwire_answer(&ids)}}});
    c.send_text(&answer.to_string()).unwrap();
    let r = c.recv_json();
    assert_eq!(r["id"], 9, "{r}");
    let out = &r["result"]["structuredContent"];
    assert_eq!(out["status"], "recorded", "{r}");
    assert_eq!(out["stored"], true);
    assert_eq!(out["metadata"]["totalCriteria"], 3);
    assert!(out["metadata"]["note"]
        .as_str()
        .unwrap()
        .contains("sampling"));
    assert_eq!(out["tripwires"][1]["optionId"], ids[1].as_str());
    assert_eq!(
        out["tripwires"][1]["criteria"][0]["threshold"],
        "p99 > 200ms"
    );
    let st = c.tool("get_current_status", json!({}));
    assert_eq!(
        st["structuredContent"]["tripwires"]
            .as_array()
            .map(Vec::len),
        Some(3),
        "{st}"
    );

    // An answer without usable JSON: the two-step request, saying why.
    c.send_text(&m.to_string()).unwrap();
    let req = expect_request(&mut c, "sampling/createMessage");
    let answer = json!({"jsonrpc": "2.0", "id": req["id"], "result": {"role": "assistant",
        "model": "stub", "content": {"type": "text", "text": "I cannot."}}});
    c.send_text(&answer.to_string()).unwrap();
    let r = c.recv_json();
    let out = &r["result"]["structuredContent"];
    assert_eq!(out["status"], "needs_criteria", "{r}");
    assert!(out["metadata"]["note"]
        .as_str()
        .unwrap()
        .contains("sampling failed"));
    assert!(out["request"]["answerWith"].is_object());
}

#[test]
fn make_tripwire_without_sampling_keeps_the_two_step_request() {
    let s = common::start(json!({}));
    let mut c = client(&s, json!({"elicitation": {}}));
    c.tool("register_options", json!({"options": ["A", "B", "C"]}));
    // The next message is the answer: no request of ours.
    let r = c.tool("make_tripwire", json!({}));
    let out = &r["structuredContent"];
    assert_eq!(out["status"], "needs_criteria", "{r}");
    assert_eq!(out["request"]["answerWith"]["tool"], "make_tripwire");
    assert!(out["metadata"]["note"]
        .as_str()
        .unwrap()
        .contains("no MCP sampling"));
}
