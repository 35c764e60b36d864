//! `handle_text` of one pipelined-call message in process, no transport: what answering a
//! `getWorkspaceFolders` call costs the bridge's dispatch (BENCHMARKS.md, "At the line").
//!
//!     cargo run --release -p claude-context-core --example bench_dispatch [-- CALLS]
//!
//! (CALLS, 300,000 by default: fewer for a run under `valgrind --tool=cachegrind`, whose
//! instruction count does not move with the shared machine's noise.)
use claude_context_core::config::Config;
use claude_context_core::editor::{EditorState, NoEditor};
use claude_context_core::mcp::{handle_text, Service};
use claude_context_core::state::State;
use std::sync::Arc;
fn main() {
    // The same call bench_rpc pipelines, 20,000 times to warm up, then CALLS timed.
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(300_000);
    let d = tempfile::tempdir().unwrap();
    let st = EditorState {
        cwd: Some(d.path().to_path_buf()),
        ..Default::default()
    };
    let svc = Service::new(Arc::new(State::new(
        Config::default(),
        st,
        Arc::new(NoEditor),
    )));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let msg = r#"{"jsonrpc":"2.0","id":12345,"method":"tools/call","params":{"name":"getWorkspaceFolders","arguments":{}}}"#;
    rt.block_on(async {
        for _ in 0..20000 {
            let _ = handle_text(&svc, msg).await;
        }
        let t = std::time::Instant::now();
        let mut len = 0;
        for _ in 0..n {
            len += handle_text(&svc, msg).await.0.unwrap().len();
        }
        println!(
            "{:.3} us/call ({len})",
            t.elapsed().as_secs_f64() * 1e6 / n as f64
        );
    });
}
