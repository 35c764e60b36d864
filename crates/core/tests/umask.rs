//! New files get `0666 & ~umask`, as every other program's do (they were always 0644). Its own
//! test binary: the umask is per process.
#![cfg(unix)]

mod common;

use serde_json::json;
use std::os::unix::fs::PermissionsExt;

#[test]
fn new_files_follow_the_umask() {
    // SAFETY: sets this test process's umask; no other test runs in this binary.
    unsafe { libc::umask(0o077) };
    let srv = common::start(json!({}));
    let mut c = srv.client();
    let r = c.tool(
        "fs-write-file",
        json!({"path": "private/new.txt", "content": "x"}),
    );
    assert_ne!(r["isError"], true, "{r}");
    let mode = std::fs::metadata(srv.root.join("private/new.txt"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
    let r = c.tool(
        "write_global_memory_bank",
        json!({"path": "n.md", "content": "x"}),
    );
    assert_ne!(r["isError"], true, "{r}");
    let mode = std::fs::metadata(srv.root.join("docs/global-memory-bank/n.md"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
}
