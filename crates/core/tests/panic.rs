//! Panic containment (needs `--features test-tools`, which adds the `test_panic` tool and the
//! `test/panic` method): a panic in a tool — on a runtime worker or on the blocking pool — or in
//! dispatch becomes an error answer and a log entry, a panic in a connection's own task ends
//! that connection only, and the server keeps serving.
#![cfg(feature = "test-tools")]

mod common;

use serde_json::{json, Value};

fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[test]
fn panics_become_error_answers_and_log_entries_and_the_server_keeps_serving() {
    let log_dir = tempfile::tempdir().unwrap();
    let log = log_dir.path().join("claude-context.log");
    claude_context_core::logging::init(Some(log.clone()), "info").unwrap();
    let srv = common::start(json!({}));
    let mut c = srv.client();
    let mut other = srv.client();
    let tools = c.call("tools/list", json!({}));
    assert!(tools.to_string().contains("\"test_panic\""), "{tools}");

    // On a runtime worker.
    let r = c.tool("test_panic", json!({}));
    assert_eq!(r["isError"], true, "{r}");
    let t = text_of(&r);
    assert!(
        t.contains("test_panic: deliberate panic") && t.contains("contained"),
        "{t}"
    );

    // On the blocking pool.
    let r = c.tool("test_panic", json!({"blocking": true}));
    assert_eq!(r["isError"], true, "{r}");
    let t = text_of(&r);
    assert!(
        t.contains("deliberate panic on the blocking pool") && t.contains("contained"),
        "{t}"
    );

    // The main-thread variant needs an editor: without one it is an ordinary tool error (the
    // Neovim-level proof is tests/nvim/panic_spec.lua).
    let r = c.tool("test_panic", json!({"main_thread": true}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(text_of(&r).contains("no editor is attached"), "{r}");

    // In dispatch, outside any tool: the request still gets its answer, with its id.
    let r = c.call("test/panic", json!({}));
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("contained"),
        "{r}"
    );
    // Inside a batch: the batch is answered with one -32603.
    let r = c.roundtrip(
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"test/panic"}]"#,
    );
    assert_eq!(r["error"]["code"], -32603, "{r}");

    // Many panics at once do not exhaust anything: 40 of each kind, pipelined, then real work.
    let mut bytes = Vec::new();
    for i in 0..80 {
        let args = if i % 2 == 0 {
            json!({})
        } else {
            json!({"blocking": true})
        };
        let m = json!({"jsonrpc": "2.0", "id": 1000 + i, "method": "tools/call",
                       "params": {"name": "test_panic", "arguments": args}});
        bytes.extend(common::encode(
            true,
            0,
            1,
            m.to_string().as_bytes(),
            true,
            None,
        ));
    }
    c.send_raw(&bytes).unwrap();
    for _ in 0..80 {
        let r = c.recv_json();
        assert_eq!(r["result"]["isError"], true, "{r}");
    }
    for cl in [&mut c, &mut other] {
        cl.assert_alive();
        let r = cl.tool("fs-read-file", json!({"path": "README.md"}));
        assert_eq!(r["structuredContent"]["content"], "# test project\n");
    }

    // The same through the API the Neovim crate uses (`mcp::call_tool`, outside a connection).
    let rt = tokio::runtime::Runtime::new().unwrap();
    let shared = srv.server.shared().clone();
    for args in [json!({}), json!({"blocking": true})] {
        let r = rt
            .block_on(claude_context_core::mcp::call_tool(
                &shared,
                "test_panic",
                args,
            ))
            .expect("a result, not a protocol error");
        assert_eq!(r["isError"], true, "{r}");
    }

    // In a connection's own task, outside any request: that connection ends (close frame,
    // then EOF), its client leaves the status list, and everyone else carries on.
    let shared = srv.server.shared().clone();
    let before = shared.client_count();
    let mut doomed = srv.client();
    doomed.assert_alive();
    assert_eq!(shared.client_count(), before + 1);
    doomed
        .send_text(r#"{"jsonrpc":"2.0","method":"test/panic-connection"}"#)
        .unwrap();
    doomed.expect_close();
    doomed.expect_eof();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while shared.client_count() != before {
        assert!(
            std::time::Instant::now() < deadline,
            "the client stayed registered"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    other.assert_alive();
    srv.client().assert_alive();

    let logged = std::fs::read_to_string(&log).unwrap();
    let count = |needle: &str| logged.lines().filter(|l| l.contains(needle)).count();
    assert!(count("tool panicked") >= 42, "{logged}");
    assert!(
        count("tool work on the blocking pool panicked") >= 42,
        "{logged}"
    );
    assert!(count("message handler panicked") >= 2, "{logged}");
    assert!(
        count("connection task panicked") == 1
            && logged.contains("test/panic-connection: deliberate panic"),
        "{logged}"
    );
    assert!(
        logged
            .lines()
            .filter(|l| l.contains("panicked"))
            .all(|l| l.contains("ERROR")),
        "panics are logged as errors"
    );
    claude_context_core::logging::init(None, "info").unwrap();
}
