//! Benchmark of `read_context` as Claude Code sees it: a WebSocket client on loopback calling the
//! bridge, over a memory bank of 1,000 documents (~24 MB) whose core files make ~165 KB of JSON;
//! then the same with 10× more non-core documents, to show the cost does not grow with them.
//!
//!     cargo run --release -p claude-context-core --example bench_context -- [--calls N] \
//!         [--python .deps/venv/bin/python]
//!
//! Prints, per bank: the bank's size, the JSON size of the result, and the round trip (request
//! sent → whole response received) median / p90 / p99 / mean over N calls after a warm-up, plus
//! the same call in-process (no WebSocket) and the tool's own work (reading the files into a JSON
//! value, no MCP encoding) for comparison. Other documents are never read: compare the cases.

use claude_context_core::config::Config;
use claude_context_core::editor::{EditorState, NoEditor};
use claude_context_core::memory_bank::{BRANCH_CORE_FILES, GLOBAL_CORE_FILES};
use claude_context_core::server::Server;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

const BRANCH: &str = "feature/bench";
/// Bytes of each core file: 10 of them (+ rules and JSON overhead) make ~165 KB of JSON.
const CORE_BYTES: usize = 16_000;
/// Documents in the base bank (10 core + 990 others), ~24 MB in all.
const DOCS: usize = 1_000;
const TOTAL_BYTES: usize = 24_000_000;
/// Branch banks the non-core documents are spread over (besides the global bank).
const BRANCHES: usize = 20;

/// Deterministic filler text, Japanese and ASCII lines, `n` bytes (on a char boundary).
fn filler(seed: u64, n: usize) -> String {
    const LINES: &[&str] = &[
        "- 決定: 認証はトークン方式に統一する（理由: セッション管理を単純にするため）",
        "- The bridge answers on 127.0.0.1 only; the lock file carries the token.",
        "- 残作業: エラーメッセージにパスと OS のエラーを含める",
        "- Run `cargo test -p claude-context-core` before each commit.",
        "## 背景\nメモリバンクはリポジトリ内の Markdown 文書で、エージェントの記憶の代わりになる。",
        "| column | meaning |\n|---|---|\n| id | UUID v4 |",
    ];
    let mut s = String::with_capacity(n + 256);
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    while s.len() < n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.push_str(LINES[(x % LINES.len() as u64) as usize]);
        s.push('\n');
    }
    let mut cut = n;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s.truncate(cut);
    s
}

fn write(p: &Path, content: &str) {
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d).expect("create bank directory");
    }
    std::fs::write(p, content).expect("write bank document");
}

/// Writes the core files and `others` non-core documents of `size` bytes each, starting at
/// number `from`. Returns the bytes written.
fn populate(docs: &Path, from: usize, others: usize, size: usize, core: bool) -> u64 {
    let mut bytes = 0u64;
    let branch_dir = |i: usize| docs.join(format!("branch-memory-bank/branch-{i:02}"));
    if core {
        let main = docs
            .join("branch-memory-bank")
            .join(BRANCH.replace('/', "-"));
        for (i, name) in BRANCH_CORE_FILES.iter().enumerate() {
            let stem = name.trim_end_matches(".md");
            let c = format!(
                "# {stem}\n\ntags: #core #{stem}\n\n{}",
                filler(i as u64, CORE_BYTES)
            );
            bytes += c.len() as u64;
            write(&main.join(name), &c);
        }
        for (i, name) in GLOBAL_CORE_FILES.iter().enumerate() {
            let stem = name.trim_end_matches(".md");
            let c = format!(
                "# {stem}\n\ntags: #core #{stem}\n\n{}",
                filler(100 + i as u64, CORE_BYTES)
            );
            bytes += c.len() as u64;
            write(&docs.join("global-memory-bank").join(name), &c);
        }
    }
    for n in from..from + others {
        let c = format!(
            "# Note {n}\n\ntags: #note #n{}\n\n{}",
            n % 50,
            filler(1000 + n as u64, size)
        );
        bytes += c.len() as u64;
        // A third in the global bank, the rest over the branch banks (some in the benchmarked
        // branch itself, in subdirectories).
        let p = match n % 3 {
            0 => docs.join(format!("global-memory-bank/notes/{n:05}.md")),
            1 => docs
                .join("branch-memory-bank")
                .join(BRANCH.replace('/', "-"))
                .join(format!("notes/{n:05}.md")),
            _ => branch_dir(n % BRANCHES).join(format!("{n:05}.md")),
        };
        write(&p, &c);
    }
    bytes
}

struct Stats {
    median: Duration,
    p90: Duration,
    p99: Duration,
    mean: Duration,
}

fn stats(mut v: Vec<Duration>) -> Stats {
    v.sort();
    let at = |q: f64| v[((v.len() as f64 - 1.0) * q).round() as usize];
    Stats {
        median: at(0.5),
        p90: at(0.9),
        p99: at(0.99),
        mean: v.iter().sum::<Duration>() / v.len() as u32,
    }
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

async fn bench(port: u16, token: &str, calls: usize) -> (Stats, usize, Value) {
    let mut req = format!("ws://127.0.0.1:{port}")
        .into_client_request()
        .expect("request");
    req.headers_mut().insert(
        "x-claude-code-ide-authorization",
        token.parse().expect("token header"),
    );
    let (mut ws, _) = tokio_tungstenite::connect_async(req)
        .await
        .expect("connect");
    let mut id = 0u64;
    let mut rpc = |method: &str, params: Value| {
        id += 1;
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
    };
    let init = rpc(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "bench", "version": "0"}}),
    );
    ws.send(Message::text(init)).await.expect("send");
    ws.next().await.expect("initialize answer").expect("ws");
    let args = json!({"name": "read_context", "arguments": {"branch": BRANCH}});
    let mut first = Value::Null;
    let mut size = 0;
    let mut times = Vec::with_capacity(calls);
    let warmup = 50;
    for i in 0..warmup + calls {
        let msg = rpc("tools/call", args.clone());
        let t = Instant::now();
        ws.send(Message::text(msg)).await.expect("send");
        let reply = loop {
            match ws.next().await.expect("answer").expect("ws") {
                Message::Text(t) => break t,
                Message::Ping(_) | Message::Pong(_) => continue,
                other => panic!("unexpected message {other:?}"),
            }
        };
        let dt = t.elapsed();
        if i == 0 {
            size = reply.len();
            first = serde_json::from_str(reply.as_str()).expect("JSON answer");
        }
        if i >= warmup {
            times.push(dt);
        }
    }
    let _ = ws.close(None).await;
    (stats(times), size, first)
}

fn run_case(label: &str, project: &Path, state: &Path, calls: usize, python: Option<&str>) {
    let lock_dir = tempfile::tempdir().expect("tempdir");
    let config = Config {
        project_root: Some(project.to_string_lossy().into_owned()),
        lock_dir: Some(lock_dir.path().to_path_buf()),
        state_dir: Some(state.to_path_buf()),
        ..Config::default()
    };
    let st = EditorState {
        cwd: Some(project.to_path_buf()),
        nvim_version: "0.11.4".into(),
        ..Default::default()
    };
    let server = Server::start(config, st, Arc::new(NoEditor)).expect("server");
    let token = server.shared().token().to_string();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (s, size, first) = rt.block_on(bench(server.port(), &token, calls));
    // The same calls through a Python WebSocket client (bench/context_client.py), as a Python
    // MCP client sees them: its own framing, UTF-8 and JSON decoding included.
    let py = python.map(|py| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/context_client.py");
        let out = std::process::Command::new(py)
            .arg(script)
            .arg(server.port().to_string())
            .arg(&token)
            .arg(calls.to_string())
            .arg(BRANCH)
            .output()
            .expect("run the Python client");
        assert!(
            out.status.success(),
            "the Python client failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim_end().to_string()
    });
    let sc = &first["result"]["structuredContent"];
    assert_eq!(first["result"]["isError"], false, "{first}");
    assert!(
        sc.get("notes").is_none(),
        "the bank is incomplete: {}",
        sc["notes"]
    );
    assert_eq!(sc["branchMemory"].as_object().map_or(0, |m| m.len()), 4);
    assert_eq!(sc["globalMemory"].as_object().map_or(0, |m| m.len()), 6);
    let json_kb = sc.to_string().len() as f64 / 1000.0;

    // The same call in-process, without the WebSocket (the tool and MCP encoding alone).
    let shared = server.shared().clone();
    let inproc = rt.block_on(async {
        let args = json!({"branch": BRANCH});
        let mut v = Vec::with_capacity(calls);
        for i in 0..calls + 50 {
            let t = Instant::now();
            let r = claude_context_core::mcp::call_tool(&shared, "read_context", args.clone())
                .await
                .expect("call");
            // The reply's text as the server writes it (the envelope, a repeated result reused).
            let text = claude_context_core::jsonrpc::reply_text(
                claude_context_core::mcp::response(&json!(i), r),
            );
            std::hint::black_box(text);
            if i >= 50 {
                v.push(t.elapsed());
            }
        }
        stats(v)
    });
    server.stop();
    // The tool's own work: reading the core files and the rules into a JSON value.
    let bank = claude_context_core::memory_bank::Bank::resolve(None, None, project);
    let a: claude_context_core::tools::memory_bank::read_context::Args =
        serde_json::from_value(json!({"branch": BRANCH})).expect("args");
    let mut v = Vec::with_capacity(calls);
    for i in 0..calls + 50 {
        let t = Instant::now();
        let r = claude_context_core::tools::memory_bank::read_context::context(&bank, &a)
            .expect("context");
        std::hint::black_box(r);
        if i >= 50 {
            v.push(t.elapsed());
        }
    }
    let tool = stats(v);
    println!(
        "{label}: read_context JSON {json_kb:.1} KB (whole response {:.1} KB)",
        size as f64 / 1000.0
    );
    println!(
        "  WebSocket round trip over {calls} calls: median {}, p90 {}, p99 {}, mean {}",
        ms(s.median),
        ms(s.p90),
        ms(s.p99),
        ms(s.mean)
    );
    println!(
        "  in-process (tool + MCP encoding):       median {}, p90 {}, p99 {}, mean {}",
        ms(inproc.median),
        ms(inproc.p90),
        ms(inproc.p99),
        ms(inproc.mean)
    );
    println!(
        "  tool alone (read files into JSON value):  median {}, p90 {}, p99 {}, mean {}",
        ms(tool.median),
        ms(tool.p90),
        ms(tool.p99),
        ms(tool.mean)
    );
    if let Some(py) = py {
        println!("{py}");
    }
}

fn main() {
    let mut calls = 2000usize;
    let mut python = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--calls" => {
                calls = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|n| *n > 0)
                    .unwrap_or_else(|| {
                        eprintln!("--calls needs a positive number");
                        std::process::exit(2)
                    })
            }
            "--python" => {
                python = Some(args.next().unwrap_or_else(|| {
                    eprintln!("--python needs an interpreter with the websockets package");
                    std::process::exit(2)
                }))
            }
            other => {
                eprintln!("unknown argument {other} (use --calls N, --python PYTHON)");
                std::process::exit(2)
            }
        }
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let project = dir
        .path()
        .canonicalize()
        .expect("canonical")
        .join("project");
    let docs = project.join("docs");
    let state = dir.path().join("state");
    std::fs::create_dir_all(&project).expect("project dir");

    let others = DOCS - 10;
    let core_bytes = (BRANCH_CORE_FILES.len() + GLOBAL_CORE_FILES.len()) * CORE_BYTES;
    let size = (TOTAL_BYTES - core_bytes) / others;
    let t = Instant::now();
    let bytes = populate(&docs, 0, others, size, true);
    println!(
        "bank: {DOCS} documents, {:.1} MB (generated in {:.1} s)",
        bytes as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    // As in use, the core files last changed a while before they are read (files changed
    // within the last moments are read again at every call).
    std::thread::sleep(claude_context_core::memory_bank::CACHE_SETTLE);
    run_case(
        "1,000 documents",
        &project,
        &state,
        calls,
        python.as_deref(),
    );

    let t = Instant::now();
    let more = populate(&docs, others, others * 9, size, false);
    println!(
        "bank: {} documents, {:.1} MB (added in {:.1} s)",
        DOCS + others * 9,
        (bytes + more) as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    run_case(
        "10x non-core documents",
        &project,
        &state,
        calls,
        python.as_deref(),
    );
}
