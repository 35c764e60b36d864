//! `write_global_memory_bank {path, content, language?}` — writes a document of the global
//! memory bank atomically, creating the bank (seeded from templates) when there is none.

use crate::memory_bank::WriteOutcome;
use crate::tools::{schema_of, Ctx, Run, ToolDef};
use serde_json::Value;

bank_args! {
    pub struct Args {
        /// The document's path relative to the global bank, e.g. "architecture.md".
        pub path: String,
    } write
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "write_global_memory_bank",
        aliases: &[],
        description: write_description!("the global memory bank", "there is"),
        input_schema: schema_of::<Args>(),
        output_schema: Some(schema_of::<WriteOutcome>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    super::run_write::<Args>(ctx, "write_global_memory_bank", args, |_| None)
}

#[cfg(test)]
mod tests {
    use crate::tools::testutil::*;
    use serde_json::json;

    #[test]
    fn writes_and_seeds_the_global_bank() {
        let (_d, project, s) = empty_project();
        let r = s.call(
            "write_global_memory_bank",
            json!({"path": "glossary.md", "content": "# 用語集\n\ntags: #core #glossary\n\n**バンク**: 記憶"}),
        );
        assert!(!is_error(&r), "{r}");
        assert_eq!(
            r["structuredContent"]["seeded"].as_array().unwrap().len(),
            5
        );
        let r = s.call("read_global_memory_bank", json!({"path": "glossary.md"}));
        assert!(r["structuredContent"]["content"]
            .as_str()
            .unwrap()
            .contains("**バンク**: 記憶"));
        let r = s.call(
            "write_global_memory_bank",
            json!({"path": "../escape.md", "content": "x"}),
        );
        assert!(is_error(&r), "{r}");
        assert!(!project.join("docs/escape.md").exists());
    }
}
