//! `define_issue {title, description, context?, constraints?}` — stores the issue a WRAP decision
//! is about, with a new id and `createdAt`. Defining again replaces it; the old issue and its
//! options move into the store's history.
//!
//! mcp-decisive's shape `{issue, context, constraints}` is accepted as well: `issue` is another
//! name for `title`, and without a `description` the context (else the issue) stands in for
//! it. The answer carries the original's `issue` beside our fields.

use crate::decision::Issue;
use crate::tools::{
    decision_store, parse_args, schema_of, Ctx, Run, ToolDef, ToolError, ToolOutput,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Constraints {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A short name for the decision (or give it as `issue`).
    #[serde(default)]
    pub title: Option<String>,
    /// Another name for `title` (mcp-decisive's field).
    #[serde(default)]
    pub issue: Option<String>,
    /// What has to be decided and why; defaults to the context, else the title.
    #[serde(default)]
    pub description: Option<String>,
    /// Background the decision depends on.
    #[serde(default)]
    pub context: Option<String>,
    /// Limits any option must respect (a string or a list of strings).
    #[serde(default)]
    pub constraints: Option<Constraints>,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "define_issue",
        aliases: &[],
        description: "WRAP decision process: define the issue to decide (title, description, \
                      optional context and constraints). Returns the stored issue with its id \
                      and createdAt. Defining again replaces the current issue (kept in history).",
        input_schema: schema_of::<Args>(),
        output_schema: Some(schema_of::<Defined>()),
        run: Run::State(run),
    }
}

/// The stored issue, plus mcp-decisive's `issue` (the title).
#[derive(Debug, serde::Serialize, JsonSchema)]
pub struct Defined {
    #[serde(flatten)]
    pub stored: Issue,
    /// The title again, as mcp-decisive answered it.
    pub issue: String,
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let args: Args = match parse_args("define_issue", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    let title = match (args.title, args.issue) {
        (Some(t), None) | (None, Some(t)) => t,
        (Some(t), Some(i)) if t == i => t,
        (Some(_), Some(_)) => {
            return crate::tools::ready(Err(ToolError::InvalidParams(
                "invalid arguments for define_issue: give the issue as `title` or as `issue`, \
                 not both with different values"
                    .into(),
            )))
        }
        (None, None) => {
            return crate::tools::ready(Err(ToolError::InvalidParams(
                "invalid arguments for define_issue: missing field `title` (or `issue`)".into(),
            )))
        }
    };
    let description = args
        .description
        .filter(|d| !d.trim().is_empty())
        .or_else(|| args.context.clone().filter(|c| !c.trim().is_empty()))
        .unwrap_or_else(|| title.clone());
    crate::tools::blocking(move || {
        let store = decision_store(&ctx)?;
        let constraints = match args.constraints {
            None => Vec::new(),
            Some(Constraints::One(c)) => vec![c],
            Some(Constraints::Many(v)) => v,
        };
        let issue =
            store.define_issue(&title, &description, args.context.as_deref(), constraints)?;
        let mut out = ToolOutput::of(&Defined {
            issue: issue.title.clone(),
            stored: issue.clone(),
        })?;
        out.text = Some(format!(
            "課題を定義しました: {} (id: {})\n{}",
            issue.title, issue.id, out.value
        ));
        Ok(out)
    })
}

#[cfg(test)]
mod tests {
    use crate::tools::testutil::*;
    use serde_json::json;

    #[test]
    fn defines_and_replaces_keeping_history() {
        let d = tempfile::tempdir().unwrap();
        let s = TestServer::new(&d.path().canonicalize().unwrap(), &d.path().join("state"));
        let r = s.call(
            "define_issue",
            json!({"title": "DB選定", "description": "どのDBを使うか", "constraints": "予算内"}),
        );
        assert!(!is_error(&r), "{r}");
        let first = r["structuredContent"].clone();
        assert_eq!(first["title"], "DB選定");
        assert_eq!(first["constraints"], json!(["予算内"]));
        assert!(uuid::Uuid::parse_str(first["id"].as_str().unwrap()).is_ok());
        assert!(is_rfc3339_utc(first["createdAt"].as_str().unwrap()));
        assert!(text_of(&r).starts_with("課題を定義しました: DB選定"));
        s.call(
            "register_options",
            json!({"options": ["PostgreSQL", "SQLite", "MySQL"]}),
        );
        let r = s.call(
            "define_issue",
            json!({"title": "キャッシュ", "description": "要るか", "context": "遅い", "constraints": ["a", " "]}),
        );
        let second = &r["structuredContent"];
        assert_ne!(second["id"], first["id"]);
        assert_eq!(second["context"], "遅い");
        assert_eq!(second["constraints"], json!(["a"]));
        // The store keeps the replaced issue with its options.
        let store =
            crate::decision::Store::new(&d.path().join("state"), &d.path().canonicalize().unwrap());
        let data = store.load().unwrap().unwrap();
        assert_eq!(data.history.len(), 1);
        assert_eq!(data.history[0].issue.title, "DB選定");
        assert_eq!(data.history[0].options.len(), 3);
        assert!(data.options.is_empty());

        let r = s.call("define_issue", json!({"title": "  ", "description": "x"}));
        assert!(
            is_error(&r) && text_of(&r).contains("'title' must not be empty"),
            "{r}"
        );
        let r = s.call("define_issue", json!({"description": "x"}));
        assert_eq!(r["error"]["code"], -32602, "{r}");
        assert!(r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`title` (or `issue`)"));
        let r = s.call("define_issue", json!({"title": "a", "issue": "b"}));
        assert_eq!(r["error"]["code"], -32602, "{r}");
        let r = s.call("define_issue", json!({"title": "x", "nope": 1}));
        assert_eq!(r["error"]["code"], -32602, "{r}");
    }

    #[test]
    fn the_originals_shape_issue_context_constraints() {
        let d = tempfile::tempdir().unwrap();
        let s = TestServer::new(&d.path().canonicalize().unwrap(), &d.path().join("state"));
        let r = s.call(
            "define_issue",
            json!({"issue": "DB選定", "context": "新サービスの永続化", "constraints": "予算は月1万円"}),
        );
        assert!(!is_error(&r), "{r}");
        let sc = &r["structuredContent"];
        assert_eq!(sc["issue"], "DB選定");
        assert_eq!(sc["title"], "DB選定");
        assert_eq!(sc["context"], "新サービスの永続化");
        assert_eq!(sc["description"], "新サービスの永続化");
        assert_eq!(sc["constraints"], json!(["予算は月1万円"]));
        // A title alone is enough too: the description is the title then.
        let r = s.call("define_issue", json!({"title": "キャッシュ"}));
        assert_eq!(r["structuredContent"]["description"], "キャッシュ");
        let st = s.call("get_current_status", json!({}));
        assert_eq!(st["structuredContent"]["issue"]["title"], "キャッシュ");
    }
}
