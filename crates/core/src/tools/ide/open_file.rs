//! `openFile` — open a file in Neovim (IDE protocol). With `makeFrontmost` (the default) the
//! file is shown in an editor window and focused, the range given by `startLine`/`endLine` or
//! `startText`/`endText` selected; the answer is the text `Opened file: <path>`. With
//! `makeFrontmost: false` (Claude Code does this before editing a file) the file is only loaded
//! into a buffer, nothing on screen changes, and the answer is JSON
//! `{success, filePath, languageId, lineCount}`. Handler: `lua/claude_context/ide/open_file.lua`.

use crate::editor::methods;
use crate::tools::ide::forward;
use crate::tools::{parse_args, schema_of, Ctx, Run, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

fn yes() -> bool {
    true
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The file to open (absolute, or relative to Neovim's working directory).
    pub file_path: String,
    /// Accepted for compatibility; Neovim has no preview tabs.
    #[serde(default)]
    pub preview: bool,
    /// First line to select (1-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_line: Option<i64>,
    /// Last line to select (1-based, inclusive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<i64>,
    /// Select from the first occurrence of this text…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_text: Option<String>,
    /// …to the end of the first occurrence of this text after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_text: Option<String>,
    /// Extend the selection to the end of its last line.
    #[serde(default)]
    pub select_to_end_of_line: bool,
    /// Show and focus the file (default true); false only loads it into a buffer.
    #[serde(default = "yes")]
    pub make_frontmost: bool,
}

/// What the Lua handler answers.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Opened {
    file_path: String,
    language_id: String,
    line_count: u64,
}

/// The JSON answer when `makeFrontmost` is false.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Loaded {
    success: bool,
    file_path: String,
    language_id: String,
    line_count: u64,
}

/// The door rule: on `/mcp`, its `filePath` must lie inside the project or a root the model may reach.
pub const DOOR: crate::tools::door::DoorRule = crate::tools::door::DoorRule::PathInside;

pub fn def() -> ToolDef {
    ToolDef {
        name: "openFile",
        aliases: &[],
        description: "Open a file in the editor and optionally select a range (startLine/endLine, \
                      1-based, or startText/endText). makeFrontmost=false only loads the file \
                      into a buffer without changing what is on screen.",
        input_schema: schema_of::<Args>(),
        output_schema: None,
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let args: Args = match parse_args("openFile", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    Box::pin(async move {
        let params = serde_json::to_value(&args).unwrap_or_default();
        let o: Opened = forward(&ctx, methods::OPEN_FILE, params).await?;
        shape(args.make_frontmost, o)
    })
}

fn shape(frontmost: bool, o: Opened) -> Result<ToolOutput, crate::tools::ToolError> {
    if frontmost {
        return Ok(ToolOutput::texts([format!("Opened file: {}", o.file_path)]));
    }
    ToolOutput::of(&Loaded {
        success: true,
        file_path: o.file_path,
        language_id: o.language_id,
        line_count: o.line_count,
    })
}

#[cfg(test)]
mod tests {
    use crate::tools::ide::testing::{call, ctx, texts};
    use serde_json::{json, Value};

    fn opened(_: &str, p: &Value) -> Result<Value, String> {
        Ok(json!({"filePath": p["filePath"], "languageId": "rust", "lineCount": 12}))
    }

    #[test]
    fn frontmost_answers_text_and_forwards_normalised_arguments() {
        let (s, ed) = ctx(opened);
        let r = call(
            &s,
            "openFile",
            json!({"filePath": "/p/a.rs", "startLine": 3}),
        )
        .unwrap();
        assert_eq!(texts(&r), vec!["Opened file: /p/a.rs"]);
        assert!(r.get("structuredContent").is_none());
        let calls = ed.calls.lock().unwrap();
        assert_eq!(calls[0].0, "openFile");
        assert_eq!(
            calls[0].1,
            json!({"filePath": "/p/a.rs", "preview": false, "startLine": 3,
                   "selectToEndOfLine": false, "makeFrontmost": true})
        );
    }

    #[test]
    fn background_load_answers_json() {
        let (s, _) = ctx(opened);
        let r = call(
            &s,
            "openFile",
            json!({"filePath": "/p/a.rs", "preview": false, "startText": "", "endText": "",
                   "selectToEndOfLine": false, "makeFrontmost": false}),
        )
        .unwrap();
        let t: Value = serde_json::from_str(&texts(&r)[0]).unwrap();
        assert_eq!(
            t,
            json!({"success": true, "filePath": "/p/a.rs", "languageId": "rust", "lineCount": 12})
        );
    }

    #[test]
    fn bad_arguments_and_editor_failures() {
        let (s, _) = ctx(|_, _| Err("File not found: /nope".into()));
        let (code, msg) = call(&s, "openFile", json!({"startLine": 1})).unwrap_err();
        assert_eq!(code, -32602);
        assert!(msg.contains("filePath"), "{msg}");
        let r = call(&s, "openFile", json!({"filePath": "/nope"})).unwrap();
        assert_eq!(r["isError"], true);
        assert_eq!(texts(&r), vec!["File not found: /nope"]);
    }
}
