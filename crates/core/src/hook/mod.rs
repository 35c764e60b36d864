//! `claude-context-mcp hook <Event>`: the command of the Claude Code hooks the plugin adds to
//! the sessions it starts (`UserPromptSubmit`, `PreToolUse`/`PostToolUse`, `PermissionRequest`,
//! `Notification`, `Stop`, `SessionStart`/`SessionEnd`).
//!
//! It reads the hook's JSON input on stdin, keeps the few fields the bridge uses
//! ([`crate::turns::HookEvent`], long texts cut), finds the editor the way the relay does
//! ([`crate::discovery`]: `CLAUDE_CODE_SSE_PORT`, else the lock file whose workspace folder
//! holds the current directory) and sends the event to the bridge's hook door ([`HOOK_PATH`]):
//! one WebSocket connection with the lock file's token in the header (never on a command line),
//! one JSON-RPC request, its answer, close. The bridge answers once it has recorded the event,
//! so events of one session arrive in the order Claude ran their hooks.
//!
//! It never stands in Claude's way: it prints nothing on stdout (a hook's stdout can become
//! Claude's context), always exits 0, and gives up at once when no editor is there (connection
//! refused) or after [`CONNECT_TIMEOUT`] / [`EXCHANGE_TIMEOUT`] when one does not answer.
//! The one exception is a review ([`crate::plans`]: `ExitPlanMode`, `AskUserQuestion`): the
//! request carries the tool's input, the hook waits for the person's decision (bounded by Claude
//! Code's timeout of the hook) and prints it as Claude Code's PreToolUse output; when the editor
//! or the bridge goes away it prints nothing and the CLI asks in its terminal.

pub mod bash_edit;
pub mod event;
pub mod permission;

pub use event::Event;

use crate::discovery::Candidate;
use crate::text::cut;
use futures_util::{SinkExt, StreamExt};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use std::io::Read;
use std::time::Duration;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;

/// The bridge's door for hook events (a WebSocket request path).
pub const HOOK_PATH: &str = "/hook";
/// The JSON-RPC method a hook event is sent as.
pub const METHOD: &str = "claude-context/hook";
/// The environment variable naming the plugin's terminal a session runs in.
pub const ENV_TERMINAL: &str = "CLAUDE_CONTEXT_SESSION";
/// The most bytes of hook input read from stdin (a Write of a large file carries its content).
pub const MAX_INPUT: u64 = 64 << 20;
/// How long the TCP connection may take (loopback: it succeeds or is refused at once).
pub const CONNECT_TIMEOUT: Duration = Duration::from_millis(250);
/// How long the handshake, the request and its answer may take together.
pub const EXCHANGE_TIMEOUT: Duration = Duration::from_millis(1000);
/// How long a review ([`crate::plans`]) may wait for the person: Claude Code's own timeout of
/// the hook (`sessions.plan_timeout`) ends it first.
pub const REVIEW_TIMEOUT: Duration = Duration::from_secs(7 * 24 * 3600);

/// The tool of the plugin's MCP server (`/mcp`, the `claude-context` server of
/// `--mcp-config`) that Claude Code calls as an `mcp_tool` hook before every tool runs: the
/// same event as `claude-context-mcp hook PreToolUse`, over the connection Claude Code already
/// has, so no process is started on every tool call. Not listed in `tools/list` (the model is
/// not offered it); it takes only a `PreToolUse` and a `PostToolUse` (sessions started by an
/// earlier version of the plugin send that one too).
pub const MCP_TOOL: &str = "claudeContextHook";

/// The most bytes of a prompt kept (and sent by the hook).
pub const PROMPT_BYTES: usize = 4096;
/// The most bytes of a short text (ids, names, messages, paths) taken from a hook.
pub const FIELD_BYTES: usize = 4096;

/// The tools whose file the turn records (their `file_path`, `notebook_path`).
pub const EDIT_TOOLS: &[&str] = &["Edit", "Write", "MultiEdit", "NotebookEdit"];

/// One hook event as the hook door receives it: the fields of Claude Code's hook input the
/// bridge uses, already cut to size by the hook process.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HookEvent {
    /// `hook_event_name`: `UserPromptSubmit`, `PreToolUse`, … (required: a request naming no
    /// event, or one the plugin does not know, is refused).
    pub event: Event,
    #[serde(default)]
    pub session_id: String,
    /// The plugin's name for the terminal the session runs in (`CLAUDE_CONTEXT_SESSION` in the
    /// hook's environment; none for sessions started outside Neovim).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terminal: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// An edit tool's file (`file_path`, or `notebook_path` for NotebookEdit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notification_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// SessionStart's `source` (startup, resume, clear, compact).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// SessionEnd's `reason`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
    /// A Bash call's PostToolUse: its command and what it changed, when Claude Code reports it
    /// ([`bash_edit`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bash: Option<bash_edit::BashEdit>,
}

impl HookEvent {
    /// Event `event` of session `session_id`, with nothing else known.
    pub fn new(event: Event, session_id: impl Into<String>) -> HookEvent {
        HookEvent {
            event,
            session_id: session_id.into(),
            terminal: None,
            cwd: None,
            prompt: None,
            tool_name: None,
            file: None,
            notification_type: None,
            message: None,
            model: None,
            source: None,
            reason: None,
            permission_mode: None,
            bash: None,
        }
    }

    /// Whether its tool is an edit tool ([`EDIT_TOOLS`]).
    pub fn is_edit_tool(&self) -> bool {
        self.tool_name
            .as_deref()
            .is_some_and(|t| EDIT_TOOLS.contains(&t))
    }

    /// Whether its tool is one the person decides in Neovim (a plan, a question).
    pub fn is_reviewed_tool(&self) -> bool {
        self.tool_name
            .as_deref()
            .is_some_and(crate::plans::is_reviewed)
    }
}

/// Whether a WebSocket request path is the hook door (query ignored).
pub fn is_hook_path(path: &str) -> bool {
    let path = path.split('?').next().unwrap_or("");
    path.trim_end_matches('/') == HOOK_PATH
}

/// A string field, or `None` for anything else (a hook input of another CLI version may carry
/// another type; that must not lose the whole event).
fn lenient<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => Some(s),
        _ => None,
    })
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ToolInput {
    #[serde(deserialize_with = "lenient")]
    file_path: Option<String>,
    #[serde(deserialize_with = "lenient")]
    notebook_path: Option<String>,
    /// Bash's command.
    #[serde(deserialize_with = "lenient")]
    command: Option<String>,
}

/// Of a tool's response, only Bash's `bashEditDiff` (anything else, of any shape, is skipped).
fn edit_diff<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    #[derive(Deserialize)]
    struct Response {
        #[serde(rename = "bashEditDiff")]
        diff: Option<Value>,
    }
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Shape {
        Object(Response),
        Other(serde::de::IgnoredAny),
    }
    Ok(match Shape::deserialize(d)? {
        Shape::Object(r) => r.diff,
        Shape::Other(_) => None,
    })
}

/// The part of Claude Code's hook input that is read (the rest — a Write's content, a tool's
/// response — is skipped without being kept).
#[derive(Deserialize, Default)]
#[serde(default)]
struct Input {
    #[serde(deserialize_with = "lenient")]
    hook_event_name: Option<String>,
    #[serde(deserialize_with = "lenient")]
    session_id: Option<String>,
    #[serde(deserialize_with = "lenient")]
    cwd: Option<String>,
    #[serde(deserialize_with = "lenient")]
    prompt: Option<String>,
    #[serde(deserialize_with = "lenient")]
    tool_name: Option<String>,
    tool_input: Option<ToolInput>,
    #[serde(deserialize_with = "edit_diff")]
    tool_response: Option<Value>,
    #[serde(deserialize_with = "lenient")]
    notification_type: Option<String>,
    #[serde(deserialize_with = "lenient")]
    message: Option<String>,
    #[serde(deserialize_with = "lenient")]
    model: Option<String>,
    #[serde(deserialize_with = "lenient")]
    source: Option<String>,
    #[serde(deserialize_with = "lenient")]
    reason: Option<String>,
    #[serde(deserialize_with = "lenient")]
    permission_mode: Option<String>,
}

fn short(s: Option<String>) -> Option<String> {
    s.map(|s| cut(&s, FIELD_BYTES).to_string())
}

/// Cuts every text of `ev` to its size (the hook door does it again: any holder of the token may
/// send to it).
pub fn bound(ev: HookEvent) -> HookEvent {
    HookEvent {
        event: ev.event,
        session_id: cut(&ev.session_id, 256).to_string(),
        terminal: ev.terminal.map(|s| cut(&s, 256).to_string()),
        cwd: short(ev.cwd),
        prompt: ev.prompt.map(|s| cut(&s, PROMPT_BYTES).to_string()),
        tool_name: ev.tool_name.map(|s| cut(&s, 256).to_string()),
        file: short(ev.file),
        notification_type: ev.notification_type.map(|s| cut(&s, 64).to_string()),
        message: short(ev.message),
        model: ev.model.map(|s| cut(&s, 256).to_string()),
        source: ev.source.map(|s| cut(&s, 64).to_string()),
        reason: ev.reason.map(|s| cut(&s, 256).to_string()),
        permission_mode: ev.permission_mode.map(|s| cut(&s, 64).to_string()),
        bash: ev.bash.map(bash_edit::bound),
    }
}

/// The event to send for hook input `input` of hook `event` (the command line's name, used
/// when the input has none); `terminal` is [`ENV_TERMINAL`]. Refused: an input that is not a
/// JSON object, or that names no event of [`Event::ALL`].
pub fn event_from_input(
    event: &str,
    input: &[u8],
    terminal: Option<String>,
) -> Result<HookEvent, HookError> {
    let not_object = HookError::BadInput("is not a JSON object");
    // serde reads a struct from an array too (its fields in order): only an object is an input.
    if input.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(not_object);
    }
    let parsed: Input = match serde_json::from_slice(input) {
        Ok(i) => i,
        // A field of an unexpected shape (tool_input not an object): read it the slow way.
        Err(_) => {
            let v: Value = serde_json::from_slice(input).map_err(|_| not_object)?;
            let Some(obj) = v.as_object() else {
                return Err(HookError::BadInput("is not a JSON object"));
            };
            let s = |k: &str| obj.get(k).and_then(Value::as_str).map(String::from);
            Input {
                hook_event_name: s("hook_event_name"),
                session_id: s("session_id"),
                cwd: s("cwd"),
                prompt: s("prompt"),
                tool_name: s("tool_name"),
                tool_input: None,
                tool_response: None,
                notification_type: s("notification_type"),
                message: s("message"),
                model: s("model"),
                source: s("source"),
                reason: s("reason"),
                permission_mode: s("permission_mode"),
            }
        }
    };
    let name = parsed.hook_event_name.filter(|e| !e.is_empty());
    let event = Event::parse(name.as_deref().unwrap_or(event))
        .ok_or(HookError::BadInput("names no hook event the plugin takes"))?;
    let (file, command) = match parsed.tool_input {
        Some(t) => (t.file_path.or(t.notebook_path), t.command),
        None => (None, None),
    };
    // Only a Bash call's report after it ran.
    let bash = match (&parsed.tool_response, parsed.tool_name.as_deref()) {
        (Some(diff), Some("Bash")) if event == Event::PostToolUse => {
            bash_edit::from_diff(diff, command.as_deref().unwrap_or(""))
        }
        _ => None,
    };
    Ok(bound(HookEvent {
        event,
        session_id: parsed.session_id.unwrap_or_default(),
        terminal: terminal.filter(|t| !t.is_empty()),
        cwd: parsed.cwd,
        prompt: parsed.prompt,
        tool_name: parsed.tool_name,
        file,
        notification_type: parsed.notification_type,
        message: parsed.message,
        model: parsed.model,
        source: parsed.source,
        reason: parsed.reason,
        permission_mode: parsed.permission_mode,
        bash,
    }))
}

/// The fields of a call of [`MCP_TOOL`] taken besides the tool input's path.
const TOOL_ARGS: &[&str] = &[
    "hook_event_name",
    "session_id",
    "cwd",
    "tool_name",
    "permission_mode",
];

/// The event of a call of [`MCP_TOOL`]: `args` holds the hook input's fields as Claude Code's
/// `mcp_tool` hook interpolates them (`hook_event_name`, `session_id`, `cwd`, `tool_name`,
/// `permission_mode`, and the tool input's `file_path` / `notebook_path`: never the content of a
/// write). Only a tool's `PreToolUse` and `PostToolUse` are taken this way (what they can
/// change: a turn's captures and files, `waiting` back to `working`).
pub fn event_from_tool_args(args: &Value) -> Result<HookEvent, HookError> {
    let Some(obj) = args.as_object() else {
        return Err(HookError::BadInput("is not a JSON object"));
    };
    // Only the fields the hook sends (nothing else a caller adds: no model, no prompt).
    let mut input: serde_json::Map<String, Value> = TOOL_ARGS
        .iter()
        .filter_map(|k| obj.get(*k).map(|v| (k.to_string(), v.clone())))
        .collect();
    // A placeholder Claude Code left unfilled is no path; a notebook's path is its own field.
    let filled = |k: &str| {
        obj.get(k)
            .filter(|v| {
                v.as_str()
                    .is_some_and(|s| !s.is_empty() && !s.starts_with("${"))
            })
            .cloned()
    };
    let key = if obj.get("tool_name").and_then(Value::as_str) == Some("NotebookEdit") {
        "notebook_path"
    } else {
        "file_path"
    };
    let tool_input: serde_json::Map<String, Value> = filled(key)
        .map(|v| (key.to_string(), v))
        .into_iter()
        .collect();
    input.insert("tool_input".into(), Value::Object(tool_input));
    let text = serde_json::to_vec(&input).map_err(|_| HookError::BadInput("is not JSON"))?;
    let ev = event_from_input("", &text, None)?;
    if ev.session_id.is_empty() {
        return Err(HookError::BadInput("has no session_id"));
    }
    if !ev.event.is_tool_call() || ev.tool_name.as_deref().is_none_or(str::is_empty) {
        return Err(HookError::BadInput(
            "is not a tool's PreToolUse or PostToolUse (the only events taken this way)",
        ));
    }
    Ok(ev)
}

/// The JSON-RPC request carrying `ev`.
pub fn request_text(ev: &HookEvent) -> String {
    request_carrying(ev, None)
}

/// The JSON-RPC request carrying `ev` and what the editor is asked to decide (`params.review`).
pub fn request_with_review(ev: &HookEvent, review: Option<&crate::plans::Review>) -> String {
    let review = review.map(|r| ("review", serde_json::to_value(r).unwrap_or(Value::Null)));
    request_carrying(ev, review)
}

/// The hook door's one request form: `ev` as `params`, with what the editor is asked to decide
/// (a review, a permission) under its key.
pub(crate) fn request_carrying(ev: &HookEvent, asked: Option<(&str, Value)>) -> String {
    let mut params = serde_json::to_value(ev).unwrap_or(Value::Null);
    if let (Some((key, v)), Value::Object(m)) = (asked, &mut params) {
        m.insert(key.into(), v);
    }
    crate::jsonrpc::request(&Value::from(1), METHOD, params).to_string()
}

/// The review a PreToolUse input asks for (`ExitPlanMode`, `AskUserQuestion`), if any.
pub fn review_from_input(ev: &HookEvent, input: &[u8]) -> Option<crate::plans::Review> {
    let tool = ev.tool_name.as_deref()?;
    if ev.event != Event::PreToolUse || !crate::plans::is_reviewed(tool) {
        return None;
    }
    review_with_plans(tool, input, plans_dir().as_deref())
}

/// [`review_from_input`] with Claude Code's plan folder given.
fn review_with_plans(
    tool: &str,
    input: &[u8],
    plans: Option<&std::path::Path>,
) -> Option<crate::plans::Review> {
    let v: Value = serde_json::from_slice(input).ok()?;
    let mut tool_input = v.get("tool_input")?.clone();
    if tool == crate::plans::EXIT_PLAN_MODE {
        plan_from_file(&mut tool_input, plans);
    }
    crate::plans::review_of(tool, &tool_input)
}

/// Claude Code's folder of plan files: `$CLAUDE_CONFIG_DIR/plans`, else `~/.claude/plans`.
fn plans_dir() -> Option<std::path::PathBuf> {
    let base = match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        Some(d) => std::path::PathBuf::from(d),
        None => std::path::PathBuf::from(std::env::var_os("HOME")?).join(".claude"),
    };
    Some(base.join("plans"))
}

/// An `ExitPlanMode` input without its `plan` text gets it from the plan file it names
/// (`planFilePath`): in plan mode the model writes the plan to a file in Claude Code's plan
/// folder, and the tool's own input can be `{}` (Claude Code 2.1.332 fills `plan` from that
/// file itself before the hook runs; an input naming only the file is read here). The name is
/// untrusted: only a `.md` file directly in `plans` (the folder's links resolved, the file's
/// own never followed; no FIFO waited on; at most [`crate::plans::MAX_INPUT_BYTES`]) is read,
/// and only UTF-8 text is taken. Anything else leaves the input as it is (no review: Claude
/// Code asks in its terminal).
pub fn plan_from_file(input: &mut Value, plans: Option<&std::path::Path>) {
    let Some(obj) = input.as_object_mut() else {
        return;
    };
    if obj.get("plan").is_some_and(Value::is_string) {
        return;
    }
    let (Some(plans), Some(path)) = (plans, obj.get("planFilePath").and_then(Value::as_str)) else {
        return;
    };
    let path = std::path::Path::new(path);
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return;
    };
    let named_md = name.as_encoded_bytes().ends_with(b".md") && name.len() > 3;
    let in_plans = path.is_absolute()
        && std::fs::canonicalize(parent)
            .ok()
            .zip(std::fs::canonicalize(plans).ok())
            .is_some_and(|(p, want)| p == want);
    if !named_md || !in_plans {
        return;
    }
    // The read goes beneath the plans folder's own handle, by the file's name alone: the
    // untrusted path only chose the name.
    let Ok(bytes) = crate::capfs::CapDir::open_root(plans).and_then(|d| {
        d.read_capped(
            std::path::Path::new(name),
            crate::plans::MAX_INPUT_BYTES as u64,
        )
    }) else {
        return;
    };
    if let Ok(text) = String::from_utf8(bytes) {
        obj.insert("plan".into(), Value::String(text));
    }
}

/// Why an event did not reach the bridge; the hook prints it on stderr and exits 0.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error("reading the hook input: {0}")]
    Input(std::io::Error),
    /// The input is not a JSON object with a session id; the text says which.
    #[error("the hook input {0}")]
    BadInput(&'static str),
    #[error(transparent)]
    Discovery(#[from] crate::discovery::DiscoveryError),
    #[error("cannot start the runtime: {0}")]
    Runtime(std::io::Error),
    /// The exchange with the bridge failed; the text says how.
    #[error("{0}")]
    Send(String),
    #[error("writing the hook output: {0}")]
    Output(std::io::Error),
    /// The event's `cwd` is not a folder the editor knows ([`admit_cwd`]); the text is the
    /// folder, escaped.
    #[error(
        "refused: the hook's cwd {0} is not a folder this editor knows (its working directory, \
         its project root, or a root in setup{{workspace = {{extra_roots}}}})"
    )]
    UnknownCwd(String),
}

/// Takes an event's `cwd` only when it names a folder the editor knows: at or below one of
/// `roots` (the bridge's model roots, `State::model_roots`: the editor's working directory, the
/// project root, the roots the person allowed; canonical). A session's first prompt walks its
/// project into the checkpoint store, so a caller holding the token must not name any other
/// folder (`$HOME/other-project`, `/etc`). The `cwd` becomes its canonical path, so what is
/// walked later is what was checked. An event without a `cwd` is taken as it is. Blocking (it
/// resolves the path on disk).
pub fn admit_cwd(ev: &mut HookEvent, roots: &[std::path::PathBuf]) -> Result<(), HookError> {
    let Some(cwd) = ev.cwd.as_deref() else {
        return Ok(());
    };
    let refused = || HookError::UnknownCwd(format!("{cwd:?}"));
    let canon = std::fs::canonicalize(cwd).map_err(|_| refused())?;
    if !canon.is_dir() || !roots.iter().any(|r| canon.starts_with(r)) {
        return Err(refused());
    }
    let canon = canon
        .into_os_string()
        .into_string()
        .map_err(|_| refused())?;
    ev.cwd = Some(canon);
    Ok(())
}

impl crate::error::Fault for HookError {}

/// Sends one event to the bridge of `c` and waits for its answer.
pub async fn send(c: &Candidate, ev: &HookEvent) -> Result<(), HookError> {
    exchange(c, request_text(ev), EXCHANGE_TIMEOUT)
        .await
        .map(|_| ())
}

/// Sends one request to the bridge of `c` and returns the answer's `result`, waiting at most
/// `wait` for it.
pub async fn exchange(c: &Candidate, text: String, wait: Duration) -> Result<Value, HookError> {
    let failed = |e: &dyn std::fmt::Display| HookError::Send(e.to_string());
    let url = format!("ws://127.0.0.1:{}{HOOK_PATH}", c.port);
    let mut req = url.into_client_request().map_err(|e| failed(&e))?;
    let token = HeaderValue::from_str(&c.token)
        .map_err(|_| failed(&"the lock file's token is not a valid header value"))?;
    req.headers_mut().insert(crate::auth::AUTH_HEADER, token);
    let tcp = tokio::time::timeout(
        CONNECT_TIMEOUT,
        tokio::net::TcpStream::connect(("127.0.0.1", c.port)),
    )
    .await
    .map_err(|_| failed(&"connecting timed out"))?
    .map_err(|e| failed(&e))?;
    let _ = tcp.set_nodelay(true);
    let exchange = async move {
        let (mut ws, _) = tokio_tungstenite::client_async(req, tcp)
            .await
            .map_err(|e| failed(&e))?;
        ws.send(Message::text(text)).await.map_err(|e| failed(&e))?;
        let answer = loop {
            match ws.next().await {
                Some(Ok(Message::Text(t))) => break t,
                Some(Ok(Message::Close(_))) | None => {
                    return Err(failed(&"the bridge closed without answering"))
                }
                Some(Ok(_)) => continue,
                Some(Err(e)) => return Err(failed(&e)),
            }
        };
        let _ = ws.close(None).await;
        let mut v: Value = serde_json::from_str(answer.as_str()).map_err(|e| failed(&e))?;
        match v.get("error") {
            Some(e) => Err(failed(&format!("the bridge refused the event: {e}"))),
            None => Ok(v.get_mut("result").map(Value::take).unwrap_or(Value::Null)),
        }
    };
    tokio::time::timeout(wait, exchange)
        .await
        .map_err(|_| failed(&"the bridge did not answer in time"))?
}

/// Runs the hook mode: `event` is the command line's event name. Always returns normally (the
/// process exits 0); what went wrong is returned for stderr. What the hook answers Claude Code
/// (a review's decision, see [`crate::plans`]) is written to `stdout`; nothing else is.
pub fn run(event: &str, stdin: impl Read, stdout: impl std::io::Write) -> Result<(), HookError> {
    let mut input = Vec::new();
    stdin
        .take(MAX_INPUT)
        .read_to_end(&mut input)
        .map_err(HookError::Input)?;
    let terminal = std::env::var(ENV_TERMINAL).ok();
    let ev = event_from_input(event, &input, terminal)?;
    if ev.session_id.is_empty() {
        return Err(HookError::BadInput("has no session_id"));
    }
    let query = crate::discovery::Query::from_env()?;
    let found = crate::discovery::discover(&query);
    // Only the editor this session belongs to (the first choice), never a second one.
    let Some(c) = found.candidates.first() else {
        return Ok(());
    };
    let review = review_from_input(&ev, &input);
    // A permission request the person may answer in Neovim (crate::hook::permission).
    let ask = crate::hook::permission::ask_of(&ev, &input);
    drop(input);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(HookError::Runtime)?;
    let wait = if review.is_some() || ask.is_some() {
        REVIEW_TIMEOUT
    } else {
        EXCHANGE_TIMEOUT
    };
    let text = match &ask {
        Some(a) => crate::hook::permission::request_text(&ev, a),
        None => request_with_review(&ev, review.as_ref()),
    };
    let result = rt.block_on(exchange(c, text, wait))?;
    write_output(&result, stdout)
}

/// Writes the answer's `output` (Claude Code's hook output), if it has one, as one JSON line.
pub fn write_output(result: &Value, mut stdout: impl std::io::Write) -> Result<(), HookError> {
    let Some(out) = result.get("output").filter(|o| o.is_object()) else {
        return Ok(());
    };
    writeln!(stdout, "{out}")
        .and_then(|_| stdout.flush())
        .map_err(HookError::Output)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_plan_named_only_by_its_file_is_read_from_claude_codes_plan_folder_alone() {
        use serde_json::json;
        let d = tempfile::tempdir().unwrap();
        let base = d.path().canonicalize().unwrap();
        let plans = base.join("plans");
        std::fs::create_dir_all(&plans).unwrap();
        std::fs::write(plans.join("p.md"), "# Plan\n1. rename\n").unwrap();
        std::fs::write(base.join("secret.md"), "not a plan").unwrap();
        std::os::unix::fs::symlink(base.join("secret.md"), plans.join("link.md")).unwrap();
        std::fs::write(plans.join("p.txt"), "text").unwrap();
        std::fs::write(plans.join("bad.md"), b"\xff\xfe").unwrap();
        let fill = |path: &std::path::Path| {
            let mut v = json!({"planFilePath": path});
            super::plan_from_file(&mut v, Some(&plans));
            v.get("plan").and_then(|p| p.as_str()).map(String::from)
        };
        assert_eq!(
            fill(&plans.join("p.md")).as_deref(),
            Some("# Plan\n1. rename\n")
        );
        // Through the hook's input, as Claude Code sends an ExitPlanMode whose input is {}.
        let input = json!({"tool_input": {"planFilePath": plans.join("p.md")}}).to_string();
        let r = super::review_with_plans("ExitPlanMode", input.as_bytes(), Some(&plans))
            .expect("a review of the file's plan");
        assert_eq!(r.input["plan"], "# Plan\n1. rename\n");
        // Nothing outside the plan folder, no link, no other kind of file, no non-UTF-8 text.
        assert_eq!(fill(&base.join("secret.md")), None);
        assert_eq!(fill(&plans.join("../secret.md")), None);
        assert_eq!(fill(&plans.join("link.md")), None);
        assert_eq!(fill(&plans.join("p.txt")), None);
        assert_eq!(fill(&plans.join("bad.md")), None);
        assert_eq!(fill(std::path::Path::new("plans/p.md")), None);
        // A plan the input carries is kept as it is.
        let mut v = json!({"plan": "given", "planFilePath": plans.join("p.md")});
        super::plan_from_file(&mut v, Some(&plans));
        assert_eq!(v["plan"], "given");
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn the_input_keeps_only_what_the_bridge_uses() {
        let big = "x".repeat(100_000);
        let input = serde_json::json!({
            "session_id": "abc",
            "hook_event_name": "PreToolUse",
            "cwd": "/p",
            "transcript_path": "/t.jsonl",
            "tool_name": "Write",
            "tool_input": {"file_path": "/p/a.rs", "content": big},
            "permission_mode": "default",
        })
        .to_string();
        let ev = event_from_input("X", input.as_bytes(), Some("main".into())).unwrap();
        assert_eq!(ev.event, Event::PreToolUse);
        assert_eq!(ev.session_id, "abc");
        assert_eq!(ev.terminal.as_deref(), Some("main"));
        assert_eq!(ev.file.as_deref(), Some("/p/a.rs"));
        assert_eq!(ev.permission_mode.as_deref(), Some("default"));
        assert!(request_text(&ev).len() < 400);
    }

    #[test]
    fn odd_shapes_keep_the_event() {
        let ev = event_from_input(
            "Stop",
            br#"{"session_id":"s","tool_input":"text","model":{"id":"m"},"prompt":7}"#,
            None,
        )
        .unwrap();
        assert_eq!((ev.event, ev.session_id.as_str()), (Event::Stop, "s"));
        assert_eq!((ev.file, ev.model, ev.prompt), (None, None, None));
        let ev = event_from_input(
            "PreToolUse",
            br#"{"session_id":"s","tool_input":{"notebook_path":"/n.ipynb"}}"#,
            Some(String::new()),
        )
        .unwrap();
        assert_eq!(ev.file.as_deref(), Some("/n.ipynb"));
        assert_eq!(ev.terminal, None);
        assert!(event_from_input("Stop", b"[1]", None).is_err());
        assert!(event_from_input("Stop", b"not json", None).is_err());
        // An event the plugin does not know, named by the input or by the command line alone.
        assert!(event_from_input(
            "Stop",
            br#"{"session_id":"s","hook_event_name":"Other"}"#,
            None
        )
        .is_err());
        assert!(event_from_input("Other", br#"{"session_id":"s"}"#, None).is_err());
    }

    #[test]
    fn long_texts_are_cut() {
        let p = "é".repeat(10_000);
        let input = serde_json::json!({"session_id": "s", "prompt": p}).to_string();
        let ev = event_from_input("UserPromptSubmit", input.as_bytes(), None).unwrap();
        assert!(ev.prompt.unwrap().len() <= PROMPT_BYTES);
    }

    #[test]
    fn the_hook_tools_arguments_keep_only_the_hooks_fields_and_a_filled_path() {
        let ev = event_from_tool_args(&json!({
            "hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/p",
            "tool_name": "NotebookEdit", "file_path": "${tool_input.file_path}",
            "notebook_path": "/p/a.ipynb", "permission_mode": "default",
            "model": "faked", "prompt": "faked",
        }))
        .unwrap();
        assert_eq!(ev.file.as_deref(), Some("/p/a.ipynb"));
        assert_eq!((ev.model, ev.prompt), (None, None));
        // An unfilled placeholder is no path.
        let ev = event_from_tool_args(&json!({
            "hook_event_name": "PostToolUse", "session_id": "s", "tool_name": "Write",
            "file_path": "${tool_input.file_path}",
        }))
        .unwrap();
        assert_eq!(ev.file, None);
        // Before any tool (the one hook of a tool call): taken, with no path for a Bash.
        let ev = event_from_tool_args(&json!({
            "hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Bash",
            "file_path": "${tool_input.file_path}",
        }))
        .unwrap();
        assert_eq!((ev.tool_name.as_deref(), ev.file), (Some("Bash"), None));
        // Events that start or end a turn are refused, and a tool event without its tool.
        for e in ["UserPromptSubmit", "Stop", "SessionEnd", "SessionStart"] {
            let args = json!({"hook_event_name": e, "session_id": "s", "tool_name": "Edit"});
            assert!(event_from_tool_args(&args).is_err(), "{e}");
        }
        for tool in [json!(""), json!(null)] {
            let args =
                json!({"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": tool});
            assert!(event_from_tool_args(&args).is_err(), "{tool}");
        }
    }

    #[test]
    fn the_hook_door_is_its_path() {
        assert!(is_hook_path("/hook"));
        assert!(is_hook_path("/hook/?x"));
        assert!(!is_hook_path("/hooks"));
        assert!(!is_hook_path("/"));
    }
}
