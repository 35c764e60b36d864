//! `saveDocument {filePath}` — write the file's buffer if it has unsaved changes: JSON
//! `{success, filePath, saved, message}`. Handler: `lua/claude_context/ide/save_document.lua`.

use crate::editor::methods;
use crate::tools::ide::{forward, FilePathArgs};
use crate::tools::{parse_args, schema_of, Ctx, Run, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SaveResult {
    pub success: bool,
    pub file_path: String,
    pub saved: bool,
    pub message: String,
}

/// The door rule: on `/mcp`, its `filePath` must lie inside the project or a root the model may reach.
pub const DOOR: crate::tools::door::DoorRule = crate::tools::door::DoorRule::PathInside;

pub fn def() -> ToolDef {
    ToolDef {
        name: "saveDocument",
        aliases: &[],
        description: "Save a file open in the editor (write its unsaved changes to disk).",
        input_schema: schema_of::<FilePathArgs>(),
        output_schema: Some(schema_of::<SaveResult>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let args: FilePathArgs = match parse_args("saveDocument", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    Box::pin(async move {
        let params = serde_json::to_value(&args).unwrap_or_default();
        let r: SaveResult = forward(&ctx, methods::SAVE_DOCUMENT, params).await?;
        ToolOutput::of(&r)
    })
}

#[cfg(test)]
mod tests {
    use crate::tools::ide::testing::{call, ctx, texts};
    use serde_json::json;

    #[test]
    fn shape() {
        let (s, _) = ctx(|_, p| {
            Ok(
                json!({"success": true, "filePath": p["filePath"], "saved": true,
                      "message": "Document saved"}),
            )
        });
        let r = call(&s, "saveDocument", json!({"filePath": "/p/a"})).unwrap();
        assert_eq!(
            texts(&r)[0],
            r#"{"success":true,"filePath":"/p/a","saved":true,"message":"Document saved"}"#
        );
        let (s, _) = ctx(|_, _| Ok(json!({"success": true})));
        let r = call(&s, "saveDocument", json!({"filePath": "/p/a"})).unwrap();
        assert_eq!(
            r["isError"], true,
            "an incomplete answer is the editor's bug"
        );
    }
}
