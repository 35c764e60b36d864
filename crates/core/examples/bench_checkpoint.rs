//! Benchmark of a prompt's checkpoint: a generated project of 20,000 files (200 MB of source-like
//! text in 500 directories, a `.gitignore`, a git repository), then 100 turns that each change
//! 20 files. Every turn is checkpointed by the store and, in the same run, snapshotted by git the
//! way Zed does (`git add -A` + `git write-tree` into a temporary index kept between turns via
//! `GIT_INDEX_FILE`), alternating which goes first.
//!
//!     cargo run --release -p claude-context-core --example bench_checkpoint -- [FILES] [MB] [TURNS]
//!     cargo run --release -p claude-context-core --example bench_checkpoint -- 20000,200000,1000000 40 20
//!
//! FILES may be a comma-separated list of project sizes, each run in turn in a project of its
//! own; MB is the first size's total and the others keep its average file size. The store
//! watches the project's directories (`StoreOptions::watch`) as the plugin's do; with
//! `BENCH_NO_WATCH=1` set every checkpoint walks the whole tree, as before the watch.
//!
//! Prints the first (cold) checkpoint and git's first snapshot, each turn's checkpoint and git
//! snapshot (wall time median / p90 / max, the ratio of the medians and the median of the
//! per-turn ratios; CPU time, which a loaded machine does not inflate), and the store's growth
//! over the turns against the bytes of the changed contents. With `BENCH_VERBOSE=1` set, each
//! turn's times, files read and directories listed are printed too.

use claude_context_core::checkpoint::{Store, StoreOptions};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// xorshift64*: deterministic content without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const WORDS: &[&str] = &[
    "let", "fn", "match", "value", "result", "config", "buffer", "index", "return", "self",
    "state", "client", "request", "response", "error", "path", "file", "line", "offset", "count",
    "mut", "if", "else", "for", "in", "while", "Some", "None", "Ok", "Err", "vec", "map", "handle",
    "token", "session", "turn", "diff", "hunk", "range", "start", "end", "len",
];

/// Source-like text of about `n` bytes.
fn text(rng: &mut Rng, n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n + 80);
    while out.len() < n {
        let indent = rng.below(4) as usize * 4;
        out.extend(std::iter::repeat_n(b' ', indent));
        let words = 3 + rng.below(9);
        for w in 0..words {
            if w > 0 {
                out.push(b' ');
            }
            out.extend_from_slice(WORDS[rng.below(WORDS.len() as u64) as usize].as_bytes());
            if rng.below(7) == 0 {
                out.extend_from_slice(format!("_{}", rng.below(1000)).as_bytes());
            }
        }
        out.extend_from_slice(if rng.below(3) == 0 { b";\n" } else { b"\n" });
    }
    out
}

fn git(dir: &Path, index: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_INDEX_FILE", index)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Git's own snapshot of the tree (Zed's method): stage everything into the temporary index,
/// write the tree.
fn git_snapshot(dir: &Path, index: &Path) -> (Duration, Duration) {
    let (t, c) = (Instant::now(), cpu(true));
    git(dir, index, &["add", "-A"]);
    git(dir, index, &["write-tree"]);
    (t.elapsed(), cpu(true) - c)
}

/// The store's checkpoint: wall time and this process's CPU time.
fn checkpoint(store: &mut Store, label: &str) -> (Duration, Duration) {
    let (t, c) = (Instant::now(), cpu(false));
    store.checkpoint(label).unwrap();
    (t.elapsed(), cpu(false) - c)
}

fn dir_bytes(p: &Path) -> u64 {
    let mut total = 0;
    if let Ok(rd) = std::fs::read_dir(p) {
        for e in rd.flatten() {
            let Ok(m) = e.metadata() else { continue };
            if m.is_dir() {
                total += dir_bytes(&e.path());
            } else {
                total += m.len();
            }
        }
    }
    total
}

/// CPU time (user + system) of this process, or of its waited-for children.
#[cfg(unix)]
fn cpu(children: bool) -> Duration {
    // SAFETY: getrusage fills the struct we pass.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    let who = if children {
        libc::RUSAGE_CHILDREN
    } else {
        libc::RUSAGE_SELF
    };
    unsafe { libc::getrusage(who, &mut u) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

#[cfg(not(unix))]
fn cpu(_children: bool) -> Duration {
    Duration::ZERO
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn stats(v: &mut [f64]) -> (f64, f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.9), v[v.len() - 1])
}

const CHANGED: usize = 20;
const PER_DIR: usize = 40;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sizes: Vec<usize> = args
        .first()
        .map(|a| a.split(',').filter_map(|n| n.parse().ok()).collect())
        .filter(|v: &Vec<usize>| !v.is_empty())
        .unwrap_or_else(|| vec![20_000]);
    let mb: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(200);
    let turns: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(100);
    for &files in &sizes {
        // The same average file size at every size.
        let mb = (mb as u128 * files as u128 / sizes[0] as u128).max(1) as usize;
        run(files, mb, turns);
    }
}

fn run(files: usize, mb: usize, turns: usize) {
    println!("== {files} files ==");
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    let state = tmp.path().join("state");
    let index = tmp.path().join("git-index");
    std::fs::create_dir_all(&project).unwrap();

    // The project: FILES files in directories of PER_DIR, sizes 2–18 KB around MB/FILES.
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let avg = mb * 1_000_000 / files;
    let mut paths = Vec::with_capacity(files);
    let mut total = 0usize;
    for i in 0..files {
        let d = i / PER_DIR;
        let rel = format!("src{:02}/mod{:03}/file{i:05}.rs", d % 25, d / 25);
        let p = project.join(&rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let n = avg / 5 + rng.below((avg * 8 / 5) as u64) as usize;
        let body = text(&mut rng, n);
        total += body.len();
        std::fs::write(&p, body).unwrap();
        paths.push(rel);
    }
    std::fs::write(
        project.join(".gitignore"),
        "target/\n*.log\nnode_modules/\n",
    )
    .unwrap();
    git(&project, &index, &["init", "-q"]);
    println!(
        "project: {files} files, {:.1} MB in {} directories (+ .gitignore, git repository)",
        total as f64 / 1e6,
        files.div_ceil(PER_DIR)
    );
    // Old enough for the stat cache (and git's index) to trust the files' mtimes.
    std::thread::sleep(Duration::from_secs(3));

    let opts = StoreOptions {
        global_gitignore: false,
        max_store_bytes: 16 << 30,
        watch: std::env::var_os("BENCH_NO_WATCH").is_none(),
        ..StoreOptions::default()
    };
    let mut store = Store::open(&state, &project, opts).unwrap();
    let (cold, cold_cpu) = checkpoint(&mut store, "cold");
    let cold_stats = store.last_stats().clone();
    let (git_cold, git_cold_cpu) = git_snapshot(&project, &index);
    let store0 = dir_bytes(&state);
    let objects0 = dir_bytes(&store.dir().join("objects"));
    println!(
        "cold: checkpoint {:.0} ms (CPU {:.0} ms; {} files read, {:.1} MB stored), \
         git add -A + write-tree {:.0} ms (CPU {:.0} ms)",
        ms(cold),
        ms(cold_cpu),
        cold_stats.files_read,
        store0 as f64 / 1e6,
        ms(git_cold),
        ms(git_cold_cpu)
    );
    // One warm-up each, as after the cold pass.
    checkpoint(&mut store, "warm-up");
    git_snapshot(&project, &index);

    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    let mut ratios = Vec::new();
    let mut ours_cpu = Vec::new();
    let mut theirs_cpu = Vec::new();
    let mut changed_bytes = 0u64;
    let mut read = 0u64;
    let mut whole = 0usize;
    for turn in 0..turns {
        for _ in 0..CHANGED {
            let rel = &paths[rng.below(files as u64) as usize];
            let n = avg / 5 + rng.below((avg * 8 / 5) as u64) as usize;
            let body = text(&mut rng, n);
            changed_bytes += body.len() as u64;
            std::fs::write(project.join(rel), body).unwrap();
        }
        let label = format!("turn {turn}");
        let ((o, oc), (g, gc)) = if turn % 2 == 0 {
            let o = checkpoint(&mut store, &label);
            (o, git_snapshot(&project, &index))
        } else {
            let g = git_snapshot(&project, &index);
            (checkpoint(&mut store, &label), g)
        };
        if std::env::var_os("BENCH_VERBOSE").is_some() {
            let st = store.last_stats();
            println!(
                "  turn {turn}: checkpoint {:.1} ms (CPU {:.1}), git {:.1} ms (CPU {:.1}); {} read, {} dirs listed",
                ms(o), ms(oc), ms(g), ms(gc), st.files_read, st.dirs - st.dirs_unchanged
            );
        }
        ours_cpu.push(ms(oc));
        theirs_cpu.push(ms(gc));
        read += store.last_stats().files_read;
        whole += usize::from(store.last_stats().whole);
        ours.push(ms(o));
        theirs.push(ms(g));
        ratios.push(ms(o) / ms(g));
    }
    let store1 = dir_bytes(&state);
    let objects1 = dir_bytes(&store.dir().join("objects"));
    let (om, o90, omax) = stats(&mut ours);
    let (gm, g90, gmax) = stats(&mut theirs);
    let (rm, _, _) = stats(&mut ratios);
    let (ocm, oc90, _) = stats(&mut ours_cpu);
    let (gcm, gc90, _) = stats(&mut theirs_cpu);
    println!(
        "turns: {turns} × {CHANGED} changed files ({:.1} files read per turn on average; \
         {whole} whole walks)",
        read as f64 / turns as f64
    );
    println!("  checkpoint            median {om:.1} ms  p90 {o90:.1} ms  max {omax:.1} ms");
    println!("  git add -A+write-tree median {gm:.1} ms  p90 {g90:.1} ms  max {gmax:.1} ms");
    println!(
        "  ratio of medians {:.2}×, median of per-turn ratios {rm:.2}×",
        om / gm
    );
    println!(
        "  CPU time: checkpoint median {ocm:.1} ms p90 {oc90:.1} ms, git median {gcm:.1} ms \
         p90 {gc90:.1} ms, ratio of medians {:.2}×",
        ocm / gcm
    );
    println!(
        "store: {:.1} MB after the cold checkpoint, {:.1} MB after {turns} turns: grew {:.2} MB \
         for {:.2} MB of changed contents = {:.2}×",
        store0 as f64 / 1e6,
        store1 as f64 / 1e6,
        (store1 as f64 - store0 as f64) / 1e6,
        changed_bytes as f64 / 1e6,
        (store1 as f64 - store0 as f64) / changed_bytes as f64
    );
    println!(
        "  of which objects: grew {:.2} MB = {:.2}× the changed contents",
        (objects1 as f64 - objects0 as f64) / 1e6,
        (objects1 as f64 - objects0 as f64) / changed_bytes as f64
    );
}
