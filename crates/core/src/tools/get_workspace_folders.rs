//! `getWorkspaceFolders` — the current window's cwd followed by every LSP client's workspace
//! folders (deduplicated), in the Claude Code IDE shape (get-workspace-folders-tool.md).
//! Served from the editor snapshot: no hop to Neovim's main thread.

use super::{parse_args, ready, schema_of, Ctx, NoArgs, ToolDef, ToolOutput};
use crate::editor::EditorState;
use crate::uri::file_uri;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

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
        run,
    }
}

fn run(ctx: Ctx, args: Value) -> super::ToolFuture {
    ready(
        parse_args::<Option<NoArgs>>("getWorkspaceFolders", args)
            .and_then(|_| ToolOutput::of(&folders(&ctx.editor_state()))),
    )
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
