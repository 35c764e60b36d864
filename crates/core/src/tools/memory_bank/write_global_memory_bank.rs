//! `write_global_memory_bank {path, content, language?}` — writes a document of the global
//! memory bank atomically, creating the bank (seeded from templates) when there is none.

use crate::memory_bank::WriteOutcome;
use crate::tools::{parse_args, schema_of, Ctx, ToolDef};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The document's path relative to the global bank, e.g. "architecture.md".
    pub path: String,
    /// The complete new content (a write replaces the whole document). Not with `patches`.
    #[serde(default)]
    pub content: Option<String>,
    /// JSON Patch operations (RFC 6902) for a JSON document, applied all or nothing (as in
    /// write_document). Not with `content`.
    #[serde(default)]
    pub patches: Option<Vec<Value>>,
    /// Sets the document's tags (as in write_document).
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    /// Language (en, ja or zh) of the templates a new bank is seeded from; default "ja".
    #[serde(default = "crate::memory_bank::default_language")]
    #[schemars(extend("enum" = ["en", "ja", "zh"]))]
    pub language: String,
    /// The original server's bank directory (t3ta/memory-bank-mcp-server's `docs`): accepted
    /// and ignored; the bank is the one configured (setup / MEMORY_BANK_ROOT).
    #[serde(default)]
    pub docs: Option<String>,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "write_global_memory_bank",
        aliases: &[],
        description: "Write a document to the global memory bank (atomically; the content \
                      replaces the whole document). Creates the bank when there is none yet, \
                      seeding the missing core files from templates in `language`.",
        input_schema: schema_of::<Args>(),
        output_schema: Some(schema_of::<WriteOutcome>()),
        run,
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let args: Args = match parse_args("write_global_memory_bank", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    let branch = None;
    super::write_or_edit(
        ctx,
        "write_global_memory_bank",
        branch,
        args.path,
        super::Edit {
            content: args.content.map(Value::String),
            patches: args.patches,
            tags: args.tags,
        },
        args.language,
    )
}

#[cfg(test)]
mod tests {
    use crate::tools::testutil::*;
    use serde_json::json;

    #[test]
    fn writes_and_seeds_the_global_bank() {
        let d = tempfile::tempdir().unwrap();
        let project = d.path().canonicalize().unwrap().join("p");
        std::fs::create_dir_all(&project).unwrap();
        let s = TestServer::new(&project, d.path());
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
