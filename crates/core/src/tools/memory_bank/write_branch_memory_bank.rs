//! `write_branch_memory_bank {branch, path, content, language?}` — writes a document of a
//! branch's memory bank atomically. A branch without a bank gets one, with the core files it
//! lacks seeded from the templates in `language`.

use crate::memory_bank::WriteOutcome;
use crate::tools::{schema_of, Ctx, Run, ToolDef};
use serde_json::Value;

bank_args! {
    pub struct Args {
        /// The git branch ("feature/x" is kept in branch-memory-bank/feature-x).
        pub branch: String,
        /// The document's path relative to the branch bank, e.g. "activeContext.md".
        pub path: String,
    } write
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "write_branch_memory_bank",
        aliases: &[],
        description: write_description!("a branch's memory bank", "the branch has"),
        input_schema: schema_of::<Args>(),
        output_schema: Some(schema_of::<WriteOutcome>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    super::run_write::<Args>(ctx, "write_branch_memory_bank", args, |a| {
        Some(a.branch.clone())
    })
}

#[cfg(test)]
mod tests {
    use crate::tools::testutil::*;
    use serde_json::json;

    #[test]
    fn creates_a_bank_seeded_in_the_chosen_language() {
        let (_d, project, s) = empty_project();
        let r = s.call(
            "write_branch_memory_bank",
            json!({"branch": "feature/login", "path": "activeContext.md",
                   "content": "# いまの作業\n\ntags: #core #active-context\n\nログイン画面", "language": "en"}),
        );
        assert!(!is_error(&r), "{r}");
        let out = &r["structuredContent"];
        assert_eq!(out["created"], true);
        assert_eq!(out["bankCreated"], true);
        assert_eq!(
            out["seeded"],
            json!(["branchContext.md", "systemPatterns.md", "progress.md"])
        );
        assert_eq!(out["tags"], json!(["core", "active-context"]));
        let dir = project.join("docs/branch-memory-bank/feature-login");
        assert!(std::fs::read_to_string(dir.join("progress.md"))
            .unwrap()
            .starts_with("# Progress"));
        assert!(std::fs::read_to_string(dir.join("activeContext.md"))
            .unwrap()
            .contains("ログイン画面"));
        // read_context now finds all four core files.
        let r = s.call("read_context", json!({"branch": "feature/login"}));
        assert_eq!(
            r["structuredContent"]["branchMemory"]
                .as_object()
                .unwrap()
                .len(),
            4
        );
        // A second write replaces, seeds nothing, keeps the bank.
        let r = s.call(
            "write_branch_memory_bank",
            json!({"branch": "feature/login", "path": "progress.md", "content": "done"}),
        );
        assert_eq!(r["structuredContent"]["created"], false);
        assert_eq!(r["structuredContent"]["bankCreated"], false);
        assert_eq!(r["structuredContent"]["seeded"], json!([]));
        assert_eq!(
            std::fs::read_to_string(dir.join("progress.md")).unwrap(),
            "done"
        );
    }

    #[test]
    fn japanese_templates_when_asked_and_nested_paths() {
        let (_d, project, s) = empty_project();
        let r = s.call(
            "write_branch_memory_bank",
            json!({"branch": "a/b/c", "path": "notes/設計.md", "content": "tags: #設計", "language": "ja"}),
        );
        assert!(!is_error(&r), "{r}");
        assert_eq!(
            r["structuredContent"]["seeded"].as_array().unwrap().len(),
            4
        );
        let dir = project.join("docs/branch-memory-bank/a-b-c");
        assert!(std::fs::read_to_string(dir.join("progress.md"))
            .unwrap()
            .starts_with("# 進捗状況"));
        assert_eq!(
            std::fs::read_to_string(dir.join("notes/設計.md")).unwrap(),
            "tags: #設計"
        );
    }

    #[test]
    fn refuses_escapes_bad_json_and_directories() {
        let (d, bank) = seeded_bank("main");
        let s = TestServer::new(bank.root.parent().unwrap(), d.path());
        let w = |branch: &str, p: &str, c: &str| {
            s.call(
                "write_branch_memory_bank",
                json!({"branch": branch, "path": p, "content": c}),
            )
        };
        for bad in [
            "../escape.md",
            "../../escape.md",
            "a/../../x.md",
            "/tmp/x.md",
        ] {
            let r = w("main", bad, "x");
            assert!(is_error(&r), "{bad}: {r}");
        }
        assert!(!bank.branches_dir().join("escape.md").exists());
        assert!(!bank.root.join("escape.md").exists());
        let r = w("main", "data.json", "{not json");
        assert!(
            is_error(&r) && text_of(&r).contains("not valid JSON"),
            "{r}"
        );
        assert!(!bank.branches_dir().join("main/data.json").exists());
        let r = w("main", "data.json", r#"{"metadata": {"tags": ["t"]}}"#);
        assert_eq!(r["structuredContent"]["tags"], json!(["t"]), "{r}");
        std::fs::create_dir(bank.branches_dir().join("main/dir.md")).unwrap();
        let r = w("main", "dir.md", "x");
        assert!(
            is_error(&r) && text_of(&r).contains("is a directory"),
            "{r}"
        );
        let r = w("..", "x.md", "x");
        assert!(
            is_error(&r) && text_of(&r).contains("invalid branch name"),
            "{r}"
        );
        let r = w("main", "x.md", "x");
        assert!(!is_error(&r));
        let r = s.call(
            "write_branch_memory_bank",
            json!({"branch": "main", "path": "x.md", "content": "x", "language": "fr"}),
        );
        assert!(is_error(&r) && text_of(&r).contains("'fr'"), "{r}");
        // zh (memory bank v3) seeds a new bank from the Chinese templates.
        let r = s.call(
            "write_branch_memory_bank",
            json!({"branch": "zh-branch", "path": "x.md", "content": "x", "language": "zh"}),
        );
        assert!(!is_error(&r), "{r}");
        let r = s.call(
            "read_branch_memory_bank",
            json!({"branch": "zh-branch", "path": "activeContext.md"}),
        );
        assert!(text_of(&r).starts_with("# 活动上下文"), "{r}");
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_out_of_the_bank_are_refused_for_writes() {
        let (d, bank) = seeded_bank("main");
        let outside = d.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        let s = TestServer::new(bank.root.parent().unwrap(), d.path());
        std::os::unix::fs::symlink(&outside, bank.branches_dir().join("main/link")).unwrap();
        let r = s.call(
            "write_branch_memory_bank",
            json!({"branch": "main", "path": "link/x.md", "content": "x"}),
        );
        assert!(is_error(&r) && text_of(&r).contains("refused"), "{r}");
        // A dangling link pointing out cannot create a file there either.
        std::os::unix::fs::symlink(
            outside.join("new.md"),
            bank.branches_dir().join("main/dangling.md"),
        )
        .unwrap();
        let r = s.call(
            "write_branch_memory_bank",
            json!({"branch": "main", "path": "dangling.md", "content": "x"}),
        );
        assert!(is_error(&r), "{r}");
        assert!(!outside.join("new.md").exists());
        assert!(!outside.join("x.md").exists());
        // A branch bank that is itself a link out is refused.
        std::os::unix::fs::symlink(&outside, bank.branches_dir().join("evil")).unwrap();
        let r = s.call(
            "write_branch_memory_bank",
            json!({"branch": "evil", "path": "x.md", "content": "x"}),
        );
        assert!(is_error(&r) && text_of(&r).contains("refused"), "{r}");
        let r = s.call("read_branch_core_files", json!({"branch": "evil"}));
        assert!(is_error(&r), "{r}");
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    }
}
