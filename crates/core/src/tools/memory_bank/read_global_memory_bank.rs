//! `read_global_memory_bank {path}` — one document of the global memory bank.

use crate::memory_bank::document::Document;
use crate::tools::{schema_of, Ctx, Run, ToolDef};
use serde_json::Value;

bank_args! {
    pub struct Args {
        /// The document's path relative to the global bank, e.g. "architecture.md".
        pub path: String,
    }
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "read_global_memory_bank",
        aliases: &[],
        description: read_description!("the global memory bank"),
        input_schema: schema_of::<Args>(),
        output_schema: Some(schema_of::<Document>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    super::run_read::<Args>(ctx, "read_global_memory_bank", args, |a| (None, a.path))
}

#[cfg(test)]
mod tests {
    use crate::tools::testutil::*;
    use serde_json::json;

    #[test]
    fn reads_json_documents_with_metadata_tags() {
        let (d, bank) = seeded_bank("main");
        std::fs::create_dir_all(bank.global_dir().join("meta")).unwrap();
        std::fs::write(
            bank.global_dir().join("meta/decisions.json"),
            r#"{"metadata": {"tags": ["decision", "adr"]}, "content": {"x": 1}}"#,
        )
        .unwrap();
        let s = TestServer::new(bank.root.parent().unwrap(), d.path());
        let r = s.call(
            "read_global_memory_bank",
            json!({"path": "meta/decisions.json"}),
        );
        assert!(!is_error(&r), "{r}");
        assert_eq!(r["structuredContent"]["tags"], json!(["decision", "adr"]));
        assert_eq!(r["structuredContent"]["path"], "meta/decisions.json");
        // The text content is the document itself (as the original answered it).
        assert_eq!(
            text_of(&r),
            r#"{"metadata": {"tags": ["decision", "adr"]}, "content": {"x": 1}}"#
        );
        let r = s.call(
            "read_global_memory_bank",
            json!({"path": "../branch-memory-bank/main/notes.md"}),
        );
        assert!(
            is_error(&r) && text_of(&r).contains("outside the global memory bank"),
            "{r}"
        );
        let r = s.call("read_global_memory_bank", json!({"path": "meta"}));
        assert!(
            is_error(&r) && text_of(&r).contains("not a regular file"),
            "{r}"
        );
    }
}
