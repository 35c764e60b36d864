//! `get_recent_branches {limit = 10}` — branch banks by their last modification, newest first.

use super::{memory_bank, parse_args, schema_of, Ctx, ToolDef, ToolError, ToolOutput};
use crate::memory_bank::BranchInfo;
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
}

fn ten() -> usize {
    10
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Recent {
    pub branches: Vec<BranchInfo>,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "get_recent_branches",
        aliases: &[],
        description: "List the branches that have a memory bank, most recently modified first \
                      (the newest change to the bank or any document in it).",
        input_schema: schema_of::<Args>(),
        output_schema: Some(schema_of::<Recent>()),
        run,
    }
}

fn run(ctx: Ctx, args: Value) -> super::ToolFuture {
    let args: Args = match parse_args("get_recent_branches", args) {
        Ok(a) => a,
        Err(e) => return super::ready(Err(e)),
    };
    if args.limit == 0 || args.limit > MAX_LIMIT {
        return super::ready(Err(ToolError::Failed(format!(
            "limit must be between 1 and {MAX_LIMIT}, got {}",
            args.limit
        ))));
    }
    super::blocking(move || {
        let bank = memory_bank(&ctx)?;
        let branches = bank
            .recent_branches(args.limit)
            .map_err(ToolError::Failed)?;
        ToolOutput::of(&Recent { branches })
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
    }
}
