//! `openDiff` — show the proposed contents of a file against the file, in a new tab, and wait
//! until the person decides (without blocking the editor or other calls: the Lua handler keeps
//! its `respond` and calls it later). Accepting (`:w` in the proposal, or
//! `:ClaudeContext accept`) answers `FILE_SAVED` + the final contents, the person's edits to
//! the proposal included; Claude Code then writes the file. Rejecting (`:q`, or
//! `:ClaudeContext reject`) answers `DIFF_REJECTED` + the tab name. When the client goes away
//! first, the wait is cancelled and the view closes. Handler: `lua/claude_context/ide/open_diff.lua`.

use crate::tools::ide::forward;
use crate::tools::{parse_args, schema_of, Ctx, ToolDef, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Args {
    /// The file the proposal changes (it need not exist yet: a new file).
    pub old_file_path: String,
    /// Where the proposal goes (Claude Code sends the same path).
    pub new_file_path: String,
    /// The complete proposed contents.
    pub new_file_contents: String,
    /// The name of the diff view; `close_tab` closes it by this name.
    pub tab_name: String,
}

/// The person's decision, as the Lua handler reports it.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(tag = "result")]
enum Decision {
    #[serde(rename = "FILE_SAVED")]
    Saved { contents: String },
    #[serde(rename = "DIFF_REJECTED")]
    Rejected { tab_name: String },
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "openDiff",
        aliases: &[],
        description: "Show proposed contents of a file as a diff in the editor and wait for the \
                      user: FILE_SAVED plus the final contents when accepted (with any edits the \
                      user made), DIFF_REJECTED plus the tab name when rejected.",
        input_schema: schema_of::<Args>(),
        output_schema: None,
        run,
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let args: Args = match parse_args("openDiff", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    if args.tab_name.is_empty() {
        return crate::tools::ready(Err(ToolError::InvalidParams(
            "invalid arguments for openDiff: tab_name must not be empty".into(),
        )));
    }
    // closeAllDiffTabs must not answer "nothing open" from the snapshot while this call may
    // still open a view.
    let on_its_way = ctx.snapshot.diff_call();
    Box::pin(async move {
        let _on_its_way = on_its_way;
        let params = serde_json::to_value(&args).unwrap_or_default();
        let d: Decision = forward(&ctx, "openDiff", params).await?;
        Ok(shape(d))
    })
}

fn shape(d: Decision) -> ToolOutput {
    match d {
        Decision::Saved { contents } => ToolOutput::texts(["FILE_SAVED".to_string(), contents]),
        Decision::Rejected { tab_name } => {
            ToolOutput::texts(["DIFF_REJECTED".to_string(), tab_name])
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::tools::ide::testing::{call, ctx, texts};
    use serde_json::json;

    fn args() -> serde_json::Value {
        json!({"old_file_path": "/p/a.txt", "new_file_path": "/p/a.txt",
               "new_file_contents": "new\n", "tab_name": "✻ [Claude Code] a.txt (x1) ⧉"})
    }

    #[test]
    fn accepted_answers_file_saved_and_contents() {
        let (s, ed) = ctx(|_, _| Ok(json!({"result": "FILE_SAVED", "contents": "edited\n"})));
        let r = call(&s, "openDiff", args()).unwrap();
        assert_eq!(texts(&r), vec!["FILE_SAVED", "edited\n"]);
        assert_eq!(r["isError"], false);
        assert!(r.get("structuredContent").is_none());
        assert_eq!(ed.calls.lock().unwrap()[0].1, args());
    }

    #[test]
    fn rejected_answers_the_tab_name() {
        let (s, _) = ctx(|_, p| Ok(json!({"result": "DIFF_REJECTED", "tab_name": p["tab_name"]})));
        let r = call(&s, "openDiff", args()).unwrap();
        assert_eq!(
            texts(&r),
            vec!["DIFF_REJECTED", "✻ [Claude Code] a.txt (x1) ⧉"]
        );
    }

    #[test]
    fn missing_arguments_and_malformed_answers() {
        let (s, ed) = ctx(|_, _| Ok(json!({"result": "MAYBE"})));
        let (code, msg) = call(&s, "openDiff", json!({"old_file_path": "/p"})).unwrap_err();
        assert_eq!(code, -32602);
        assert!(msg.contains("new_file_path"), "{msg}");
        let mut a = args();
        a["tab_name"] = json!("");
        assert_eq!(call(&s, "openDiff", a).unwrap_err().0, -32602);
        assert!(
            ed.calls.lock().unwrap().is_empty(),
            "bad input never reaches the editor"
        );
        let r = call(&s, "openDiff", args()).unwrap();
        assert_eq!(r["isError"], true);
        assert!(texts(&r)[0].contains("malformed"), "{r}");
    }
}
