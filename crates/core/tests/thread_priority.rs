//! The bridge's threads (tokio workers and the blocking pool) run at a lower priority than the
//! editor (`THREAD_NICE` more), so that a client flooding the bridge never outcompetes Neovim's
//! main thread for the CPU; the thread that starts the server keeps its priority.
#![cfg(target_os = "linux")]

use claude_context_core::config::Config;
use claude_context_core::editor::{EditorState, NoEditor};
use claude_context_core::server::{Server, THREAD_NICE};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

fn nice_of_this_thread() -> i32 {
    // SAFETY: gettid has no preconditions; getpriority only reads.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::getpriority(libc::PRIO_PROCESS, tid)
    }
}

#[test]
fn bridge_threads_run_below_the_caller() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        lock_dir: Some(dir.path().join("ide")),
        ..Config::default()
    };
    let state = EditorState {
        cwd: Some(dir.path().to_path_buf()),
        ..Default::default()
    };
    let before = nice_of_this_thread();
    let server = Server::start(config, state, Arc::new(NoEditor)).unwrap();
    let (tx, rx) = mpsc::channel();
    server.spawn(async move {
        let worker = nice_of_this_thread();
        let blocking = tokio::task::spawn_blocking(nice_of_this_thread)
            .await
            .unwrap();
        let _ = tx.send((worker, blocking));
    });
    let (worker, blocking) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    let want = (before + THREAD_NICE).min(19);
    assert_eq!(worker, want, "a tokio worker's nice value");
    assert_eq!(blocking, want, "a blocking-pool thread's nice value");
    assert_eq!(
        nice_of_this_thread(),
        before,
        "the caller (Neovim's main thread) keeps its priority"
    );
    server.stop();
}
