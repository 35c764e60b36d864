//! Tools: one module per tool, each exporting `def() -> ToolDef`. [`registry`] lists them all.
//!
//! A tool receives its arguments as JSON and the shared [`State`], and returns a
//! [`ToolOutput`] (sent as JSON text content plus `structuredContent`) or a [`ToolError`]
//! (`InvalidParams` → JSON-RPC -32602, `Failed` → a result with `isError: true`).

use crate::error::Fault;
use crate::state::State;
use crate::turns::Tracker;
use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;

pub mod claude;
pub mod code;
pub mod decision;
pub mod ide;
pub mod memory_bank;
pub mod workspace;

pub mod door;
pub mod hook;
#[cfg(feature = "test-tools")]
pub mod test_panic;

pub type ToolFuture = BoxFuture<'static, Result<ToolOutput, ToolError>>;
/// What a tool gets besides its arguments: the state it reads ([`crate::state`]).
pub type Ctx = Arc<State>;

/// What a tool returns on success.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolOutput {
    /// The structured result; sent as `structuredContent` when it is an object.
    pub value: Value,
    /// The text content; the JSON of `value` when `None`.
    pub text: Option<String>,
    /// Further text content blocks after the first (`openDiff` answers two:
    /// `FILE_SAVED` and the final contents).
    pub extra_text: Vec<String>,
    /// The MCP result's JSON for exactly this output, when the tool has it already (an answer
    /// kept for the snapshot it was built from): the reply copies it. Whoever changes the
    /// output must clear it. An output made by [`ToolOutput::kept`] has only this.
    pub rendered: Option<Arc<str>>,
}

impl ToolOutput {
    pub fn json(value: Value) -> Self {
        ToolOutput {
            value,
            ..Default::default()
        }
    }

    /// Text content only, one block per string, no `structuredContent` (the IDE protocol's
    /// `TAB_CLOSED`, `FILE_SAVED` + contents, …).
    pub fn texts<I: IntoIterator<Item = String>>(texts: I) -> Self {
        let mut it = texts.into_iter();
        ToolOutput {
            value: Value::Null,
            text: Some(it.next().unwrap_or_default()),
            extra_text: it.collect(),
            rendered: None,
        }
    }

    /// An answer the tool kept whole, as its MCP result's JSON: nothing else is filled in (a
    /// copy of the value would cost more than the rest of the call), so it is read only as a
    /// whole: written by the reply as it is, read back by `mcp::tool_result`. Not for a tool
    /// whose door filters its value.
    pub fn kept(rendered: Arc<str>) -> Self {
        ToolOutput {
            rendered: Some(rendered),
            ..Default::default()
        }
    }

    /// Whether the MCP result of this output can be written straight from its value's JSON
    /// ([`ToolOutput::result_json_of`]): an object value, with no text of its own and no
    /// further text blocks.
    pub fn straight(&self) -> bool {
        self.text.is_none() && self.extra_text.is_empty() && self.value.is_object()
    }

    /// The MCP result's JSON (what `mcp::tool_result` gives, written) of a [`straight`]
    /// output whose value's JSON is `text`: written once as the text block, copied as
    /// `structuredContent`.
    ///
    /// [`straight`]: ToolOutput::straight
    pub fn result_json_of(text: &str) -> String {
        let mut b: Vec<u8> = Vec::with_capacity(2 * text.len() + 80);
        b.extend_from_slice(br#"{"content":[{"type":"text","text":"#);
        // (A `&str` serializes to its quoted, escaped form; it cannot fail into a Vec.)
        let _ = serde_json::to_writer(&mut b, text);
        b.extend_from_slice(br#"}],"structuredContent":"#);
        b.extend_from_slice(text.as_bytes());
        b.extend_from_slice(br#","isError":false}"#);
        // (Every piece is UTF-8.)
        String::from_utf8(b).unwrap_or_default()
    }

    pub fn of<T: serde::Serialize>(v: &T) -> Result<Self, ToolError> {
        serde_json::to_value(v)
            .map(Self::json)
            .map_err(|e| ToolError::Failed(format!("cannot encode the result: {e}")))
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolError {
    /// The arguments do not fit the tool's input schema (JSON-RPC -32602).
    #[error("{0}")]
    InvalidParams(String),
    /// The tool ran and failed; the message says what to do about it (`isError: true`).
    #[error("{0}")]
    Failed(String),
    /// The server could not do what was asked, through no fault of the caller (JSON-RPC
    /// -32603): the hook tool when recording a hook event panicked.
    #[error("{0}")]
    Internal(String),
}

/// A module's error as a tool's: the caller's mistakes are invalid params (-32602), anything
/// else the tool's failure (`isError: true`). The one conversion: each module says whose fault
/// its errors are next to its enum ([`Fault`]), and `?` converts them here.
impl From<crate::error::Error> for ToolError {
    fn from(e: crate::error::Error) -> ToolError {
        if e.is_callers() {
            ToolError::InvalidParams(e.to_string())
        } else {
            ToolError::Failed(e.to_string())
        }
    }
}

impl<E: Fault> From<E> for ToolError {
    fn from(e: E) -> ToolError {
        crate::error::Error::from(e).into()
    }
}

/// A tool's description and entry point.
pub struct ToolDef {
    pub name: &'static str,
    /// Other names `tools/call` accepts (not listed by `tools/list`).
    pub aliases: &'static [&'static str],
    pub description: &'static str,
    pub input_schema: Schema,
    pub output_schema: Option<Schema>,
    pub run: Run,
}

/// What a tool runs over.
#[derive(Clone, Copy)]
pub enum Run {
    /// The state every tool reads ([`Ctx`]): every tool but one.
    State(fn(Ctx, Value) -> ToolFuture),
    /// The sessions' turns over it: the hook tool ([`hook`]), which records Claude Code's hook
    /// events with the sessions.
    Turns(fn(Arc<Tracker>, Value) -> ToolFuture),
}

/// A tool as the catalog holds it: its definition and its door rule ([`door::DoorRule`]: what
/// a client of `/mcp` may see and call of it). Reads as its [`ToolDef`].
pub struct Entry {
    pub def: ToolDef,
    pub door: door::DoorRule,
}

impl std::ops::Deref for Entry {
    type Target = ToolDef;

    fn deref(&self) -> &ToolDef {
        &self.def
    }
}

impl ToolDef {
    /// This tool's catalog entry with `door` as its door rule.
    pub fn on_door(self, door: door::DoorRule) -> Entry {
        Entry { def: self, door }
    }

    /// This tool's catalog entry, the same on both doors.
    pub fn open(self) -> Entry {
        self.on_door(door::DoorRule::Open)
    }
}

/// Every tool the bridge serves, in `tools/list` order.
pub fn registry() -> Vec<Entry> {
    #[allow(unused_mut)]
    let mut tools = vec![
        workspace::get_workspace_folders::def().open(),
        workspace::fs_get_project_info::def().open(),
        workspace::fs_read_file::def().open(),
        workspace::fs_list_directory::def().open(),
        workspace::fs_write_file::def().open(),
        workspace::fs_set_project_root::def().open(),
        // Memory bank.
        memory_bank::read_context::def().open(),
        memory_bank::read_rules::def().open(),
        memory_bank::read_branch_core_files::def().open(),
        memory_bank::read_global_core_files::def().open(),
        memory_bank::read_branch_memory_bank::def().open(),
        memory_bank::write_branch_memory_bank::def().open(),
        memory_bank::read_global_memory_bank::def().open(),
        memory_bank::write_global_memory_bank::def().open(),
        memory_bank::search_documents_by_tags::def().open(),
        memory_bank::get_recent_branches::def().open(),
        memory_bank::list_memory_bank_documents::def().open(),
        // Memory bank documents by path.
        memory_bank::read_document::def().open(),
        memory_bank::write_document::def().open(),
        // WRAP decision status.
        decision::define_issue::def().open(),
        decision::get_current_status::def().open(),
        decision::register_options::def().open(),
        decision::make_tripwire::def().open(),
        decision::reset::def().open(),
        // The Claude Code IDE tools (doc/protocol.md, IDE tools); each forwards to a Lua handler.
        ide::open_file::def().on_door(ide::open_file::DOOR),
        ide::open_diff::def().on_door(ide::open_diff::DOOR),
        ide::get_current_selection::def().on_door(ide::get_current_selection::DOOR),
        ide::get_latest_selection::def().on_door(ide::get_latest_selection::DOOR),
        ide::get_open_editors::def().on_door(ide::get_open_editors::DOOR),
        ide::get_diagnostics::def().on_door(ide::get_diagnostics::DOOR),
        ide::check_document_dirty::def().on_door(ide::check_document_dirty::DOOR),
        ide::save_document::def().on_door(ide::save_document::DOOR),
        ide::close_tab::def().on_door(ide::close_tab::DOOR),
        ide::close_all_diff_tabs::def().on_door(ide::close_all_diff_tabs::DOOR),
        claude::execute_claude::def().open(),
        claude::execute_claude_with_context::def().open(),
        claude::get_execution_history::def().open(),
        claude::clear_execution_history::def().open(),
        claude::get_current_session::def().open(),
        claude::reset_session::def().open(),
        claude::set_current_session::def().open(),
        claude::test_claude_cli::def().open(),
        claude::get_execution_stats::def().open(),
        claude::cancel_claude_execution::def().open(),
        // The editor's code intelligence: its language servers and tree-sitter.
        code::lsp_definition::def().open(),
        code::lsp_references::def().open(),
        code::lsp_implementations::def().open(),
        code::lsp_type_definition::def().open(),
        code::lsp_hover::def().open(),
        code::lsp_symbols::def().open(),
        code::lsp_calls::def().open(),
        code::code_outline::def().open(),
        code::lsp_diagnostics::def().open(),
        // Claude Code's hook before each tool: on /mcp only, offered to no one.
        hook::claude_context_hook::def().on_door(door::DoorRule::Hook),
    ];
    #[cfg(feature = "test-tools")]
    tools.push(test_panic::def().open());
    tools
}

/// Decodes a tool's arguments; the error names the tool and what was wrong.
pub fn parse_args<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, ToolError> {
    serde_json::from_value(args)
        .map_err(|e| ToolError::InvalidParams(format!("invalid arguments for {tool}: {e}")))
}

/// A tool's JSON Schema, generated when asked for ([`Schema::value`]: the `tools/list` answer,
/// built at the first `tools/list`). Generated eagerly, the registry's ~60 schemas were
/// built by `setup()` on Neovim's main thread (start-up figures: BENCHMARKS.md).
#[derive(Clone, Copy)]
pub struct Schema(fn() -> Value);

impl Schema {
    pub fn value(&self) -> Value {
        (self.0)()
    }
}

impl std::fmt::Debug for Schema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Schema({})", self.value())
    }
}

/// The JSON Schema of `T` (see [`schema_value`]), generated on demand.
pub fn schema_of<T: JsonSchema>() -> Schema {
    Schema(schema_value::<T>)
}

/// The JSON Schema of `T`, as MCP wants it (an object schema, no `$schema` noise, only standard
/// `format` values: see [`strip_nonstandard_formats`]).
pub fn schema_value<T: JsonSchema>() -> Value {
    let mut v = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.remove("$schema");
        o.remove("title");
        o.entry("type").or_insert_with(|| "object".into());
    }
    strip_nonstandard_formats(&mut v);
    v
}

/// The `format` values JSON Schema (2020-12) defines; validators know these and no others.
pub const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Removes every `format` that is not one of [`STANDARD_FORMATS`], at any depth. schemars marks
/// Rust's integer types (`uint64`, `uint`, `int64`, `double`, …), which strict validators
/// refuse or warn about (Claude Code 2.1.197's `claude mcp list` printed an `unknown format
/// "uint64"` line per field). What they said is kept in standard words: schemars already writes
/// `"minimum": 0` for the unsigned ones, and `"type": "integer"` says the rest.
pub fn strip_nonstandard_formats(v: &mut Value) {
    match v {
        Value::Object(o) => {
            if o.get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| !STANDARD_FORMATS.contains(&f))
            {
                o.remove("format");
            }
            for child in o.values_mut() {
                strip_nonstandard_formats(child);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(strip_nonstandard_formats),
        _ => {}
    }
}

/// Runs blocking work (file system) on tokio's blocking pool.
pub fn blocking<F>(f: F) -> ToolFuture
where
    F: FnOnce() -> Result<ToolOutput, ToolError> + Send + 'static,
{
    Box::pin(on_blocking_pool(f))
}

/// Runs `f` on tokio's blocking pool with the connection's project root (fs-set-project-root)
/// along; a panic there becomes a tool error (logged), never a crash. The root is taken when
/// this is called, inside the connection's task.
pub fn on_blocking_pool<T, F>(
    f: F,
) -> impl std::future::Future<Output = Result<T, ToolError>> + Send + 'static
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
{
    let slot = crate::project::connection_slot();
    let f = move || match slot {
        Some(s) => crate::project::CONNECTION_ROOT.sync_scope(s, f),
        None => f(),
    };
    async move {
        tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
            let msg = if e.is_panic() {
                crate::jsonrpc::payload_text(e.into_panic().as_ref())
            } else {
                e.to_string()
            };
            tracing::error!(panic = %msg, "tool work on the blocking pool panicked");
            Err(ToolError::Failed(format!(
                "internal error: {msg} (the panic was contained; see :ClaudeContext log)"
            )))
        })
    }
}

/// Wraps an immediate result.
pub fn ready(r: Result<ToolOutput, ToolError>) -> ToolFuture {
    Box::pin(std::future::ready(r))
}

#[derive(serde::Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// The memory bank of the current project (`MEMORY_BANK_ROOT`, else `setup{memory_bank.root}`,
/// else `<project root>/docs`).
pub fn memory_bank(ctx: &State) -> Result<crate::memory_bank::Bank, ToolError> {
    let root = ctx.project_root_dir()?;
    let env = std::env::var(crate::memory_bank::ROOT_ENV).ok();
    Ok(crate::memory_bank::Bank::resolve(
        env.as_deref(),
        ctx.config.memory_bank_root.as_deref(),
        &root,
    ))
}

/// The decision store of the current project, under the plugin's state directory.
pub fn decision_store(ctx: &State) -> Result<crate::decision::Store, ToolError> {
    let root = ctx.project_root_dir()?;
    let state = ctx.config.state_dir()?;
    Ok(crate::decision::Store::new(&state, &root))
}

pub(crate) fn yes() -> bool {
    true
}

#[cfg(test)]
pub(crate) mod testutil;

#[cfg(test)]
mod schema_tests {
    use super::*;
    use serde_json::json;

    /// Every `format` value in `v`, with where it is.
    fn formats(v: &Value, at: &str, out: &mut Vec<String>) {
        match v {
            Value::Object(o) => {
                if let Some(f) = o.get("format").and_then(Value::as_str) {
                    out.push(format!("{at}: {f}"));
                }
                for (k, c) in o {
                    formats(c, &format!("{at}/{k}"), out);
                }
            }
            Value::Array(a) => {
                for (i, c) in a.iter().enumerate() {
                    formats(c, &format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn no_tool_schema_has_a_nonstandard_format() {
        let mut seen_integer = false;
        for t in registry() {
            let schemas = [
                Some(t.input_schema.value()),
                t.output_schema.map(|s| s.value()),
            ];
            for (which, s) in ["input", "output"].iter().zip(schemas) {
                let Some(s) = s else { continue };
                assert_eq!(s["type"], "object", "{} {which}: {s}", t.name);
                seen_integer |= s.to_string().contains(r#""type":"integer""#);
                let mut found = Vec::new();
                formats(&s, "", &mut found);
                let bad: Vec<_> = found
                    .iter()
                    .filter(|f| {
                        !STANDARD_FORMATS
                            .iter()
                            .any(|ok| f.ends_with(&format!(": {ok}")))
                    })
                    .collect();
                assert!(bad.is_empty(), "{} {which} schema: {bad:?}", t.name);
            }
        }
        assert!(
            seen_integer,
            "the tools have integer fields, whose formats were stripped"
        );
    }

    #[test]
    fn strip_keeps_standard_formats_and_properties_named_format() {
        let mut v = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "format": "uint64", "minimum": 0},
                "x": {"type": ["number", "null"], "format": "double"},
                "when": {"type": "string", "format": "date-time"},
                "format": {"type": "string", "description": "a field called format"},
                "list": {"type": "array", "items": {"type": "integer", "format": "int32"}},
            },
            "$defs": {"D": {"anyOf": [{"type": "integer", "format": "uint"}, {"type": "null"}]}},
        });
        strip_nonstandard_formats(&mut v);
        assert_eq!(
            v,
            json!({
                "type": "object",
                "properties": {
                    "n": {"type": "integer", "minimum": 0},
                    "x": {"type": ["number", "null"]},
                    "when": {"type": "string", "format": "date-time"},
                    "format": {"type": "string", "description": "a field called format"},
                    "list": {"type": "array", "items": {"type": "integer"}},
                },
                "$defs": {"D": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
            })
        );
    }
}
