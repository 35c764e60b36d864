//! `register_options {options, widenOptionsStep?}` — the options (at least 3) for the current
//! issue, each with its own id. Registering again replaces them. `widenOptionsStep`
//! (mcp-decisive's `{type, description}`, or just the type) is kept in the store and returned.

use super::{decision_store, parse_args, schema_of, Ctx, ToolDef, ToolError, ToolOutput};
use crate::decision::{workflow, DecisionOption, OptionInput, WidenOptionsStep, Workflow};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// At least 3 options: strings, or {text, supplementaryInfo}.
    pub options: Vec<OptionInput>,
    /// Which Widen Options step this registration belongs to: {"type": "initial_registered" |
    /// "laddered" | "analogical_research_done" | "elimination_tested" | "fixed"} (the
    /// description is filled in), or the type alone.
    #[serde(default, rename = "widenOptionsStep")]
    pub widen_options_step: Option<Value>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Registered {
    pub issue_id: String,
    pub options: Vec<DecisionOption>,
    pub workflow: Workflow,
    /// The step given, as kept (null when none was given).
    pub widen_options_step: Option<WidenOptionsStep>,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "register_options",
        aliases: &[],
        description: "WRAP decision process: register at least 3 options for the current issue \
                      (strings or {text, supplementaryInfo}); each gets an id. Registering again \
                      replaces the options.",
        input_schema: schema_of::<Args>(),
        output_schema: Some(schema_of::<Registered>()),
        run,
    }
}

fn run(ctx: Ctx, args: Value) -> super::ToolFuture {
    let args: Args = match parse_args("register_options", args) {
        Ok(a) => a,
        Err(e) => return super::ready(Err(e)),
    };
    let step = match args
        .widen_options_step
        .as_ref()
        .map(WidenOptionsStep::parse)
    {
        None => None,
        Some(Ok(s)) => Some(s),
        Some(Err(e)) => {
            return super::ready(Err(ToolError::InvalidParams(format!(
                "invalid arguments for register_options: {e}"
            ))))
        }
    };
    super::blocking(move || {
        let store = decision_store(&ctx)?;
        let (issue, options) = store
            .register_options(args.options, step.clone())
            .map_err(|e| ToolError::Failed(e.to_string()))?;
        let mut out = ToolOutput::of(&Registered {
            issue_id: issue.id,
            workflow: workflow(options.len()),
            options,
            widen_options_step: step,
        })?;
        out.text = Some(format!(
            "課題「{}」に選択肢を{}件登録しました。\n{}",
            issue.title,
            out.value["options"].as_array().map_or(0, Vec::len),
            out.value
        ));
        Ok(out)
    })
}

#[cfg(test)]
mod tests {
    use crate::tools::testutil::*;
    use serde_json::json;

    #[test]
    fn registers_options_with_ids_and_checks_input() {
        let d = tempfile::tempdir().unwrap();
        let s = TestServer::new(&d.path().canonicalize().unwrap(), &d.path().join("state"));
        let r = s.call("register_options", json!({"options": ["a", "b", "c"]}));
        assert!(
            is_error(&r) && text_of(&r).contains("課題が定義されていません"),
            "{r}"
        );
        let issue = s.call("define_issue", json!({"title": "t", "description": "d"}));
        let r = s.call(
            "register_options",
            json!({"options": ["案A", {"text": "案B", "supplementaryInfo": "安い"}, {"text": "案C"}]}),
        );
        assert!(!is_error(&r), "{r}");
        let out = &r["structuredContent"];
        assert_eq!(out["issueId"], issue["structuredContent"]["id"]);
        let opts = out["options"].as_array().unwrap();
        assert_eq!(opts.len(), 3);
        assert_eq!(opts[1]["text"], "案B");
        assert_eq!(opts[1]["supplementaryInfo"], "安い");
        assert!(opts[0].get("supplementaryInfo").is_none());
        let ids: std::collections::HashSet<_> =
            opts.iter().map(|o| o["id"].as_str().unwrap()).collect();
        assert_eq!(ids.len(), 3);
        assert_eq!(out["workflow"]["step"], "reality-test");
        assert_eq!(out["widenOptionsStep"], json!(null));

        let r = s.call("register_options", json!({"options": ["a", "b"]}));
        assert!(is_error(&r) && text_of(&r).contains("at least 3"), "{r}");
        let r = s.call("register_options", json!({"options": ["a", "", "c"]}));
        assert!(
            is_error(&r) && text_of(&r).contains("options[1].text"),
            "{r}"
        );
        let r = s.call("register_options", json!({"options": "abc"}));
        assert_eq!(r["error"]["code"], -32602, "{r}");
        let r = s.call(
            "register_options",
            json!({"options": ["a", "b", "c"], "widenOptionsStep": {"type": "sideways"}}),
        );
        assert_eq!(r["error"]["code"], -32602, "{r}");
        assert!(r["error"]["message"].as_str().unwrap().contains("laddered"));
        // Failed registrations changed nothing.
        let st = s.call("get_current_status", json!({}));
        assert_eq!(
            st["structuredContent"]["options"].as_array().unwrap().len(),
            3
        );
    }

    #[test]
    fn widen_options_step_is_accepted_kept_and_returned() {
        let d = tempfile::tempdir().unwrap();
        let s = TestServer::new(&d.path().canonicalize().unwrap(), &d.path().join("state"));
        s.call(
            "define_issue",
            json!({"issue": "t", "context": "c", "constraints": "k"}),
        );
        let r = s.call(
            "register_options",
            json!({"options": ["a", "b", "c"], "widenOptionsStep": {"type": "initial_registered", "description": "初期登録した"}}),
        );
        assert!(!is_error(&r), "{r}");
        let step = json!({"type": "initial_registered", "description": "初期登録した"});
        assert_eq!(r["structuredContent"]["widenOptionsStep"], step);
        // The bare type works too, and the description is filled in.
        let r = s.call(
            "register_options",
            json!({"options": ["a", "b", "c", "d"], "widenOptionsStep": "laddered"}),
        );
        let step = json!({"type": "laddered", "description": "ラダリングした"});
        assert_eq!(r["structuredContent"]["widenOptionsStep"], step);
        // Kept: the status shows it; a registration without a step keeps the last one.
        s.call("register_options", json!({"options": ["a", "b", "c"]}));
        let st = s.call("get_current_status", json!({}));
        assert_eq!(st["structuredContent"]["widenOptionsStep"], step);
        assert_eq!(
            st["structuredContent"]["workflowState"]["current"],
            "laddered"
        );
        // A new issue starts without one.
        s.call("define_issue", json!({"title": "u"}));
        let st = s.call("get_current_status", json!({}));
        assert_eq!(st["structuredContent"]["widenOptionsStep"], json!(null));
    }
}
