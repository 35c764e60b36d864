//! `getDiagnostics {uri?}` — `vim.diagnostic` entries of every loaded buffer (those that have
//! any), or of one file: JSON `[{uri, diagnostics: [{message, severity, range, source, code}]}]`
//! with severity `Error`/`Warning`/`Info`/`Hint` and 0-based ranges (characters in UTF-16
//! code units). The only IDE tool Claude Code shows the model (`mcp__ide__getDiagnostics`).
//!
//! URIs are `file://` followed by the path as is: Claude Code asks with such a URI and matches
//! the answer's `uri` against it literally. When a `uri` is given it is echoed back unchanged.
//! Served from the editor snapshot (diagnostics converted once, when `DiagnosticChanged` says
//! a buffer's changed) without Neovim's main thread; the Lua handler
//! (`lua/claude_context/ide/get_diagnostics.lua`) answers only while the snapshot is not live.

use crate::editor::methods;
use crate::tools::ide::{forward, Range};
use crate::tools::{parse_args, schema_of, Ctx, Run, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Args {
    /// A `file://` URI (or a path); all loaded buffers when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub enum Severity {
    Error,
    Warning,
    Info,
    Hint,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub struct Diagnostic {
    pub message: String,
    pub severity: Severity,
    pub range: Range,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// A string or a number, as the language server gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<Value>,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub struct FileDiagnostics {
    pub uri: String,
    pub diagnostics: Vec<Diagnostic>,
}

/// The door rule: on `/mcp`, diagnostics of files outside the project are left out.
pub const DOOR: crate::tools::door::DoorRule = crate::tools::door::DoorRule::Diagnostics;

pub fn def() -> ToolDef {
    ToolDef {
        name: "getDiagnostics",
        aliases: &[],
        description: "Get language diagnostics (errors, warnings, hints) from the editor, for \
                      one file (uri) or for every open file.",
        input_schema: schema_of::<Args>(),
        // The answer is a JSON array (in the text): no structuredContent, hence no schema.
        output_schema: None,
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let args: Args = match parse_args("getDiagnostics", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    Box::pin(async move {
        // Off the async workers: a file not found by name is looked for by its real path, and
        // every file's answer is megabytes at scale.
        let (c, u) = (ctx.clone(), args.uri.clone());
        let snap =
            crate::tools::on_blocking_pool(move || Ok(from_snapshot(&c, u.as_deref()))).await?;
        if let Some(text) = snap {
            return Ok(ToolOutput::texts([text]));
        }
        let params = serde_json::to_value(&args).unwrap_or_default();
        let files: Vec<FileDiagnostics> = forward(&ctx, methods::GET_DIAGNOSTICS, params).await?;
        let text = serde_json::to_string(&files)
            .map_err(crate::tools::ide::AnswerError::EncodeDiagnostics)?;
        Ok(ToolOutput::texts([text]))
    })
}

/// One file's diagnostics as the snapshot holds them (already in the protocol's shape).
#[derive(Serialize)]
struct FileRef<'a> {
    uri: String,
    /// The buffer's diagnostics as the snapshot keeps them: JSON text, copied, not re-encoded.
    diagnostics: &'a serde_json::value::RawValue,
}

/// The answer's JSON text from the snapshot; `None` when it is not live. With `uri`: that
/// file's diagnostics (the uri echoed), `[]` when no buffer holds it; without: every loaded
/// file buffer that has any, by uri.
pub fn from_snapshot(ctx: &crate::state::State, uri: Option<&str>) -> Option<String> {
    let cwd = ctx.editor_state().cwd.clone();
    let none = serde_json::value::RawValue::from_string("[]".into()).ok()?;
    let st = ctx.snapshot.state();
    if !st.live {
        return None;
    }
    let files: Vec<FileRef> = match uri {
        Some(uri) => {
            // Claude Code sends `file://` + the path unencoded; others may percent-encode.
            let mut candidates = Vec::new();
            if let Some(raw) = uri.strip_prefix("file://") {
                candidates.push(crate::editor::abspath(raw, cwd.as_deref()));
            }
            candidates.push(crate::editor::abspath(uri, cwd.as_deref()));
            let found = candidates.iter().find_map(|p| st.find(p));
            match found {
                Some(r) => vec![FileRef {
                    uri: uri.to_string(),
                    diagnostics: st.diags.get(&r.buf).map(AsRef::as_ref).unwrap_or(&none),
                }],
                None => Vec::new(),
            }
        }
        None => {
            let mut files: Vec<FileRef> = st
                .bufs
                .values()
                .filter(|r| r.loaded && r.file)
                .filter_map(|r| {
                    let d = st.diags.get(&r.buf)?;
                    Some(FileRef {
                        uri: format!("file://{}", r.name),
                        diagnostics: d,
                    })
                })
                .collect();
            files.sort_by(|a, b| a.uri.cmp(&b.uri));
            files
        }
    };
    // Written into a buffer of the answer's size: megabytes, grown by doubling they are copied
    // over and over.
    let size: usize = files
        .iter()
        .map(|f| f.uri.len() + f.diagnostics.get().len() + 32)
        .sum();
    let mut out = Vec::with_capacity(size + 2);
    serde_json::to_writer(&mut out, &files).ok()?;
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use crate::tools::ide::testing::{call, ctx, texts};
    use serde_json::{json, Value};

    #[test]
    fn diagnostics_round_trip_and_bad_severities_fail() {
        let d = json!([{"uri": "file:///p/a b.rs", "diagnostics": [
            {"message": "unused", "severity": "Warning",
             "range": {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 7}},
             "source": "rustc", "code": "E0001"},
            {"message": "x", "severity": "Hint",
             "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
             "code": 42}]}]);
        let want = d.clone();
        let (s, ed) = ctx(move |_, _| Ok(want.clone()));
        let r = call(&s, "getDiagnostics", json!({"uri": "file:///p/a b.rs"})).unwrap();
        let t: Value = serde_json::from_str(&texts(&r)[0]).unwrap();
        assert_eq!(t, d);
        assert!(r.get("structuredContent").is_none());
        assert_eq!(
            ed.calls.lock().unwrap()[0].1,
            json!({"uri": "file:///p/a b.rs"})
        );
        let r = call(&s, "getDiagnostics", json!({})).unwrap();
        assert_eq!(r["isError"], false);
        assert_eq!(ed.calls.lock().unwrap()[1].1, json!({}));

        let (s, _) = ctx(|_, _| {
            Ok(
                json!([{"uri": "file:///x", "diagnostics": [{"message": "m", "severity": 1,
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}}]}]),
            )
        });
        let r = call(&s, "getDiagnostics", json!({})).unwrap();
        assert_eq!(r["isError"], true);
        assert_eq!(
            call(&s, "getDiagnostics", json!({"uri": 3})).unwrap_err().0,
            -32602
        );
    }

    #[test]
    fn answered_from_the_snapshot_as_pushed_and_cleared() {
        let (s, ed) = ctx(|_, _| Err("the editor is not asked".into()));
        let row = |b: u64, name: &str| {
            json!({"k": "buf", "rows": [{"buf": b, "name": name, "listed": true,
                "loaded": true, "lines": 3, "file": true}]})
            .to_string()
        };
        let item = |m: &str| {
            json!({"message": m, "severity": "Error", "source": "x",
                "range": {"start": {"line": 0, "character": 1}, "end": {"line": 0, "character": 2}}})
        };
        s.snapshot.push(r#"{"k":"reset"}"#.into());
        s.snapshot.push(row(1, "/p/b.rs"));
        s.snapshot.push(row(2, "/p/a.rs"));
        // As snapshot.lua writes them (kept as text) and in any other key order (parsed).
        s.snapshot.push(format!(
            r#"{{"k":"diag","buf":1,"items":{}}}"#,
            json!([item("b1"), item("b2")])
        ));
        s.snapshot
            .push(json!({"items": [item("a1")], "buf": 2, "k": "diag"}).to_string());
        let all = |s| -> Value {
            let r = call(s, "getDiagnostics", json!({})).unwrap();
            serde_json::from_str(&texts(&r)[0]).unwrap()
        };
        assert_eq!(
            all(&s),
            json!([{"uri": "file:///p/a.rs", "diagnostics": [item("a1")]},
                   {"uri": "file:///p/b.rs", "diagnostics": [item("b1"), item("b2")]}])
        );
        let r = call(&s, "getDiagnostics", json!({"uri": "file:///p/b.rs"})).unwrap();
        let one: Value = serde_json::from_str(&texts(&r)[0]).unwrap();
        assert_eq!(
            one,
            json!([{"uri": "file:///p/b.rs", "diagnostics": [item("b1"), item("b2")]}])
        );
        // Cleared (both ways): gone from the answer; a file with none answers an empty list.
        s.snapshot.push(r#"{"k":"diag","buf":1,"items":[]}"#.into());
        assert_eq!(
            all(&s),
            json!([{"uri": "file:///p/a.rs", "diagnostics": [item("a1")]}])
        );
        s.snapshot
            .push(json!({"buf": 2, "k": "diag", "items": []}).to_string());
        assert_eq!(all(&s), json!([]));
        let r = call(&s, "getDiagnostics", json!({"uri": "file:///p/b.rs"})).unwrap();
        assert_eq!(
            texts(&r)[0],
            r#"[{"uri":"file:///p/b.rs","diagnostics":[]}]"#
        );
        assert!(
            ed.calls.lock().unwrap().is_empty(),
            "never asked the editor"
        );
    }
}
