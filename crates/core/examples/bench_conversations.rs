//! Times a project's listing over and over in the library alone (no editor): the whole list
//! (`conversations::list`, every file's `stat` and every entry made) and the answer to a caller
//! that holds the last list (`conversations::list_since`: "unchanged" when no file changed).
//!
//!     CLAUDE_CONFIG_DIR=… target/release/examples/bench_conversations ROOT [N]
use claude_context_core::conversations::{self, since, ListOptions};
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
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;
    let t0 = Instant::now();
    let l = pool.list(&opts).expect("list");
    println!("first: {} conversations in {:.2} ms", l.len(), ms(t0));
    // The files read whole meanwhile (a thread of the library's own).
    std::thread::sleep(std::time::Duration::from_secs(5));
    let mut whole = Vec::new();
    for _ in 0..n {
        let t0 = Instant::now();
        pool.list(&opts).expect("list");
        whole.push(ms(t0));
    }
    let mut answers = since::Answers::default();
    let first = conversations::list_since(&opts, Some(&pool), &mut answers, 0).expect("list");
    let since::Reply::Full { generation, .. } = first else {
        panic!("the whole list first")
    };
    let mut unchanged = Vec::new();
    for _ in 0..n {
        let t0 = Instant::now();
        let r = conversations::list_since(&opts, Some(&pool), &mut answers, generation);
        unchanged.push(ms(t0));
        assert!(matches!(r, Ok(since::Reply::Unchanged { .. })));
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2], v[0], v[v.len() - 1])
    };
    let (m, lo, hi) = med(&mut whole);
    println!("whole list: median {m:.2} ms (min {lo:.2}, max {hi:.2})");
    let (m, lo, hi) = med(&mut unchanged);
    println!("unchanged since: median {m:.2} ms (min {lo:.2}, max {hi:.2})");
}
