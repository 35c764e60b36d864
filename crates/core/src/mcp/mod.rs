//! JSON-RPC 2.0 / MCP dispatch. Protocol types (results, tools, error codes) come from `rmcp`;
//! the dispatch itself is here because the bridge must answer things a strict typed decoder
//! cannot: malformed JSON (-32700, and the connection goes on), batches, odd ids, notifications
//! Claude Code invents (`ide_connected`), and it must do so in microseconds.

pub mod answer;
pub mod catalog;
pub mod incoming;
pub mod inflight;

pub use crate::jsonrpc::response;
use crate::jsonrpc::{error_response, json_text, payload_text, shorten, RpcError};
use crate::state::client;
use crate::state::State;
use crate::tools::{Run, ToolError, ToolOutput};
use crate::turns::Tracker;
pub use answer::{tool_result, Answer};
use catalog::{Catalog, Surface};
use futures_util::{FutureExt, StreamExt};
pub use incoming::{parse, Incoming, Parsed};
use incoming::{Message, Params};
pub use inflight::Inflight;
use rmcp::model::{
    CallToolResult, ContentBlock as Content, ErrorCode, Implementation, InitializeResult,
    PromptsCapability, ProtocolVersion, ServerCapabilities, ToolsCapability,
};
use serde_json::{json, Map, Value};
use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

/// Protocol versions we speak; a client asking for one of these gets it back.
pub const SUPPORTED_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// What the dispatch answers from: the [`State`] the tools read (in the sessions' [`Tracker`],
/// which holds it) and the [`Catalog`] of tools.
///
/// It dereferences to its [`Tracker`], and that to its [`State`] (`service.config`,
/// `service.snapshot`, `service.sessions`; `service.state` is the tools' `Arc<State>`), and the
/// server's `Shared` to it, so that the bridge's state reads the same at every layer.
pub struct Service {
    /// The state, with the sessions and checkpoints heard of through hooks.
    pub turns: Arc<Tracker>,
    pub catalog: Catalog,
}

impl Service {
    /// The dispatch over `state`, with every tool of [`crate::tools::registry`].
    pub fn new(state: Arc<State>) -> Service {
        let catalog = Catalog::new(crate::tools::registry())
            .with_language(&state.config.memory_bank_language);
        let turns = Arc::new(Tracker::new(state));
        Service { turns, catalog }
    }
}

impl std::ops::Deref for Service {
    type Target = Tracker;

    fn deref(&self) -> &Tracker {
        &self.turns
    }
}

/// The `_meta` key in which clients of MCP 2026-07-28 and later name the protocol version of a
/// request (they send it on `server/discover`, before any `initialize`).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// What a newer client's `server/discover` probe gets: "method not found", with the versions we
/// speak in `data.supported`. Both Claude Code (2.1.330) and rmcp's client take any error but
/// -32022 as "a server of the `initialize` era" and go on with `initialize` on the same
/// connection. A `DiscoverResult` would not do: it declares the 2026-07-28 lifecycle (no
/// `initialize`, per-request `_meta`), and an rmcp client finding none of its versions in it stops
/// instead of falling back; -32022 sends rmcp's client round its retry loop to the same end.
fn discover_error() -> RpcError {
    RpcError::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!(
            "Method not found: server/discover (this server speaks MCP {}; negotiate with initialize)",
            SUPPORTED_VERSIONS.join(", ")
        ),
    )
    .with_data(json!({ "supported": SUPPORTED_VERSIONS }))
}

/// The version a request names in `params._meta` (the 2026-07-28 way), when it names one we do
/// not speak: such a request gets -32022 with `data: {supported, requested}` (as rmcp's server
/// answers), never an answer in a protocol the client did not ask for.
fn unsupported_meta_version(params: Option<&Value>) -> Option<RpcError> {
    let asked = params?.get("_meta")?.get(META_PROTOCOL_VERSION)?;
    let asked_str = asked.as_str().unwrap_or("");
    if SUPPORTED_VERSIONS.contains(&asked_str) {
        return None;
    }
    Some(
        RpcError::new(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            format!(
                "Unsupported protocol version {} (this server speaks MCP {}; negotiate with initialize)",
                shorten(&asked.to_string(), NAME_ECHO),
                SUPPORTED_VERSIONS.join(", ")
            ),
        )
        .with_data(json!({ "supported": SUPPORTED_VERSIONS, "requested": asked })),
    )
}

/// How much of a client-supplied name errors and logs repeat.
const NAME_ECHO: usize = 100;

/// Per-connection protocol facts (for `:ClaudeContext status` and logs).
#[derive(Debug, Default, Clone)]
pub struct Peer {
    pub client_name: Option<String>,
    pub client_version: Option<String>,
    pub protocol_version: Option<String>,
    pub ide_connected_pid: Option<u64>,
    /// The client sent `ide_connected`: an interactive Claude Code session that handles the
    /// editor's notifications (`at_mentioned`).
    pub ide_connected: bool,
    /// The client asked for `tools/list` (the CLI does right after connecting).
    pub tools_listed: bool,
}

/// What the connection learns from a message.
pub enum PeerEvent {
    Initialized {
        name: String,
        version: String,
        protocol: String,
    },
    IdeConnected {
        pid: Option<u64>,
    },
    ToolsListed,
}

/// How many entries of a batch run at once.
const BATCH_CONCURRENCY: usize = 16;

/// A message that is not JSON (including nesting deeper than serde_json's limit of 128).
#[derive(Debug, thiserror::Error)]
#[error("Parse error: {0}")]
pub struct ParseError(serde_json::Error);

impl ParseError {
    /// The -32700 answer to send (its id is null: the request's cannot be read).
    pub fn reply(&self) -> String {
        let err = RpcError::new(ErrorCode::PARSE_ERROR, self.to_string());
        json_text(&error_response(&Value::Null, &err))
    }
}

/// Handles one WebSocket text message; returns the reply text, if any, and what was learned.
/// Its `tools/call` requests cannot be cancelled (see [`handle_text_in`]).
pub async fn handle_text(shared: &Service, text: &str) -> (Option<String>, Vec<PeerEvent>) {
    handle_text_in(shared, text, &Inflight::default()).await
}

/// [`handle_text`] for a connection: its `tools/call` requests run in `inflight`, so that
/// `notifications/cancelled` (or the connection closing) can cancel them.
pub async fn handle_text_in(
    shared: &Service,
    text: &str,
    inflight: &Inflight,
) -> (Option<String>, Vec<PeerEvent>) {
    match parse(text) {
        Ok(v) => handle_message(shared, v, inflight).await,
        Err(e) => (Some(e.reply()), Vec::new()),
    }
}

/// Handles one parsed message: a request, a notification, a response or a batch of them.
///
/// A batch runs [`BATCH_CONCURRENCY`] entries at a time and its answers are one message, so
/// their total size is capped (`max_message_size`, the limit we read with): past it the whole
/// batch is answered with one -32600 error asking for smaller batches.
pub async fn handle_message(
    shared: &Service,
    v: Parsed,
    inflight: &Inflight,
) -> (Option<String>, Vec<PeerEvent>) {
    let one = match v {
        // (A batch's state machine is its own: one message's does not carry it.)
        Parsed::Other(Value::Array(items)) => {
            return Box::pin(batch(shared, items, inflight)).await
        }
        Parsed::Call(c) => Message::Call(c),
        Parsed::One(m) => Message::One(m),
        Parsed::Other(_) => Message::NotObject,
    };
    handle_one(shared, one, inflight).await
}

/// A batch: its entries [`BATCH_CONCURRENCY`] at a time, their answers one message (see
/// [`handle_message`]).
async fn batch(
    shared: &Service,
    items: Vec<Value>,
    inflight: &Inflight,
) -> (Option<String>, Vec<PeerEvent>) {
    let mut events = Vec::new();
    if items.is_empty() {
        let e = RpcError::new(ErrorCode::INVALID_REQUEST, "Invalid Request: empty batch");
        return (Some(error_response(&Value::Null, &e).to_string()), events);
    }
    let cap = shared.config.max_message_size;
    let n = items.len();
    let mut answers = futures_util::stream::iter(items)
        .map(|m| handle_value_in(shared, m, inflight))
        .buffered(BATCH_CONCURRENCY);
    let mut out = String::from("[");
    let mut too_big = false;
    let mut since_yield = 0u32;
    while let Some((r, ev)) = answers.next().await {
        events.extend(ev);
        if let Some(r) = r {
            if out.len() > 1 {
                out.push(',');
            }
            out.push_str(&r);
            if out.len() > cap {
                too_big = true;
                break;
            }
        }
        since_yield += 1;
        if since_yield == 64 {
            since_yield = 0;
            // Share the worker with other connections during a long batch.
            tokio::task::yield_now().await;
        }
    }
    let reply = if too_big {
        let e = RpcError::new(
            ErrorCode::INVALID_REQUEST,
            format!(
                "Invalid Request: the answers to this batch of {n} messages exceed \
                 {cap} bytes (max_message_size); send fewer requests per batch"
            ),
        );
        Some(error_response(&Value::Null, &e).to_string())
    } else if out.len() > 1 {
        out.push(']');
        Some(out)
    } else {
        None
    };
    (reply, events)
}

/// Whether JSON-RPC allows `id` as a request id (string, number or null).
pub fn valid_id(id: &Value) -> bool {
    matches!(id, Value::String(_) | Value::Number(_) | Value::Null)
}

/// Handles one JSON-RPC message (an element of a batch or a whole message) with the
/// connection's cancellable requests; returns the reply's text, if any, and what was learned.
pub async fn handle_value_in(
    shared: &Service,
    v: Value,
    inflight: &Inflight,
) -> (Option<String>, Vec<PeerEvent>) {
    let msg = match Incoming::of(v) {
        Ok(m) => Message::One(Box::new(m)),
        Err(_) => Message::NotObject,
    };
    handle_one(shared, msg, inflight).await
}

/// Handles one message.
async fn handle_one(
    shared: &Service,
    msg: Message,
    inflight: &Inflight,
) -> (Option<String>, Vec<PeerEvent>) {
    let mut events = Vec::new();
    let (id, method, params) = match read_message(msg, inflight) {
        Ok(parts) => parts,
        Err(reply) => return (reply.map(|r| json_text(&r)), events),
    };
    let Some(id) = id else {
        notification(&method, params.value(), &mut events, inflight);
        return (None, events);
    };
    let root = inflight.root();
    let link = inflight.link();
    if method == "initialize" {
        let caps = params
            .value()
            .and_then(|p| p.get("capabilities"))
            .cloned()
            .unwrap_or(Value::Null);
        link.set_capabilities(caps);
    }
    let traced = trace_start(shared, &method, &params);
    let call = Box::pin(request(
        shared,
        inflight.surface(),
        &method,
        params,
        &mut events,
    ));
    let call = client::CLIENT.scope(link, crate::project::CONNECTION_ROOT.scope(root, call));
    let result = if method == "tools/call" {
        // The only long-running requests; a cancelled one gets no answer (MCP).
        match inflight.run(&id, call).await {
            Some(r) => r,
            None => {
                tracing::debug!(%id, "request cancelled");
                return (None, events);
            }
        }
    } else {
        call.await
    };
    if let Some(t) = traced {
        trace_end(t, &method, &id, &result, inflight);
    }
    (Some(answer::reply(&id, result)), events)
}

/// A message's id (`None`: a notification), method and params; or what to answer at once (an
/// invalid request's error, or nothing for a response to one of our requests).
#[allow(clippy::type_complexity)]
fn read_message(
    msg: Message,
    inflight: &Inflight,
) -> Result<(Option<Value>, Cow<'static, str>, Params), Option<Value>> {
    let invalid = |id: &Value, why: &str| {
        let e = RpcError::new(
            ErrorCode::INVALID_REQUEST,
            format!("Invalid Request: {why}"),
        );
        Err(Some(error_response(id, &e)))
    };
    let mut m = match msg {
        Message::One(m) => m,
        Message::NotObject => return invalid(&Value::Null, "not an object"),
        Message::Call(c) => {
            let params = Params::Call {
                name: c.name,
                arguments: c.arguments,
            };
            return Ok((Some(c.id), Cow::Borrowed(TOOLS_CALL), params));
        }
    };
    let id = m.id.take();
    let reply_id = id.clone().filter(valid_id).unwrap_or(Value::Null);
    if m.jsonrpc.as_ref().and_then(Value::as_str) != Some("2.0") {
        return invalid(&reply_id, "jsonrpc must be \"2.0\"");
    }
    if id.as_ref().is_some_and(|i| !valid_id(i)) {
        return invalid(&Value::Null, "id must be a string, a number or null");
    }
    let method = match m.method.take() {
        Some(Value::String(s)) => Cow::Owned(s),
        None if m.result.is_some() || m.error.is_some() => {
            // A response: to one of our requests to the client (routed to its waiter), or to
            // one we never made (ignored).
            if let Some(id) = &id {
                if !inflight.link().resolve(id, m.result.take(), m.error.take()) {
                    tracing::debug!(%id, "ignoring a response to no request of ours");
                }
            }
            return Err(None);
        }
        _ => return invalid(&reply_id, "method must be a string"),
    };
    Ok((id, method, Params::Value(m.params.take())))
}

const TOOLS_CALL: &str = "tools/call";

/// With log_level = "trace": when the request started and the tool it calls, for one line per
/// request (method, tool, client, duration), so a stall can be diagnosed (which call waited,
/// and for how long).
fn trace_start(
    shared: &Service,
    method: &str,
    params: &Params,
) -> Option<(std::time::Instant, Option<String>)> {
    tracing::enabled!(tracing::Level::TRACE).then(|| {
        // Only names the bridge knows are logged: a client may send anything (even a secret).
        let tool = (method == TOOLS_CALL)
            .then(|| {
                let n = match params {
                    Params::Call { name, .. } => name.as_str(),
                    Params::Value(p) => p.as_ref()?.get("name")?.as_str()?,
                };
                Some(if shared.catalog.get(n).is_some() {
                    n.to_string()
                } else {
                    "(unknown tool)".to_string()
                })
            })
            .flatten();
        (std::time::Instant::now(), tool)
    })
}

/// The trace line of a request [`trace_start`] began.
fn trace_end(
    (start, tool): (std::time::Instant, Option<String>),
    method: &str,
    id: &Value,
    result: &Result<Answer, RpcError>,
    inflight: &Inflight,
) {
    let ok = matches!(result, Ok(r) if !r.is_tool_error());
    let unknown = matches!(result, Err(e) if e.code == ErrorCode::METHOD_NOT_FOUND.0);
    tracing::trace!(
        method = %if unknown { "(unknown method)" } else { method },
        tool = %tool.as_deref().unwrap_or("-"),
        client = inflight.client(),
        surface = ?inflight.surface(),
        %id,
        ok,
        ms = format_args!("{:.3}", start.elapsed().as_secs_f64() * 1000.0),
        "request"
    );
}

fn notification(
    method: &str,
    params: Option<&Value>,
    events: &mut Vec<PeerEvent>,
    inflight: &Inflight,
) {
    match method {
        // Only Claude Code's IDE connection is an IDE: a client of /mcp saying so would get
        // the @-mentions and selections meant for Claude Code.
        "ide_connected" if inflight.surface() == Surface::Ide => {
            events.push(PeerEvent::IdeConnected {
                pid: params.and_then(|p| p.get("pid")).and_then(Value::as_u64),
            })
        }
        "ide_connected" => tracing::debug!("ignoring ide_connected from a client of /mcp"),
        "notifications/cancelled" => {
            if let Some(id) = params.and_then(|p| p.get("requestId")) {
                let n = inflight.cancel(id);
                tracing::debug!(%id, cancelled = n, "notifications/cancelled");
            }
        }
        "notifications/initialized" => {}
        other => tracing::debug!(
            method = %shorten(other, NAME_ECHO),
            "ignoring unknown notification"
        ),
    }
}

fn params_object(params: Option<Value>) -> Result<Map<String, Value>, RpcError> {
    match params {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(o)) => Ok(o),
        Some(_) => Err(RpcError::new(
            ErrorCode::INVALID_PARAMS,
            "Invalid params: params must be an object",
        )),
    }
}

async fn request(
    shared: &Service,
    surface: Surface,
    method: &str,
    params: Params,
    events: &mut Vec<PeerEvent>,
) -> Result<Answer, RpcError> {
    match params {
        Params::Value(p) if method != TOOLS_CALL => {
            request_value(shared, surface, method, p, events).map(Answer::Value)
        }
        // (Only a `tools/call` is ever read as `Params::Call`.)
        params => tools_call(shared, surface, params).await,
    }
}

/// The answer of every request but `tools/call`.
fn request_value(
    shared: &Service,
    surface: Surface,
    method: &str,
    params: Option<Value>,
    events: &mut Vec<PeerEvent>,
) -> Result<Value, RpcError> {
    if method == "server/discover" {
        return Err(discover_error());
    }
    if method != "initialize" {
        if let Some(e) = unsupported_meta_version(params.as_ref()) {
            return Err(e);
        }
    }
    match method {
        "initialize" => initialize(params, events),
        "ping" => Ok(json!({})),
        #[cfg(feature = "test-tools")]
        "test/panic" => panic!("test/panic: deliberate panic in dispatch"),
        "tools/list" => {
            params_object(params)?;
            events.push(PeerEvent::ToolsListed);
            Ok(shared.catalog.list(surface).clone())
        }
        "prompts/list" => {
            params_object(params)?;
            Ok(crate::prompts::list())
        }
        "prompts/get" => {
            let p = params_object(params)?;
            crate::prompts::get(&p).map_err(|m| {
                RpcError::new(ErrorCode::INVALID_PARAMS, format!("Invalid params: {m}"))
            })
        }
        _ => Err(RpcError::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {}", shorten(method, NAME_ECHO)),
        )),
    }
}

/// `initialize`: the version both speak (the client's if we speak it, else our newest), and
/// who the client is.
fn initialize(params: Option<Value>, events: &mut Vec<PeerEvent>) -> Result<Value, RpcError> {
    let p = params_object(params)?;
    let asked = p
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let version = if SUPPORTED_VERSIONS.contains(&asked) {
        asked
    } else {
        SUPPORTED_VERSIONS[0]
    };
    let client = p.get("clientInfo");
    let field = |k| {
        client
            .and_then(|c| c.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    events.push(PeerEvent::Initialized {
        name: field("name"),
        version: field("version"),
        protocol: version.to_string(),
    });
    Ok(initialize_result(version))
}

/// `tools/call {name, arguments}` on `surface`.
async fn tools_call(
    shared: &Service,
    surface: Surface,
    params: Params,
) -> Result<Answer, RpcError> {
    let invalid = |m: &str| Err(RpcError::new(ErrorCode::INVALID_PARAMS, m.to_string()));
    let (name, arguments) = match params {
        Params::Call { name, arguments } => (name, Some(arguments)),
        Params::Value(params) => {
            let mut p = params_object(params)?;
            let Some(Value::String(name)) = p.remove("name") else {
                return invalid("Invalid params: tools/call needs a string 'name'");
            };
            (name, p.remove("arguments"))
        }
    };
    let args = match arguments {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(a @ Value::Object(_)) => a,
        Some(_) => return invalid("Invalid params: 'arguments' must be an object"),
    };
    let tool = shared.catalog.get(&name);
    if tool.is_some_and(|t| surface == Surface::Mcp && !surface.offers(t)) {
        return invalid(&format!(
            "{} belongs to Claude Code's IDE connection (the lock file's URL); it is not offered \
             at {}",
            shorten(&name, NAME_ECHO),
            catalog::MCP_PATH
        ));
    }
    let outcome = run_tool_on(shared, surface, tool, &name, args).await?;
    finish(outcome, answer::tool_answer)
}

fn initialize_result(version: &str) -> Value {
    let mut caps = ServerCapabilities::default();
    caps.tools = Some(ToolsCapability::default());
    // The WRAP prompts: identify-issue, widen-options.
    caps.prompts = Some(PromptsCapability::default());
    let r = InitializeResult::new(caps)
        .with_protocol_version(
            ProtocolVersion::KNOWN_VERSIONS
                .iter()
                .find(|v| v.as_str() == version)
                .cloned()
                .unwrap_or(ProtocolVersion::V_2025_11_25),
        )
        .with_server_info(Implementation::new("claude-context.nvim", crate::VERSION))
        .with_instructions(
            "Neovim bridge: workspace folders, project info and files inside the project root.",
        );
    serde_json::to_value(r).unwrap_or(Value::Null)
}

/// Runs a tool, containing panics; `InvalidParams` becomes -32602, failures `isError: true`.
/// (The IDE door's view: the editor's own calls and Claude Code's IDE connection.)
pub async fn call_tool(shared: &Service, name: &str, args: Value) -> Result<Value, RpcError> {
    call_tool_on(shared, Surface::Ide, name, args).await
}

/// [`call_tool`] for a client of `surface`: on `/mcp` the tools that open or report editor
/// files are confined to the project ([`crate::tools::door`]).
pub async fn call_tool_on(
    shared: &Service,
    surface: Surface,
    name: &str,
    args: Value,
) -> Result<Value, RpcError> {
    let tool = shared.catalog.get(name);
    let outcome = run_tool_on(shared, surface, tool, name, args).await?;
    finish(outcome, tool_result)
}

/// Runs `tool`, the catalog's entry of `name`, for a client of `surface` (none, or one not
/// offered there: -32602), containing panics.
async fn run_tool_on(
    shared: &Service,
    surface: Surface,
    tool: Option<&crate::tools::Entry>,
    name: &str,
    args: Value,
) -> Result<Result<ToolOutput, ToolError>, RpcError> {
    let Some(tool) = tool.filter(|t| surface.offers(t)) else {
        return Err(RpcError::new(
            ErrorCode::INVALID_PARAMS,
            format!("Unknown tool: {}", shorten(name, NAME_ECHO)),
        ));
    };
    let args = shared.catalog.with_default_language(tool, args);
    let fut = AssertUnwindSafe(async {
        match (tool.run, surface) {
            (Run::Turns(run), _) => run(shared.turns.clone(), args).await,
            (Run::State(run), Surface::Mcp) => {
                crate::tools::door::run(shared.state.clone(), tool, run, args).await
            }
            (Run::State(run), Surface::Ide) => run(shared.state.clone(), args).await,
        }
    });
    let outcome = match AssertUnwindSafe(fut).catch_unwind().await {
        Ok(r) => r,
        Err(p) => {
            let msg = payload_text(p.as_ref());
            tracing::error!(tool = name, panic = %msg, "tool panicked");
            Err(ToolError::Failed(format!(
                "internal error in {name}: {msg} (the panic was contained; see :ClaudeContext log)"
            )))
        }
    };
    Ok(outcome)
}

/// A tool's outcome as MCP answers it: a success rendered by `success`, `InvalidParams` as
/// -32602, `Internal` as -32603, a failure as a result with `isError: true`.
fn finish<T: From<Value>>(
    outcome: Result<ToolOutput, ToolError>,
    success: fn(ToolOutput) -> T,
) -> Result<T, RpcError> {
    match outcome {
        Ok(out) => Ok(success(out)),
        Err(ToolError::InvalidParams(m)) => Err(RpcError::new(ErrorCode::INVALID_PARAMS, m)),
        Err(ToolError::Internal(m)) => Err(RpcError::new(ErrorCode::INTERNAL_ERROR, m)),
        Err(ToolError::Failed(m)) => Ok(T::from(
            serde_json::to_value(CallToolResult::error(vec![Content::text(m)]))
                .unwrap_or(Value::Null),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::editor::{EditorState, NoEditor};

    fn shared(cwd: &std::path::Path) -> Service {
        let st = EditorState {
            cwd: Some(cwd.to_path_buf()),
            ..Default::default()
        };
        Service::new(Arc::new(State::new(
            Config::default(),
            st,
            Arc::new(NoEditor),
        )))
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn envelopes_keep_the_jsonrpc_shape() {
        let r = response(&json!(7), json!({"a": [1, 2]}));
        assert_eq!(
            json_text(&r),
            r#"{"jsonrpc":"2.0","id":7,"result":{"a":[1,2]}}"#
        );
        let e = error_response(
            &json!("x"),
            &RpcError::new(ErrorCode::METHOD_NOT_FOUND, "Method not found: nope"),
        );
        assert_eq!(
            json_text(&e),
            r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"Method not found: nope"}}"#
        );
        assert_eq!(
            e,
            json!({"jsonrpc": "2.0", "id": "x", "error": {"code": -32601, "message": "Method not found: nope"}})
        );
    }

    #[test]
    fn surfaces_by_path() {
        assert_eq!(Surface::of_path("/"), Surface::Ide);
        assert_eq!(Surface::of_path(""), Surface::Ide);
        assert_eq!(Surface::of_path("/mcp"), Surface::Mcp);
        assert_eq!(Surface::of_path("/mcp/"), Surface::Mcp);
        assert_eq!(Surface::of_path("/mcp?x=1"), Surface::Mcp);
        assert_eq!(Surface::of_path("/mcpx"), Surface::Ide);
    }

    #[test]
    fn ide_plumbing_is_refused_at_mcp_and_served_at_the_ide_door() {
        let d = tempfile::tempdir().unwrap();
        let s = shared(d.path());
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"close_tab","arguments":{"tab_name":"x"}}}"#;
        let (r, _) = rt().block_on(handle_text_in(&s, call, &Inflight::new(Surface::Mcp)));
        let r: Value = serde_json::from_str(&r.unwrap()).unwrap();
        assert_eq!(r["error"]["code"], -32602, "{r}");
        let m = r["error"]["message"].as_str().unwrap();
        assert!(
            m.contains("close_tab") && m.contains("IDE connection"),
            "{m}"
        );
        // The same call at the IDE door reaches the tool (no editor here: a tool error).
        let (r, _) = rt().block_on(handle_text_in(&s, call, &Inflight::new(Surface::Ide)));
        let r: Value = serde_json::from_str(&r.unwrap()).unwrap();
        assert!(r.get("error").is_none(), "{r}");
        assert!(r["result"].is_object(), "{r}");
    }

    fn ask(s: &Service, text: &str) -> Option<Value> {
        let (r, _) = rt().block_on(handle_text(s, text));
        r.map(|t| serde_json::from_str(&t).unwrap())
    }

    #[test]
    fn initialize_negotiates_versions() {
        let d = tempfile::tempdir().unwrap();
        let s = shared(d.path());
        for v in SUPPORTED_VERSIONS {
            let req = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":v,"capabilities":{},"clientInfo":{"name":"c","version":"1"}}});
            let r = ask(&s, &req.to_string()).unwrap();
            assert_eq!(r["result"]["protocolVersion"], *v);
            assert!(r["result"]["capabilities"]["tools"].is_object());
            assert!(r["result"]["capabilities"]["prompts"].is_object());
            assert_eq!(r["result"]["serverInfo"]["name"], "claude-context.nvim");
        }
        let r = ask(&s, r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"1999-01-01"}}"#).unwrap();
        assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    }

    #[test]
    fn tools_called_without_language_use_the_configured_one() {
        let d = tempfile::tempdir().unwrap();
        let with = |lang: &str| {
            let cfg = Config {
                memory_bank_language: lang.into(),
                ..Config::default()
            };
            let st = EditorState {
                cwd: Some(d.path().to_path_buf()),
                ..Default::default()
            };
            Service::new(Arc::new(State::new(cfg, st, Arc::new(NoEditor))))
        };
        let rules = |s: &Service, args: Value| {
            let r = rt().block_on(call_tool(s, "read_rules", args)).unwrap();
            assert_eq!(r["isError"], false, "{r}");
            r["structuredContent"]["rules"]["content"]
                .as_str()
                .unwrap()
                .to_string()
        };
        let en = with("en");
        let text = rules(&en, json!({}));
        assert!(
            text.contains("read_context") && !text.contains("メモリバンクのルール"),
            "{text}"
        );
        // An explicit language still wins.
        assert!(rules(&en, json!({"language": "ja"})).contains("メモリバンクのルール"));
        let ja = with("ja");
        assert!(rules(&ja, json!({})).contains("メモリバンクのルール"));
        assert!(!rules(&ja, json!({"language": "en"})).contains("メモリバンクのルール"));
        // tools/list shows the configured default; tools without a language are left alone.
        let list = en.catalog.list(Surface::Mcp);
        let tool = |name: &str| {
            list["tools"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["name"] == name)
                .cloned()
                .unwrap()
        };
        for name in ["read_rules", "read_context", "write_branch_memory_bank"] {
            assert_eq!(
                tool(name)["inputSchema"]["properties"]["language"]["default"],
                "en",
                "{name}"
            );
        }
        assert!(tool("fs-read-file")["inputSchema"]["properties"]
            .get("language")
            .is_none());
        assert_eq!(
            ja.catalog.list(Surface::Mcp)["tools"][0]["inputSchema"]["properties"].get("language"),
            None
        );
    }

    #[test]
    fn server_discover_sends_newer_clients_to_initialize() {
        let d = tempfile::tempdir().unwrap();
        let s = shared(d.path());
        // What Claude Code 2.1.330 sends first (its stdio servers are probed by default).
        let probe = json!({"jsonrpc":"2.0","id":"server-discover-probe-1","method":"server/discover",
            "params":{"_meta":{META_PROTOCOL_VERSION:"2026-07-28",
                "io.modelcontextprotocol/clientInfo":{"name":"claude-code","version":"2.1.330"},
                "io.modelcontextprotocol/clientCapabilities":{}}}});
        let r = ask(&s, &probe.to_string()).unwrap();
        assert_eq!(r["id"], "server-discover-probe-1");
        assert!(r.get("result").is_none(), "{r}");
        // Not -32022 (rmcp's client would retry) nor -32020/-32021 (modern rejections): an
        // error both Claude Code and rmcp read as "fall back to initialize".
        assert_eq!(r["error"]["code"], ErrorCode::METHOD_NOT_FOUND.0);
        assert_eq!(r["error"]["data"]["supported"], json!(SUPPORTED_VERSIONS));
        assert!(r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialize"));
        // Without params, and as the SDK's plain discover() sends it, the same.
        let r = ask(&s, r#"{"jsonrpc":"2.0","id":2,"method":"server/discover"}"#).unwrap();
        assert_eq!(r["error"]["code"], -32601);
        // The same connection goes on with initialize, at the newest version we speak.
        let init = json!({"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"claude-code","version":"2.1.330"}}});
        let r = ask(&s, &init.to_string()).unwrap();
        assert_eq!(r["result"]["protocolVersion"], SUPPORTED_VERSIONS[0]);
    }

    #[test]
    fn a_request_naming_a_version_we_do_not_speak_gets_32022() {
        let d = tempfile::tempdir().unwrap();
        let s = shared(d.path());
        let req = |v: Value| {
            json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{META_PROTOCOL_VERSION: v}}})
                .to_string()
        };
        let r = ask(&s, &req(json!("2026-07-28"))).unwrap();
        assert_eq!(
            r["error"]["code"],
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.0
        );
        assert_eq!(r["error"]["data"]["requested"], "2026-07-28");
        assert_eq!(r["error"]["data"]["supported"], json!(SUPPORTED_VERSIONS));
        // A non-string is refused the same way (and echoed as given).
        let r = ask(&s, &req(json!(7))).unwrap();
        assert_eq!(r["error"]["code"], -32022);
        assert_eq!(r["error"]["data"]["requested"], 7);
        // A version we speak, or no _meta version at all, is served.
        for v in SUPPORTED_VERSIONS {
            let r = ask(&s, &req(json!(v))).unwrap();
            assert!(r["result"]["tools"].is_array(), "{r}");
        }
        let r = ask(&s, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":1}}}"#).unwrap();
        assert!(r["result"]["tools"].is_array(), "{r}");
        // ping too; initialize negotiates by its own protocolVersion instead.
        let r = ask(&s, r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}}"#).unwrap();
        assert_eq!(r["error"]["code"], -32022);
        let r = ask(&s, r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}}"#).unwrap();
        assert_eq!(r["result"]["protocolVersion"], "2025-06-18");
    }

    #[test]
    fn error_codes() {
        let d = tempfile::tempdir().unwrap();
        let s = shared(d.path());
        let code = |t: &str| ask(&s, t).unwrap()["error"]["code"].as_i64().unwrap();
        assert_eq!(code("{not json"), -32700);
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1,"method":"nope"}"#), -32601);
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}"#),
            -32602
        );
        assert_eq!(
            code(
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs-read-file","arguments":{"path":3}}}"#
            ),
            -32602
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}"#),
            -32602
        );
        assert_eq!(code(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#), -32600);
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#), -32600);
        assert_eq!(code("[]"), -32600);
        assert_eq!(code("42"), -32600);
        // Notifications and responses get no answer.
        assert!(ask(
            &s,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        )
        .is_none());
        assert!(ask(
            &s,
            r#"{"jsonrpc":"2.0","method":"ide_connected","params":{"pid":7}}"#
        )
        .is_none());
        assert!(ask(&s, r#"{"jsonrpc":"2.0","id":5,"result":{}}"#).is_none());
    }

    #[test]
    fn batches_answer_requests_only() {
        let d = tempfile::tempdir().unwrap();
        let s = shared(d.path());
        let r = ask(&s, r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"x","method":"nope"}]"#).unwrap();
        let arr = r.as_array().unwrap();
        assert_eq!(arr.len(), 2);
        assert_eq!(arr[0]["id"], 1);
        assert_eq!(arr[1]["error"]["code"], -32601);
        assert!(ask(
            &s,
            r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#
        )
        .is_none());
    }

    #[test]
    fn tools_list_and_results_carry_schemas_and_structured_content() {
        let d = tempfile::tempdir().unwrap();
        let s = shared(d.path());
        let r = ask(&s, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).unwrap();
        let tools = r["result"]["tools"].as_array().unwrap();
        let names: Vec<_> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        for want in [
            "getWorkspaceFolders",
            "fs-get-project-info",
            "fs-read-file",
            "fs-list-directory",
            "fs-write-file",
        ] {
            assert!(names.contains(&want), "{want} listed");
        }
        for t in tools {
            assert_eq!(t["inputSchema"]["type"], "object", "{t}");
            // Tools whose results are objects describe them. Tools that may answer plain text
            // or a JSON array must not (a tool with an outputSchema must always return
            // structured content, MCP spec; the CLI's SDK rejects the result otherwise):
            // the IDE tools below answer text as the IDE protocol says. (get_current_status
            // answers structure with `issue: null` when no issue is defined.)
            let text_only = [
                "openFile",
                "openDiff",
                "getDiagnostics",
                "close_tab",
                "closeAllDiffTabs",
                // (Built with `test-tools` only: it panics, it has no result to describe.)
                "test_panic",
            ];
            if text_only.contains(&t["name"].as_str().unwrap()) {
                assert!(t.get("outputSchema").is_none(), "{t}");
            } else {
                assert_eq!(t["outputSchema"]["type"], "object", "{t}");
            }
        }
        let r = ask(&s, r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"getWorkspaceFolders","arguments":{}}}"#).unwrap();
        let res = &r["result"];
        assert_eq!(res["isError"], false);
        let text: Value =
            serde_json::from_str(res["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, res["structuredContent"]);
        assert_eq!(text["rootPath"], d.path().to_str().unwrap());
        // A failing tool is a result with isError, and a message naming the problem.
        let r = ask(&s, r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs-read-file","arguments":{"path":"missing.txt"}}}"#).unwrap();
        assert_eq!(r["result"]["isError"], true);
        assert!(r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("missing.txt"));
    }

    #[test]
    fn deep_nesting_is_a_parse_error_not_a_crash() {
        let d = tempfile::tempdir().unwrap();
        let s = shared(d.path());
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(ask(&s, &deep).unwrap()["error"]["code"], -32700);
    }

    /// A `tools/call` read straight from its text is answered byte for byte as the general
    /// way (through a `Value`) answers it, whatever its members hold.
    #[test]
    fn tools_call_read_straight_answers_as_the_value_way() {
        let d = tempfile::tempdir().unwrap();
        let s = shared(d.path());
        let texts = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"getWorkspaceFolders","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"getWorkspaceFolders"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"getWorkspaceFolders","arguments":null}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"getWorkspaceFolders","arguments":"s"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"getWorkspaceFolders","arguments":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"noSuchTool","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"_meta":{"progressToken":1},"name":"getWorkspaceFolders"}}"#,
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"fs-read-file","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":7.5,"method":"tools/call","result":1,"params":{"name":"getWorkspaceFolders"}}"#,
        ];
        rt().block_on(async {
            for t in texts {
                assert!(
                    matches!(parse(t), Ok(Parsed::Call(_))),
                    "read straight: {t}"
                );
                let straight = handle_text(&s, t).await.0;
                let v = serde_json::from_str(t).unwrap();
                let general = handle_value_in(&s, v, &Inflight::default()).await.0;
                assert!(straight.is_some(), "{t}");
                assert_eq!(straight, general, "{t}");
            }
        });
    }
}
