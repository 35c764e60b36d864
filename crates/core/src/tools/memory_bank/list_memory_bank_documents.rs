//! `list_memory_bank_documents {scope = "all", branch?}` — every document of the chosen banks
//! (what `:ClaudeContext memory` offers to open), with the bank root in use.

use crate::memory_bank::{ListedDocument, SearchScope};
use crate::tools::memory_bank::search_documents_by_tags::ScopeArg;
use crate::tools::{memory_bank, parse_args, schema_of, Ctx, Run, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// "branch", "global" or "all" (default).
    #[serde(default)]
    pub scope: ScopeArg,
    /// The branch to list (required with scope "branch"; with "all", only this branch).
    #[serde(default)]
    pub branch: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Listing {
    /// The memory bank root in use.
    pub root: String,
    /// Where the root came from: MEMORY_BANK_ROOT, setup{memory_bank = {root}}, or
    /// <project root>/docs.
    pub root_source: String,
    pub documents: Vec<ListedDocument>,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "list_memory_bank_documents",
        aliases: &[],
        description: "List the documents of the memory bank (global, a branch's, or all), with \
                      their paths and lastModified, and the bank root in use.",
        input_schema: schema_of::<Args>(),
        output_schema: Some(schema_of::<Listing>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let args: Args = match parse_args("list_memory_bank_documents", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    crate::tools::blocking(move || {
        let bank = memory_bank(&ctx)?;
        let scope = SearchScope::from(args.scope);
        let documents = bank.list(scope, args.branch.as_deref())?;
        ToolOutput::of(&Listing {
            root: bank.root.to_string_lossy().into_owned(),
            root_source: bank.source.to_string(),
            documents,
        })
    })
}

#[cfg(test)]
mod tests {
    use crate::tools::testutil::*;
    use serde_json::json;

    #[test]
    fn lists_every_bank_or_one() {
        let (d, bank) = seeded_bank("feature/a");
        let s = TestServer::new(bank.root.parent().unwrap(), d.path());
        let r = s.call("list_memory_bank_documents", json!({}));
        assert!(!is_error(&r), "{r}");
        let out = &r["structuredContent"];
        assert_eq!(out["root"], bank.root.to_string_lossy().as_ref());
        assert_eq!(out["rootSource"], "<project root>/docs");
        let docs = out["documents"].as_array().unwrap();
        // 6 global core + notes, 4 branch core + notes.
        assert_eq!(docs.len(), 12, "{out}");
        assert_eq!(docs[0]["scope"], "global");
        assert_eq!(docs[11]["branch"], "feature-a");
        let abs = docs[11]["absolutePath"].as_str().unwrap();
        assert!(std::path::Path::new(abs).is_file());
        let r = s.call(
            "list_memory_bank_documents",
            json!({"scope": "branch", "branch": "feature/a"}),
        );
        assert_eq!(
            r["structuredContent"]["documents"]
                .as_array()
                .unwrap()
                .len(),
            5
        );
        let r = s.call("list_memory_bank_documents", json!({"scope": "branch"}));
        assert!(
            is_error(&r) && text_of(&r).contains("needs the branch"),
            "{r}"
        );
    }

    #[test]
    fn a_configured_root_is_used_relative_to_the_project() {
        let d = tempfile::tempdir().unwrap();
        let project = d.path().canonicalize().unwrap();
        let s = TestServer::with(&project, d.path(), |c| {
            c.memory_bank_root = Some("memory".into())
        });
        let r = s.call(
            "write_global_memory_bank",
            json!({"path": "a.md", "content": "x", "language": "en"}),
        );
        assert!(!is_error(&r), "{r}");
        assert!(project.join("memory/global-memory-bank/a.md").is_file());
        let r = s.call("list_memory_bank_documents", json!({"scope": "global"}));
        assert_eq!(
            r["structuredContent"]["rootSource"],
            "setup{memory_bank = {root}}"
        );
        assert_eq!(
            r["structuredContent"]["documents"]
                .as_array()
                .unwrap()
                .len(),
            7
        );
    }
}
