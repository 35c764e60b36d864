//! The per-connection memory budget: in-flight requests × their sizes stay under
//! `max_inflight_bytes_per_client`, not `max_inflight_per_client` × `max_message_size`. When the
//! budget is spent the server stops reading from the connection (backpressure) until requests
//! finish; then every request is answered, none lost.
#![cfg(unix)]

use crate::common;

use serde_json::json;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

/// The attack: a client pipelines many large requests that stay in flight (here `execute_claude`
/// runs, which wait their turn), so the server would hold up to 64 × 64 MiB of them.
#[test]
fn large_slow_requests_stop_being_read_at_the_byte_budget() {
    const BUDGET: usize = 1 << 20;
    const N: usize = 12;
    let dir = tempfile::tempdir().unwrap();
    let go = dir.path().join("go");
    // A fake CLI that answers once the test says so: the runs stay in flight until then.
    let cli = dir.path().join("claude");
    std::fs::write(
        &cli,
        format!(
            "#!/bin/sh\ncat >/dev/null\nwhile [ ! -e '{}' ]; do sleep 0.05; done\n\
             echo '{{\"result\":\"ok\",\"session_id\":\"s1\"}}'\n",
            go.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&cli, std::fs::Permissions::from_mode(0o755)).unwrap();
    let srv = common::start(json!({
        "max_inflight_bytes_per_client": BUDGET,
        "claude": {"cmd": cli},
    }));
    let mut c = srv.client();
    c.assert_alive();

    let prompt = "q".repeat(256 << 10);
    let texts: Vec<String> = (0..N)
        .map(|i| {
            json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                   "params": {"name": "execute_claude", "arguments": {"prompt": prompt}}})
            .to_string()
        })
        .collect();
    let size = texts[0].len() + 2;
    let fit = BUDGET / texts[0].len();
    assert!((2..N - 2).contains(&fit), "{fit}");
    // Write them all from another thread (the server may stop reading us half-way).
    let mut w = c.s.try_clone().unwrap();
    let writer = std::thread::spawn(move || {
        for t in &texts {
            w.write_all(&common::encode(true, 0, 1, t.as_bytes(), true, None))
                .unwrap();
        }
    });

    let in_flight = || {
        srv.server
            .shared()
            .status()
            .clients
            .iter()
            .map(|c| (c.in_flight, c.inflight_bytes))
            .max()
            .unwrap_or((0, 0))
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while in_flight().0 < fit {
        assert!(
            Instant::now() < deadline,
            "requests never reached the budget: {:?}",
            in_flight()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // A moment later, still within the budget: the server is not reading the rest.
    std::thread::sleep(Duration::from_millis(500));
    let (n, bytes) = in_flight();
    assert!(
        n <= fit && bytes <= BUDGET,
        "{n} requests ({bytes} bytes) in flight, over the {BUDGET} byte budget ({fit} of {size} bytes)"
    );
    assert!(n < N);

    // The runs may finish: every request is then read and answered, none lost.
    std::fs::write(&go, "").unwrap();
    writer.join().unwrap();
    let mut seen = [false; N];
    for _ in 0..N {
        let v: serde_json::Value = c.recv_json();
        let id = v["id"].as_u64().unwrap() as usize;
        assert!(!seen[id], "answer {id} twice");
        seen[id] = true;
        assert_eq!(v["result"]["structuredContent"]["success"], true, "{v}");
    }
    c.assert_alive();
    // The last answer (and the ping's) can be on the wire a moment before their bookkeeping is
    // released: wait for it (bounded), then the budget must be whole again.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while in_flight() != (0, 0) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(in_flight(), (0, 0));
}
