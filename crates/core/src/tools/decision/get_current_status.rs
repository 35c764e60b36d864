//! `get_current_status {}` — the WRAP decision's current state (doc/protocol.md, WRAP
//! decisions): text plus `structuredContent` with the issue, its options and the workflow step.
//! With no issue:
//! just the text `課題が定義されていません`, not an error. A store that cannot be read or is
//! corrupt: `isError` with the path and the reason (the file is left untouched).

use crate::decision::{
    workflow, DecisionOption, Issue, StoreData, WidenOptionsStep, Workflow, NO_ISSUE,
};
use crate::tools::{
    decision_store, parse_args, schema_of, Ctx, NoArgs, Run, ToolDef, ToolError, ToolOutput,
};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// The current issue; null when none is defined.
    pub issue: Option<Issue>,
    pub options: Vec<DecisionOption>,
    /// The WRAP step and what to do next; null when no issue is defined.
    pub workflow: Option<Workflow>,
    /// How many earlier issues the store keeps.
    pub history_count: usize,
    /// The Widen Options step the last register_options named, if any.
    pub widen_options_step: Option<WidenOptionsStep>,
    /// Withdrawal criteria per option (make_tripwire), if set.
    pub tripwires: Vec<Value>,
    /// "課題が定義されていません" when no issue is defined, else null.
    pub message: Option<String>,
    /// mcp-decisive's workflow state: `undefined`, `issue_defined`,
    /// `initial_options_registered`, `laddered`, … with its Japanese name.
    pub workflow_state: WorkflowState,
    /// mcp-decisive's view: `{課題: {issue, context, constraints}, 選択肢: [...]}` (empty
    /// when no issue is defined).
    pub current_status: CurrentStatus,
    /// What to do next, in words.
    pub next_actions: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowState {
    pub current: &'static str,
    pub display_name: &'static str,
}

#[derive(Debug, Serialize, JsonSchema, Default)]
pub struct CurrentStatus {
    #[serde(rename = "課題", skip_serializing_if = "Option::is_none")]
    pub issue: Option<OriginalIssue>,
    #[serde(rename = "選択肢", skip_serializing_if = "Option::is_none")]
    pub options: Option<Vec<OriginalOption>>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct OriginalIssue {
    /// The title.
    pub issue: String,
    pub context: Option<String>,
    /// The constraints, one a line.
    pub constraints: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OriginalOption {
    pub id: String,
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub supplementary_info: Option<String>,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "get_current_status",
        aliases: &[],
        description: "WRAP decision process: get the current issue (id, title, description, \
                      createdAt, context, constraints), its options and the workflow step. \
                      Answers \"課題が定義されていません\" when no issue is defined (issue: null).",
        input_schema: schema_of::<NoArgs>(),
        output_schema: Some(schema_of::<Status>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    if let Err(e) = parse_args::<Option<NoArgs>>("get_current_status", args) {
        return crate::tools::ready(Err(e));
    }
    crate::tools::blocking(move || {
        let store = decision_store(&ctx)?;
        let data = store.load()?;
        status(data)
    })
}

/// mcp-decisive's workflow state for a store, with its display name.
fn workflow_state(issue: bool, options: usize, step: Option<&WidenOptionsStep>) -> WorkflowState {
    let current = match (issue, options, step) {
        (false, _, _) => "undefined",
        (true, 0, _) => "issue_defined",
        (true, _, None) => "initial_options_registered",
        (true, _, Some(s)) => match s.workflow_state() {
            "laddered" => "laddered",
            "analogical_research_done" => "analogical_research_done",
            "elimination_tested" => "elimination_tested",
            "options_fixed" => "options_fixed",
            _ => "initial_options_registered",
        },
    };
    let display_name = match current {
        "undefined" => "未定義状態",
        "issue_defined" => "課題定義済み",
        "initial_options_registered" => "初期選択肢登録済み",
        "laddered" => "ラダリング済み",
        "analogical_research_done" => "類推による類似問題調査済み",
        "elimination_tested" => "消去テスト済み",
        _ => "選択肢fixed",
    };
    WorkflowState {
        current,
        display_name,
    }
}

/// The answer for a store's content.
pub fn status(data: Option<StoreData>) -> Result<ToolOutput, ToolError> {
    let Some(StoreData {
        issue: Some(issue),
        options,
        history,
        widen_options_step,
        tripwires,
        ..
    }) = data
    else {
        let st = Status {
            issue: None,
            options: Vec::new(),
            workflow: None,
            history_count: data.map_or(0, |d| d.history.len()),
            widen_options_step: None,
            tripwires: Vec::new(),
            message: Some(NO_ISSUE.into()),
            workflow_state: workflow_state(false, 0, None),
            current_status: CurrentStatus::default(),
            next_actions: format!(
                "{NO_ISSUE}。define_issue で課題を定義してください（課題の特定には \
                 identify-issue プロンプトが使えます）。"
            ),
        };
        let mut out = ToolOutput::of(&st)?;
        out.text = Some(NO_ISSUE.into());
        return Ok(out);
    };
    let wf = workflow(options.len());
    let st = Status {
        workflow_state: workflow_state(true, options.len(), widen_options_step.as_ref()),
        current_status: CurrentStatus {
            issue: Some(OriginalIssue {
                issue: issue.title.clone(),
                context: issue.context.clone(),
                constraints: (!issue.constraints.is_empty()).then(|| issue.constraints.join("\n")),
            }),
            options: (!options.is_empty()).then(|| {
                options
                    .iter()
                    .map(|o| OriginalOption {
                        id: o.id.clone(),
                        text: o.text.clone(),
                        supplementary_info: o.supplementary_info.clone(),
                    })
                    .collect()
            }),
        },
        next_actions: wf.next_action.into(),
        workflow: Some(wf),
        history_count: history.len(),
        widen_options_step,
        tripwires,
        message: None,
        issue: Some(issue),
        options,
    };
    let text = summary(&st);
    let mut out = ToolOutput::of(&st)?;
    out.text = Some(text);
    Ok(out)
}

fn summary(st: &Status) -> String {
    let Some(i) = &st.issue else {
        return NO_ISSUE.into();
    };
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
    if let Some(step) = &st.widen_options_step {
        s.push_str(&format!(
            "Widen Options: {} ({})\n",
            step.kind, step.description
        ));
    }
    if let Some(wf) = &st.workflow {
        s.push_str(&format!(
            "ステップ: {}\n次のアクション: {}",
            wf.step, wf.next_action
        ));
    }
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
    fn no_issue_is_the_verbatim_text_with_null_data_and_not_an_error() {
        let (_d, s, _) = server();
        let r = s.call("get_current_status", json!({}));
        assert_eq!(text_of(&r), "課題が定義されていません");
        assert_eq!(r["isError"], false, "{r}");
        // The outputSchema promises structure: null data, and the message for programs too.
        let sc = &r["structuredContent"];
        assert_eq!(sc["issue"], json!(null), "{r}");
        assert_eq!(sc["workflow"], json!(null), "{r}");
        assert_eq!(sc["message"], "課題が定義されていません");
        assert_eq!(sc["options"], json!([]));
        // mcp-decisive's fields.
        assert_eq!(
            sc["workflowState"],
            json!({"current": "undefined", "displayName": "未定義状態"})
        );
        assert_eq!(sc["currentStatus"], json!({}));
        assert!(sc["nextActions"].as_str().unwrap().contains("define_issue"));
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
        let mut stored = def["structuredContent"].clone();
        stored.as_object_mut().unwrap().remove("issue");
        assert_eq!(sc["issue"], stored);
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
        assert_eq!(sc["message"], json!(null));
        assert_eq!(sc["workflowState"]["current"], "issue_defined");
        assert_eq!(
            sc["currentStatus"],
            json!({"課題": {"issue": "認証方式", "context": "社内向け", "constraints": "2週間"}})
        );
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
        let opts = &r["structuredContent"]["currentStatus"]["選択肢"];
        assert_eq!(opts[1]["text"], "SAML");
        assert_eq!(opts[1]["supplementaryInfo"], "既存IdP");
        assert_eq!(
            r["structuredContent"]["workflowState"]["current"],
            "initial_options_registered"
        );
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
