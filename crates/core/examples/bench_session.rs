//! The `execute_claude` tool's overhead over running the same CLI command directly.
//!
//!     cargo run --release -p claude-context-core --example bench_session [-- ITERATIONS]
//!
//! A fast fake CLI (a shell script that reads its stdin and prints fixed JSON) is run N times
//! directly (tokio::process: spawn, prompt on stdin, read stdout, wait, parse the JSON) and N
//! times through the tool (`mcp::call_tool` on a running bridge: argument parsing, discovery
//! cache check, the queue, `--resume`, the process group, JSON parsing, history + atomic state
//! write, result encoding), interleaved so both see the same machine load. Prints the medians and
//! the median of the paired differences; the target is ≤ 10 ms.

use claude_context_core::config::{ClaudeConfig, Config};
use claude_context_core::editor::{EditorState, NoEditor};
use claude_context_core::server::Server;
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const FAKE: &str = r#"#!/bin/sh
cat >/dev/null
echo '{"type":"result","subtype":"success","is_error":false,"duration_ms":1,"result":"fixed answer","session_id":"bench-session-0001","total_cost_usd":0.001,"usage":{"input_tokens":10,"output_tokens":3}}'
"#;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() - 1) as f64 * p).round() as usize]
}

async fn direct(cli: &std::path::Path, args: &[String], prompt: &str) -> Duration {
    let t = Instant::now();
    let mut child = tokio::process::Command::new(cli)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the fake CLI");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(prompt.as_bytes()).await.expect("write");
    drop(stdin);
    let mut out = Vec::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_end(&mut out)
        .await
        .expect("read");
    let status = child.wait().await.expect("wait");
    assert!(status.success());
    let v: serde_json::Value = serde_json::from_slice(&out).expect("JSON");
    assert_eq!(v["result"], "fixed answer");
    t.elapsed()
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let dir = tempfile::tempdir().expect("tempdir");
    let cli = dir.path().join("claude");
    std::fs::write(&cli, FAKE).expect("write the fake CLI");
    std::fs::set_permissions(&cli, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let root = dir.path().join("project");
    std::fs::create_dir_all(&root).expect("mkdir");
    let project = root.clone();

    let config = Config {
        lock_dir: Some(dir.path().join("locks")),
        state_dir: Some(dir.path().join("state")),
        claude: ClaudeConfig {
            cmd: Some(cli.display().to_string()),
            ..ClaudeConfig::default()
        },
        ..Config::default()
    };
    let st = EditorState {
        cwd: Some(root),
        ..Default::default()
    };
    let server = Server::start(config, st, Arc::new(NoEditor)).expect("start the bridge");
    let shared = server.shared().clone();
    // The same command line the tool runs once a session exists.
    let mut args: Vec<String> = ClaudeConfig::default().args;
    args.extend(["-p", "--resume", "bench-session-0001"].map(String::from));
    let prompt = "What is 2 + 2?";

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let (mut d, mut t, mut diff) = (Vec::new(), Vec::new(), Vec::new());
    rt.block_on(async {
        let tool = || async {
            let t0 = Instant::now();
            let r = claude_context_core::mcp::call_tool(
                &shared,
                "execute_claude",
                json!({"prompt": prompt, "timeout": 30}),
            )
            .await
            .expect("call");
            assert_eq!(r["structuredContent"]["success"], true, "{r}");
            t0.elapsed()
        };
        // Warm up both paths (first discovery, state file creation, page cache).
        for _ in 0..10 {
            direct(&cli, &args, prompt).await;
            tool().await;
        }
        for i in 0..n {
            // Alternate which goes first so neither always runs on a "warmer" machine.
            let (a, b) = if i % 2 == 0 {
                let a = direct(&cli, &args, prompt).await;
                (a, tool().await)
            } else {
                let b = tool().await;
                (direct(&cli, &args, prompt).await, b)
            };
            let (a, b) = (a.as_secs_f64() * 1e3, b.as_secs_f64() * 1e3);
            d.push(a);
            t.push(b);
            diff.push(b - a);
        }
    });
    let hist = rt.block_on(async {
        shared.claude.flush().await;
        shared.claude.history(Some(&project), 1).await
    });
    let on_disk = shared
        .claude
        .state_file(&project)
        .and_then(|f| std::fs::read(f).ok())
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v["history"].as_array().map(Vec::len));
    server.stop();
    let md = median(&mut d.clone());
    let mt = median(&mut t.clone());
    let mdiff = median(&mut diff.clone());
    println!("bench_session: {n} runs each, fake CLI = /bin/sh script printing fixed JSON");
    println!(
        "  direct  (spawn + stdin + stdout + wait + parse): median {md:.2} ms, p90 {:.2} ms",
        pct(&mut d, 0.9)
    );
    println!(
        "  execute_claude via mcp::call_tool:               median {mt:.2} ms, p90 {:.2} ms",
        pct(&mut t, 0.9)
    );
    println!(
        "  overhead (paired differences): median {mdiff:.2} ms, p90 {:.2} ms  (target <= 10 ms: {})",
        pct(&mut diff, 0.9),
        if mdiff <= 10.0 { "met" } else { "NOT met" }
    );
    println!(
        "  history kept: {} entries; on disk after flush: {} (state writes run in the background, \
         coalesced)",
        hist.total_entries,
        on_disk.map_or_else(|| "-".to_string(), |n| n.to_string())
    );
}
