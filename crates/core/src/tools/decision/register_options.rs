//! `register_options {options, widenOptionsStep?}` — the options (at least 3) for the current
//! issue, each with its own id. Registering again replaces them. `widenOptionsStep`
//! (mcp-decisive's `{type, description}`, or just the type) is kept in the store and returned.
//!
//! More than [`ASK_ABOVE`] options, and a client that declared the `elicitation` capability
//! (Claude Code does): after registering them all, the person is asked through MCP
//! `elicitation/create` which to keep (one boolean per option, all true by default). On
//! `accept` the registered set is narrowed to the ones kept (at least 3; fewer keeps all);
//! `decline`, `cancel`, no answer within `client_request_timeout_ms`, or an error keep them
//! all. The outcome is in the result's `elicitation`.

use crate::decision::{workflow, DecisionOption, OptionInput, WidenOptionsStep, Workflow};
use crate::tools::{
    decision_store, parse_args, schema_of, Ctx, Run, ToolDef, ToolError, ToolOutput,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

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
    /// The person's narrowing through MCP elicitation (null when nobody was asked: at most
    /// 5 options, or a client without the `elicitation` capability).
    pub elicitation: Option<Elicitation>,
}

/// What came of asking the person to narrow the options.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Elicitation {
    /// `accept`, `decline`, `cancel`, `timeout` or `error`.
    pub action: String,
    /// Options registered before the question.
    pub offered: usize,
    /// Options kept.
    pub kept: usize,
    pub note: String,
}

/// More options than this: ask the person to narrow them (when the client can be asked).
pub const ASK_ABOVE: usize = 5;

pub fn def() -> ToolDef {
    ToolDef {
        name: "register_options",
        aliases: &[],
        description: "WRAP decision process: register at least 3 options for the current issue \
                      (strings or {text, supplementaryInfo}); each gets an id. Registering again \
                      replaces the options. With more than 5, a client that offers MCP \
                      elicitation asks the person which to keep.",
        input_schema: schema_of::<Args>(),
        output_schema: Some(schema_of::<Registered>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let args: Args = match parse_args("register_options", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    let step = match args
        .widen_options_step
        .as_ref()
        .map(WidenOptionsStep::parse)
    {
        None => None,
        Some(Ok(s)) => Some(s),
        Some(Err(e)) => {
            return crate::tools::ready(Err(ToolError::InvalidParams(format!(
                "invalid arguments for register_options: {e}"
            ))))
        }
    };
    let link = crate::state::client::current();
    let timeout = std::time::Duration::from_millis(ctx.config.client_request_timeout_ms);
    Box::pin(async move {
        let c = ctx.clone();
        let s = step.clone();
        let (issue, mut options) = crate::tools::on_blocking_pool(move || {
            decision_store(&c)?
                .register_options(args.options, s)
                .map_err(ToolError::from)
        })
        .await?;
        let mut elicitation = None;
        if let Some(link) = link.filter(|l| options.len() > ASK_ABOVE && l.supports("elicitation"))
        {
            elicitation =
                Some(ask_to_narrow(&ctx, &link, &issue.title, &mut options, timeout).await);
        }
        let mut out = ToolOutput::of(&Registered {
            issue_id: issue.id,
            workflow: workflow(options.len()),
            options,
            widen_options_step: step,
            elicitation,
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

/// Asks the person (MCP elicitation) which of the many `options` to keep, and keeps those;
/// what they answered, and why all options were kept when nothing was chosen.
async fn ask_to_narrow(
    ctx: &Ctx,
    link: &crate::state::client::ClientLink,
    title: &str,
    options: &mut Vec<DecisionOption>,
    timeout: std::time::Duration,
) -> Elicitation {
    let offered = options.len();
    let answer = link
        .ask(
            "elicitation",
            "elicitation/create",
            elicit_params(title, options),
            timeout,
        )
        .await;
    let (action, keep, mut note) = match answer {
        Ok(v) => read_answer(&v, options),
        Err(e) => {
            let action = match e {
                crate::state::client::AskError::Timeout(_) => "timeout",
                _ => "error",
            };
            (action.to_string(), None, format!("all options kept: {e}"))
        }
    };
    if let Some(ids) = keep {
        let c = ctx.clone();
        let kept = crate::tools::on_blocking_pool(move || {
            decision_store(&c)?
                .keep_options(&ids)
                .map_err(ToolError::from)
        })
        .await;
        match kept {
            Ok(k) => *options = k,
            Err(e) => note = format!("all options kept: {e}"),
        }
    }
    Elicitation {
        action,
        offered,
        kept: options.len(),
        note,
    }
}

/// The property of option `i` (0-based) in the elicitation schema.
fn key(i: usize) -> String {
    format!("option_{}", i + 1)
}

/// `elicitation/create` params: a flat object with one boolean per option (MCP allows only
/// flat objects of primitive properties), all true by default.
fn elicit_params(title: &str, options: &[DecisionOption]) -> Value {
    let mut props = serde_json::Map::new();
    for (i, o) in options.iter().enumerate() {
        let mut p = json!({"type": "boolean", "title": o.text, "default": true});
        if let Some(info) = &o.supplementary_info {
            p["description"] = Value::String(info.clone());
        }
        props.insert(key(i), p);
    }
    json!({
        "message": format!(
            "課題「{title}」の選択肢が{}件あります。検討を続ける選択肢を選んでください（3件以上）。",
            options.len()
        ),
        "requestedSchema": {"type": "object", "properties": props},
    })
}

/// The action, the ids to keep (None: keep all) and a note, from the client's answer.
fn read_answer(v: &Value, options: &[DecisionOption]) -> (String, Option<Vec<String>>, String) {
    let action = v.get("action").and_then(Value::as_str).unwrap_or("");
    match action {
        "accept" => {
            let content = v.get("content").cloned().unwrap_or(Value::Null);
            let ids: Vec<String> = options
                .iter()
                .enumerate()
                .filter(|(i, _)| {
                    content
                        .get(key(*i))
                        .and_then(Value::as_bool)
                        .unwrap_or(true)
                })
                .map(|(_, o)| o.id.clone())
                .collect();
            if ids.len() < 3 {
                (
                    "accept".into(),
                    None,
                    format!(
                        "all options kept: {} chosen, at least 3 are needed",
                        ids.len()
                    ),
                )
            } else {
                let n = ids.len();
                (
                    "accept".into(),
                    Some(ids),
                    format!("the person kept {n} of {} options", options.len()),
                )
            }
        }
        "decline" | "cancel" => (
            action.into(),
            None,
            format!("all options kept: the person chose {action}"),
        ),
        other => (
            "error".into(),
            None,
            format!(
                "all options kept: unknown action '{}'",
                crate::jsonrpc::shorten(other, 40)
            ),
        ),
    }
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
