//! `get_recent_branches {limit = 10}` — branch banks by their last modification, newest first.

use crate::memory_bank::BranchInfo;
use crate::tools::{memory_bank, parse_args, schema_of, Ctx, Run, ToolDef, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The most branches one call returns.
pub const MAX_LIMIT: usize = 1000;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// How many branches to return (1..=1000, default 10).
    #[serde(default = "ten")]
    pub limit: usize,
    /// The original server's bank directory (t3ta/memory-bank-mcp-server's `docs`): accepted
    /// and ignored; the bank is the one configured (setup / MEMORY_BANK_ROOT).
    #[serde(default)]
    pub docs: Option<String>,
}

fn ten() -> usize {
    10
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Recent {
    pub branches: Vec<RecentBranch>,
    /// How many branches are listed (t3ta/memory-bank-mcp-server's `total`).
    pub total: usize,
}

/// A branch bank, with the original's `summary` of its `activeContext.md`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RecentBranch {
    #[serde(flatten)]
    pub info: BranchInfo,
    pub summary: Summary,
}

/// From the branch's `activeContext.md`: the "Current work" section's text and the "Recent
/// changes" section's lines (either heading language; HTML comments and blank lines skipped).
#[derive(Debug, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub current_work: Option<String>,
    pub recent_changes: Vec<String>,
}

const CURRENT_WORK: &[&str] = &["current work", "現在の作業", "当前工作"];
const RECENT_CHANGES: &[&str] = &["recent changes", "最近の変更", "最近的变更"];

/// The summary of an `activeContext.md`.
pub fn summary_of(content: &str) -> Summary {
    let mut sections: Vec<(String, Vec<String>)> = Vec::new();
    let mut in_comment = false;
    for line in content.lines() {
        let t = line.trim();
        if let Some(h) = t.strip_prefix("## ") {
            sections.push((h.trim().to_lowercase(), Vec::new()));
            continue;
        }
        if in_comment || t.starts_with("<!--") {
            in_comment = !t.contains("-->");
            continue;
        }
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if let Some((_, lines)) = sections.last_mut() {
            lines.push(t.trim_start_matches(['-', '*', ' ']).to_string());
        }
    }
    let find = |names: &[&str]| {
        sections
            .iter()
            .find(|(h, _)| names.iter().any(|n| h.starts_with(n)))
            .map(|(_, l)| l.clone())
            .unwrap_or_default()
    };
    let work = find(CURRENT_WORK);
    Summary {
        current_work: (!work.is_empty()).then(|| work.join("\n")),
        recent_changes: find(RECENT_CHANGES),
    }
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "get_recent_branches",
        aliases: &[],
        description: "List the branches that have a memory bank, most recently modified first \
                      (the newest change to the bank or any document in it).",
        input_schema: schema_of::<Args>(),
        output_schema: Some(schema_of::<Recent>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let args: Args = match parse_args("get_recent_branches", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    if args.limit == 0 || args.limit > MAX_LIMIT {
        return crate::tools::ready(Err(ToolError::Failed(format!(
            "limit must be between 1 and {MAX_LIMIT}, got {}",
            args.limit
        ))));
    }
    crate::tools::blocking(move || {
        let bank = memory_bank(&ctx)?;
        let branches: Vec<RecentBranch> = bank
            .recent_branches(args.limit)?
            .into_iter()
            .map(|info| {
                let summary = bank
                    .read(
                        crate::memory_bank::Scope::Branch(&info.name),
                        "activeContext.md",
                    )
                    .map(|d| summary_of(&d.content))
                    .unwrap_or_default();
                RecentBranch { info, summary }
            })
            .collect();
        ToolOutput::of(&Recent {
            total: branches.len(),
            branches,
        })
    })
}

#[cfg(test)]
mod tests {
    use crate::tools::testutil::*;
    use serde_json::json;
    use std::time::{Duration, SystemTime};

    fn touch(p: &std::path::Path, secs_ago: u64) {
        let t = SystemTime::now() - Duration::from_secs(secs_ago);
        // A read-only handle also works for directories.
        std::fs::File::open(p).unwrap().set_modified(t).unwrap();
    }

    #[test]
    fn newest_first_by_document_mtime() {
        let (d, bank) = seeded_bank("old");
        let s = TestServer::new(bank.root.parent().unwrap(), d.path());
        for b in ["mid", "feature/new"] {
            s.call(
                "write_branch_memory_bank",
                json!({"branch": b, "path": "x.md", "content": "x"}),
            );
        }
        // Age every file and directory, then make one document of "old" the newest.
        for b in ["old", "mid", "feature-new"] {
            let dir = bank.branches_dir().join(b);
            let age = match b {
                "old" => 300,
                "mid" => 200,
                _ => 100,
            };
            for e in std::fs::read_dir(&dir).unwrap() {
                touch(&e.unwrap().path(), age);
            }
            touch(&dir, age);
        }
        let r = s.call("get_recent_branches", json!({}));
        assert!(!is_error(&r), "{r}");
        let names: Vec<_> = r["structuredContent"]["branches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["name"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(names, vec!["feature-new", "mid", "old"]);
        touch(&bank.branches_dir().join("old/progress.md"), 0);
        let r = s.call("get_recent_branches", json!({"limit": 2}));
        let b = r["structuredContent"]["branches"].as_array().unwrap();
        assert_eq!(b.len(), 2);
        assert_eq!(b[0]["name"], "old");
        assert_eq!(b[0]["documents"], 5);
        assert_eq!(r["structuredContent"]["total"], 2);
        // The seeded (empty) template: no current work, no changes.
        assert_eq!(
            b[0]["summary"],
            json!({"currentWork": null, "recentChanges": []})
        );
        assert!(is_rfc3339_utc(b[0]["lastModified"].as_str().unwrap()));
        let r = s.call("get_recent_branches", json!({"limit": 0}));
        assert!(is_error(&r) && text_of(&r).contains("limit"), "{r}");
    }

    #[test]
    fn no_banks_is_an_empty_list() {
        let d = tempfile::tempdir().unwrap();
        let s = TestServer::new(&d.path().canonicalize().unwrap(), d.path());
        let r = s.call("get_recent_branches", json!({"limit": 5}));
        assert_eq!(r["structuredContent"]["branches"], json!([]), "{r}");
        assert_eq!(r["structuredContent"]["total"], 0, "{r}");
    }

    #[test]
    fn the_summary_comes_from_active_context_in_either_language() {
        let s = super::summary_of(
            "# Active context\n\ntags: #core\n\n## Current work\n<!-- hint -->\nLogin form\n\n\
             ## Recent changes\n<!-- a\nb -->\n- added tests\n- fixed CSS\n\n## Next steps\n- ship\n",
        );
        assert_eq!(s.current_work.as_deref(), Some("Login form"));
        assert_eq!(s.recent_changes, vec!["added tests", "fixed CSS"]);
        let s = super::summary_of("## 現在の作業\nログイン画面\n## 最近の変更\n- テスト追加\n");
        assert_eq!(s.current_work.as_deref(), Some("ログイン画面"));
        assert_eq!(s.recent_changes, vec!["テスト追加"]);
    }
}
