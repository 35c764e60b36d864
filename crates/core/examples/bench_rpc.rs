//! Benchmark client for the bridge: a real WebSocket client (tokio-tungstenite) on loopback.
//! `bench/run.py` runs it against a headless Neovim with the plugin set up; it can also be pointed
//! at `examples/serve.rs`.
//!
//!     bench_rpc <port> <token> <mode> [mode arguments]
//!
//! Modes (every one prints a single JSON line on stdout; times in microseconds unless named `_ms`):
//!
//! * `latency <n> [warmup] [tool]` — `n` sequential `tools/call` round trips of `tool` (default
//!   `getWorkspaceFolders`) on one connection (after `warmup` unmeasured ones):
//!   p50/p90/p99/p999/max: the time until the whole answer is received (each answer is checked,
//!   untimed). `bench/nowait.py` times a turn's tools at a hit-enter prompt with it too (the
//!   bench's Python client takes ~15 ms itself to read a 3 MB answer).
//! * `pipeline <n> [rounds] [tool]` — per round, `n` calls of `tool` (default
//!   `getWorkspaceFolders`, answered from the editor snapshot; `getCurrentSelection` is answered
//!   on Neovim's main thread) written back to back on one connection while a second task reads
//!   the answers; calls/s per round (first write to last answer).
//! * `line <n> <rounds> [tool]` — the pipelined throughput against its floor, in one run: two
//!   echo servers in this process (bare tokio-tungstenite servers that send each text frame
//!   back as it is, on a thread of their own at the bridge threads' nice value: the minimal
//!   one `send`s each frame, one write per message; the batched one flushes what is already
//!   read at once, as the bridge's writer does) and the bridge are driven by the same
//!   `pipeline` client, rounds interleaved (the order rotates); per round calls/s, and per
//!   round the ratios ours / echo and ours / batched echo. The CPU time each server spent per
//!   call, too (`/proc/…/schedstat`: the echo's thread; the bridge's process but its main
//!   thread, given its pid in `BENCH_SERVER_PID`): on a loaded machine calls/s follow the
//!   scheduler, CPU time per call much less.
//! * `big <bytes> <kind> <reps>` — `reps` sequential requests carrying a `bytes`-long string:
//!   `ping` (params `{"blob": …}`, ignored), `ignore` (`tools/call getWorkspaceFolders` with the
//!   blob in `_meta`, ignored by the tool), `write` (`tools/call fs-write-file` with the blob as
//!   `content`: decoded, written atomically into the project root as `bench-big-<i>.txt`).
//! * `bigflood <bytes> <kind> <conns> <rounds>` — per round, `conns` connections each send one
//!   such request at the same moment; the time until the last answer.
//! * `floor <bytes> [reps]` — the transport's floor for a big answer: a bare tokio-tungstenite
//!   server in this process (port and token ignored; no tool, no JSON work) answers each request
//!   with one prebuilt `bytes`-long JSON-RPC result of escaped JSON text, as getDiagnostics'
//!   answer is; `latency`'s statistics of the round trips. What no bridge can go below on this
//!   machine for an answer of that size.
//!
//! Every answer is checked (a JSON-RPC result, not an error; `isError` is not true), so a fast
//! error can never pass for a fast answer.

use futures_util::{FutureExt, SinkExt, StreamExt};
use std::time::{Duration, Instant};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;
type Res<T> = Result<T, String>;

const CALL: &str =
    r#"{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"TOOL","arguments":{}}}"#;

fn usage() -> ! {
    eprintln!(
        "usage: bench_rpc <port> <token> latency <n> [warmup] [tool]\n\
         \x20      bench_rpc <port> <token> pipeline <n> [rounds] [tool]\n\
         \x20      bench_rpc <port> <token> big <bytes> ping|ignore|write <reps>\n\
         \x20      bench_rpc <port> <token> bigflood <bytes> ping|ignore|write <conns> <rounds>\n\
         \x20      bench_rpc 0 - floor <bytes> [reps]"
    );
    std::process::exit(2)
}

fn num(s: Option<&String>, default: Option<usize>) -> usize {
    match s {
        Some(s) => s.parse().unwrap_or_else(|_| usage()),
        None => default.unwrap_or_else(|| usage()),
    }
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() < 3 {
        usage()
    }
    let port: u16 = a[0].parse().unwrap_or_else(|_| usage());
    let token = a[1].clone();
    // One thread: the client should take as little of a small machine as it can.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| {
            eprintln!("cannot start a runtime: {e}");
            std::process::exit(1)
        });
    let out = rt.block_on(async {
        let c = Client { port, token };
        match a[2].as_str() {
            "latency" => {
                let tool = a.get(5).map_or("getWorkspaceFolders", String::as_str);
                c.latency(num(a.get(3), None), num(a.get(4), Some(1000)), tool)
                    .await
            }
            "pipeline" => {
                let tool = a.get(5).map_or("getWorkspaceFolders", String::as_str);
                c.pipeline(num(a.get(3), None), num(a.get(4), Some(1)), tool)
                    .await
            }
            "line" => {
                let tool = a.get(5).map_or("getWorkspaceFolders", String::as_str);
                line(&c, num(a.get(3), None), num(a.get(4), Some(5)), tool).await
            }
            "big" => {
                let kind = a.get(4).cloned().unwrap_or_else(|| usage());
                c.big(num(a.get(3), None), &kind, num(a.get(5), Some(10)))
                    .await
            }
            "bigflood" => {
                let kind = a.get(4).cloned().unwrap_or_else(|| usage());
                c.bigflood(
                    num(a.get(3), None),
                    &kind,
                    num(a.get(5), Some(8)),
                    num(a.get(6), Some(1)),
                )
                .await
            }
            "floor" => floor(num(a.get(3), None), num(a.get(4), Some(10))).await,
            _ => usage(),
        }
    });
    match out {
        Ok(v) => println!("{v}"),
        Err(e) => {
            eprintln!("bench_rpc: {e}");
            std::process::exit(1)
        }
    }
}

struct Client {
    port: u16,
    token: String,
}

impl Client {
    async fn connect(&self) -> Res<Ws> {
        let mut req = format!("ws://127.0.0.1:{}", self.port)
            .into_client_request()
            .map_err(|e| e.to_string())?;
        let h = HeaderValue::from_str(&self.token).map_err(|e| e.to_string())?;
        req.headers_mut()
            .insert("x-claude-code-ide-authorization", h);
        req.headers_mut()
            .insert("sec-websocket-protocol", HeaderValue::from_static("mcp"));
        let cfg = WebSocketConfig::default()
            .max_message_size(Some(256 << 20))
            .max_frame_size(Some(256 << 20));
        let (mut ws, _) = tokio_tungstenite::connect_async_with_config(req, Some(cfg), true)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench_rpc","version":"0"}}}"#;
        round_trip(&mut ws, init.into()).await?;
        ws.send(Message::text(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ))
        .await
        .map_err(|e| e.to_string())?;
        Ok(ws)
    }

    async fn latency(&self, n: usize, warmup: usize, tool: &str) -> Res<serde_json::Value> {
        let mut ws = self.connect().await?;
        let mut samples = Vec::with_capacity(n);
        for i in 0..warmup + n {
            let msg = call(tool, i + 1);
            let t = Instant::now();
            let r = round_trip(&mut ws, msg.into()).await?;
            let dt = t.elapsed(); // the whole answer received (checked, not timed, below)
            if i == 0 && tool == "getWorkspaceFolders" {
                check_folders(&r)?;
            } else {
                parse_result(&r)?;
            }
            if i >= warmup {
                samples.push(dt);
            }
        }
        let _ = ws.close(None).await;
        Ok(serde_json::json!({"mode": "latency", "tool": tool, "n": n, "us": stats(&mut samples)}))
    }

    async fn pipeline(&self, n: usize, rounds: usize, tool: &str) -> Res<serde_json::Value> {
        let mut ws = self.connect().await?;
        let rates = pipeline_rounds(&mut ws, n, rounds, tool, r#""result""#).await?;
        let _ = ws.close(None).await;
        let secs: Vec<f64> = rates.iter().map(|r| n as f64 / r).collect();
        let mut sorted = rates.clone();
        sorted.sort_by(f64::total_cmp);
        Ok(serde_json::json!({
            "mode": "pipeline", "tool": tool, "n": n, "rounds": rounds,
            "calls_per_s": rates, "secs": secs,
            "median_calls_per_s": sorted[sorted.len() / 2],
        }))
    }

    async fn big(&self, bytes: usize, kind: &str, reps: usize) -> Res<serde_json::Value> {
        let mut ws = self.connect().await?;
        let blob = blob(bytes);
        let mut samples = Vec::with_capacity(reps);
        let mut size = 0;
        for i in 0..reps {
            let msg: Utf8Bytes = big_request(kind, &blob, i)?.into();
            size = msg.len();
            let t = Instant::now();
            let r = round_trip(&mut ws, msg).await?;
            samples.push(t.elapsed());
            check_big(kind, &r, bytes)?;
        }
        let _ = ws.close(None).await;
        Ok(serde_json::json!({
            "mode": "big", "kind": kind, "bytes": bytes, "message_bytes": size, "reps": reps,
            "us": stats(&mut samples),
        }))
    }

    async fn bigflood(
        &self,
        bytes: usize,
        kind: &str,
        conns: usize,
        rounds: usize,
    ) -> Res<serde_json::Value> {
        let blob = blob(bytes);
        let mut wss = Vec::new();
        for _ in 0..conns {
            wss.push(self.connect().await?);
        }
        let mut totals = Vec::new();
        for round in 0..rounds {
            let msgs: Vec<Utf8Bytes> = (0..conns)
                .map(|c| big_request(kind, &blob, round * conns + c).map(Into::into))
                .collect::<Res<_>>()?;
            let t = Instant::now();
            let futs = wss.iter_mut().zip(msgs).map(|(ws, m)| async move {
                let r = round_trip(ws, m).await?;
                check_big(kind, &r, bytes)?;
                Ok::<_, String>(t.elapsed())
            });
            let each = futures_util::future::join_all(futs).await;
            let mut worst = Duration::ZERO;
            for e in each {
                worst = worst.max(e?);
            }
            totals.push(worst);
        }
        for mut ws in wss {
            let _ = ws.close(None).await;
        }
        let ms: Vec<f64> = totals.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        Ok(serde_json::json!({
            "mode": "bigflood", "kind": kind, "bytes": bytes, "conns": conns, "rounds": rounds,
            "total_ms": ms, "us": stats(&mut totals),
        }))
    }
}

/// The floor server's handshake: the subprotocol the client asks for ("mcp") is answered.
#[allow(clippy::result_large_err)] // the error type is tungstenite's `Callback`'s
fn echo_protocol(
    req: &tokio_tungstenite::tungstenite::handshake::server::Request,
    mut resp: tokio_tungstenite::tungstenite::handshake::server::Response,
) -> Result<
    tokio_tungstenite::tungstenite::handshake::server::Response,
    tokio_tungstenite::tungstenite::handshake::server::ErrorResponse,
> {
    if let Some(p) = req.headers().get("sec-websocket-protocol") {
        resp.headers_mut()
            .insert("sec-websocket-protocol", p.clone());
    }
    Ok(resp)
}

/// A floor server's side of the WebSocket handshake (256 MiB messages, the `mcp` protocol
/// answered); `None` when the client gave up.
async fn accept_floor(
    tcp: tokio::net::TcpStream,
) -> Option<tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>> {
    let cfg = WebSocketConfig::default()
        .max_message_size(Some(256 << 20))
        .max_frame_size(Some(256 << 20));
    tokio_tungstenite::accept_hdr_async_with_config(tcp, echo_protocol, Some(cfg))
        .await
        .ok()
}

/// `floor` mode: a bare server on its own thread answering every message with one prebuilt
/// `bytes`-long result; the client side is [`Client::latency`]'s.
async fn floor(bytes: usize, reps: usize) -> Res<serde_json::Value> {
    // Escaped JSON text, like a getDiagnostics answer carried in a text content block.
    let unit = r#"{\"message\":\"unused variable `x`\",\"severity\":\"Warning\",\"range\":{\"start\":{\"line\":1,\"character\":4},\"end\":{\"line\":1,\"character\":9}}},"#;
    let head = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"["#;
    let tail = r#"]"}],"isError":false}}"#;
    let mut body = String::with_capacity(bytes + unit.len() + head.len() + tail.len());
    body.push_str(head);
    while body.len() + tail.len() < bytes {
        body.push_str(unit);
    }
    body.push_str(tail);
    let answer = Utf8Bytes::from(body);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for the floor server");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            while let Ok((tcp, _)) = listener.accept().await {
                let answer = answer.clone();
                tokio::spawn(async move {
                    let Some(mut ws) = accept_floor(tcp).await else {
                        return;
                    };
                    while let Some(Ok(m)) = ws.next().await {
                        if m.is_text() && ws.send(Message::Text(answer.clone())).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
    });
    let c = Client {
        port,
        token: "-".into(),
    };
    let mut v = c.latency(reps, 1, "floor").await?;
    v["mode"] = "floor".into();
    v["bytes"] = bytes.into();
    Ok(v)
}

async fn next_text<S>(source: &mut S) -> Res<String>
where
    S: futures_util::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + Unpin,
{
    loop {
        match source.next().await {
            Some(Ok(Message::Text(t))) => return Ok(t.to_string()),
            Some(Ok(Message::Close(f))) => return Err(format!("server closed: {f:?}")),
            Some(Ok(_)) => continue,
            Some(Err(e)) => return Err(format!("read: {e}")),
            None => return Err("connection closed".into()),
        }
    }
}

async fn round_trip(ws: &mut Ws, msg: Utf8Bytes) -> Res<String> {
    ws.send(Message::Text(msg))
        .await
        .map_err(|e| format!("write: {e}"))?;
    next_text(ws).await
}

/// A `tools/call` of `tool` without arguments.
fn call(tool: &str, id: usize) -> String {
    CALL.replace("TOOL", tool).replace("ID", &id.to_string())
}

fn clip(s: &str) -> String {
    s.chars().take(300).collect()
}

fn parse_result(text: &str) -> Res<serde_json::Value> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("bad JSON answer ({e}): {}", clip(text)))?;
    match v.get("result") {
        Some(r) if r.get("isError") != Some(&serde_json::Value::Bool(true)) => Ok(r.clone()),
        _ => Err(format!("not a successful result: {}", clip(text))),
    }
}

fn check_folders(text: &str) -> Res<()> {
    let r = parse_result(text)?;
    if r["structuredContent"]["success"] != true {
        return Err(format!("getWorkspaceFolders failed: {}", clip(text)));
    }
    Ok(())
}

fn check_big(kind: &str, text: &str, bytes: usize) -> Res<()> {
    let r = parse_result(text)?;
    match kind {
        "write" if r["structuredContent"]["bytes_written"] != bytes => Err(format!(
            "fs-write-file wrote the wrong size: {}",
            clip(text)
        )),
        "ignore" if r["structuredContent"]["success"] != true => {
            Err(format!("getWorkspaceFolders failed: {}", clip(text)))
        }
        _ => Ok(()),
    }
}

/// `bytes` of text that looks like source code: lines of ASCII with `\n` (escaped in JSON).
fn blob(bytes: usize) -> String {
    let line = "    let value = compute(alpha, beta, gamma); // a line of plausible source text\n";
    let mut s = String::with_capacity(bytes + line.len());
    while s.len() < bytes {
        s.push_str(line);
    }
    s.truncate(bytes);
    s
}

fn big_request(kind: &str, blob: &str, i: usize) -> Res<String> {
    let v = match kind {
        "ping" => serde_json::json!({
            "jsonrpc": "2.0", "id": i + 1, "method": "ping", "params": {"blob": blob}
        }),
        "ignore" => serde_json::json!({
            "jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
            "params": {"name": "getWorkspaceFolders", "arguments": {}, "_meta": {"blob": blob}}
        }),
        "write" => serde_json::json!({
            "jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
            "params": {"name": "fs-write-file",
                       "arguments": {"path": format!("bench-big-{i}.txt"), "content": blob}}
        }),
        other => return Err(format!("unknown kind {other}: use ping, ignore or write")),
    };
    Ok(v.to_string())
}

/// p50/p90/p99/p99.9/max/mean in microseconds.
fn stats(samples: &mut [Duration]) -> serde_json::Value {
    if samples.is_empty() {
        return serde_json::Value::Null;
    }
    samples.sort();
    let us = |d: Duration| (d.as_secs_f64() * 1e7).round() / 10.0;
    let pct = |p: f64| {
        let idx = ((samples.len() as f64 * p).ceil() as usize).clamp(1, samples.len()) - 1;
        us(samples[idx])
    };
    let mean = samples.iter().map(|d| d.as_secs_f64()).sum::<f64>() / samples.len() as f64;
    serde_json::json!({
        "p50": pct(0.50), "p90": pct(0.90), "p99": pct(0.99), "p999": pct(0.999),
        "max": us(samples[samples.len() - 1]), "min": us(samples[0]),
        "mean": (mean * 1e7).round() / 10.0, "n": samples.len(),
    })
}

/// `rounds` rounds of `n` pipelined calls of `tool` on `ws` (every answer must contain
/// `expect` and no `"isError":true`); calls/s per round (first write to last answer).
async fn pipeline_rounds(
    ws: &mut Ws,
    n: usize,
    rounds: usize,
    tool: &str,
    expect: &str,
) -> Res<Vec<f64>> {
    Ok(pipeline_cpu(ws, n, rounds, tool, expect, &|| None)
        .await?
        .into_iter()
        .map(|(rate, _)| rate)
        .collect())
}

/// [`pipeline_rounds`], with the server's CPU time per call in each round (nanoseconds; `cpu`
/// reads the server's CPU time so far, `None` when it cannot).
async fn pipeline_cpu(
    ws: &mut Ws,
    n: usize,
    rounds: usize,
    tool: &str,
    expect: &str,
    cpu: &dyn Fn() -> Option<u64>,
) -> Res<Vec<(f64, Option<f64>)>> {
    let (mut sink, mut source) = ws.split();
    // Build every message before the clock starts.
    let msgs: Vec<Utf8Bytes> = (0..n).map(|i| call(tool, i + 1).into()).collect();
    let mut rates = Vec::new();
    for _ in 0..rounds {
        let batch = msgs.clone();
        let cpu0 = cpu();
        let t = Instant::now();
        let writer = async {
            for (i, m) in batch.into_iter().enumerate() {
                sink.feed(Message::Text(m))
                    .await
                    .map_err(|e| e.to_string())?;
                if i % 64 == 63 {
                    sink.flush().await.map_err(|e| e.to_string())?;
                }
            }
            sink.flush().await.map_err(|e| e.to_string())
        };
        let reader = async {
            let mut got = 0;
            while got < n {
                let text = next_text(&mut source).await?;
                if !text.contains(expect) || text.contains(r#""isError":true"#) {
                    return Err(format!("unexpected answer: {}", clip(&text)));
                }
                got += 1;
            }
            Ok::<_, String>(())
        };
        let (w, r) = tokio::join!(writer, reader);
        w?;
        r?;
        let rate = n as f64 / t.elapsed().as_secs_f64();
        let per_call = cpu0
            .zip(cpu())
            .map(|(a, b)| b.saturating_sub(a) as f64 / n as f64);
        rates.push((rate, per_call));
    }
    Ok(rates)
}

/// CPU time (ns) of the threads of process `pid` (all but its main thread when `skip_main`), or
/// of one thread of this process (`pid` 0, `tid`), from `/proc/…/schedstat` (Linux).
fn cpu_ns(pid: u32, tid: u32, skip_main: bool) -> Option<u64> {
    let read = |path: String| -> Option<u64> {
        std::fs::read_to_string(path)
            .ok()?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    };
    if pid == 0 {
        return read(format!("/proc/self/task/{tid}/schedstat"));
    }
    let mut sum = 0;
    for e in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let name = e.ok()?.file_name().to_string_lossy().into_owned();
        if skip_main && name == pid.to_string() {
            continue;
        }
        sum += read(format!("/proc/{pid}/task/{name}/schedstat")).unwrap_or(0);
    }
    Some(sum)
}

/// The echo floors: bare tokio-tungstenite servers on a thread of their own (at the nice value
/// the bridge's threads take) that send every text frame back unchanged. `batch == false`: the
/// minimal echo, `ws.send` of each frame (one write and flush per message); `batch == true`:
/// what is already read goes out in one flush (at most 64 frames), as the bridge's writer does.
/// Returns the port.
fn echo_server(batch: bool) -> Res<(u16, u32)> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let (tid_tx, tid_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // SAFETY: gettid has no preconditions.
        let _ = tid_tx.send(unsafe { libc::syscall(libc::SYS_gettid) } as u32);
        claude_context_core::threads::yield_to_the_editor(
            claude_context_core::threads::thread_nice(),
        )();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for the echo server");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            while let Ok((tcp, _)) = listener.accept().await {
                let _ = tcp.set_nodelay(true);
                tokio::spawn(async move {
                    let Some(mut ws) = accept_floor(tcp).await else {
                        return;
                    };
                    while let Some(Ok(m)) = ws.next().await {
                        if !m.is_text() {
                            continue;
                        }
                        if !batch {
                            if ws.send(m).await.is_err() {
                                return;
                            }
                            continue;
                        }
                        if ws.feed(m).await.is_err() {
                            return;
                        }
                        for _ in 0..64 {
                            match ws.next().now_or_never() {
                                Some(Some(Ok(m))) if m.is_text() => {
                                    if ws.feed(m).await.is_err() {
                                        return;
                                    }
                                }
                                Some(Some(Ok(_))) => {}
                                Some(_) => return,
                                None => break,
                            }
                        }
                        if ws.flush().await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
    });
    let tid = tid_rx.recv().map_err(|e| e.to_string())?;
    Ok((port, tid))
}

/// `line` mode: the bridge's pipelined calls/s against both echo floors', rounds interleaved
/// (the order rotates: ours, echo, batched echo; echo, batched echo, ours; ...) on one
/// connection to each, after one warm-up round each.
async fn line(c: &Client, n: usize, rounds: usize, tool: &str) -> Res<serde_json::Value> {
    let mut wss = vec![c.connect().await?];
    // The bridge's CPU: its process's threads but the editor's main thread (BENCH_SERVER_PID).
    let server: Option<u32> = std::env::var("BENCH_SERVER_PID")
        .ok()
        .and_then(|p| p.parse().ok());
    let mut tids = Vec::new();
    for batch in [false, true] {
        let (port, tid) = echo_server(batch)?;
        tids.push(tid);
        let echo = Client {
            port,
            token: "-".into(),
        };
        let mut ws = echo.connect().await?;
        next_text(&mut ws).await?; // the echo of notifications/initialized
        wss.push(ws);
    }
    let expect = [r#""result""#, r#""method""#, r#""method""#];
    for (ws, e) in wss.iter_mut().zip(expect) {
        pipeline_rounds(ws, n, 1, tool, e).await?;
    }
    let tids = [tids[0], tids[1]];
    let mut rates = [Vec::new(), Vec::new(), Vec::new()];
    let mut cpus = [Vec::new(), Vec::new(), Vec::new()];
    for round in 0..rounds {
        for k in 0..3 {
            let i = (round + k) % 3;
            let cpu = move || match i {
                0 => server.and_then(|p| cpu_ns(p, 0, true)),
                _ => cpu_ns(0, tids[i - 1], false),
            };
            let (rate, per_call) = pipeline_cpu(&mut wss[i], n, 1, tool, expect[i], &cpu).await?[0];
            rates[i].push(rate);
            cpus[i].push(per_call);
        }
    }
    for mut ws in wss {
        let _ = ws.close(None).await;
    }
    let median = |v: &[f64]| {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        s[s.len() / 2]
    };
    let ratio: Vec<f64> = rates[0].iter().zip(&rates[1]).map(|(o, e)| o / e).collect();
    let ratio_batched: Vec<f64> = rates[0].iter().zip(&rates[2]).map(|(o, e)| o / e).collect();
    Ok(serde_json::json!({
        "mode": "line", "tool": tool, "n": n, "rounds": rounds,
        "ours_calls_per_s": rates[0], "echo_calls_per_s": rates[1],
        "echo_batched_calls_per_s": rates[2],
        "ratio": ratio, "ratio_batched": ratio_batched,
        "ours_cpu_ns_per_call": cpus[0], "echo_cpu_ns_per_call": cpus[1],
        "echo_batched_cpu_ns_per_call": cpus[2],
        "median_ratio": median(&ratio), "median_ours": median(&rates[0]),
        "median_echo": median(&rates[1]), "median_echo_batched": median(&rates[2]),
    }))
}
