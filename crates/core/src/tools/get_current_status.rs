//! `get_current_status {}` — the WRAP decision's current state (current-status-tool.ja.md): text
//! plus `structuredContent` with the issue, its options and the workflow step. With no issue:
//! just the text `課題が定義されていません`, not an error. A store that cannot be read or is
//! corrupt: `isError` with the path and the reason (the file is left untouched).

use super::{decision_store, parse_args, schema_of, Ctx, NoArgs, ToolDef, ToolError, ToolOutput};
use crate::decision::{workflow, DecisionOption, Issue, StoreData, Workflow, NO_ISSUE};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub issue: Issue,
    pub options: Vec<DecisionOption>,
    pub workflow: Workflow,
    /// How many earlier issues the store keeps.
    pub history_count: usize,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "get_current_status",
        aliases: &[],
        description: "WRAP decision process: get the current issue (id, title, description, \
                      createdAt, context, constraints), its options and the workflow step. \
                      Answers \"課題が定義されていません\" when no issue is defined.",
        input_schema: schema_of::<NoArgs>(),
        output_schema: None,
        run,
    }
}

fn run(ctx: Ctx, args: Value) -> super::ToolFuture {
    if let Err(e) = parse_args::<Option<NoArgs>>("get_current_status", args) {
        return super::ready(Err(e));
    }
    super::blocking(move || {
        let store = decision_store(&ctx)?;
        let data = store.load().map_err(|e| ToolError::Failed(e.to_string()))?;
        status(data)
    })
}

/// The answer for a store's content.
pub fn status(data: Option<StoreData>) -> Result<ToolOutput, ToolError> {
    let Some(StoreData {
        issue: Some(issue),
        options,
        history,
        ..
    }) = data
    else {
        return Ok(ToolOutput {
            value: Value::Null,
            text: Some(NO_ISSUE.into()),
            ..Default::default()
        });
    };
    let st = Status {
        workflow: workflow(options.len()),
        history_count: history.len(),
        issue,
        options,
    };
    let text = summary(&st);
    let mut out = ToolOutput::of(&st)?;
    out.text = Some(text);
    Ok(out)
}

fn summary(st: &Status) -> String {
    let i = &st.issue;
    let mut s = format!(
        "現在の課題: {}\nID: {}\n説明: {}\n作成日時: {}\n",
        i.title, i.id, i.description, i.created_at
    );
    if let Some(c) = &i.context {
        s.push_str(&format!("背景: {c}\n"));
    }
    if !i.constraints.is_empty() {
        s.push_str("制約:\n");
        for c in &i.constraints {
            s.push_str(&format!("  - {c}\n"));
        }
    }
    if st.options.is_empty() {
        s.push_str("選択肢: まだ登録されていません\n");
    } else {
        s.push_str(&format!("選択肢 ({}件):\n", st.options.len()));
        for (n, o) in st.options.iter().enumerate() {
            s.push_str(&format!("  {}. {} (id: {})\n", n + 1, o.text, o.id));
            if let Some(info) = &o.supplementary_info {
                s.push_str(&format!("     補足: {info}\n"));
            }
        }
    }
    s.push_str(&format!(
        "ステップ: {}\n次のアクション: {}",
        st.workflow.step, st.workflow.next_action
    ));
    s
}

#[cfg(test)]
mod tests {
    use crate::tools::testutil::*;
    use serde_json::json;

    fn server() -> (tempfile::TempDir, TestServer, crate::decision::Store) {
        let d = tempfile::tempdir().unwrap();
        let project = d.path().canonicalize().unwrap();
        let state = d.path().join("state");
        let s = TestServer::new(&project, &state);
        let store = crate::decision::Store::new(&state, &project);
        (d, s, store)
    }

    #[test]
    fn no_issue_is_the_verbatim_text_without_structured_content_and_not_an_error() {
        let (_d, s, _) = server();
        let r = s.call("get_current_status", json!({}));
        assert_eq!(text_of(&r), "課題が定義されていません");
        assert_eq!(r["isError"], false, "{r}");
        assert!(r.get("structuredContent").is_none(), "{r}");
        assert_eq!(r["content"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn an_issue_gives_text_and_structured_content() {
        let (_d, s, _) = server();
        let def = s.call(
            "define_issue",
            json!({"title": "認証方式", "description": "どれにするか", "context": "社内向け", "constraints": ["2週間"]}),
        );
        let r = s.call("get_current_status", json!({}));
        assert_eq!(r["isError"], false, "{r}");
        let sc = &r["structuredContent"];
        assert_eq!(sc["issue"], def["structuredContent"]);
        for k in [
            "id",
            "title",
            "description",
            "createdAt",
            "context",
            "constraints",
        ] {
            assert!(sc["issue"].get(k).is_some(), "{k}: {r}");
        }
        assert_eq!(sc["options"], json!([]));
        assert_eq!(sc["workflow"]["step"], "widen-options");
        let t = text_of(&r);
        assert!(
            t.contains("現在の課題: 認証方式") && t.contains("制約:\n  - 2週間"),
            "{t}"
        );
        assert!(t.contains("選択肢: まだ登録されていません"), "{t}");
        s.call(
            "register_options",
            json!({"options": ["OAuth", {"text": "SAML", "supplementaryInfo": "既存IdP"}, "独自"]}),
        );
        let r = s.call("get_current_status", json!({}));
        assert_eq!(
            r["structuredContent"]["options"].as_array().unwrap().len(),
            3
        );
        assert_eq!(r["structuredContent"]["workflow"]["step"], "reality-test");
        assert!(text_of(&r).contains("2. SAML") && text_of(&r).contains("補足: 既存IdP"));
    }

    #[test]
    fn a_corrupt_store_is_an_error_naming_it_and_is_never_overwritten() {
        let (_d, s, store) = server();
        std::fs::create_dir_all(store.path.parent().unwrap()).unwrap();
        let junk = b"{\"version\": 1, \"issue\": {\"title\": tru";
        std::fs::write(&store.path, junk).unwrap();
        let r = s.call("get_current_status", json!({}));
        assert_eq!(r["isError"], true, "{r}");
        let t = text_of(&r);
        assert!(
            t.contains("corrupt") && t.contains(&*store.path.to_string_lossy()),
            "{t}"
        );
        // Updates refuse too and leave the bytes as they were.
        for (tool, args) in [
            ("define_issue", json!({"title": "t", "description": "d"})),
            ("register_options", json!({"options": ["a", "b", "c"]})),
        ] {
            let r = s.call(tool, args);
            assert!(
                is_error(&r) && text_of(&r).contains("corrupt"),
                "{tool}: {r}"
            );
            assert_eq!(std::fs::read(&store.path).unwrap(), junk);
        }
        // Valid JSON of the wrong shape is corrupt as well.
        std::fs::write(&store.path, r#"{"version": 1, "issue": 5}"#).unwrap();
        let r = s.call("get_current_status", json!({}));
        assert!(is_error(&r) && text_of(&r).contains("corrupt"), "{r}");
        std::fs::write(&store.path, r#"[]"#).unwrap();
        let r = s.call("get_current_status", json!({}));
        assert!(is_error(&r) && text_of(&r).contains("corrupt"), "{r}");
        // A newer format is not called corrupt, and is left alone as well.
        std::fs::write(&store.path, r#"{"version": 99}"#).unwrap();
        let r = s.call("get_current_status", json!({}));
        assert!(is_error(&r) && text_of(&r).contains("newer"), "{r}");
        // reset moves the corrupt store into a backup, intact, and starts over.
        std::fs::write(&store.path, junk).unwrap();
        let r = s.call("reset", json!({}));
        let backup = r["structuredContent"]["backup"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(std::fs::read(&backup).unwrap(), junk);
        assert_eq!(
            text_of(&s.call("get_current_status", json!({}))),
            "課題が定義されていません"
        );
    }

    #[test]
    fn an_unreadable_store_is_an_error_with_path_and_os_error() {
        let (_d, s, store) = server();
        // A directory where the store file should be (chmod 000 does not stop root).
        std::fs::create_dir_all(&store.path).unwrap();
        let r = s.call("get_current_status", json!({}));
        assert_eq!(r["isError"], true, "{r}");
        let t = text_of(&r);
        assert!(
            t.contains("cannot read")
                && t.contains(&*store.path.to_string_lossy())
                && t.contains("os error"),
            "{t}"
        );
        let r = s.call("define_issue", json!({"title": "t", "description": "d"}));
        assert!(is_error(&r), "{r}");
        let r = s.call("reset", json!({}));
        assert!(
            is_error(&r) && text_of(&r).contains("not a regular file"),
            "{r}"
        );
        assert!(store.path.is_dir());
    }

    #[cfg(unix)]
    #[test]
    fn a_store_without_read_permission_is_an_error_when_not_root() {
        use std::os::unix::fs::PermissionsExt;
        // Root reads anything: there the directory-in-place test above covers unreadable stores.
        if unsafe { libc::geteuid() } == 0 {
            return;
        }
        let (_d, s, store) = server();
        s.call("define_issue", json!({"title": "t", "description": "d"}));
        std::fs::set_permissions(&store.path, std::fs::Permissions::from_mode(0o000)).unwrap();
        let r = s.call("get_current_status", json!({}));
        std::fs::set_permissions(&store.path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(
            is_error(&r) && text_of(&r).contains("Permission denied"),
            "{r}"
        );
    }

    #[test]
    fn an_unusable_state_directory_is_reported() {
        let d = tempfile::tempdir().unwrap();
        let project = d.path().canonicalize().unwrap();
        // The state "directory" is a file.
        let state = d.path().join("state-file");
        std::fs::write(&state, "x").unwrap();
        let s = TestServer::new(&project, &state);
        let r = s.call("define_issue", json!({"title": "t", "description": "d"}));
        assert!(is_error(&r) && text_of(&r).contains("state-file"), "{r}");
        let r = s.call("get_current_status", json!({}));
        assert!(is_error(&r) && text_of(&r).contains("os error"), "{r}");
    }
}
