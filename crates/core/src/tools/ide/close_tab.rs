//! `close_tab {tab_name}` — close the diff view of that name (Claude Code calls it after every
//! `openDiff`, and when the person interrupts; a diff still waiting is answered
//! `DIFF_REJECTED`). Answers `TAB_CLOSED`, also when no such view is open (it may have closed
//! already when the person decided). Handler: `lua/claude_context/ide/close_tab.lua`.

use crate::editor::methods;
use crate::tools::ide::forward;
use crate::tools::{parse_args, schema_of, Ctx, Run, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Args {
    /// The `tab_name` given to `openDiff`.
    pub tab_name: String,
}

/// The door rule: on `/mcp`, IDE plumbing: neither listed nor callable.
pub const DOOR: crate::tools::door::DoorRule = crate::tools::door::DoorRule::IdeOnly;

pub fn def() -> ToolDef {
    ToolDef {
        name: "close_tab",
        aliases: &[],
        description: "Close the diff view opened by openDiff with this tab_name.",
        input_schema: schema_of::<Args>(),
        output_schema: None,
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let args: Args = match parse_args("close_tab", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    Box::pin(async move {
        let params = serde_json::to_value(&args).unwrap_or_default();
        let _: Value = forward(&ctx, methods::CLOSE_TAB, params).await?;
        Ok(ToolOutput::texts(["TAB_CLOSED".to_string()]))
    })
}

#[cfg(test)]
mod tests {
    use crate::tools::ide::testing::{call, ctx, texts};
    use serde_json::json;

    #[test]
    fn answers_tab_closed() {
        let (s, ed) = ctx(|_, _| Ok(json!({"closed": false})));
        let r = call(&s, "close_tab", json!({"tab_name": "t"})).unwrap();
        assert_eq!(texts(&r), vec!["TAB_CLOSED"]);
        assert_eq!(
            ed.calls.lock().unwrap()[0],
            ("close_tab".into(), json!({"tab_name": "t"}))
        );
        assert_eq!(call(&s, "close_tab", json!({})).unwrap_err().0, -32602);
    }
}
