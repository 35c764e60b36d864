//! `getLatestSelection` — the last selection recorded in a file buffer (what the last
//! `selection_changed` carried), even after focus moved to Claude's terminal. Same shape as
//! `getCurrentSelection`, or `{success: false, message: "No selection available"}`.
//! Handler: `lua/claude_context/ide/get_latest_selection.lua`.

use super::ide::{forward_selection, Empty, SelectionResult};
use super::{schema_of, Ctx, ToolDef};
use serde_json::Value;

pub fn def() -> ToolDef {
    ToolDef {
        name: "getLatestSelection",
        aliases: &[],
        description: "Get the most recent text selection made in a file, even if the focus has \
                      moved elsewhere since.",
        input_schema: schema_of::<Empty>(),
        output_schema: Some(schema_of::<SelectionResult>()),
        run,
    }
}

fn run(ctx: Ctx, args: Value) -> super::ToolFuture {
    forward_selection(ctx, "getLatestSelection", args)
}

#[cfg(test)]
mod tests {
    use super::super::ide::testing::{call, ctx, texts};
    use serde_json::json;

    #[test]
    fn no_selection_and_malformed_answers() {
        let (s, _) = ctx(|_, _| Ok(json!({"success": false, "message": "No selection available"})));
        let r = call(&s, "getLatestSelection", json!({})).unwrap();
        assert_eq!(
            texts(&r)[0],
            r#"{"success":false,"message":"No selection available"}"#
        );
        let (s, _) = ctx(|_, _| Ok(json!({"text": "no success field"})));
        let r = call(&s, "getLatestSelection", json!({})).unwrap();
        assert_eq!(r["isError"], true);
    }
}
