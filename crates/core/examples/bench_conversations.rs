//! Times `conversations::list` of a project over and over (the cached listing), in phases.
//!
//!     CLAUDE_CONFIG_DIR=… cargo run --release -p claude-context-core --example bench_conversations ROOT [N]
use claude_context_core::conversations::{self, ListOptions};
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let root = args.next().expect("ROOT");
    let n: usize = args.next().map_or(20, |s| s.parse().expect("N"));
    let opts = ListOptions {
        root: Some(root.into()),
        ..ListOptions::default()
    };
    let pool = conversations::Pool::new().expect("pool");
    for i in 0..n {
        let t0 = Instant::now();
        let l = pool.list(&opts).expect("list");
        println!(
            "{i}: {} conversations in {:.2} ms",
            l.len(),
            t0.elapsed().as_secs_f64() * 1e3
        );
        if i == 0 {
            std::thread::sleep(std::time::Duration::from_secs(5));
        }
    }
}
