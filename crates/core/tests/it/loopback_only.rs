//! Where the bridge listens: on 127.0.0.1 and nowhere else (the kernel's own socket table,
//! `/proc/net/tcp` and `/proc/net/tcp6`, has exactly one listening socket on its port, bound to
//! 127.0.0.1 — not 0.0.0.0, not `::`), on a port inside `port_range`, and a range with no free
//! port is a clear error.
#![cfg(target_os = "linux")]

use claude_context_core::config::{Config, PortRange};
use claude_context_core::editor::{EditorState, NoEditor};
use claude_context_core::server::Server;
use std::sync::Arc;

/// Local addresses (hex, as the kernel writes them) of listening sockets on `port`.
fn listeners(table: &str, port: u16) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(table) else {
        return Vec::new();
    };
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (addr, p) = f.get(1)?.split_once(':')?;
            // State 0A = LISTEN.
            (u16::from_str_radix(p, 16).ok()? == port && *f.get(3)? == "0A")
                .then(|| addr.to_string())
        })
        .collect()
}

fn start(dir: &std::path::Path, ports: Option<(u16, u16)>) -> Result<Server, String> {
    let mut config = Config {
        lock_dir: Some(dir.join("ide")),
        ..Config::default()
    };
    if let Some((min, max)) = ports {
        config.port_range = PortRange { min, max };
    }
    let state = EditorState {
        cwd: Some(dir.to_path_buf()),
        ..Default::default()
    };
    Server::start(config, state, Arc::new(NoEditor)).map_err(|e| e.to_string())
}

#[test]
fn the_server_listens_on_loopback_only() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), None).unwrap();
    let port = server.port();
    // 127.0.0.1 in the kernel's byte order.
    assert_eq!(
        listeners("/proc/net/tcp", port),
        vec!["0100007F".to_string()]
    );
    assert_eq!(listeners("/proc/net/tcp6", port), Vec::<String>::new());
    server.stop();
}

#[test]
fn the_port_comes_from_port_range_and_a_full_range_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    // A free port, found by the OS, then released for the bridge to take.
    let free = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = start(dir.path(), Some((free, free))).unwrap();
    assert_eq!(server.port(), free);
    // Taken now: a second bridge with the same one-port range cannot start, and says why.
    let dir2 = tempfile::tempdir().unwrap();
    let e = start(dir2.path(), Some((free, free))).err().unwrap();
    assert!(
        e.contains(&format!("no free port in {free}..={free} on 127.0.0.1")),
        "{e}"
    );
    assert!(e.contains(&format!("port {free}")), "{e}");
    server.stop();
    // A wider range: the port is inside it.
    let lo = free.saturating_sub(50).max(1024);
    let server = start(dir.path(), Some((lo, lo + 100))).unwrap();
    assert!(
        (lo..=lo + 100).contains(&server.port()),
        "{}",
        server.port()
    );
    server.stop();
}
