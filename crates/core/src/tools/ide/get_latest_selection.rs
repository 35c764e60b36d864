//! `getLatestSelection` — the last selection recorded in a file buffer (what the last
//! `selection_changed` carried), even after focus moved to Claude's terminal. Same shape as
//! `getCurrentSelection`, or `{success: false, message: "No selection available"}`.
//! Served from the editor snapshot (the selection as last sent) without Neovim's main thread;
//! the Lua handler (`lua/claude_context/ide/get_latest_selection.lua`) answers only while the
//! snapshot is not live or holds no selection yet.

use crate::editor::methods;
use crate::tools::ide::{decode, forward_selection, Empty, SelectionResult};
use crate::tools::{parse_args, schema_of, Ctx, Run, ToolDef, ToolOutput};
use serde_json::Value;
use std::sync::Arc;

/// The door rule: on `/mcp`, a selection in a file outside the project is withheld.
pub const DOOR: crate::tools::door::DoorRule =
    crate::tools::door::DoorRule::Selection { latest: true };

pub fn def() -> ToolDef {
    ToolDef {
        name: "getLatestSelection",
        aliases: &[],
        description: "Get the most recent text selection made in a file, even if the focus has \
                      moved elsewhere since.",
        input_schema: schema_of::<Empty>(),
        output_schema: Some(schema_of::<SelectionResult>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    if let Err(e) = parse_args::<Option<Empty>>("getLatestSelection", args.clone()) {
        return crate::tools::ready(Err(e));
    }
    if let Some(sel) = from_snapshot(&ctx) {
        return crate::tools::ready(
            decode::<SelectionResult>("getLatestSelection", sel).and_then(|r| ToolOutput::of(&r)),
        );
    }
    forward_selection(ctx, methods::GET_LATEST_SELECTION, args)
}

/// The latest selection from the snapshot; `None` when it is not live or has none yet.
pub fn from_snapshot(ctx: &crate::state::State) -> Option<Value> {
    let sel = {
        let st = ctx.snapshot.state();
        st.live.then(|| st.selection.clone()).flatten()?
    };
    Some(Arc::unwrap_or_clone(sel))
}

#[cfg(test)]
mod tests {
    use crate::tools::ide::testing::{call, ctx, texts};
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
