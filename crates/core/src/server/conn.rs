//! One WebSocket connection: handshake (token, no `Origin`), then one task that owns the socket
//! (`super::socket`): it reads each message and answers it in its own poll when it can, a
//! message that waits going on in a task of its own (bounded by a per-connection semaphore, so
//! a client that stops reading stops being read: backpressure, not memory growth), and writes
//! the answers in batches.
//!
//! Memory per connection is bounded twice over: by the count of requests in flight
//! (`max_inflight_per_client`) and by their bytes (`max_inflight_bytes_per_client`, 256 MiB by
//! default). A request holds its size in the byte budget from the moment it is read until its
//! answer is queued; while the budget is spent the reader does not read (backpressure), so a
//! connection holds at most the budget plus the one message just read, not
//! `max_inflight_per_client` × `max_message_size`.

use super::socket::{Read, Socket, Ws};
use super::Shared;
use crate::auth::AUTH_HEADER;
use crate::jsonrpc;
use crate::mcp::{self, PeerEvent};
use crate::state::client::Outgoing;
use futures_util::FutureExt;
use serde_json::Value;
use std::future::Future;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::{HeaderValue, StatusCode};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message, Utf8Bytes};

/// Outgoing messages queued per connection before writers wait (backpressure).
const OUT_QUEUE: usize = 256;

/// Held by the accept loop and by each client connection until it ends (its close frame
/// sent): stopping the bridge waits until none is left (`Server::live`).
#[derive(Clone)]
pub(super) struct Live {
    _held: mpsc::Sender<()>,
}

impl Live {
    pub(super) fn new(tx: mpsc::Sender<()>) -> Live {
        Live { _held: tx }
    }
}

pub(super) async fn accept_loop(shared: Arc<Shared>, listener: TcpListener, live: Live) {
    let mut shutdown = shared.shutdown.subscribe();
    loop {
        tokio::select! {
            _ = shutdown.changed() => break,
            r = listener.accept() => match r {
                Ok((stream, addr)) => {
                    let _ = stream.set_nodelay(true);
                    // A panic in a connection's task ends that connection only (its
                    // registration is undone by a guard); it is logged, never propagated.
                    let conn = AssertUnwindSafe(serve(shared.clone(), stream, addr, live.clone()));
                    tokio::spawn(async move {
                        if let Err(p) = conn.catch_unwind().await {
                            let msg = jsonrpc::payload_text(p.as_ref());
                            tracing::error!(
                                %addr,
                                panic = %msg,
                                "connection task panicked; the connection was closed"
                            );
                        }
                    });
                }
                Err(e) => {
                    // EMFILE and friends: back off briefly instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        }
    }
}

/// Checks a handshake: no `Origin` (browsers), the right token; offers back `mcp` if asked.
/// (The error type is tungstenite's callback contract, hence the large `Err`.)
#[allow(clippy::result_large_err)]
pub fn check_handshake(
    token: &str,
    req: &Request,
    mut resp: Response,
) -> Result<Response, ErrorResponse> {
    let refuse = |code: StatusCode, why: &str| {
        let mut r = ErrorResponse::new(Some(why.to_string()));
        *r.status_mut() = code;
        r
    };
    if req.headers().contains_key("origin") {
        return Err(refuse(
            StatusCode::FORBIDDEN,
            "cross-origin WebSocket connections are refused",
        ));
    }
    let presented = req.headers().get(AUTH_HEADER).and_then(|v| v.to_str().ok());
    match presented {
        Some(p) if crate::auth::token_matches(token, p) => {}
        _ => {
            return Err(refuse(
                StatusCode::UNAUTHORIZED,
                "missing or wrong authorization token",
            ))
        }
    }
    let offers_mcp = req
        .headers()
        .get_all("sec-websocket-protocol")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|p| p.trim() == "mcp");
    if offers_mcp {
        resp.headers_mut()
            .insert("sec-websocket-protocol", HeaderValue::from_static("mcp"));
    }
    Ok(resp)
}

/// The WebSocket settings every connection uses (also used by the fuzz targets).
pub fn ws_config(max: usize) -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(max))
        .max_frame_size(Some(max))
        .accept_unmasked_frames(false)
}

/// The flow-control state of one connection, for `status()` and tests.
pub(crate) struct Flow {
    pub(crate) inflight: Arc<Semaphore>,
    pub(crate) max_inflight: usize,
    pub(crate) out_bytes: Arc<Semaphore>,
    /// The byte budget of requests in flight (`max_inflight_bytes_per_client`).
    pub(crate) in_bytes: Arc<Semaphore>,
    pub(crate) max_in_bytes: usize,
}

impl Flow {
    pub(crate) fn in_flight(&self) -> usize {
        self.max_inflight
            .saturating_sub(self.inflight.available_permits())
    }

    pub(crate) fn queued_bytes(&self) -> usize {
        OUT_BYTES.saturating_sub(self.out_bytes.available_permits())
    }

    pub(crate) fn inflight_bytes(&self) -> usize {
        self.max_in_bytes
            .saturating_sub(self.in_bytes.available_permits())
    }
}

/// Bytes of answers queued per connection before answering tasks wait (a reply larger than
/// this takes the whole budget, so it waits for an empty queue).
pub const OUT_BYTES: usize = 8 << 20;

/// Messages at least this large are parsed on the blocking pool, so that a client sending
/// 64 MiB of JSON does not hold up a runtime worker that other connections need.
const PARSE_OFFLOAD: usize = 1 << 20;

/// How long answers may drain after the client is gone.
const DRAIN_WAIT: Duration = Duration::from_secs(5);

/// Runs one message: parse (off the runtime when large), dispatch, contain panics. A panic
/// answers the request it hit with -32603 (a notification's panic is only logged).
async fn answer(
    shared: &Arc<Shared>,
    text: Utf8Bytes,
    requests: &mcp::Inflight,
) -> (Option<String>, Vec<PeerEvent>) {
    let parsed = if text.len() >= PARSE_OFFLOAD {
        let t = text.clone();
        tokio::task::spawn_blocking(move || mcp::parse(t.as_str()).map_err(|e| e.reply()))
            .await
            .unwrap_or_else(|e| Err(internal_error(&Value::Null, &jsonrpc::panic_message(e))))
    } else {
        mcp::parse(text.as_str()).map_err(|e| e.reply())
    };
    let v = match parsed {
        Ok(v) => v,
        Err(reply) => return (Some(reply), Vec::new()),
    };
    let reply_id = match &v {
        mcp::Parsed::Call(c) => Some(c.id.clone()),
        mcp::Parsed::One(m) => m.id.as_ref().map(|id| {
            Some(id.clone())
                .filter(mcp::valid_id)
                .unwrap_or(Value::Null)
        }),
        mcp::Parsed::Other(_) => Some(Value::Null),
    };
    match AssertUnwindSafe(mcp::handle_message(shared, v, requests))
        .catch_unwind()
        .await
    {
        Ok(r) => r,
        Err(p) => {
            let msg = jsonrpc::payload_text(p.as_ref());
            tracing::error!(panic = %msg, "message handler panicked");
            let reply = reply_id.map(|id| {
                internal_error(
                    &id,
                    &format!(
                        "internal error: {msg} (the panic was contained; see :ClaudeContext log)"
                    ),
                )
            });
            (reply, Vec::new())
        }
    }
}

fn internal_error(id: &Value, message: &str) -> String {
    let e = jsonrpc::RpcError::new(rmcp::model::ErrorCode::INTERNAL_ERROR, message);
    crate::jsonrpc::error_response(id, &e).to_string()
}

/// The door a client came in by (its request path).
enum Door {
    /// The hook door (`claude-context-mcp hook`): one event, then close (see super::hooks).
    Hook,
    /// The IDE door or the model's (`/mcp`): what it may see and call.
    Client(mcp::catalog::Surface),
}

async fn serve(shared: Arc<Shared>, stream: TcpStream, addr: SocketAddr, live: Live) {
    let Some((ws, door)) = handshake(&shared, stream, addr).await else {
        return;
    };
    let surface = match door {
        // (A hook event may wait for the person's answer; stopping does not wait for it.)
        Door::Hook => {
            drop(live);
            return super::hooks::serve(shared, ws, addr).await;
        }
        Door::Client(surface) => surface,
    };
    let (tx, rx) = mpsc::channel::<Outgoing>(OUT_QUEUE);
    let flow = Arc::new(Flow {
        inflight: Arc::new(Semaphore::new(shared.config.max_inflight_per_client)),
        max_inflight: shared.config.max_inflight_per_client,
        out_bytes: Arc::new(Semaphore::new(OUT_BYTES)),
        in_bytes: Arc::new(Semaphore::new(shared.config.max_inflight_bytes_per_client)),
        max_in_bytes: shared.config.max_inflight_bytes_per_client,
    });
    let id = shared.register(addr, surface, tx.clone(), flow.clone());
    tracing::info!(%addr, id, ?surface, "client connected");
    // The client leaves the status list and its waiting requests are cancelled however this
    // function ends, a panic included.
    let requests = Arc::new(mcp::Inflight::new(surface).with_client(id));
    // Requests to the client (elicitation, sampling) go out on the same queue.
    requests.link().attach(tx.clone());
    let registration = Registration {
        shared: shared.clone(),
        id,
        addr,
        requests,
    };
    let mut socket = Socket::new(ws, rx);
    // (A panic in the reader still closes the socket properly, then goes on to be logged.)
    let read = AssertUnwindSafe(read_loop(&registration, &mut socket, tx, flow))
        .catch_unwind()
        .await;
    drop(registration);
    // Let in-flight answers drain to a client that is still reading, but not forever: a client
    // that stopped reading would otherwise keep the connection (and its socket) alive.
    if tokio::time::timeout(DRAIN_WAIT, socket.drain())
        .await
        .is_err()
    {
        tracing::info!(%addr, id, "dropped answers the client did not read");
    }
    if let Err(p) = read {
        std::panic::resume_unwind(p);
    }
    tracing::info!(%addr, id, "client disconnected");
}

/// The WebSocket handshake (token checked, `Origin` refused), within the handshake timeout;
/// `None` (logged) when it failed.
async fn handshake(shared: &Shared, stream: TcpStream, addr: SocketAddr) -> Option<(Ws, Door)> {
    let token = shared.token.clone();
    let timeout = Duration::from_millis(shared.config.handshake_timeout_ms);
    let door = Arc::new(std::sync::Mutex::new(Door::Client(
        mcp::catalog::Surface::Ide,
    )));
    let seen = door.clone();
    #[allow(clippy::result_large_err)]
    let cb = move |req: &Request, resp: Response| {
        let r = check_handshake(&token, req, resp);
        if r.is_ok() {
            let path = req.uri().path();
            let d = if crate::hook::is_hook_path(path) {
                Door::Hook
            } else {
                Door::Client(mcp::catalog::Surface::of_path(path))
            };
            *seen.lock().unwrap_or_else(|p| p.into_inner()) = d;
        }
        r
    };
    let cfg = ws_config(shared.config.max_message_size);
    let accept = tokio_tungstenite::accept_hdr_async_with_config(stream, cb, Some(cfg));
    match tokio::time::timeout(timeout, accept).await {
        Ok(Ok(ws)) => {
            let door = std::mem::replace(
                &mut *door.lock().unwrap_or_else(|p| p.into_inner()),
                Door::Hook,
            );
            Some((ws, door))
        }
        Ok(Err(e)) => {
            tracing::info!(%addr, error = %e, "handshake refused");
            None
        }
        Err(_) => {
            tracing::info!(%addr, "handshake timed out");
            None
        }
    }
}

/// The next text message, or `None` when the connection ends (the bridge stopping, the client
/// gone or closing, a binary message or a protocol error: answered with a close frame).
async fn next_text(
    r: &Registration,
    socket: &mut Socket,
    shutdown: &mut std::pin::Pin<&mut impl Future<Output = ()>>,
) -> Option<Utf8Bytes> {
    loop {
        let read = tokio::select! {
            _ = shutdown.as_mut() => {
                socket.push_close(close(CloseCode::Away, STOPPING));
                return None;
            }
            m = std::future::poll_fn(|cx| socket.poll_read(cx)) => m,
        };
        // (The writing side ended, the client gone: what is still buffered has no one to
        // answer to.)
        let Read::Msg(msg) = read else { return None };
        match msg {
            Some(Ok(Message::Text(t))) => return Some(t),
            Some(Ok(Message::Binary(_))) => {
                let why = "binary messages are not supported";
                socket.push_close(close(CloseCode::Unsupported, why));
                return None;
            }
            Some(Ok(Message::Close(_))) | None => return None,
            Some(Ok(_)) => continue, // ping/pong: tungstenite answers pings itself
            Some(Err(e)) => {
                tracing::info!(addr = %r.addr, id = r.id, error = %e, "closing connection");
                if let Some(code) = close_code_for(&e) {
                    socket.push_close(close(code, &e.to_string()));
                }
                return None;
            }
        }
    }
}

/// The reader: each message read is answered, within the connection's budgets (see the module
/// docs), until the connection ends.
async fn read_loop(
    r: &Registration,
    socket: &mut Socket,
    tx: mpsc::Sender<Outgoing>,
    flow: Arc<Flow>,
) {
    // (`r.requests`: the connection's tools/call requests, cancelled by notifications/cancelled
    // or on close.)
    // (One wait for the bridge's stop, for the whole connection: a wait made per message would
    // register with the signal and leave it again each time.)
    let mut stop = r.shared.shutdown.subscribe();
    let shutdown = std::pin::pin!(async move {
        let _ = stop.changed().await;
    });
    let mut shutdown = shutdown;
    // Requests run concurrently, but each starts (is first polled) only after the one before it
    // has: tokio's LIFO slot would otherwise start pipelined requests in reverse, and tools that
    // queue their callers (execute_claude: one run at a time, in call order) take their place in
    // line on that first poll (messages of PARSE_OFFLOAD bytes or more are parsed off the
    // runtime first, so for those the order is not guaranteed).
    let mut prev_started: Option<tokio::sync::oneshot::Receiver<()>> = None;
    while let Some(text) = next_text(r, socket, &mut shutdown).await {
        #[cfg(feature = "test-tools")]
        if text.as_str().contains("\"test/panic-connection\"") {
            panic!("test/panic-connection: deliberate panic in a connection task");
        }
        // Backpressure: with max_inflight_per_client answers unsent, or their requests'
        // bytes over max_inflight_bytes_per_client, stop reading; the message just read waits
        // here, outside both counts. (A message larger than the whole budget takes all of it,
        // so it waits until nothing else is in flight.) The room is waited for here but taken
        // only by a message that goes on waiting: one answered in its first poll below never
        // needs it. Only this reader takes permits, so the room seen is still there then.
        let want = text.len().clamp(1, flow.max_in_bytes) as u32;
        if !room(&flow.in_bytes, want, socket, &mut shutdown).await
            || !room(&flow.inflight, 1, socket, &mut shutdown).await
        {
            break;
        }
        let answer = Box::pin(answer_message(
            r.shared.clone(),
            r.id,
            r.requests.clone(),
            text,
        ));
        let queue = || Queue {
            tx: tx.clone(),
            flow: flow.clone(),
            _held: flow.take(want),
        };
        // The one before has started (or there is none): this one may start now, here. Most
        // messages (answered from snapshots, notifications, pings) finish in that first poll;
        // they then cost no task, no wake-up of another worker, no queue and no cross-thread
        // hand-off: the answer goes to the socket from here. One that waits (the editor, the
        // disk, the blocking pool) goes on in a task of its own, its answer through the queue.
        let prev_done = match prev_started.as_mut() {
            None => true,
            // (Closed: it ended without starting, its connection gone.)
            Some(rx) => !matches!(
                rx.try_recv(),
                Err(tokio::sync::oneshot::error::TryRecvError::Empty)
            ),
        };
        if prev_done {
            prev_started = None;
            if let Some(reply) = start_here(answer, queue).await {
                socket.push(Message::text(reply));
            }
            continue;
        }
        let (started_tx, started_rx) = tokio::sync::oneshot::channel();
        let after = prev_started.replace(started_rx);
        let queue = queue();
        tokio::spawn(async move {
            if let Some(prev) = after {
                let _ = prev.await;
            }
            if queue.tx.is_closed() {
                return;
            }
            Started {
                fut: Box::pin(queue.answer(answer)),
                started: Some(started_tx),
            }
            .await
        });
    }
}

/// Whether `sem` has `n` permits free: at once when it has, else once they are given back
/// (writing meanwhile); `false` when the writing side ended (the client is gone) or the bridge
/// stops first.
async fn room(
    sem: &Arc<Semaphore>,
    n: u32,
    socket: &mut Socket,
    shutdown: &mut std::pin::Pin<&mut impl Future<Output = ()>>,
) -> bool {
    if sem.available_permits() >= n as usize {
        return true;
    }
    tokio::select! {
        p = sem.acquire_many(n) => p.is_ok(),
        _ = std::future::poll_fn(|cx| socket.poll_write(cx)) => false,
        _ = shutdown.as_mut() => {
            socket.push_close(close(CloseCode::Away, STOPPING));
            false
        }
    }
}

/// The close reason when the bridge stops.
const STOPPING: &str = "editor is stopping the bridge";

/// A message's permits (its place in the budgets of requests in flight), held until its
/// answer is handed on.
type Held = (OwnedSemaphorePermit, OwnedSemaphorePermit);

impl Flow {
    /// A message's place in both budgets, once [`room`] saw it free (`None` if it was not).
    fn take(&self, bytes: u32) -> Option<Held> {
        let n = self.inflight.clone().try_acquire_owned().ok()?;
        let b = self.in_bytes.clone().try_acquire_many_owned(bytes).ok()?;
        Some((n, b))
    }
}

/// Polls a message's answer once, here (with the reader's context: a wake-up that arrives
/// before the task below first polls it wakes the reader instead, harmless, and that first
/// poll registers the task's own). A finished one's answer is returned, for the reader to
/// write; one that is not finished goes on in a task of its own, which queues its answer. A
/// panic here is contained as a task's would be: the message is dropped (its permits with it)
/// and the connection goes on.
async fn start_here(
    mut answer: std::pin::Pin<Box<impl Future<Output = Option<String>> + Send + 'static>>,
    queue: impl FnOnce() -> Queue,
) -> Option<String> {
    let first = std::future::poll_fn(|cx| {
        std::task::Poll::Ready(std::panic::catch_unwind(AssertUnwindSafe(|| {
            answer.as_mut().poll(cx)
        })))
    })
    .await;
    match first {
        Ok(std::task::Poll::Ready(reply)) => reply,
        Ok(std::task::Poll::Pending) => {
            tokio::spawn(queue().answer(answer));
            None
        }
        Err(p) => {
            let msg = jsonrpc::payload_text(p.as_ref());
            tracing::error!(panic = %msg, "message task panicked");
            None
        }
    }
}

/// A message's answer that tells `started` when it was first polled (the next message starts
/// only then).
struct Started<F> {
    fut: std::pin::Pin<Box<F>>,
    started: Option<tokio::sync::oneshot::Sender<()>>,
}

impl<F: Future> Future for Started<F> {
    type Output = F::Output;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<F::Output> {
        let r = self.fut.as_mut().poll(cx);
        if let Some(t) = self.started.take() {
            let _ = t.send(());
        }
        r
    }
}

/// Answers `text` for client `id`: the events learned are applied; the reply, if any, is
/// returned.
async fn answer_message(
    shared: Arc<Shared>,
    id: u64,
    requests: Arc<mcp::Inflight>,
    text: Utf8Bytes,
) -> Option<String> {
    let large = text.len() >= super::trim::LARGE;
    let (reply, events) = answer(&shared, text, &requests).await;
    for ev in events {
        apply(&shared, id, ev);
    }
    if large {
        shared.trimmer.request();
    }
    reply
}

/// The connection's queue, for the answer of a message that waited, with the message's place
/// in the budgets of requests in flight (given back once its answer is queued).
struct Queue {
    tx: mpsc::Sender<Outgoing>,
    flow: Arc<Flow>,
    _held: Option<Held>,
}

impl Queue {
    /// Waits for `answer`, then queues it (see [`Queue::send`]).
    async fn answer(self, answer: impl Future<Output = Option<String>>) {
        self.send(answer.await).await
    }

    /// Queues `reply` within the connection's outgoing byte budget (then drops, giving the
    /// message's place back).
    async fn send(self, reply: Option<String>) {
        let Some(r) = reply else { return };
        let want = r.len().clamp(1, OUT_BYTES) as u32;
        if let Ok(bytes) = self.flow.out_bytes.clone().acquire_many_owned(want).await {
            let m = Outgoing::budgeted(Message::text(r), bytes);
            let _ = self.tx.send(m).await;
        }
    }
}

fn apply(shared: &Shared, id: u64, ev: PeerEvent) {
    match ev {
        PeerEvent::Initialized {
            name,
            version,
            protocol,
        } => {
            tracing::info!(id, client = %name, %version, %protocol, "initialized");
            shared.update_peer(id, |p| {
                p.client_name = Some(name);
                p.client_version = Some(version);
                p.protocol_version = Some(protocol);
            })
        }
        PeerEvent::IdeConnected { pid } => {
            tracing::info!(id, ?pid, "ide_connected");
            shared.update_peer(id, |p| {
                p.ide_connected = true;
                p.ide_connected_pid = pid
            });
            // Tell the editor a Claude Code session is ready for notifications (it sends
            // queued @-mentions and the current selection). No editor handler: no harm.
            let fut = shared.rpc.call(
                crate::editor::methods::IDE_CONNECTED,
                serde_json::json!({"client": id, "pid": pid}),
            );
            tokio::spawn(async move {
                if let Err(e) = fut.await {
                    tracing::debug!(error = %e, "editor did not take ide_connected");
                }
            });
        }
        PeerEvent::ToolsListed => shared.update_peer(id, |p| p.tools_listed = true),
    }
}

fn close(code: CloseCode, reason: &str) -> Message {
    // Close reasons are limited to 123 bytes.
    let mut r: String = reason.chars().take(100).collect();
    while r.len() > 123 {
        r.pop();
    }
    Message::Close(Some(CloseFrame {
        code,
        reason: r.into(),
    }))
}

/// The close code RFC 6455 prescribes for a read error, if one should be sent.
fn close_code_for(e: &WsError) -> Option<CloseCode> {
    match e {
        WsError::Capacity(_) => Some(CloseCode::Size),
        WsError::Utf8(_) => Some(CloseCode::Invalid),
        WsError::Protocol(_) => Some(CloseCode::Protocol),
        _ => None,
    }
}

/// A connected client's registration: undone on drop, so that a connection task that ends in
/// any way (a panic included) leaves the status list, and what its client was waiting for (a
/// diff the person has not decided on) is cancelled, which makes the editor close it.
struct Registration {
    shared: Arc<Shared>,
    id: u64,
    addr: SocketAddr,
    requests: Arc<mcp::Inflight>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.shared.unregister(self.id);
        // Our requests to the client end first: their waiters get an error, and the link lets
        // go of the outgoing queue (so the socket can drain and close).
        self.requests.link().close();
        let cancelled = self.requests.cancel_all();
        if cancelled > 0 {
            let (addr, id) = (self.addr, self.id);
            tracing::info!(%addr, id, cancelled, "cancelled the requests of a departed client");
        }
    }
}
