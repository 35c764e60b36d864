//! Helpers for the context tools' tests: seeded banks and a dispatch to call tools through.

use crate::config::Config;
use crate::editor::{EditorState, NoEditor};
use crate::mcp::Service;
use crate::memory_bank::{Bank, Language, Scope};
use crate::state::State;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tempfile::TempDir;

/// A bank under a temporary project (`<tmp>/project/docs`) with the global bank and `branch`'s
/// bank seeded from the Japanese templates, plus one `notes.md` in each.
pub fn seeded_bank(branch: &str) -> (TempDir, Bank) {
    let d = tempfile::tempdir().unwrap();
    let project = d.path().canonicalize().unwrap().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let bank = Bank::at(project.join("docs"));
    bank.write(
        Scope::Branch(branch),
        "notes.md",
        "# Notes\n\ntags: #note #branch\n",
        Language::Ja,
    )
    .unwrap();
    bank.write(
        Scope::Global,
        "notes.md",
        "# Notes\n\ntags: #note #global\n",
        Language::Ja,
    )
    .unwrap();
    (d, bank)
}

/// A server on a new, empty project (`<tmp>/p`, no bank yet), the state under `<tmp>`.
pub fn empty_project() -> (TempDir, PathBuf, TestServer) {
    let d = tempfile::tempdir().unwrap();
    let project = d.path().canonicalize().unwrap().join("p");
    std::fs::create_dir_all(&project).unwrap();
    let s = TestServer::new(&project, d.path());
    (d, project, s)
}

pub fn is_rfc3339_utc(s: &str) -> bool {
    s.ends_with('Z') && humantime::parse_rfc3339(s).is_ok()
}

/// The MCP dispatch over a state whose project root is `project` and state directory `state`
/// (what a running server answers tool calls with, without a listener or lock file).
pub struct TestServer {
    pub service: Service,
    pub rt: tokio::runtime::Runtime,
}

impl TestServer {
    pub fn new(project: &Path, state: &Path) -> TestServer {
        Self::with(project, state, |_| {})
    }

    /// Like [`TestServer::new`], with `tweak` applied to the configuration.
    pub fn with(project: &Path, state: &Path, tweak: impl FnOnce(&mut Config)) -> TestServer {
        Self::with_rpc(project, state, tweak, Arc::new(NoEditor))
    }

    /// Like [`TestServer::with`], with `rpc` as the editor's main thread.
    pub fn with_rpc(
        project: &Path,
        state: &Path,
        tweak: impl FnOnce(&mut Config),
        rpc: Arc<dyn crate::editor::EditorRpc>,
    ) -> TestServer {
        let mut config = Config {
            project_root: Some(project.to_string_lossy().into_owned()),
            state_dir: Some(state.to_path_buf()),
            ..Config::default()
        };
        tweak(&mut config);
        let st = EditorState {
            cwd: Some(project.to_path_buf()),
            ..Default::default()
        };
        // As Server::start does.
        config.validate().unwrap();
        let service = Service::new(Arc::new(State::new(config, st, rpc)));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        TestServer { service, rt }
    }

    /// `tools/call` as a client sees it: the CallToolResult, or `{"error": {code, message}}`.
    /// Like an MCP client, checks that `structuredContent` conforms to the tool's
    /// `outputSchema`, that a tool with an `outputSchema` returns structured content, and that
    /// a tool returning structured content has an `outputSchema`.
    pub fn call(&self, name: &str, args: Value) -> Value {
        let r = self.rt.block_on(async move {
            match crate::mcp::call_tool(&self.service, name, args).await {
                Ok(v) => v,
                Err(e) => serde_json::json!({"error": {"code": e.code, "message": e.message}}),
            }
        });
        if r.get("error").is_none() && !is_error(&r) {
            let tool = crate::tools::registry()
                .into_iter()
                .find(|t| t.name == name || t.aliases.contains(&name));
            let schema = tool.and_then(|t| t.output_schema).map(|s| s.value());
            if schema.is_none() && r.get("structuredContent").is_some() {
                panic!("{name} returned structuredContent but has no outputSchema: {r}");
            }
            if let Some(schema) = schema {
                let sc = r.get("structuredContent").unwrap_or_else(|| {
                    panic!("{name} has an outputSchema but returned no structuredContent: {r}")
                });
                if let Err(e) = conforms(&schema, &schema, sc) {
                    panic!("{name}: structuredContent does not fit the outputSchema: {e}\n{sc}");
                }
            }
        }
        r
    }
}

/// The text of a CallToolResult's first content block.
pub fn text_of(r: &Value) -> &str {
    r["content"][0]["text"].as_str().unwrap_or("")
}

pub fn is_error(r: &Value) -> bool {
    r["isError"].as_bool().unwrap_or(false)
}

/// A small JSON Schema check (the keywords schemars emits: type, properties, required,
/// additionalProperties, items, $ref to $defs, anyOf, enum), enough to catch a result a
/// validating MCP client would reject.
pub fn conforms(root: &Value, schema: &Value, v: &Value) -> Result<(), String> {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r
            .strip_prefix("#/$defs/")
            .ok_or(format!("unsupported $ref {r}"))?;
        return conforms(root, &root["$defs"][name], v);
    }
    if let Some(any) = schema.get("anyOf").and_then(Value::as_array) {
        return any
            .iter()
            .find(|s| conforms(root, s, v).is_ok())
            .map(|_| ())
            .ok_or(format!("{v} matches none of {schema}"));
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        if !e.contains(v) {
            return Err(format!("{v} not in {schema}"));
        }
    }
    let type_ok = |t: &str| match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        _ => false,
    };
    match schema.get("type") {
        Some(Value::String(t)) if !type_ok(t) => return Err(format!("{v} is not {t}")),
        Some(Value::Array(ts)) if !ts.iter().filter_map(Value::as_str).any(type_ok) => {
            return Err(format!("{v} is none of {ts:?}"))
        }
        _ => {}
    }
    if let Some(o) = v.as_object() {
        for r in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let k = r.as_str().unwrap_or_default();
            if !o.contains_key(k) {
                return Err(format!("missing required '{k}' in {v}"));
            }
        }
        let props = schema.get("properties").and_then(Value::as_object);
        for (k, val) in o {
            match props.and_then(|p| p.get(k)) {
                Some(s) => conforms(root, s, val).map_err(|e| format!("{k}: {e}"))?,
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => return Err(format!("unexpected '{k}'")),
                    Some(s @ Value::Object(_)) => {
                        conforms(root, s, val).map_err(|e| format!("{k}: {e}"))?
                    }
                    _ => {}
                },
            }
        }
    }
    if let (Some(a), Some(items)) = (v.as_array(), schema.get("items")) {
        for (i, x) in a.iter().enumerate() {
            conforms(root, items, x).map_err(|e| format!("[{i}]: {e}"))?;
        }
    }
    Ok(())
}

#[test]
fn conforms_catches_mismatches() {
    let s = serde_json::json!({"type": "object", "required": ["a"],
        "properties": {"a": {"$ref": "#/$defs/A"}, "n": {"type": ["string", "null"]}},
        "$defs": {"A": {"type": "array", "items": {"type": "integer"}}}});
    assert!(conforms(&s, &s, &serde_json::json!({"a": [1, 2], "n": null})).is_ok());
    assert!(conforms(&s, &s, &serde_json::json!({"n": "x"})).is_err());
    assert!(conforms(&s, &s, &serde_json::json!({"a": ["x"]})).is_err());
    assert!(conforms(&s, &s, &serde_json::json!({"a": [], "n": 3})).is_err());
}

/// An editor that counts the main-thread hops asked of it (and answers none).
#[derive(Default)]
pub struct CountingEditor(pub std::sync::atomic::AtomicUsize);

impl crate::editor::EditorRpc for CountingEditor {
    fn call(&self, _method: &str, _params: Value) -> crate::editor::RpcFuture {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async {
            Err(crate::editor::EditorError::Handler(
                "counting editor".into(),
            ))
        })
    }
}

/// Every tool that answers structure describes it: each tool of the registry is
/// called here with arguments that succeed (through [`TestServer::call`], which fails when
/// `structuredContent` comes without an `outputSchema` or does not fit it), except those that
/// need a live editor, a client connection or the IDE protocol's text answers — named below,
/// so a new tool cannot slip through unlisted.
#[test]
fn every_tool_returning_structure_has_an_output_schema_it_fits() {
    use serde_json::json;
    let (d, bank) = seeded_bank("main");
    let project = bank.root.parent().unwrap().to_path_buf();
    std::fs::write(project.join("a.txt"), "hello\n").unwrap();
    // One conversation of the project in Claude Code's files, for set_current_session.
    let cfg = d.path().join("claude-config");
    let folder = cfg
        .join("projects")
        .join(crate::conversations::folders::encode(&project));
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("abc.jsonl"), "").unwrap();
    let s = TestServer::with(&project, &d.path().join("state"), |c| {
        c.claude.cmd = Some("/nonexistent/claude-for-the-schema-test".into());
        c.claude
            .env
            .insert("CLAUDE_CONFIG_DIR".into(), cfg.display().to_string());
    });
    // Need the editor's main thread (NoEditor here), a client connection, or answer text only
    // as the IDE protocol says.
    let elsewhere = [
        "openFile",
        "openDiff",
        "getCurrentSelection",
        "getLatestSelection",
        "getOpenEditors",
        "getDiagnostics",
        "checkDocumentDirty",
        "saveDocument",
        "close_tab",
        "closeAllDiffTabs",
        "fs-set-project-root",
        "test_panic",
        // Claude Code's hook tool, on /mcp only: tests/it/turn_checkpoints.rs.
        "claudeContextHook",
        // The code tools: their schema is checked against a fake editor in tools/code/tests.rs.
        "lsp_definition",
        "lsp_references",
        "lsp_implementations",
        "lsp_type_definition",
        "lsp_hover",
        "lsp_symbols",
        "lsp_calls",
        "code_outline",
        "lsp_diagnostics",
    ];
    let calls: Vec<(&str, serde_json::Value)> = vec![
        ("getWorkspaceFolders", json!({})),
        ("fs-get-project-info", json!({})),
        ("fs-read-file", json!({"path": "a.txt"})),
        ("fs-list-directory", json!({"path": "."})),
        ("fs-write-file", json!({"path": "b.txt", "content": "x"})),
        ("read_context", json!({"branch": "main"})),
        ("read_rules", json!({})),
        ("read_branch_core_files", json!({"branch": "main"})),
        ("read_global_core_files", json!({})),
        (
            "read_branch_memory_bank",
            json!({"branch": "main", "path": "notes.md"}),
        ),
        (
            "write_branch_memory_bank",
            json!({"branch": "main", "path": "n2.md", "content": "# N\n"}),
        ),
        ("read_global_memory_bank", json!({"path": "notes.md"})),
        (
            "write_global_memory_bank",
            json!({"path": "g.json", "content": "{}"}),
        ),
        (
            "write_global_memory_bank",
            json!({"path": "g.json", "patches": [{"op": "add", "path": "/a", "value": 1}]}),
        ),
        ("search_documents_by_tags", json!({"tags": ["note"]})),
        ("get_recent_branches", json!({})),
        ("list_memory_bank_documents", json!({})),
        (
            "read_document",
            json!({"scope": "global", "path": "notes.md"}),
        ),
        (
            "write_document",
            json!({"scope": "branch", "branch": "main", "path": "c.json", "content": {"k": 1}, "tags": ["t"]}),
        ),
        ("get_current_status", json!({})),
        (
            "define_issue",
            json!({"issue": "i", "context": "c", "constraints": "k"}),
        ),
        (
            "register_options",
            json!({"options": ["a", "b", "c"], "widenOptionsStep": "initial_registered"}),
        ),
        ("get_current_status", json!({})),
        ("make_tripwire", json!({})),
        ("reset", json!({})),
        ("execute_claude", json!({"prompt": "hi", "timeout": 5})),
        (
            "execute_claude_with_context",
            json!({"prompt": "hi", "file_path": "a.txt", "timeout": 5}),
        ),
        ("get_execution_history", json!({})),
        ("clear_execution_history", json!({})),
        ("get_current_session", json!({})),
        ("set_current_session", json!({"session_id": "abc"})),
        ("reset_session", json!({})),
        ("test_claude_cli", json!({})),
        ("get_execution_stats", json!({})),
        ("cancel_claude_execution", json!({})),
    ];
    let mut called = std::collections::HashSet::new();
    for (name, args) in &calls {
        let r = s.call(name, args.clone());
        assert!(r.get("error").is_none() && !is_error(&r), "{name}: {r}");
        assert!(
            r["structuredContent"].is_object(),
            "{name} answers structure: {r}"
        );
        called.insert(*name);
    }
    for t in crate::tools::registry() {
        assert!(
            called.contains(t.name) || elsewhere.contains(&t.name),
            "{} is neither exercised here nor listed as needing the editor",
            t.name
        );
        if !elsewhere.contains(&t.name) {
            assert!(t.output_schema.is_some(), "{} has no outputSchema", t.name);
        }
    }
}
