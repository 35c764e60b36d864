//! `test_panic` — compiled only with the `test-tools` feature: panics on purpose so tests can
//! prove that a panicking tool becomes an error result and the server keeps running.
//!
//! Arguments: `{}` panics on a runtime worker, `{"blocking": true}` on the blocking pool,
//! `{"main_thread": true}` asks the editor to run the `test/panic` request, which the Neovim
//! crate (built with `test-tools`) answers by panicking on Neovim's main thread.

use super::{schema_of, Ctx, NoArgs, ToolDef, ToolOutput};
use serde_json::{json, Value};

pub fn def() -> ToolDef {
    ToolDef {
        name: "test_panic",
        aliases: &[],
        description: "Test only: panics.",
        input_schema: schema_of::<NoArgs>(),
        output_schema: None,
        run: crate::tools::Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> super::ToolFuture {
    let flag = |k: &str| args.get(k).and_then(Value::as_bool) == Some(true);
    if flag("blocking") {
        return super::blocking(|| panic!("test_panic: deliberate panic on the blocking pool"));
    }
    if flag("main_thread") {
        return Box::pin(async move {
            match ctx
                .rpc
                .call(crate::editor::methods::TEST_PANIC, json!({}))
                .await
            {
                Ok(v) => Ok(ToolOutput::json(v)),
                Err(e) => Err(crate::error::Error::from(e).into()),
            }
        });
    }
    panic!("test_panic: deliberate panic")
}
