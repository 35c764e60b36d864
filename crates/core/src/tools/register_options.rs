//! `register_options {options}` — the options (at least 3) for the current issue, each with its
//! own id. Registering again replaces them.

use super::{decision_store, parse_args, schema_of, Ctx, ToolDef, ToolError, ToolOutput};
use crate::decision::{workflow, DecisionOption, OptionInput, Workflow};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// At least 3 options: strings, or {text, supplementaryInfo}.
    pub options: Vec<OptionInput>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Registered {
    pub issue_id: String,
    pub options: Vec<DecisionOption>,
    pub workflow: Workflow,
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
    super::blocking(move || {
        let store = decision_store(&ctx)?;
        let (issue, options) = store
            .register_options(args.options)
            .map_err(|e| ToolError::Failed(e.to_string()))?;
        let mut out = ToolOutput::of(&Registered {
            issue_id: issue.id,
            workflow: workflow(options.len()),
            options,
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

        let r = s.call("register_options", json!({"options": ["a", "b"]}));
        assert!(is_error(&r) && text_of(&r).contains("at least 3"), "{r}");
        let r = s.call("register_options", json!({"options": ["a", "", "c"]}));
        assert!(
            is_error(&r) && text_of(&r).contains("options[1].text"),
            "{r}"
        );
        let r = s.call("register_options", json!({"options": "abc"}));
        assert_eq!(r["error"]["code"], -32602, "{r}");
        // Failed registrations changed nothing.
        let st = s.call("get_current_status", json!({}));
        assert_eq!(
            st["structuredContent"]["options"].as_array().unwrap().len(),
            3
        );
    }
}
