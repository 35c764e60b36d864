//! `read_branch_memory_bank {branch, path}` — one document of a branch's memory bank.

use crate::memory_bank::document::Document;
use crate::tools::{schema_of, Ctx, Run, ToolDef};
use serde_json::Value;

bank_args! {
    pub struct Args {
        /// The git branch ("feature/x" is kept in branch-memory-bank/feature-x).
        pub branch: String,
        /// The document's path relative to the branch bank, e.g. "activeContext.md".
        pub path: String,
    }
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "read_branch_memory_bank",
        aliases: &[],
        description: read_description!("a branch's memory bank"),
        input_schema: schema_of::<Args>(),
        output_schema: Some(schema_of::<Document>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    super::run_read::<Args>(ctx, "read_branch_memory_bank", args, |a| {
        (Some(a.branch), a.path)
    })
}

#[cfg(test)]
mod tests {
    use crate::tools::testutil::*;
    use serde_json::json;

    #[test]
    fn reads_documents_and_refuses_escapes() {
        let (d, bank) = seeded_bank("feature/x");
        std::fs::write(d.path().join("secret.md"), "secret").unwrap();
        let s = TestServer::new(bank.root.parent().unwrap(), d.path());
        let call = |p: &str| {
            s.call(
                "read_branch_memory_bank",
                json!({"branch": "feature/x", "path": p}),
            )
        };
        let r = call("notes.md");
        assert!(!is_error(&r), "{r}");
        assert_eq!(r["structuredContent"]["tags"], json!(["note", "branch"]));
        assert_eq!(r["structuredContent"]["path"], "notes.md");
        // The text content is the raw Markdown, as the original server answered it.
        assert_eq!(text_of(&r), "# Notes\n\ntags: #note #branch\n");
        let r = call("./sub/../notes.md");
        assert_eq!(r["structuredContent"]["path"], "notes.md", "{r}");
        let r = call("missing.md");
        assert!(
            is_error(&r) && text_of(&r).contains("no document 'missing.md'"),
            "{r}"
        );
        for bad in ["../../../secret.md", "../main/notes.md", "/etc/passwd", ""] {
            let r = call(bad);
            assert!(is_error(&r), "{bad}: {r}");
            assert!(!text_of(&r).contains("secret\""), "{r}");
        }
        let r = call(&d.path().join("secret.md").to_string_lossy());
        assert!(is_error(&r) && text_of(&r).contains("absolute"), "{r}");
        let r = s.call(
            "read_branch_memory_bank",
            json!({"branch": "other", "path": "notes.md"}),
        );
        assert!(
            is_error(&r) && text_of(&r).contains("does not exist yet"),
            "{r}"
        );
    }
}
