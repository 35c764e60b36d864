//! `getCurrentSelection` — the selection (or cursor) in the active editor: the current window
//! when it shows a file, else the file window used last (the person is typing in Claude's
//! terminal). JSON `{success: true, text, filePath, fileUrl, selection}`, or
//! `{success: false, message: "No active editor found"}`.
//! Handler: `lua/claude_context/ide/get_current_selection.lua`.

use crate::editor::methods;
use crate::tools::ide::{forward_selection, Empty, SelectionResult};
use crate::tools::{schema_of, Ctx, Run, ToolDef};
use serde_json::Value;

/// The door rule: on `/mcp`, a selection in a file outside the project is withheld.
pub const DOOR: crate::tools::door::DoorRule =
    crate::tools::door::DoorRule::Selection { latest: false };

pub fn def() -> ToolDef {
    ToolDef {
        name: "getCurrentSelection",
        aliases: &[],
        description: "Get the current text selection (or cursor position) in the active editor.",
        input_schema: schema_of::<Empty>(),
        output_schema: Some(schema_of::<SelectionResult>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    forward_selection(ctx, methods::GET_CURRENT_SELECTION, args)
}

#[cfg(test)]
mod tests {
    use crate::tools::ide::testing::{call, ctx, texts};
    use serde_json::{json, Value};

    #[test]
    fn both_shapes_pass_through_exactly() {
        let sel = json!({"success": true, "text": "ab", "filePath": "/p/a.rs",
            "fileUrl": "file:///p/a.rs",
            "selection": {"start": {"line": 0, "character": 1},
                          "end": {"line": 0, "character": 3}, "isEmpty": false}});
        let want = sel.clone();
        let (s, _) = ctx(move |_, _| Ok(want.clone()));
        let r = call(&s, "getCurrentSelection", json!({})).unwrap();
        let t: Value = serde_json::from_str(&texts(&r)[0]).unwrap();
        assert_eq!(t, sel);
        assert_eq!(r["structuredContent"], sel);

        let none = json!({"success": false, "message": "No active editor found"});
        let want = none.clone();
        let (s, _) = ctx(move |_, _| Ok(want.clone()));
        let r = call(&s, "getCurrentSelection", json!({})).unwrap();
        assert_eq!(texts(&r)[0], none.to_string());
    }
}
