//! The bridge server: a tokio runtime on background threads, a WebSocket listener on
//! 127.0.0.1, the lock file, and the connected clients ([`Shared`]: the MCP dispatch's
//! [`Service`] — the [`crate::state::State`] tools read and the tool catalog — plus the
//! server's own tables).
//!
//! Nothing here runs on Neovim's main thread: the Neovim crate calls [`Server::start`],
//! [`Server::update_editor_state`] and [`Server::stop`], each of which returns at once.

pub(crate) mod conn;
pub(crate) mod door;
pub mod hooks;
pub mod permissions;
pub mod plans;
pub mod route;
pub(crate) mod socket;
pub mod trim;

pub use crate::auth::AUTH_HEADER;
pub use crate::threads::{yield_to_the_editor, THREAD_NICE};
pub use conn::{check_handshake, ws_config, OUT_BYTES};

use crate::config::Config;
use crate::editor::{EditorRpc, EditorState};
use crate::lockfile::{LockContent, LockFile};
use crate::mcp::catalog::Surface;
use crate::mcp::{Peer, Service};
use crate::state::client::Outgoing;
use crate::state::State;
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};
use tokio_tungstenite::tungstenite::Message;

/// State shared by the server and its connections: the MCP dispatch's [`Service`] (which it
/// dereferences to, and that to the tools' [`State`]: `shared.config`, `shared.snapshot`,
/// `shared.catalog` read as before) and the server's own tables.
pub struct Shared {
    /// What the MCP dispatch answers from (the tools' state and the catalog).
    pub mcp: Service,
    pub port: u16,
    token: String,
    clients: Mutex<HashMap<u64, Client>>,
    next_client: AtomicU64,
    lock: Mutex<Option<LockFile>>,
    shutdown: watch::Sender<bool>,
    started: Instant,
    /// Returns memory to the system after large messages (see [`trim`]).
    trimmer: Arc<trim::Trimmer>,
}

struct Client {
    peer: Peer,
    addr: SocketAddr,
    surface: Surface,
    tx: mpsc::Sender<Outgoing>,
    flow: Arc<conn::Flow>,
    since: Instant,
}

/// One connected client, for `:ClaudeContext status`.
#[derive(Debug, Serialize, Clone)]
pub struct ClientStatus {
    pub id: u64,
    pub addr: String,
    /// `"ide"` (the lock file's URL) or `"mcp"` (`/mcp`: `--mcp-config`, `claude-context-mcp`).
    pub surface: Surface,
    pub name: Option<String>,
    pub version: Option<String>,
    pub protocol_version: Option<String>,
    pub ide_connected_pid: Option<u64>,
    /// The client has asked for `tools/list`.
    pub tools_listed: bool,
    pub connected_secs: u64,
    /// Requests read and not yet answered (at most `max_inflight_per_client`).
    pub in_flight: usize,
    /// Bytes of answers waiting for the client to read them (at most [`OUT_BYTES`] plus one).
    pub queued_bytes: usize,
    /// Bytes of the requests in flight (at most `max_inflight_bytes_per_client`).
    pub inflight_bytes: usize,
}

/// What `:ClaudeContext status` and `:checkhealth` show. The token is masked.
#[derive(Debug, Serialize, Clone)]
pub struct Status {
    pub running: bool,
    pub port: u16,
    pub url: String,
    pub lock_file: Option<String>,
    pub token: String,
    pub clients: Vec<ClientStatus>,
    pub workspace_folders: Vec<String>,
    pub uptime_secs: u64,
    pub version: String,
    pub tools: Vec<String>,
    /// The Claude Code sessions heard of through hooks (`status().sessions`).
    pub sessions: Vec<crate::turns::SessionView>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A poisoned lock only means a panic happened elsewhere while it was held; the data (a map
    // of clients, a lock file handle) is still consistent enough to keep serving.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl std::ops::Deref for Shared {
    type Target = Service;

    fn deref(&self) -> &Service {
        &self.mcp
    }
}

impl Shared {
    /// State without a listener or lock file (the server adds those); also used by tests.
    pub fn new(
        config: Config,
        initial: EditorState,
        rpc: Arc<dyn EditorRpc>,
        port: u16,
        token: String,
    ) -> Shared {
        let (shutdown, _) = watch::channel(false);
        Shared {
            mcp: Service::new(Arc::new(State::new(config, initial, rpc))),
            port,
            token,
            clients: Mutex::new(HashMap::new()),
            next_client: AtomicU64::new(1),
            lock: Mutex::new(None),
            shutdown,
            started: Instant::now(),
            trimmer: Arc::default(),
        }
    }

    /// The auth token (for the lock file and the MCP config file only; never log it).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Sends a notification to every client of the IDE door (the lock file's URL; never to
    /// `/mcp`, the model's door: the editor's notifications — `selection_changed`,
    /// `at_mentioned` — carry the person's text from any file, which the model's tools must not
    /// see); returns how many got it. A client whose queue is full misses it (notifications are
    /// advisory) rather than stalling others.
    pub fn broadcast(&self, method: &str, params: Value) -> usize {
        self.broadcast_encoded(method, &crate::jsonrpc::json_text(&params), false)
    }

    /// [`Shared::broadcast`] to the clients that sent `ide_connected` only (interactive Claude
    /// Code sessions on the IDE door); returns how many got it.
    pub fn broadcast_ide(&self, method: &str, params: Value) -> usize {
        self.broadcast_encoded(method, &crate::jsonrpc::json_text(&params), true)
    }

    /// A notification whose `params` is JSON text already (a selection of megabytes: never
    /// turned into a [`Value`]); it is checked to be JSON here, so call it off the editor's main
    /// thread for big texts. Returns how many clients got it; `ide_only` as in
    /// [`Shared::broadcast_ide`].
    pub fn broadcast_raw(&self, method: &str, params: &str, ide_only: bool) -> usize {
        if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(params) {
            tracing::warn!(method, error = %e, "not sending a notification with invalid params");
            return 0;
        }
        self.broadcast_encoded(method, params, ide_only)
    }

    /// [`Shared::broadcast_raw`] for params this crate encoded itself (not checked again).
    pub fn broadcast_encoded(&self, method: &str, params: &str, ide_only: bool) -> usize {
        let text = crate::jsonrpc::notification_text(method, params);
        // One copy of the text for all the clients (the message's bytes are shared).
        let msg = Message::text(text);
        let clients = lock(&self.clients);
        // The person's selection and mentions: to the session they work with (see route).
        let pick = route::ROUTED
            .contains(&method)
            .then(|| {
                let pids = clients.values().filter_map(|c| c.peer.ide_connected_pid);
                route::pick(self.port, pids)
            })
            .flatten();
        clients
            .values()
            // Editor notifications never go to the model's door (/mcp), as in broadcast().
            .filter(|c| c.surface == Surface::Ide)
            .filter(|c| !ide_only || c.peer.ide_connected)
            .filter(|c| {
                pick.as_ref()
                    .is_none_or(|p| p.allows(c.peer.ide_connected_pid))
            })
            .filter(|c| c.tx.try_send(Outgoing::unbudgeted(msg.clone())).is_ok())
            .count()
    }

    pub fn client_count(&self) -> usize {
        lock(&self.clients).len()
    }

    pub fn status(&self) -> Status {
        let clients = lock(&self.clients)
            .iter()
            .map(|(id, c)| ClientStatus {
                id: *id,
                addr: c.addr.to_string(),
                surface: c.surface,
                name: c.peer.client_name.clone(),
                version: c.peer.client_version.clone(),
                protocol_version: c.peer.protocol_version.clone(),
                ide_connected_pid: c.peer.ide_connected_pid,
                tools_listed: c.peer.tools_listed,
                connected_secs: c.since.elapsed().as_secs(),
                in_flight: c.flow.in_flight(),
                queued_bytes: c.flow.queued_bytes(),
                inflight_bytes: c.flow.inflight_bytes(),
            })
            .collect();
        Status {
            running: !*self.shutdown.borrow(),
            port: self.port,
            url: format!("ws://127.0.0.1:{}", self.port),
            lock_file: lock(&self.lock)
                .as_ref()
                .map(|l| l.path().display().to_string()),
            token: crate::auth::mask(&self.token),
            clients,
            workspace_folders: self.folders(),
            uptime_secs: self.started.elapsed().as_secs(),
            version: crate::VERSION.into(),
            tools: self.catalog.names().map(String::from).collect(),
            sessions: self.sessions.sessions(crate::turns::now_ms()),
        }
    }

    fn register(
        &self,
        addr: SocketAddr,
        surface: Surface,
        tx: mpsc::Sender<Outgoing>,
        flow: Arc<conn::Flow>,
    ) -> u64 {
        let id = self.next_client.fetch_add(1, Ordering::Relaxed);
        let c = Client {
            peer: Peer::default(),
            addr,
            surface,
            tx,
            flow,
            since: Instant::now(),
        };
        lock(&self.clients).insert(id, c);
        id
    }

    fn unregister(&self, id: u64) {
        lock(&self.clients).remove(&id);
    }

    fn update_peer(&self, id: u64, f: impl FnOnce(&mut Peer)) {
        if let Some(c) = lock(&self.clients).get_mut(&id) {
            f(&mut c.peer)
        }
    }

    fn refresh_lock_file(&self) {
        // Read the folders under the lock: two refreshes racing must not write the older
        // snapshot last.
        let mut guard = lock(&self.lock);
        if let Some(l) = guard.as_mut() {
            if let Err(e) = l.update_folders(self.folders()) {
                tracing::warn!(error = %e, "cannot update the lock file");
            }
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error("no free port in {min}..={max} on 127.0.0.1 (last error: {last})")]
    NoPort { min: u16, max: u16, last: String },
    #[error("cannot start the bridge runtime: {0}")]
    Runtime(std::io::Error),
    #[error("cannot write the lock file in {dir}: {err}")]
    LockFile { dir: String, err: std::io::Error },
    #[error("cannot create the auth token: {0}")]
    Token(std::io::Error),
}

/// A running bridge. Dropping it stops it.
pub struct Server {
    runtime: Option<tokio::runtime::Runtime>,
    shared: Arc<Shared>,
    /// Ends (`recv` gives `None`) once the accept loop and every client connection have ended:
    /// each holds a sender (see [`conn::Live`]).
    live: mpsc::Receiver<()>,
}

/// How long stopping waits for connections to send their close frames (1.2–1.5 ms with 24
/// clients, BENCHMARKS.md; the runtime's own shutdown would drop them unsent at their next
/// await).
const CLOSE_WAIT: Duration = Duration::from_millis(500);

impl Server {
    /// Binds a free port, writes the lock file and starts serving on background threads.
    pub fn start(
        config: Config,
        initial: EditorState,
        rpc: Arc<dyn EditorRpc>,
    ) -> Result<Server, StartError> {
        config.validate().map_err(StartError::Config)?;
        let lock_dir = config.lock_dir().map_err(StartError::Config)?;
        let token = crate::auth::new_token().map_err(StartError::Token)?;
        let listener = bind(config.port_range.min, config.port_range.max)?;
        let port = listener.local_addr().map_err(StartError::Runtime)?.port();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .max_blocking_threads(16)
            .thread_name("claude-context")
            .on_thread_start(yield_to_the_editor(crate::threads::thread_nice()))
            .enable_all()
            .build()
            .map_err(StartError::Runtime)?;
        let shared = Arc::new(Shared::new(config, initial, rpc, port, token));
        let stale = crate::lockfile::clean_stale(&lock_dir, crate::lockfile::KIND);
        if !stale.is_empty() {
            tracing::info!(
                count = stale.len(),
                "removed lock files of editors that are gone"
            );
        }
        let content = LockContent {
            pid: std::process::id(),
            workspace_folders: shared.folders(),
            ide_name: shared.config.ide_name.clone(),
            transport: "ws".into(),
            auth_token: shared.token.clone(),
            ide_kind: Some(crate::lockfile::KIND.into()),
        };
        let lf =
            LockFile::create(&lock_dir, port, content).map_err(|err| StartError::LockFile {
                dir: lock_dir.display().to_string(),
                err,
            })?;
        *lock(&shared.lock) = Some(lf);
        listener
            .set_nonblocking(true)
            .map_err(StartError::Runtime)?;
        let snapshot = shared.snapshot.clone();
        runtime.spawn(async move { snapshot.drain_forever().await });
        let s = shared.clone();
        let (live_tx, live) = mpsc::channel(1);
        runtime.spawn(async move {
            match tokio::net::TcpListener::from_std(listener) {
                Ok(l) => conn::accept_loop(s, l, conn::Live::new(live_tx)).await,
                Err(e) => tracing::error!(error = %e, "cannot listen"),
            }
        });
        tracing::info!(port, "bridge started");
        Ok(Server {
            runtime: Some(runtime),
            shared,
            live,
        })
    }

    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    pub fn port(&self) -> u16 {
        self.shared.port
    }

    /// Spawns a future on the bridge runtime.
    pub fn spawn<F>(&self, f: F)
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        if let Some(rt) = &self.runtime {
            rt.spawn(f);
        }
    }

    /// Stores a new editor snapshot; when the workspace folders changed, the lock file is
    /// rewritten on the runtime (never on the caller's thread).
    pub fn update_editor_state(&self, st: EditorState) {
        let old = self.shared.set_editor_state(st);
        let new = self.shared.editor_state();
        if old.workspace_folders() != new.workspace_folders() {
            let s = self.shared.clone();
            if let Some(rt) = &self.runtime {
                rt.spawn_blocking(move || s.refresh_lock_file());
            }
        }
    }

    /// Closes every connection, removes the lock file and stops the runtime.
    pub fn stop(mut self) {
        self.shutdown_now();
    }

    fn shutdown_now(&mut self) {
        self.shared.shutdown.send_replace(true);
        lock(&self.shared.lock).take();
        let Some(rt) = self.runtime.take() else {
            return;
        };
        match tokio::runtime::Handle::try_current() {
            // Dropped while the process exits (Neovim ended by a signal before VimLeavePre could
            // stop the bridge): tokio's own thread-locals may be gone already, and entering the
            // runtime would panic inside a thread-local destructor, which aborts the process. The
            // lock file is removed above; let the runtime go without waiting.
            Err(e) if e.is_thread_local_destroyed() => {
                rt.shutdown_background();
                return;
            }
            // Claude session state written in the background (history, the session id to
            // --resume): let the writes in flight finish, so a quit right after an answer keeps
            // it. Meanwhile each client connection sends its close frame (1001) and ends.
            // (Not from inside a runtime, where blocking is not allowed.)
            Err(_) => {
                let claude = &self.shared.claude;
                let live = &mut self.live;
                rt.block_on(async {
                    let flushed = tokio::time::timeout(Duration::from_secs(2), claude.flush());
                    let closed = tokio::time::timeout(CLOSE_WAIT, live.recv());
                    let _ = tokio::join!(flushed, closed);
                });
            }
            Ok(_) => {}
        }
        rt.shutdown_timeout(Duration::from_millis(100));
        tracing::info!(port = self.shared.port, "bridge stopped");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.runtime.is_some() {
            self.shutdown_now();
        }
    }
}

/// Binds 127.0.0.1 on a free port in `min..=max`, probing from a random start.
fn bind(min: u16, max: u16) -> Result<TcpListener, StartError> {
    let span = u32::from(max) - u32::from(min) + 1;
    let mut seed = [0u8; 4];
    let _ = getrandom::fill(&mut seed);
    let start = u32::from_le_bytes(seed) % span;
    let mut last = String::from("no port tried");
    for i in 0..span.min(2000) {
        let port = (u32::from(min) + (start + i) % span) as u16;
        match TcpListener::bind((Ipv4Addr::LOCALHOST, port)) {
            Ok(l) => return Ok(l),
            Err(e) => last = format!("port {port}: {e}"),
        }
    }
    Err(StartError::NoPort { min, max, last })
}
