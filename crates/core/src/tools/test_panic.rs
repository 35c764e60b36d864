//! `test_panic` — compiled only with the `test-tools` feature: panics on purpose so tests can
//! prove that a panicking tool becomes an error result and the server keeps running.

use super::{schema_of, Ctx, NoArgs, ToolDef};
use serde_json::Value;

pub fn def() -> ToolDef {
    ToolDef {
        name: "test_panic",
        aliases: &[],
        description: "Test only: panics.",
        input_schema: schema_of::<NoArgs>(),
        output_schema: None,
        run,
    }
}

fn run(_ctx: Ctx, args: Value) -> super::ToolFuture {
    if args.get("blocking").and_then(Value::as_bool) == Some(true) {
        return super::blocking(|| panic!("test_panic: deliberate panic on the blocking pool"));
    }
    panic!("test_panic: deliberate panic")
}
