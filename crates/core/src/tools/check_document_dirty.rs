//! `checkDocumentDirty {filePath}` — whether the file's buffer has unsaved changes: JSON
//! `{success: true, filePath, isDirty, isUntitled}`, or
//! `{success: false, message: "Document not open: <path>"}` when no buffer holds it.
//! Handler: `lua/claude_context/ide/check_document_dirty.lua`.

use super::ide::{forward, FilePathArgs};
use super::{parse_args, schema_of, Ctx, ToolDef, ToolOutput};
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

pub fn def() -> ToolDef {
    ToolDef {
        name: "checkDocumentDirty",
        aliases: &[],
        description: "Check whether a file open in the editor has unsaved changes.",
        input_schema: schema_of::<FilePathArgs>(),
        output_schema: Some(schema_of::<DirtyResult>()),
        run,
    }
}

fn run(ctx: Ctx, args: Value) -> super::ToolFuture {
    let args: FilePathArgs = match parse_args("checkDocumentDirty", args) {
        Ok(a) => a,
        Err(e) => return super::ready(Err(e)),
    };
    Box::pin(async move {
        let params = serde_json::to_value(&args).unwrap_or_default();
        let r: DirtyResult = forward(&ctx, "checkDocumentDirty", params).await?;
        ToolOutput::of(&r)
    })
}

#[cfg(test)]
mod tests {
    use super::super::ide::testing::{call, ctx, texts};
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
