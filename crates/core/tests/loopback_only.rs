//! The bridge listens on 127.0.0.1 and nowhere else: the kernel's own socket table
//! (`/proc/net/tcp`, `/proc/net/tcp6`) has exactly one listening socket on its port, bound to
//! 127.0.0.1 — not 0.0.0.0, not `::`.
#![cfg(target_os = "linux")]

use claude_context_core::config::Config;
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

#[test]
fn the_server_listens_on_loopback_only() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        lock_dir: Some(dir.path().join("ide")),
        ..Config::default()
    };
    let state = EditorState {
        cwd: Some(dir.path().to_path_buf()),
        ..Default::default()
    };
    let server = Server::start(config, state, Arc::new(NoEditor)).unwrap();
    let port = server.port();
    // 127.0.0.1 in the kernel's byte order.
    assert_eq!(
        listeners("/proc/net/tcp", port),
        vec!["0100007F".to_string()]
    );
    assert_eq!(listeners("/proc/net/tcp6", port), Vec::<String>::new());
    server.stop();
}
