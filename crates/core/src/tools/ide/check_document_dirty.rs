//! `checkDocumentDirty {filePath}` — whether the file's buffer has unsaved changes: JSON
//! `{success: true, filePath, isDirty, isUntitled}`, or
//! `{success: false, message: "Document not open: <path>"}` when no buffer holds it.
//! Served from the editor snapshot without Neovim's main thread; the Lua handler
//! (`lua/claude_context/ide/check_document_dirty.lua`) answers only while it is not live.

use crate::editor::methods;
use crate::tools::ide::{forward, FilePathArgs};
use crate::tools::{parse_args, schema_of, Ctx, Run, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct DirtyResult {
    pub success: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_dirty: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_untitled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The door rule: on `/mcp`, its `filePath` must lie inside the project or a root the model may reach.
pub const DOOR: crate::tools::door::DoorRule = crate::tools::door::DoorRule::PathInside;

pub fn def() -> ToolDef {
    ToolDef {
        name: "checkDocumentDirty",
        aliases: &[],
        description: "Check whether a file open in the editor has unsaved changes.",
        input_schema: schema_of::<FilePathArgs>(),
        output_schema: Some(schema_of::<DirtyResult>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let args: FilePathArgs = match parse_args("checkDocumentDirty", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    Box::pin(async move {
        // A miss looks for the file by its real path (file system): off the async workers.
        let (c, fp) = (ctx.clone(), args.file_path.clone());
        let snap = tokio::task::spawn_blocking(move || from_snapshot(&c, &fp))
            .await
            .ok()
            .flatten();
        let r: DirtyResult = match snap {
            Some(r) => r,
            None => {
                let params = serde_json::to_value(&args).unwrap_or_default();
                forward(&ctx, methods::CHECK_DOCUMENT_DIRTY, params).await?
            }
        };
        ToolOutput::of(&r)
    })
}

/// The answer from the snapshot; `None` when it is not live.
pub fn from_snapshot(ctx: &crate::state::State, file_path: &str) -> Option<DirtyResult> {
    let cwd = ctx.editor_state().cwd.clone();
    let path = crate::editor::abspath(file_path, cwd.as_deref());
    let st = ctx.snapshot.state();
    if !st.live {
        return None;
    }
    Some(match st.find(&path).filter(|r| r.loaded) {
        Some(r) => DirtyResult {
            success: true,
            file_path: Some(file_path.to_string()),
            is_dirty: Some(r.modified),
            is_untitled: Some(false),
            message: None,
        },
        None => DirtyResult {
            success: false,
            file_path: None,
            is_dirty: None,
            is_untitled: None,
            message: Some(format!("Document not open: {file_path}")),
        },
    })
}

#[cfg(test)]
mod tests {
    use crate::tools::ide::testing::{call, ctx, texts};
    use serde_json::json;

    #[test]
    fn shapes() {
        let (s, _) = ctx(|_, p| {
            Ok(
                json!({"success": true, "filePath": p["filePath"], "isDirty": true, "isUntitled": false}),
            )
        });
        let r = call(&s, "checkDocumentDirty", json!({"filePath": "/p/a"})).unwrap();
        assert_eq!(
            texts(&r)[0],
            r#"{"success":true,"filePath":"/p/a","isDirty":true,"isUntitled":false}"#
        );
        let (s, _) =
            ctx(|_, _| Ok(json!({"success": false, "message": "Document not open: /p/b"})));
        let r = call(&s, "checkDocumentDirty", json!({"filePath": "/p/b"})).unwrap();
        assert_eq!(
            texts(&r)[0],
            r#"{"success":false,"message":"Document not open: /p/b"}"#
        );
        assert_eq!(
            call(&s, "checkDocumentDirty", json!({})).unwrap_err().0,
            -32602
        );
    }
}
