//! A client that sends requests but stops reading the answers: the server must stop reading
//! from it (once the socket takes no more answers it reads no more; in-flight requests are
//! capped and answers that waited are queued up to a byte budget; then the socket's buffers
//! fill and the client's writes block) instead of buffering without bound — and once the
//! client reads again, no answer is lost. (Alone in its own test binary so the process's
//! RSS belongs to this test only.)
// Unix only: it measures the page size and RSS through libc.
#![cfg(unix)]

mod common;

use claude_context_core::server::OUT_BYTES;
use serde_json::json;
use std::io::{ErrorKind, Write};
use std::time::{Duration, Instant};

fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64
}

/// Answers made in the reader's own poll (a small file read at once): they go to the socket
/// from there, so when it is full the reader stops with one answer held.
#[cfg(target_os = "linux")]
#[test]
fn a_client_that_stops_reading_is_not_read_and_memory_stays_bounded() {
    stops_reading_and_resumes(8 << 10, 2 << 10, true);
}

/// Requests that wait (over 1 MiB, parsed on the blocking pool): their answers come through
/// the connection's queue, within its byte budget; the reader stops the same way.
#[cfg(target_os = "linux")]
#[test]
fn a_client_that_stops_reading_answers_that_waited_is_not_read_either() {
    // (A few dozen 1 MiB requests fill the socket's buffers: too few answers for the memory bound
    // to tell anything, which the test above checks.)
    stops_reading_and_resumes(64 << 10, 1 << 20, false);
}

#[cfg(target_os = "linux")]
fn stops_reading_and_resumes(file: usize, pad: usize, memory: bool) {
    const INFLIGHT: usize = 8;
    let srv = common::start(json!({"max_inflight_per_client": INFLIGHT}));
    let line = "0123456789abcdef0123456789abcdef0123456789abcdef012345678901234\n";
    std::fs::write(srv.root.join("big.txt"), line.repeat(file / line.len())).unwrap();
    let mut c = srv.client();
    c.assert_alive();
    let one = c.tool("fs-read-file", json!({"path": "big.txt"}));
    let reply_size = one.to_string().len() + 64;
    assert!(reply_size > 2 * file - 1024, "{reply_size}");

    let request = |i: usize| {
        let text = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": "fs-read-file", "arguments": {"path": "big.txt"},
                       "pad": "p".repeat(pad)}})
        .to_string();
        common::encode(true, 0, 1, text.as_bytes(), true, None)
    };
    // A small receive buffer on our side, so the kernel holds few answers for us and the
    // server's queue fills quickly.
    let rcvbuf: libc::c_int = 32 << 10;
    // SAFETY: a valid socket and a c_int option of the right size.
    unsafe {
        use std::os::fd::AsRawFd;
        libc::setsockopt(
            c.s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&rcvbuf as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
    let t0 = Instant::now();
    let base_rss = rss_bytes();
    c.s.set_write_timeout(Some(Duration::from_millis(1000)))
        .unwrap();
    // Write requests, never reading, until the kernel refuses more twice, 300 ms apart: the
    // server stopped reading. (Once is not enough on a loaded machine: a server that is only
    // slow leaves a write waiting a second too.)
    let mut written = 0usize;
    let mut pending = request(0);
    let mut refused = 0;
    while written < 50_000 && refused < 2 {
        match c.s.write(&pending) {
            Ok(n) => {
                refused = 0;
                pending.drain(..n);
                if pending.is_empty() {
                    written += 1;
                    pending = request(written);
                }
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                refused += 1;
                std::thread::sleep(Duration::from_millis(300));
            }
            Err(e) => panic!("write failed: {e}"),
        }
    }
    assert!(
        refused == 2,
        "the server kept reading: {written} requests accepted without the client reading"
    );
    let rest = Some(pending);
    let requested = written * reply_size;

    // The server holds at most the capped number of requests and at most its answer budget.
    let st = srv.server.shared().status().clients[0].clone();
    assert!(st.in_flight <= INFLIGHT, "{st:?}");
    assert!(st.queued_bytes <= OUT_BYTES, "{st:?}");
    // Still capped a moment later.
    std::thread::sleep(Duration::from_millis(300));
    let st2 = srv.server.shared().status();
    assert!(
        st2.clients.iter().all(|c| c.in_flight <= INFLIGHT),
        "{st2:?}"
    );
    let grown = rss_bytes().saturating_sub(base_rss);
    eprintln!(
        "stalled after {written} requests ({} MiB of answers asked for); queued {} KiB; \
         RSS grew {} MiB",
        requested >> 20,
        st.queued_bytes >> 10,
        grown >> 20
    );
    // Bounded: the answer budget plus the in-flight answers plus slack for the allocator —
    // not the answers asked for.
    let bound = (OUT_BYTES + INFLIGHT * reply_size * 3) as u64 + (24 << 20);
    assert!(grown < bound, "RSS grew {grown} bytes (bound {bound})");
    assert!(
        !memory || requested as u64 > 2 * grown,
        "the test must ask for more than the bound ({requested} vs {grown})"
    );

    eprintln!("stall reached in {:?}", t0.elapsed());
    // The client reads again: every answer arrives, none lost, none duplicated.
    c.s.set_write_timeout(Some(common::READ_TIMEOUT)).unwrap();
    let mut writer = c.s.try_clone().unwrap();
    let total = written + 1; // + the one we were half-way through (or not begun)
    let w = std::thread::spawn(move || {
        if let Some(r) = rest {
            writer.write_all(&r).unwrap();
        }
    });
    // (Answers are checked by id and size rather than parsed: 40 MiB of JSON is slow to parse in
    // a debug build, and the first one was parsed above.)
    let expected_len = json!({"jsonrpc": "2.0", "id": 0, "result": one})
        .to_string()
        .len();
    let mut seen = vec![false; total];
    for _ in 0..total {
        let t = c.recv_text().expect("an answer");
        let digits: String = t
            .strip_prefix(r#"{"jsonrpc":"2.0","id":"#)
            .unwrap_or_else(|| panic!("unexpected answer {t:.300}"))
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let id: usize = digits.parse().unwrap();
        assert!(!seen[id], "answer {id} twice");
        seen[id] = true;
        assert_eq!(
            t.len(),
            expected_len + digits.len() - 1,
            "answer {id}: {t:.300}"
        );
        assert!(t.contains(r#""isError":false"#), "answer {id}: {t:.300}");
    }
    w.join().unwrap();
    c.assert_alive();
    eprintln!("all answered after {:?}", t0.elapsed());
}

#[test]
fn a_client_that_never_reads_and_leaves_frees_its_connection() {
    let srv = common::start(json!({"max_inflight_per_client": 4}));
    std::fs::write(srv.root.join("f.txt"), "x".repeat(64 << 10)).unwrap();
    {
        let mut c = srv.client();
        c.s.set_write_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        let text = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "fs-read-file", "arguments": {"path": "f.txt"}}})
        .to_string();
        let f = common::encode(true, 0, 1, text.as_bytes(), true, None);
        for _ in 0..2000 {
            if c.s.write_all(&f).is_err() {
                break;
            }
        }
        // Dropped without reading a byte.
    }
    let deadline = Instant::now() + Duration::from_secs(15);
    while srv.server.shared().client_count() > 0 {
        assert!(
            Instant::now() < deadline,
            "the connection was never released"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    srv.client().assert_alive();
}
