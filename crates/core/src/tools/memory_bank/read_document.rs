//! `read_document {scope, branch?, path}` — memory bank v3's one read tool: a document of the
//! global bank or of a branch's bank (the current git branch when `branch` is omitted). The
//! text content is the document itself; `structuredContent` is `{success, scope, branch, data:
//! {path, content, tags, lastModified}}`. `docs` is accepted and ignored (see write_document).

use crate::memory_bank::document::Document;
use crate::memory_bank::Scope;
use crate::tools::{memory_bank, parse_args, schema_of, Ctx, Run, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

bank_args! {
    pub struct Args {
        /// The document's path relative to the bank.
        pub path: String,
        /// The original server's bank directory: accepted and ignored.
        #[serde(default)]
        pub docs: Option<String>,
    } v3
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Read {
    pub success: bool,
    /// "branch" or "global".
    pub scope: &'static str,
    pub branch: Option<String>,
    pub data: Document,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "read_document",
        aliases: &[],
        description: v3_description!(
            "read a document from",
            "The text is the document; structured: {success, scope, branch, data: {path, \
             content, tags, lastModified}}."
        ),
        input_schema: schema_of::<Args>(),
        output_schema: Some(schema_of::<Read>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let a: Args = match parse_args("read_document", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    crate::tools::blocking(move || {
        let branch = super::doc_branch(&ctx, a.scope, a.branch)?;
        let bank = memory_bank(&ctx)?;
        let doc = bank.read(Scope::of(&branch), &a.path)?;
        let text = doc.content.clone();
        let mut out = ToolOutput::of(&Read {
            success: true,
            scope: super::scope_name(&branch),
            branch,
            data: doc,
        })?;
        out.text = Some(text);
        Ok(out)
    })
}

#[cfg(test)]
mod tests {
    use crate::tools::testutil::*;
    use serde_json::json;

    #[test]
    fn reads_by_scope_with_the_current_branch_by_default() {
        let (d, bank) = seeded_bank("feature/a");
        let project = bank.root.parent().unwrap().to_path_buf();
        std::fs::create_dir_all(project.join(".git")).unwrap();
        std::fs::write(project.join(".git/HEAD"), "ref: refs/heads/feature/a\n").unwrap();
        let s = TestServer::new(&project, d.path());
        let r = s.call(
            "read_document",
            json!({"scope": "branch", "path": "notes.md", "docs": "./docs"}),
        );
        assert!(!is_error(&r), "{r}");
        assert_eq!(text_of(&r), "# Notes\n\ntags: #note #branch\n");
        let sc = &r["structuredContent"];
        assert_eq!(sc["success"], true);
        assert_eq!(sc["branch"], "feature/a");
        assert_eq!(sc["data"]["tags"], json!(["note", "branch"]));
        assert!(is_rfc3339_utc(sc["data"]["lastModified"].as_str().unwrap()));
        let r = s.call(
            "read_document",
            json!({"scope": "global", "path": "notes.md"}),
        );
        assert_eq!(
            r["structuredContent"]["data"]["tags"],
            json!(["note", "global"])
        );
        let r = s.call(
            "read_document",
            json!({"scope": "branch", "branch": "nope", "path": "notes.md"}),
        );
        assert!(
            is_error(&r) && text_of(&r).contains("does not exist yet"),
            "{r}"
        );
        let r = s.call(
            "read_document",
            json!({"scope": "global", "path": "../../x"}),
        );
        assert!(is_error(&r), "{r}");
        let r = s.call("read_document", json!({"path": "notes.md"}));
        assert_eq!(r["error"]["code"], -32602, "{r}");
    }
}
