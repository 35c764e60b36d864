//! `search_documents_by_tags {tags, match, scope, branch?}` — documents whose tags match.

use crate::memory_bank::{SearchHit, SearchScope};
use crate::tools::{memory_bank, parse_args, schema_of, Ctx, Run, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, Default, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Match {
    /// Documents with any of the tags.
    #[default]
    Or,
    /// Documents with all of the tags.
    And,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, Default, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum ScopeArg {
    Branch,
    Global,
    /// The global bank and the given branch's bank (every branch bank when no branch is given).
    #[default]
    All,
}

impl From<ScopeArg> for SearchScope {
    fn from(s: ScopeArg) -> Self {
        match s {
            ScopeArg::Branch => SearchScope::Branch,
            ScopeArg::Global => SearchScope::Global,
            ScopeArg::All => SearchScope::All,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Tags to look for, with or without "#"; compared case-insensitively.
    pub tags: Vec<String>,
    /// "or" (default): any tag matches; "and": every tag must be there.
    #[serde(default, rename = "match")]
    pub match_: Match,
    /// "branch", "global" or "all" (default).
    #[serde(default)]
    pub scope: ScopeArg,
    /// The branch to search (required with scope "branch").
    #[serde(default)]
    pub branch: Option<String>,
    /// The original server's bank directory (t3ta/memory-bank-mcp-server's `docs`): accepted
    /// and ignored; the bank is the one configured (setup / MEMORY_BANK_ROOT).
    #[serde(default)]
    pub docs: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchResult {
    pub count: usize,
    pub documents: Vec<SearchHit>,
    /// The same documents as t3ta/memory-bank-mcp-server answered them, with a `title`.
    pub results: Vec<TitledHit>,
}

/// A hit with its title: the first `# ` heading of a Markdown document, `metadata.title` of
/// a JSON one, else the file name.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TitledHit {
    pub title: String,
    #[serde(flatten)]
    pub hit: SearchHit,
}

/// The title of a document (see [`TitledHit`]).
pub fn title_of(path: &str, content: &str) -> String {
    let base = path.rsplit('/').next().unwrap_or(path).to_string();
    if path.to_ascii_lowercase().ends_with(".json") {
        return serde_json::from_str::<Value>(content)
            .ok()
            .and_then(|v| {
                v.pointer("/metadata/title")
                    .and_then(Value::as_str)
                    .map(String::from)
            })
            .filter(|t| !t.trim().is_empty())
            .unwrap_or(base);
    }
    content
        .lines()
        .take(50)
        .find_map(|l| l.strip_prefix("# "))
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .unwrap_or(base)
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "search_documents_by_tags",
        aliases: &[],
        description: "Find memory bank documents by tags (the `tags: #a #b` line of Markdown \
                      documents, `metadata.tags` of JSON ones). Returns each document's scope, \
                      branch, path, tags and lastModified; read it with read_*_memory_bank.",
        input_schema: schema_of::<Args>(),
        output_schema: Some(schema_of::<SearchResult>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let args: Args = match parse_args("search_documents_by_tags", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    crate::tools::blocking(move || {
        let bank = memory_bank(&ctx)?;
        let scope = SearchScope::from(args.scope);
        let documents = bank.search(
            &args.tags,
            args.match_ == Match::And,
            scope,
            args.branch.as_deref(),
        )?;
        let results = documents
            .iter()
            .map(|h| {
                let scope = match &h.branch {
                    Some(b) => crate::memory_bank::Scope::Branch(b),
                    None => crate::memory_bank::Scope::Global,
                };
                let title = bank
                    .read(scope, &h.path)
                    .map(|d| title_of(&h.path, &d.content))
                    .unwrap_or_else(|_| title_of(&h.path, ""));
                TitledHit {
                    title,
                    hit: h.clone(),
                }
            })
            .collect();
        ToolOutput::of(&SearchResult {
            count: documents.len(),
            documents,
            results,
        })
    })
}

#[cfg(test)]
mod tests {
    use crate::tools::testutil::*;
    use serde_json::{json, Value};

    fn paths(r: &Value) -> Vec<String> {
        r["structuredContent"]["documents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                format!(
                    "{}:{}",
                    d["branch"].as_str().unwrap_or("global"),
                    d["path"].as_str().unwrap()
                )
            })
            .collect()
    }

    #[test]
    fn matches_any_or_all_tags_by_scope() {
        let (d, bank) = seeded_bank("feature/a");
        bank.write(
            crate::memory_bank::Scope::Branch("b"),
            "deep/x.md",
            "# X\ntags: #Note #design",
            crate::memory_bank::Language::En,
        )
        .unwrap();
        let s = TestServer::new(bank.root.parent().unwrap(), d.path());
        let q = |v: Value| s.call("search_documents_by_tags", v);

        let r = q(json!({"tags": ["note"]}));
        assert!(!is_error(&r), "{r}");
        assert_eq!(
            paths(&r),
            vec!["global:notes.md", "b:deep/x.md", "feature-a:notes.md"]
        );
        assert_eq!(r["structuredContent"]["count"], 3);
        // The original's `results`, each with a title (the first heading).
        let results = r["structuredContent"]["results"].as_array().unwrap();
        assert_eq!(results.len(), 3);
        assert_eq!(results[1]["title"], "X");
        assert_eq!(results[1]["path"], "deep/x.md");
        assert_eq!(results[1]["scope"], "branch");
        assert_eq!(results[0]["title"], "Notes");
        let r = q(json!({"tags": ["#note", "design"], "match": "and"}));
        assert_eq!(paths(&r), vec!["b:deep/x.md"]);
        let r = q(json!({"tags": ["global", "design"], "match": "or", "scope": "global"}));
        assert_eq!(paths(&r), vec!["global:notes.md"]);
        let r = q(json!({"tags": ["note"], "scope": "branch", "branch": "feature/a"}));
        assert_eq!(paths(&r), vec!["feature-a:notes.md"]);
        let r = q(json!({"tags": ["note"], "scope": "all", "branch": "b"}));
        assert_eq!(paths(&r), vec!["global:notes.md", "b:deep/x.md"]);
        let r = q(json!({"tags": ["core"], "scope": "branch", "branch": "b"}));
        assert_eq!(r["structuredContent"]["count"], 4, "{r}");
        let r = q(json!({"tags": ["nothing"]}));
        assert_eq!(r["structuredContent"]["count"], 0);

        let r = q(json!({"tags": ["note"], "scope": "branch"}));
        assert!(
            is_error(&r) && text_of(&r).contains("needs the branch"),
            "{r}"
        );
        let r = q(json!({"tags": []}));
        assert!(
            is_error(&r) && text_of(&r).contains("at least one tag"),
            "{r}"
        );
        let r = q(json!({"tags": ["x"], "match": "xor"}));
        assert_eq!(r["error"]["code"], -32602, "{r}");
    }

    #[test]
    fn json_documents_are_found_by_metadata_tags_however_long() {
        let (d, bank) = seeded_bank("feature/a");
        // The tags come after 20 KB of content: a JSON document is read whole (Markdown only
        // has its head read, where its `tags:` line lives).
        let long = json!({
            "content": "x".repeat(20_000),
            "metadata": {"tags": ["Decision", "#api"]},
        });
        bank.write(
            crate::memory_bank::Scope::Global,
            "decisions/api.json",
            &long.to_string(),
            crate::memory_bank::Language::En,
        )
        .unwrap();
        let s = TestServer::new(bank.root.parent().unwrap(), d.path());
        let r = s.call(
            "search_documents_by_tags",
            json!({"tags": ["decision", "api"], "match": "and", "scope": "global"}),
        );
        assert!(!is_error(&r), "{r}");
        assert_eq!(paths(&r), vec!["global:decisions/api.json"], "{r}");
        // No metadata.title: the file name is the title.
        assert_eq!(r["structuredContent"]["results"][0]["title"], "api.json");
        assert_eq!(
            super::title_of("a/b.json", r#"{"metadata": {"title": "API"}}"#),
            "API"
        );
        let tags = &r["structuredContent"]["documents"][0]["tags"];
        assert!(tags.as_array().is_some_and(|t| !t.is_empty()), "{r}");
    }
}
