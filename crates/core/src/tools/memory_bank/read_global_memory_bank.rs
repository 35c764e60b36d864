//! `read_global_memory_bank {path}` — one document of the global memory bank.

use crate::memory_bank::document::Document;
use crate::tools::{parse_args, schema_of, Ctx, ToolDef};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The document's path relative to the global bank, e.g. "architecture.md".
    pub path: String,
    /// The original server's bank directory (t3ta/memory-bank-mcp-server's `docs`): accepted
    /// and ignored; the bank is the one configured (setup / MEMORY_BANK_ROOT).
    #[serde(default)]
    pub docs: Option<String>,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "read_global_memory_bank",
        aliases: &[],
        description: "Read a document from the global memory bank. `path` is relative to the \
                      bank; paths leading outside it are refused. Returns {path, content, tags, \
                      lastModified}.",
        input_schema: schema_of::<Args>(),
        output_schema: Some(schema_of::<Document>()),
        run,
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let args: Args = match parse_args("read_global_memory_bank", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    super::read_bank_document(ctx, None, args.path)
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
