//! `closeAllDiffTabs` — close every diff view this plugin opened (Claude Code calls it on every
//! turn); other diff windows (`:diffsplit`, fugitive, …) are left alone. A diff still waiting
//! is answered `DIFF_REJECTED`. Answers `CLOSED_<n>_DIFF_TABS`.
//! With no diff view of ours open (nor an `openDiff` on its way) the editor snapshot answers
//! `CLOSED_0_DIFF_TABS` without Neovim's main thread (Claude Code calls this at the start of
//! every turn, also while the person sits at a hit-enter prompt).
//! Handler: `lua/claude_context/ide/close_all_diff_tabs.lua`.

use crate::editor::methods;
use crate::tools::ide::{forward, Empty};
use crate::tools::{parse_args, schema_of, Ctx, Run, ToolDef, ToolOutput};
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize)]
struct Closed {
    closed: u64,
}

/// The door rule: on `/mcp`, IDE plumbing: neither listed nor callable.
pub const DOOR: crate::tools::door::DoorRule = crate::tools::door::DoorRule::IdeOnly;

pub fn def() -> ToolDef {
    ToolDef {
        name: "closeAllDiffTabs",
        aliases: &[],
        description: "Close every diff view opened by openDiff.",
        input_schema: schema_of::<Empty>(),
        output_schema: None,
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    if let Err(e) = parse_args::<Option<Empty>>("closeAllDiffTabs", args) {
        return crate::tools::ready(Err(e));
    }
    if ctx.snapshot.no_diffs() == Some(true) {
        return crate::tools::ready(Ok(ToolOutput::texts(["CLOSED_0_DIFF_TABS".to_string()])));
    }
    Box::pin(async move {
        let c: Closed = forward(
            &ctx,
            methods::CLOSE_ALL_DIFF_TABS,
            Value::Object(Default::default()),
        )
        .await?;
        Ok(ToolOutput::texts([format!(
            "CLOSED_{}_DIFF_TABS",
            c.closed
        )]))
    })
}

#[cfg(test)]
mod tests {
    use crate::tools::ide::testing::{call, ctx, texts};
    use serde_json::json;

    #[test]
    fn answers_the_count() {
        let (s, _) = ctx(|_, _| Ok(json!({"closed": 3})));
        let r = call(&s, "closeAllDiffTabs", json!({})).unwrap();
        assert_eq!(texts(&r), vec!["CLOSED_3_DIFF_TABS"]);
        let (s, _) = ctx(|_, _| Ok(json!({"closed": 0})));
        let r = call(&s, "closeAllDiffTabs", json!({"_extra": 1})).unwrap();
        assert_eq!(texts(&r), vec!["CLOSED_0_DIFF_TABS"]);
    }
}
