//! Load and faults: many clients at once, some of them vanishing mid-call, lose no answer on the
//! others; connections that never finish the handshake do not keep a real client out.
// Unix only: it measures SO_LINGER through libc.
#![cfg(unix)]

use crate::common;

use common::Raw;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// Closes `s` with a reset (SO_LINGER 0), as a crashed client's kernel would.
fn reset(s: TcpStream) {
    let l = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: a valid socket and a linger struct of the right size.
    unsafe {
        use std::os::fd::AsRawFd;
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&l as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
    drop(s);
}

fn request(i: usize) -> (Value, &'static str) {
    let (params, kind) = match i % 5 {
        0 => (json!(null), "ping"),
        1 => (
            json!({"name": "getWorkspaceFolders", "arguments": {}}),
            "folders",
        ),
        2 => (
            json!({"name": "fs-read-file", "arguments": {"path": "src/main.rs"}}),
            "read",
        ),
        3 => (
            json!({"name": "fs-list-directory", "arguments": {"path": "src"}}),
            "list",
        ),
        _ => (
            json!({"name": "fs-read-file", "arguments": {"path": "../escape"}}),
            "refused",
        ),
    };
    let method = if kind == "ping" { "ping" } else { "tools/call" };
    let mut r = json!({"jsonrpc": "2.0", "id": i, "method": method});
    if !params.is_null() {
        r["params"] = params;
    }
    (r, kind)
}

fn check(kind: &str, r: &Value, root: &str) {
    let res = &r["result"];
    match kind {
        "ping" => assert_eq!(res, &json!({}), "{r}"),
        "folders" => assert!(res["structuredContent"].to_string().contains(root), "{r}"),
        "read" => assert_eq!(res["structuredContent"]["content"], "fn main() {}\n", "{r}"),
        "list" => assert!(res.to_string().contains("main.rs"), "{r}"),
        _ => {
            assert_eq!(res["isError"], true, "{r}");
            assert!(res.to_string().contains("outside the project root"), "{r}");
        }
    }
}

#[test]
fn fifty_clients_times_a_hundred_calls_lose_nothing_while_others_abort_mid_call() {
    const CLIENTS: usize = 50;
    const CALLS: usize = 100;
    const ABORTERS: usize = 12;
    let srv = common::start(json!({}));
    let root = srv.root.to_string_lossy().into_owned();
    let barrier = Arc::new(Barrier::new(CLIENTS + ABORTERS));
    let mut handles = Vec::new();
    for c in 0..CLIENTS {
        let (port, token, root, barrier) =
            (srv.port, srv.token.clone(), root.clone(), barrier.clone());
        handles.push(std::thread::spawn(move || {
            let mut cl = Raw::connect(port, &token);
            let init = cl.call(
                "initialize",
                json!({"protocolVersion": "2025-06-18", "clientInfo": {"name": format!("load-{c}"), "version": "1"}}),
            );
            assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
            barrier.wait();
            // Two bursts of 50 pipelined calls; answers may come in any order.
            let mut seen = [false; CALLS];
            for burst in 0..2 {
                let mut bytes = Vec::new();
                for i in burst * CALLS / 2..(burst + 1) * CALLS / 2 {
                    let (r, _) = request(i);
                    bytes.extend(common::encode(true, 0, 1, r.to_string().as_bytes(), true, None));
                }
                cl.send_raw(&bytes).unwrap();
                for _ in 0..CALLS / 2 {
                    let r = cl.recv_json();
                    let id = r["id"].as_u64().unwrap_or_else(|| panic!("{r}")) as usize;
                    assert!(!seen[id], "client {c}: answer {id} twice");
                    seen[id] = true;
                    check(request(id).1, &r, &root);
                }
            }
            assert!(seen.iter().all(|s| *s));
            cl.assert_alive();
            CALLS
        }));
    }
    for a in 0..ABORTERS {
        let (port, token, barrier) = (srv.port, srv.token.clone(), barrier.clone());
        handles.push(std::thread::spawn(move || {
            let mut cl = Raw::connect(port, &token);
            barrier.wait();
            let mut bytes = Vec::new();
            for i in 0..CALLS {
                let (r, _) = request(i);
                bytes.extend(common::encode(
                    true,
                    0,
                    1,
                    r.to_string().as_bytes(),
                    true,
                    None,
                ));
            }
            match a % 4 {
                // Calls sent, connection reset before any answer is read.
                0 => {
                    cl.send_raw(&bytes).unwrap();
                    reset(cl.s);
                }
                // Reset in the middle of a frame.
                1 => {
                    cl.send_raw(&bytes[..bytes.len() / 2 + 3]).unwrap();
                    reset(cl.s);
                }
                // A few answers read, then the socket just closes (FIN) mid-frame.
                2 => {
                    cl.send_raw(&bytes[..bytes.len() - 5]).unwrap();
                    for _ in 0..3 {
                        cl.recv_json();
                    }
                    drop(cl);
                }
                // Half-close: no more requests, but no close frame either; leave at once.
                _ => {
                    cl.send_raw(&bytes).unwrap();
                    let _ = cl.s.shutdown(std::net::Shutdown::Write);
                    drop(cl);
                }
            }
            0
        }));
    }
    let answered: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(answered, CLIENTS * CALLS);
    // Every connection is released, and the server still serves.
    let deadline = Instant::now() + Duration::from_secs(10);
    while srv.server.shared().client_count() > 0 {
        assert!(
            Instant::now() < deadline,
            "connections leaked: {}",
            srv.server.shared().client_count()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    srv.client().assert_alive();
}

#[test]
fn two_hundred_half_open_connections_do_not_keep_a_real_client_out() {
    let srv = common::start(json!({"handshake_timeout_ms": 1000}));
    let mut idle = Vec::new();
    for i in 0..200 {
        let mut s = TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        match i % 4 {
            0 => {} // connected, silent
            1 => s
                .write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                .unwrap(), // unfinished request
            2 => s.write_all(b"G").unwrap(),
            _ => s
                .write_all(
                    common::handshake_request(srv.port, &[])
                        .trim_end()
                        .as_bytes(),
                )
                .unwrap(), // all but the final empty line
        }
        idle.push(s);
    }
    // A real client gets in at once, while all 200 are pending.
    let t = Instant::now();
    let mut c = srv.client();
    c.assert_alive();
    let took = t.elapsed();
    eprintln!(
        "a real client connected and was answered in {took:?} with 200 half-open connections"
    );
    assert!(took < Duration::from_secs(5), "{took:?}");

    // The half-open ones are closed by the server after the handshake timeout.
    let t = Instant::now();
    let mut closed = 0;
    for mut s in idle {
        let mut buf = [0u8; 256];
        match s.read(&mut buf) {
            Ok(0) => closed += 1,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => closed += 1,
            other => panic!("a half-open connection got {other:?}"),
        }
    }
    eprintln!("all 200 closed by the server within {:?}", t.elapsed());
    assert_eq!(closed, 200);
    // The real client was never affected.
    c.assert_alive();
}
