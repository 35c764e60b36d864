//! `write_document {scope, branch?, path, content? | patches?, tags?, returnContent?, language?}`
//! — memory bank v3's one write tool (t3ta/memory-bank-mcp-server): a document of the global
//! bank or of a branch's bank (the current git branch when `branch` is omitted).
//!
//! * `content` replaces the document (a string, or a JSON value written as pretty JSON).
//! * `patches` edits a JSON document with JSON Patch (RFC 6902, the `json-patch` crate): every
//!   operation is applied to a copy in memory and the document is written once, atomically, only
//!   when all of them succeed — a failing `test` (or any other failing operation) writes
//!   nothing and says which operation failed and why.
//! * `tags` sets the document's tags: `metadata.tags` of a JSON document, the `tags:` line of
//!   a Markdown one (added under the first heading when there is none).
//!
//! Built on the memory bank's public API ([`crate::memory_bank::Bank::read`] / `write`), so the
//! bank's confinement and atomic writes apply unchanged. `docs` (the original's bank directory)
//! is accepted and ignored: the bank is the one the person configured.

use crate::memory_bank::{Edit, Language, Scope, WriteOutcome};
use crate::tools::{memory_bank, parse_args, schema_of, Ctx, Run, ToolDef, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

bank_args! {
    #[serde(rename_all = "camelCase")]
    pub struct Args {
        /// The document's path relative to the bank, e.g. "progress.md" or "data/config.json".
        pub path: String,
        /// The whole new content: a string, or a JSON value (written as pretty JSON). Not with
        /// `patches`.
        #[serde(default)]
        pub content: Option<Value>,
        /// JSON Patch operations (RFC 6902) for a JSON document: [{op, path, value?, from?}],
        /// applied all or nothing. Not with `content`.
        #[serde(default)]
        pub patches: Option<crate::memory_bank::edit::Patches>,
        /// The document's tags (without "#").
        #[serde(default)]
        pub tags: Option<Vec<String>>,
        /// Return the written content as well (default false).
        #[serde(default)]
        pub return_content: bool,
        /// Language (en, ja or zh) of the templates a new bank is seeded from; default "ja".
        #[serde(default = "crate::memory_bank::default_language")]
        #[schemars(extend("enum" = ["en", "ja", "zh"]))]
        pub language: String,
        /// The original server's bank directory: accepted and ignored (the bank is the one
        /// configured in setup / MEMORY_BANK_ROOT).
        #[serde(default)]
        pub docs: Option<String>,
    } v3
}

/// The document as the original answered it.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DocData {
    pub path: String,
    /// The content written (only with `returnContent`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    pub tags: Vec<String>,
    pub last_modified: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Written {
    pub success: bool,
    /// "branch" or "global".
    pub scope: &'static str,
    /// The branch written to (scope "branch").
    pub branch: Option<String>,
    pub data: DocData,
    /// What the write did (created, bankCreated, seeded, bytesWritten, …).
    pub outcome: WriteOutcome,
    /// JSON Patch operations applied.
    pub patches_applied: usize,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "write_document",
        aliases: &[],
        description: v3_description!(
            "write a document to",
            "Give the whole `content`, or `patches` (JSON Patch, RFC 6902) to edit a JSON \
             document: all operations apply or none (a failing \"test\" writes nothing). `tags` \
             sets the document's tags. Returns {success, data: {path, tags, lastModified, \
             content if returnContent}}."
        ),
        input_schema: schema_of::<Args>(),
        output_schema: Some(schema_of::<Written>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let a: Args = match parse_args("write_document", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    if a.content.is_some() && a.patches.is_some() {
        return crate::tools::ready(Err(ToolError::InvalidParams(
            "write_document: give `content` or `patches`, not both".into(),
        )));
    }
    if a.content.is_none() && a.patches.is_none() && a.tags.is_none() {
        return crate::tools::ready(Err(ToolError::InvalidParams(
            "write_document: give `content`, `patches` or `tags`".into(),
        )));
    }
    crate::tools::blocking(move || {
        let branch = super::doc_branch(&ctx, a.scope, a.branch)?;
        let w = perform(
            &ctx,
            branch,
            &a.path,
            Edit {
                content: a.content,
                patches: a.patches,
                tags: a.tags,
            },
            a.return_content,
            &a.language,
        )?;
        ToolOutput::of(&w)
    })
}

/// Writes `path` in `branch`'s bank (the global bank when `None`): write_document's body
/// ([`crate::memory_bank::Bank::edit`], shaped as the original answered). Blocking.
fn perform(
    ctx: &Ctx,
    branch: Option<String>,
    path: &str,
    edit: Edit,
    return_content: bool,
    language: &str,
) -> Result<Written, ToolError> {
    let lang = Language::parse(language)?;
    let bank = memory_bank(ctx)?;
    let edited = bank.edit(Scope::of(&branch), path, edit, lang)?;
    let outcome = edited.outcome;
    Ok(Written {
        success: true,
        scope: super::scope_name(&branch),
        data: DocData {
            path: outcome.path.clone(),
            content: return_content.then_some(edited.content),
            tags: outcome.tags.clone(),
            last_modified: outcome.last_modified.clone(),
        },
        branch,
        outcome,
        patches_applied: edited.patches_applied,
    })
}

#[cfg(test)]
mod tests {
    use crate::memory_bank::edit::MAX_PATCH_OPS;
    use crate::tools::testutil::*;
    use serde_json::json;

    fn git_project(branch: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().canonicalize().unwrap().join("p");
        std::fs::create_dir_all(p.join(".git")).unwrap();
        std::fs::write(p.join(".git/HEAD"), format!("ref: refs/heads/{branch}\n")).unwrap();
        (d, p)
    }

    #[test]
    fn writes_by_scope_detects_the_branch_and_sets_tags() {
        let (d, p) = git_project("feature/login");
        let s = TestServer::new(&p, d.path());
        let r = s.call(
            "write_document",
            json!({"scope": "branch", "path": "progress.md", "content": "# Progress\n\nhalf done\n",
                   "tags": ["progress", "#core"], "returnContent": true, "docs": "./docs", "language": "en"}),
        );
        assert!(!is_error(&r), "{r}");
        let sc = &r["structuredContent"];
        assert_eq!(sc["success"], true);
        assert_eq!(sc["branch"], "feature/login");
        assert_eq!(sc["data"]["tags"], json!(["progress", "core"]));
        assert_eq!(
            sc["data"]["content"],
            "# Progress\n\ntags: #progress #core\n\nhalf done\n"
        );
        let on_disk =
            std::fs::read_to_string(p.join("docs/branch-memory-bank/feature-login/progress.md"))
                .unwrap();
        assert_eq!(
            on_disk,
            "# Progress\n\ntags: #progress #core\n\nhalf done\n"
        );
        // Without returnContent the content is left out.
        let r = s.call(
            "write_document",
            json!({"scope": "global", "path": "data/config.json", "content": {"a": 1}, "tags": ["config"]}),
        );
        let sc = &r["structuredContent"];
        assert!(sc["data"].get("content").is_none(), "{r}");
        assert_eq!(sc["scope"], "global");
        assert_eq!(sc["branch"], json!(null));
        let v: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(p.join("docs/global-memory-bank/data/config.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(v, json!({"a": 1, "metadata": {"tags": ["config"]}}));
        // Tags alone retag an existing document (replacing the line).
        let r = s.call(
            "write_document",
            json!({"scope": "branch", "branch": "feature/login", "path": "progress.md", "tags": ["done"], "returnContent": true}),
        );
        assert_eq!(
            r["structuredContent"]["data"]["content"],
            "# Progress\n\ntags: #done\n\nhalf done\n"
        );
        // Bad calls.
        for (args, want) in [
            (
                json!({"scope": "global", "path": "x.md", "content": "a", "patches": []}),
                "not both",
            ),
            (json!({"scope": "global", "path": "x.md"}), "give `content`"),
            (
                json!({"scope": "both", "path": "x.md", "content": "a"}),
                "unknown variant",
            ),
        ] {
            let r = s.call("write_document", args);
            assert_eq!(r["error"]["code"], -32602, "{r}");
            assert!(
                r["error"]["message"].as_str().unwrap().contains(want),
                "{r}"
            );
        }
        let r = s.call(
            "write_document",
            json!({"scope": "global", "path": "../x.md", "content": "a"}),
        );
        assert!(is_error(&r), "{r}");
    }

    #[test]
    fn patches_apply_all_or_nothing_with_a_clear_error_on_a_failing_test() {
        let (d, p) = git_project("main");
        let s = TestServer::new(&p, d.path());
        s.call(
            "write_document",
            json!({"scope": "global", "path": "c.json", "content": {"version": 1, "items": ["a"]}}),
        );
        let file = p.join("docs/global-memory-bank/c.json");
        let r = s.call(
            "write_document",
            json!({"scope": "global", "path": "c.json", "returnContent": true, "patches": [
                {"op": "test", "path": "/version", "value": 1},
                {"op": "replace", "path": "/version", "value": 2},
                {"op": "add", "path": "/items/-", "value": "b"},
                {"op": "copy", "from": "/items/0", "path": "/first"},
            ]}),
        );
        assert!(!is_error(&r), "{r}");
        assert_eq!(r["structuredContent"]["patchesApplied"], 4);
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(v, json!({"version": 2, "items": ["a", "b"], "first": "a"}));
        let before = std::fs::read(&file).unwrap();
        // The second operation's test fails: the first (applied in memory) is not written.
        let r = s.call(
            "write_document",
            json!({"scope": "global", "path": "c.json", "patches": [
                {"op": "replace", "path": "/version", "value": 3},
                {"op": "test", "path": "/version", "value": 99},
            ]}),
        );
        assert!(is_error(&r), "{r}");
        let t = text_of(&r);
        assert!(
            t.contains("patch operation #2")
                && t.contains("test")
                && t.contains("no change was written"),
            "{t}"
        );
        assert_eq!(std::fs::read(&file).unwrap(), before);
        // A remove of a missing path, a malformed op, a Markdown target.
        let r = s.call("write_document", json!({"scope": "global", "path": "c.json", "patches": [{"op": "remove", "path": "/nope"}]}));
        assert!(is_error(&r) && text_of(&r).contains("#1"), "{r}");
        let r = s.call(
            "write_document",
            json!({"scope": "global", "path": "c.json", "patches": [{"op": "jump", "path": "/x"}]}),
        );
        assert!(
            is_error(&r) && text_of(&r).contains("invalid patches"),
            "{r}"
        );
        s.call(
            "write_document",
            json!({"scope": "global", "path": "n.md", "content": "# N\n"}),
        );
        let r = s.call("write_document", json!({"scope": "global", "path": "n.md", "patches": [{"op": "add", "path": "/x", "value": 1}]}));
        assert!(
            is_error(&r) && text_of(&r).contains("JSON documents only"),
            "{r}"
        );
        assert_eq!(std::fs::read(&file).unwrap(), before);
    }

    #[test]
    fn a_refused_write_says_why_in_the_same_words() {
        let (d, p) = git_project("main");
        let s = TestServer::new(&p, d.path());
        let write = |path: &str, extra: serde_json::Value| {
            let mut args = json!({"scope": "global", "path": path});
            args.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            let r = s.call("write_document", args);
            assert!(is_error(&r), "{r}");
            assert!(
                r.get("error").is_none(),
                "a failure, not a JSON-RPC error: {r}"
            );
            text_of(&r).to_string()
        };
        s.call(
            "write_document",
            json!({"scope": "global", "path": "c.json", "content": {"v": 1}}),
        );
        s.call(
            "write_document",
            json!({"scope": "global", "path": "l.json", "content": [1]}),
        );
        s.call(
            "write_document",
            json!({"scope": "global", "path": "m.json", "content": {"metadata": 3}}),
        );
        s.call(
            "write_document",
            json!({"scope": "global", "path": "n.md", "content": "# N\n"}),
        );
        assert_eq!(
            write(
                "c.json",
                json!({"patches": [{"op": "test", "path": "/v", "value": 2}]})
            ),
            r#"patch operation #1 {"op":"test","path":"/v","value":2} failed: value did not match — no change was written"#
        );
        let many: Vec<_> = (0..=MAX_PATCH_OPS)
            .map(|_| json!({"op": "test", "path": "/v", "value": 1}))
            .collect();
        assert_eq!(
            write("c.json", json!({ "patches": many })),
            format!(
                "refused: {} patch operations is more than the limit of {MAX_PATCH_OPS} per call \
                 — no change was written; split the edit or write the whole `content`",
                MAX_PATCH_OPS + 1
            )
        );
        assert!(write(
            "n.md",
            json!({"patches": [{"op": "add", "path": "/x", "value": 1}]})
        )
        .ends_with("); JSON Patch edits JSON documents only — write Markdown with `content`"));
        assert_eq!(
            write("l.json", json!({"tags": ["a"]})),
            "'l.json' is not a JSON object, so it has no metadata.tags to set"
        );
        assert_eq!(
            write("m.json", json!({"tags": ["a"]})),
            "'m.json': metadata is not an object"
        );
    }

    #[test]
    fn branch_detection_follows_worktree_gitdir_files_and_refuses_detached_heads() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let wt = root.join("wt");
        let gd = root.join("repo/.git/worktrees/wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::create_dir_all(&gd).unwrap();
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", gd.display())).unwrap();
        std::fs::write(gd.join("HEAD"), "ref: refs/heads/topic/x\n").unwrap();
        assert_eq!(crate::memory_bank::current_branch(&wt).unwrap(), "topic/x");
        std::fs::write(
            gd.join("HEAD"),
            "0123456789abcdef0123456789abcdef01234567\n",
        )
        .unwrap();
        assert!(crate::memory_bank::current_branch(&wt)
            .unwrap_err()
            .to_string()
            .contains("detached"));
        let bare = root.join("nogit");
        std::fs::create_dir_all(&bare).unwrap();
        let s = TestServer::new(&bare, d.path());
        let r = s.call(
            "write_document",
            json!({"scope": "branch", "path": "a.md", "content": "x"}),
        );
        // No repository (unless the temp dir is inside one): a clear error naming `branch`.
        if crate::project::find_git_root(&bare).is_none() {
            assert!(is_error(&r) && text_of(&r).contains("pass `branch`"), "{r}");
        }
    }
}
