//! `getWorkspaceFolders` — the current window's cwd followed by every LSP client's workspace
//! folders (deduplicated), in the Claude Code IDE shape (doc/protocol.md, IDE tools).
//! Served from the editor snapshot: no hop to Neovim's main thread.

use crate::editor::EditorState;
use crate::tools::{parse_args, ready, schema_of, Ctx, NoArgs, Run, ToolDef, ToolOutput};
use crate::uri::file_uri;
use arc_swap::ArcSwapOption;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;

#[derive(Debug, Serialize, JsonSchema, PartialEq)]
pub struct Folder {
    /// The directory's name.
    pub name: String,
    /// A percent-encoded `file://` URI.
    pub uri: String,
    /// The absolute path.
    pub path: String,
}

#[derive(Debug, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceFolders {
    pub success: bool,
    pub folders: Vec<Folder>,
    /// The first folder's path.
    pub root_path: Option<String>,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "getWorkspaceFolders",
        aliases: &[],
        description: "Get the editor's workspace folders: the current window's working directory \
                      followed by every LSP client's workspace folders.",
        input_schema: schema_of::<NoArgs>(),
        output_schema: Some(schema_of::<WorkspaceFolders>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    ready(
        parse_args::<Option<NoArgs>>("getWorkspaceFolders", args)
            .and_then(|_| rendered(ctx.editor_state())),
    )
}

/// The answer for the last snapshot seen, with its MCP result's JSON already written.
struct Rendered {
    state: Arc<EditorState>,
    out: ToolOutput,
}

static LAST: ArcSwapOption<Rendered> = ArcSwapOption::const_empty();

/// The tool's output for `st`. Claude Code calls this tool far more often than the snapshot
/// changes, so the output (URIs, JSON value, and the whole result's JSON the reply copies) is
/// built once per snapshot and cloned afterwards. Keyed by the snapshot's identity (`Arc::ptr_eq`),
/// so it is right for any number of servers in one process.
fn rendered(st: Arc<EditorState>) -> Result<ToolOutput, crate::tools::ToolError> {
    if let Some(r) = LAST.load().as_ref() {
        if Arc::ptr_eq(&r.state, &st) {
            if let Some(kept) = &r.out.rendered {
                return Ok(ToolOutput::kept(kept.clone()));
            }
            return Ok(r.out.clone());
        }
    }
    let mut out = ToolOutput::of(&folders(&st))?;
    if out.straight() {
        let text = crate::jsonrpc::json_text(&out.value);
        out.rendered = Some(ToolOutput::result_json_of(&text).into());
    }
    LAST.store(Some(Arc::new(Rendered {
        state: st,
        out: out.clone(),
    })));
    Ok(out)
}

pub fn folders(st: &EditorState) -> WorkspaceFolders {
    let folders: Vec<Folder> = st
        .workspace_folders()
        .into_iter()
        .map(|p| Folder {
            name: p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| p.to_string_lossy().into_owned()),
            uri: file_uri(&p),
            path: p.to_string_lossy().into_owned(),
        })
        .collect();
    WorkspaceFolders {
        success: true,
        root_path: folders.first().map(|f| f.path.clone()),
        folders,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_output_follows_the_snapshot() {
        let st = |cwd: &str| {
            Arc::new(EditorState {
                cwd: Some(cwd.into()),
                ..Default::default()
            })
        };
        let a = st("/w/a");
        // What a client gets: the MCP result (`tools/call` and `call_tool` alike).
        let result = |out: ToolOutput| crate::mcp::tool_result(out);
        let first = rendered(a.clone()).unwrap();
        let fresh = result(ToolOutput::json(first.value.clone()));
        assert_eq!(
            first.rendered.as_deref().unwrap(),
            crate::jsonrpc::json_text(&fresh),
            "the result's JSON kept is what the value's result writes"
        );
        // The same snapshot again: the same result, from the kept JSON (no copy of the value;
        // another test may have rendered another snapshot meanwhile: then rendered anew).
        let again = rendered(a.clone()).unwrap();
        assert!(again.value.is_null() || again == first, "{again:?}");
        assert_eq!(again.rendered, first.rendered);
        assert_eq!(result(again), fresh);
        assert_eq!(fresh["structuredContent"]["rootPath"], "/w/a");
        // A new snapshot (even with equal content) is rendered from itself.
        let b = st("/w/b");
        let root = |out| result(out)["structuredContent"]["rootPath"].clone();
        assert_eq!(root(rendered(b.clone()).unwrap()), "/w/b");
        assert_eq!(root(rendered(a).unwrap()), "/w/a");
        assert_eq!(
            result(rendered(b).unwrap())["structuredContent"]["folders"][0]["uri"],
            "file:///w/b"
        );
    }

    #[test]
    fn shape_matches_the_spec() {
        let st = EditorState {
            cwd: Some("/home/u/my project".into()),
            lsp_folders: vec!["/home/u/lib".into(), "/home/u/my project".into()],
            ..Default::default()
        };
        let v = serde_json::to_value(folders(&st)).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "success": true,
                "folders": [
                    {"name": "my project", "uri": "file:///home/u/my%20project", "path": "/home/u/my project"},
                    {"name": "lib", "uri": "file:///home/u/lib", "path": "/home/u/lib"}
                ],
                "rootPath": "/home/u/my project"
            })
        );
    }
}
