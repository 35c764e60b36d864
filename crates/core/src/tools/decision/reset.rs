//! `reset {}` — clears the decision store after moving it into a backup (also a corrupt one).

use crate::tools::{decision_store, parse_args, schema_of, Ctx, NoArgs, Run, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResetResult {
    /// The reset went through (mcp-decisive's field; a failure is an error result).
    pub success: bool,
    /// What happened, in words (mcp-decisive's field).
    pub message: String,
    /// Whether there was anything to clear.
    pub reset: bool,
    /// Where the previous store was kept.
    pub backup: Option<String>,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "reset",
        aliases: &[],
        description: "WRAP decision process: clear the current issue, its options and history, \
                      after keeping the previous store as a backup file (its path is returned).",
        input_schema: schema_of::<NoArgs>(),
        output_schema: Some(schema_of::<ResetResult>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    if let Err(e) = parse_args::<Option<NoArgs>>("reset", args) {
        return crate::tools::ready(Err(e));
    }
    crate::tools::blocking(move || {
        let store = decision_store(&ctx)?;
        let backup = store.reset()?;
        let message = match &backup {
            Some(p) => format!(
                "課題と選択肢をリセットしました。以前の内容は {} に保存しました。",
                p.display()
            ),
            None => "リセットする課題はありません。".into(),
        };
        let mut out = ToolOutput::of(&ResetResult {
            success: true,
            message: message.clone(),
            reset: backup.is_some(),
            backup: backup.as_ref().map(|p| p.to_string_lossy().into_owned()),
        })?;
        out.text = Some(message);
        Ok(out)
    })
}

#[cfg(test)]
mod tests {
    use crate::tools::testutil::*;
    use serde_json::json;

    #[test]
    fn reset_keeps_a_backup_and_clears() {
        let d = tempfile::tempdir().unwrap();
        let s = TestServer::new(&d.path().canonicalize().unwrap(), &d.path().join("state"));
        let r = s.call("reset", json!({}));
        assert_eq!(
            r["structuredContent"],
            json!({"success": true, "message": "リセットする課題はありません。", "reset": false, "backup": null}),
            "{r}"
        );
        s.call("define_issue", json!({"title": "残す", "description": "d"}));
        let r = s.call("reset", json!({}));
        assert!(!is_error(&r), "{r}");
        let backup = r["structuredContent"]["backup"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(std::fs::read_to_string(&backup).unwrap().contains("残す"));
        let st = s.call("get_current_status", json!({}));
        assert_eq!(text_of(&st), "課題が定義されていません");
        let r = s.call("reset", json!({"x": 1}));
        assert_eq!(r["error"]["code"], -32602, "{r}");
    }
}
