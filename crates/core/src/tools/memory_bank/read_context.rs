//! `read_context` — the rules, the branch's core files and the global core files in one call
//! (doc/protocol.md, read_context). Only the core files are read, never the whole bank, so the cost
//! does not depend on how many other documents the bank holds.

use crate::memory_bank::document::Document;
use crate::memory_bank::{notes_for, Bank, BankError, Language, Scope};
use crate::tools::{
    memory_bank, parse_args, schema_of, yes, Ctx, Run, ToolDef, ToolError, ToolOutput,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Args {
    // The descriptions are kept word for word (doc/protocol.md, read_context). Without a
    // branch, the project's current git branch (its HEAD) is used and named in the answer.
    /// Branch name (required if includeBranchMemory is true)
    #[serde(default)]
    pub branch: Option<String>,
    /// Language code (en, ja or zh)
    #[serde(default = "crate::memory_bank::default_language")]
    #[schemars(extend("enum" = ["en", "ja", "zh"]))]
    pub language: String,
    /// Whether to include rules (default: true)
    #[serde(default = "yes")]
    pub include_rules: bool,
    /// Whether to include branch memory bank (default: true)
    #[serde(default = "yes")]
    pub include_branch_memory: bool,
    /// Whether to include global memory bank (default: true)
    #[serde(default = "yes")]
    pub include_global_memory: bool,
    /// The original server's bank directory (t3ta/memory-bank-mcp-server's `docs`): accepted
    /// and ignored; the bank is the one configured (setup / MEMORY_BANK_ROOT).
    #[serde(default)]
    pub docs: Option<String>,
}

/// The shape of the result, for `outputSchema` (read_rules and read_*_core_files return a part
/// of it). The result itself is built as a JSON value directly, keeping the core-file order.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextOutput {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rules: Option<RulesOutput>,
    /// The branch's core files by file name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch_memory: Option<BTreeMap<String, Document>>,
    /// The global core files by file name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub global_memory: Option<BTreeMap<String, Document>>,
    /// The branch used when none was passed (the project's current git branch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// How `branch` was found ("git HEAD"); present with `branch`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch_source: Option<String>,
    /// Present only when a bank or core files do not exist yet, in the chosen language.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RulesOutput {
    /// The rules, Markdown.
    pub content: String,
}

/// The output schema of read_context and of the tools that answer one of its sections
/// (read_rules, read_branch_core_files, read_global_core_files).
pub fn section_schema() -> crate::tools::Schema {
    schema_of::<ContextOutput>()
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "read_context",
        aliases: &[],
        // Word for word (doc/protocol.md, read_context).
        description: "Read all context information (rules, branch memory bank, global memory \
                      bank) at once",
        input_schema: schema_of::<Args>(),
        output_schema: Some(section_schema()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let args: Args = match parse_args("read_context", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    crate::tools::blocking(move || {
        let bank = memory_bank(&ctx)?;
        let mut args = args;
        // Called with no branch (as a model first calls it): the project's current git branch,
        // and the answer says so.
        let mut detected = None;
        if args.include_branch_memory && args.branch.is_none() {
            if let Ok(root) = ctx.project_root_dir() {
                detected = git_branch(&root);
                args.branch.clone_from(&detected);
            }
        }
        let mut v = context(&bank, &args)?;
        if let (Some(b), Value::Object(m)) = (detected, &mut v) {
            m.insert("branch".into(), Value::String(b));
            m.insert("branchSource".into(), Value::String("git HEAD".into()));
        }
        let text = json_text_reused(&v);
        let mut out = ToolOutput::json(v);
        out.text = Some(text);
        Ok(out)
    })
}

/// The answer's text (the JSON of `v`), reused from the last answer when `v` is the same, in
/// the same order: a model reads the same context again and again, and writing the text of
/// all the core files costs more than comparing them.
fn json_text_reused(v: &Value) -> String {
    static LAST: std::sync::Mutex<Option<(Value, String)>> = std::sync::Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((lv, text)) = last.as_ref() {
        if crate::jsonrpc::same_in_order(lv, v) {
            return text.clone();
        }
    }
    let text = crate::jsonrpc::json_text(v);
    *last = Some((v.clone(), text.clone()));
    text
}

/// The branch checked out in the git repository holding `dir` (read from `HEAD`, no process
/// spawned), or None: not a repository, detached HEAD, unreadable. Follows a worktree's or
/// submodule's `.git` file (`gitdir: …`). One reader with write_document's.
pub fn git_branch(dir: &std::path::Path) -> Option<String> {
    crate::memory_bank::current_branch(dir).ok()
}

/// The merged context (doc/protocol.md, read_context), plus `notes` when a bank or core files
/// are missing.
pub fn context(bank: &Bank, a: &Args) -> Result<Value, ToolError> {
    let lang = Language::parse(&a.language)?;
    let branch = match (a.include_branch_memory, a.branch.as_deref()) {
        (true, None) => {
            return Err(ToolError::Failed(
                "read_context needs 'branch' when includeBranchMemory is true (the default) \
                 and the project's current git branch cannot be read (not a git repository, or \
                 a detached HEAD): pass the branch (git branch --show-current), or \
                 includeBranchMemory: false."
                    .into(),
            ))
        }
        (true, Some(b)) => Some(b),
        (false, _) => None,
    };
    let mut out = Map::new();
    let mut notes = Vec::new();
    // The bank root opened once for the three parts; when it cannot be, each part is read on
    // its own and its error says which part failed.
    let opened = bank.opened().ok();
    if a.include_rules {
        let rules = match &opened {
            Some(o) => o.rules(lang),
            None => bank.rules(lang),
        };
        out.insert("rules".into(), rules_value(rules)?);
    }
    let core = |scope| {
        let core = match &opened {
            Some(o) => o.core_files(scope),
            None => bank.core_files(scope),
        }?;
        let notes = notes_for(&core, scope, lang);
        Ok::<_, ToolError>((Value::Object(core.docs), notes))
    };
    if let Some(b) = branch {
        let (v, n) = core(Scope::Branch(b))?;
        out.insert("branchMemory".into(), v);
        notes.extend(n);
    }
    if a.include_global_memory {
        let (v, n) = core(Scope::Global)?;
        out.insert("globalMemory".into(), v);
        notes.extend(n);
    }
    if !notes.is_empty() {
        out.insert(
            "notes".into(),
            Value::Array(notes.into_iter().map(Value::String).collect()),
        );
    }
    Ok(Value::Object(out))
}

/// `{"content": …}` with the project's rules override or ours.
pub fn rules_section(bank: &Bank, lang: Language) -> Result<Value, ToolError> {
    rules_value(bank.rules(lang))
}

fn rules_value(rules: Result<String, BankError>) -> Result<Value, ToolError> {
    let content = rules.map_err(|e| ToolError::Failed(format!("cannot read the rules: {e}")))?;
    let mut m = Map::new();
    m.insert("content".into(), Value::String(content));
    Ok(Value::Object(m))
}

/// The core files of one bank keyed by file name, and the notes about what is missing.
pub fn core_section(
    bank: &Bank,
    scope: Scope,
    lang: Language,
) -> Result<(Value, Vec<String>), ToolError> {
    let core = bank.core_files(scope)?;
    let notes = notes_for(&core, scope, lang);
    Ok((Value::Object(core.docs), notes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::testutil::*;
    use serde_json::json;

    fn args(v: Value) -> Args {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn schema_matches_the_spec() {
        let s = def().input_schema.value();
        assert_eq!(
            s["properties"]["language"]["enum"],
            json!(["en", "ja", "zh"]),
            "{s}"
        );
        for k in [
            "branch",
            "includeRules",
            "includeBranchMemory",
            "includeGlobalMemory",
        ] {
            assert!(s["properties"].get(k).is_some(), "{k}: {s}");
        }
        // Nothing is required by the schema: the branch check depends on includeBranchMemory.
        assert!(s.get("required").is_none_or(|r| r == &json!([])), "{s}");
        // Word for word (doc/protocol.md, read_context).
        assert_eq!(
            def().description,
            "Read all context information (rules, branch memory bank, global memory bank) at once"
        );
        for (k, want) in [
            (
                "branch",
                "Branch name (required if includeBranchMemory is true)",
            ),
            ("language", "Language code (en, ja or zh)"),
            ("includeRules", "Whether to include rules (default: true)"),
            (
                "includeBranchMemory",
                "Whether to include branch memory bank (default: true)",
            ),
            (
                "includeGlobalMemory",
                "Whether to include global memory bank (default: true)",
            ),
        ] {
            assert_eq!(s["properties"][k]["description"], want, "{k}: {s}");
        }
    }

    #[test]
    fn through_the_server_text_and_structured_content_agree() {
        let (d, bank) = seeded_bank("main");
        let s = TestServer::new(bank.root.parent().unwrap(), d.path());
        for a in [
            json!({"branch": "main"}),
            json!({"branch": "none-yet", "language": "en"}),
            json!({"includeBranchMemory": false, "includeRules": false}),
        ] {
            let r = s.call("read_context", a.clone());
            assert_eq!(r["isError"], false, "{a}: {r}");
            let text: Value = serde_json::from_str(text_of(&r)).unwrap();
            assert_eq!(text, r["structuredContent"], "{a}");
        }
        let r = s.call("read_context", json!({"language": "xx", "branch": "main"}));
        assert!(is_error(&r) && text_of(&r).contains("'xx'"), "{r}");
        let r = s.call("read_context", json!({"branch": "main", "extra": 1}));
        assert_eq!(r["error"]["code"], -32602, "{r}");
    }

    #[test]
    fn the_editor_main_thread_is_never_used() {
        let (d, bank) = seeded_bank("main");
        let editor = std::sync::Arc::new(CountingEditor::default());
        let s = TestServer::with_rpc(
            bank.root.parent().unwrap(),
            d.path(),
            |_| {},
            editor.clone(),
        );
        for (tool, args) in [
            ("read_context", json!({"branch": "main"})),
            (
                "write_branch_memory_bank",
                json!({"branch": "main", "path": "a.md", "content": "x"}),
            ),
            ("search_documents_by_tags", json!({"tags": ["core"]})),
            ("define_issue", json!({"title": "t", "description": "d"})),
            ("get_current_status", json!({})),
        ] {
            let r = s.call(tool, args);
            assert!(!is_error(&r), "{tool}: {r}");
        }
        assert_eq!(editor.0.load(std::sync::atomic::Ordering::SeqCst), 0);
    }

    /// The keys of the object `v`, in order.
    fn keys_of(v: &Value) -> Vec<String> {
        v.as_object().unwrap().keys().cloned().collect()
    }

    #[test]
    fn full_context_matches_the_spec_shape() {
        let (_d, bank) = seeded_bank("feature/login");
        let v = context(&bank, &args(json!({"branch": "feature/login"}))).unwrap();
        assert_eq!(keys_of(&v), vec!["rules", "branchMemory", "globalMemory"]);
        assert!(v["rules"]["content"]
            .as_str()
            .unwrap()
            .contains("メモリバンク"));
        let branch = keys_of(&v["branchMemory"]);
        assert_eq!(
            branch,
            vec![
                "branchContext.md",
                "activeContext.md",
                "systemPatterns.md",
                "progress.md"
            ]
        );
        let global = keys_of(&v["globalMemory"]);
        assert_eq!(
            global,
            vec![
                "architecture.md",
                "coding-standards.md",
                "domain-models.md",
                "glossary.md",
                "tech-stack.md",
                "user-guide.md"
            ]
        );
        let doc = &v["branchMemory"]["activeContext.md"];
        assert_eq!(doc["path"], "activeContext.md");
        assert_eq!(doc["tags"], json!(["core", "active-context"]));
        assert!(doc["content"].as_str().unwrap().contains("現在の作業"));
        assert!(is_rfc3339_utc(doc["lastModified"].as_str().unwrap()));
        assert_eq!(
            v["globalMemory"]["glossary.md"]["tags"],
            json!(["core", "glossary"])
        );
    }

    #[test]
    fn sections_with_false_flags_are_absent() {
        let (_d, bank) = seeded_bank("main");
        let v = context(
            &bank,
            &args(json!({"includeRules": false, "includeBranchMemory": false})),
        )
        .unwrap();
        assert_eq!(
            v.as_object().unwrap().keys().collect::<Vec<_>>(),
            vec!["globalMemory"]
        );
        let v = context(
            &bank,
            &args(json!({"branch": "main", "includeGlobalMemory": false, "language": "en"})),
        )
        .unwrap();
        assert_eq!(
            v.as_object().unwrap().keys().collect::<Vec<_>>(),
            vec!["rules", "branchMemory"]
        );
        assert!(v["rules"]["content"]
            .as_str()
            .unwrap()
            .starts_with("# Memory bank rules"));
        let v = context(
            &bank,
            &args(json!({"includeRules": false, "includeBranchMemory": false, "includeGlobalMemory": false})),
        )
        .unwrap();
        assert_eq!(v, json!({}));
    }

    #[test]
    fn no_branch_uses_the_git_branch_and_says_so() {
        let (d, bank) = seeded_bank("feature/login");
        let project = bank.root.parent().unwrap().to_path_buf();
        let s = TestServer::new(&project, d.path());
        // Not a git repository: the clear error, as before.
        let r = s.call("read_context", json!({}));
        assert!(
            is_error(&r) && text_of(&r).contains("needs 'branch'"),
            "{r}"
        );
        std::fs::create_dir_all(project.join(".git")).unwrap();
        std::fs::write(project.join(".git/HEAD"), "ref: refs/heads/feature/login\n").unwrap();
        let r = s.call("read_context", json!({}));
        assert_eq!(r["isError"], false, "{r}");
        let v = &r["structuredContent"];
        assert_eq!(v["branch"], "feature/login", "{v}");
        assert_eq!(v["branchSource"], "git HEAD", "{v}");
        assert!(
            v["branchMemory"].as_object().is_some_and(|m| !m.is_empty()),
            "{v}"
        );
        // A branch passed explicitly wins, and nothing is added.
        let r = s.call("read_context", json!({"branch": "other"}));
        assert!(r["structuredContent"].get("branch").is_none(), "{r}");
        // A detached HEAD: the error again.
        std::fs::write(
            project.join(".git/HEAD"),
            "0123456789abcdef0123456789abcdef01234567\n",
        )
        .unwrap();
        let r = s.call("read_context", json!({}));
        assert!(is_error(&r) && text_of(&r).contains("detached HEAD"), "{r}");
        // A worktree's .git file.
        let wt = tempfile::tempdir().unwrap();
        let gd = wt.path().join("gitdir");
        std::fs::create_dir_all(&gd).unwrap();
        std::fs::write(gd.join("HEAD"), "ref: refs/heads/wt-branch\n").unwrap();
        std::fs::create_dir_all(wt.path().join("w/sub")).unwrap();
        std::fs::write(
            wt.path().join("w/.git"),
            format!("gitdir: {}\n", gd.display()),
        )
        .unwrap();
        assert_eq!(
            git_branch(&wt.path().join("w/sub")).as_deref(),
            Some("wt-branch")
        );
    }

    #[test]
    fn missing_branch_and_bad_language_are_clear_errors() {
        let (_d, bank) = seeded_bank("main");
        let e = context(&bank, &args(json!({}))).unwrap_err();
        assert!(
            matches!(&e, ToolError::Failed(m) if m.contains("needs 'branch'")),
            "{e}"
        );
        let e = context(&bank, &args(json!({"branch": "main", "language": "fr"}))).unwrap_err();
        assert!(
            matches!(&e, ToolError::Failed(m) if m.contains("'fr'") && m.contains("\"en\", \"ja\" or \"zh\"")),
            "{e}"
        );
        // Without branch memory, no branch is needed.
        assert!(context(&bank, &args(json!({"includeBranchMemory": false}))).is_ok());
    }

    #[test]
    fn a_branch_without_a_bank_is_said_plainly_in_the_chosen_language() {
        let (_d, bank) = seeded_bank("main");
        let v = context(&bank, &args(json!({"branch": "feature/new"}))).unwrap();
        assert_eq!(v["branchMemory"], json!({}));
        let note = v["notes"][0].as_str().unwrap();
        assert!(
            note.contains("ブランチ 'feature/new' のメモリバンクはまだありません"),
            "{note}"
        );
        assert!(note.contains("branch-memory-bank/feature-new"), "{note}");
        let v = context(
            &bank,
            &args(json!({"branch": "feature/new", "language": "en"})),
        )
        .unwrap();
        let note = v["notes"][0].as_str().unwrap();
        assert!(note.contains("does not exist yet"), "{note}");
        // The global bank was read all the same.
        assert_eq!(v["globalMemory"].as_object().unwrap().len(), 6);
    }

    #[test]
    fn missing_core_files_are_noted_and_others_returned() {
        let (_d, bank) = seeded_bank("main");
        std::fs::remove_file(bank.global_dir().join("glossary.md")).unwrap();
        let v = context(&bank, &args(json!({"branch": "main"}))).unwrap();
        assert_eq!(v["globalMemory"].as_object().unwrap().len(), 5);
        assert!(v["notes"][0].as_str().unwrap().contains("glossary.md"));
    }

    #[test]
    fn unreadable_components_name_what_and_why() {
        let (_d, bank) = seeded_bank("main");
        // A directory where a core file should be.
        let p = bank.branches_dir().join("main/progress.md");
        std::fs::remove_file(&p).unwrap();
        std::fs::create_dir(&p).unwrap();
        let e = context(&bank, &args(json!({"branch": "main"})))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("progress.md")
                && e.contains("branch 'main'")
                && e.contains("not a regular file"),
            "{e}"
        );
        std::fs::remove_dir(&p).unwrap();
        // Not UTF-8.
        std::fs::write(&p, [0xffu8, 0xfe]).unwrap();
        let e = context(&bank, &args(json!({"branch": "main"})))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not valid UTF-8"), "{e}");
        std::fs::write(&p, "ok").unwrap();
        // The rules override is a directory.
        std::fs::create_dir(bank.root.join("rules-ja.md")).unwrap();
        let e = context(&bank, &args(json!({"branch": "main"})))
            .unwrap_err()
            .to_string();
        assert!(e.contains("rules") && e.contains("rules-ja.md"), "{e}");
        // The global bank is a file.
        std::fs::remove_dir(bank.root.join("rules-ja.md")).unwrap();
        std::fs::remove_dir_all(bank.global_dir()).unwrap();
        std::fs::write(bank.global_dir(), "x").unwrap();
        let e = context(&bank, &args(json!({"branch": "main"})))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("global memory bank") && e.contains("not a directory"),
            "{e}"
        );
    }

    #[test]
    fn project_rules_override_ours() {
        let (_d, bank) = seeded_bank("main");
        std::fs::write(bank.root.join("rules-en.md"), "# Our rules").unwrap();
        let v = context(&bank, &args(json!({"branch": "main", "language": "en"}))).unwrap();
        assert_eq!(v["rules"]["content"], "# Our rules");
        let v = context(&bank, &args(json!({"branch": "main", "language": "ja"}))).unwrap();
        assert_ne!(v["rules"]["content"], "# Our rules");
    }

    #[cfg(unix)]
    #[test]
    fn core_file_symlinked_out_of_the_bank_is_refused() {
        let (d, bank) = seeded_bank("main");
        std::fs::write(d.path().join("secret"), "s").unwrap();
        let p = bank.global_dir().join("glossary.md");
        std::fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink(d.path().join("secret"), &p).unwrap();
        let e = context(&bank, &args(json!({"branch": "main"})))
            .unwrap_err()
            .to_string();
        assert!(e.contains("refused") && e.contains("glossary.md"), "{e}");
    }

    #[test]
    fn cost_does_not_depend_on_other_documents() {
        // read_context reads only the core files: a document it must not touch (unreadable
        // because it is a directory named like a document) changes nothing.
        let (_d, bank) = seeded_bank("main");
        let before = context(&bank, &args(json!({"branch": "main"}))).unwrap();
        std::fs::create_dir_all(bank.global_dir().join("broken.md")).unwrap();
        std::fs::write(bank.branches_dir().join("main/other.md"), [0xffu8]).unwrap();
        let after = context(&bank, &args(json!({"branch": "main"}))).unwrap();
        assert_eq!(before, after);
    }
}
