//! `make_tripwire {options?, tripwires?}` (also `make-tripwire`, mcp-decisive's name) — WRAP's
//! "Prepare to be wrong": withdrawal criteria (trip wires) per option.
//!
//! mcp-decisive asked the client's model for the criteria through MCP sampling. This bridge does
//! the same when the client declared the `sampling` capability: called without `tripwires`, it
//! sends `sampling/createMessage` with the instructions, reads the JSON criteria from the
//! answer's text and records them (step 2 below) in one call. Without sampling (or when the
//! client errs, does not answer within `client_request_timeout_ms`, or answers no usable JSON),
//! the tool works in two steps the model can follow on its own:
//!
//! 1. Called without `tripwires`: answers a structured request — the options (given as
//!    `options: [{id, name, description}]`, else the current issue's registered options), the
//!    instructions, and the shape of the answer (`request`), with `status: "needs_criteria"`
//!    and an empty `criteria` list per option.
//! 2. Called with `tripwires: [{optionId, criteria: [{description, type, threshold,
//!    severity}]}]`: checks them (every option covered, known types and severities), gives each
//!    criterion an id, keeps them with the issue in the decision store (when they are about its
//!    registered options) and answers them in mcp-decisive's shape `{tripwires, metadata}`.

use crate::memory_bank::document::now_rfc3339;
use crate::tools::{
    decision_store, parse_args, schema_of, Ctx, Run, ToolDef, ToolError, ToolOutput,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub const TYPES: [&str; 6] = [
    "performance",
    "cost",
    "risk",
    "timeline",
    "quality",
    "other",
];
pub const SEVERITIES: [&str; 4] = ["low", "medium", "high", "critical"];

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionArg {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CriterionArg {
    /// What would make this option one to abandon.
    pub description: String,
    /// performance, cost, risk, timeline, quality or other.
    #[serde(rename = "type")]
    #[schemars(extend("enum" = ["performance", "cost", "risk", "timeline", "quality", "other"]))]
    pub kind: String,
    /// The measurable threshold or condition that triggers withdrawal.
    pub threshold: String,
    /// low, medium, high or critical.
    #[schemars(extend("enum" = ["low", "medium", "high", "critical"]))]
    pub severity: String,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TripwireArg {
    pub option_id: String,
    pub criteria: Vec<CriterionArg>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The options to set trip wires for; default: the current issue's registered options.
    #[serde(default)]
    pub options: Option<Vec<OptionArg>>,
    /// Your answer to the request of a call without it: withdrawal criteria per option.
    #[serde(default)]
    pub tripwires: Option<Vec<TripwireArg>>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Criterion {
    pub id: String,
    pub description: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub threshold: String,
    pub severity: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Tripwire {
    pub option_id: String,
    pub option_name: String,
    pub criteria: Vec<Criterion>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    pub generated_at: String,
    pub total_options: usize,
    pub total_criteria: usize,
    pub note: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Answer {
    /// `needs_criteria` (answer `request` by calling again with `tripwires`) or `recorded`.
    pub status: &'static str,
    pub tripwires: Vec<Tripwire>,
    pub metadata: Metadata,
    /// What to do next (status `needs_criteria`): instructions and the answer's shape.
    pub request: Option<Value>,
    /// The criteria were kept with the current issue in the decision store.
    pub stored: bool,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "make_tripwire",
        aliases: &["make-tripwire"],
        description: "WRAP (Prepare to be wrong): set withdrawal criteria (trip wires) per \
                      option. A client that offers MCP sampling is asked for them in one \
                      call. Otherwise: call without `tripwires` to get the options and the \
                      request; then call again with `tripwires: [{optionId, criteria: [{description, \
                      type, threshold, severity}]}]` (at least one criterion per option). \
                      Options default to the current issue's registered options.",
        input_schema: schema_of::<Args>(),
        output_schema: Some(schema_of::<Answer>()),
        run: Run::State(run),
    }
}

fn instructions(options: &[OptionArg]) -> String {
    let mut s = String::from(
        "各選択肢について撤退基準（トリップワイヤー）を決めてください: その選択肢を続けるべきでない\
         と判断する、具体的で測定できる条件です。観点は performance / cost / risk / timeline / \
         quality / other。各基準に description, type, threshold（具体的な閾値・条件）, severity \
         (low / medium / high / critical) を付け、選択肢ごとに3つ以上を目安にしてください。\n\
         答えは make_tripwire を `tripwires` 付きで呼んで渡してください。\n\n選択肢:\n",
    );
    for o in options {
        s.push_str(&format!("- {} (id: {})", o.name, o.id));
        if let Some(d) = o.description.as_deref().filter(|d| !d.is_empty()) {
            s.push_str(&format!(": {d}"));
        }
        s.push('\n');
    }
    s
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let a: Args = match parse_args("make_tripwire", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    let link =
        crate::state::client::current().filter(|l| a.tripwires.is_none() && l.supports("sampling"));
    let Some(link) = link else {
        return compute(ctx, a);
    };
    let timeout = std::time::Duration::from_millis(ctx.config.client_request_timeout_ms);
    Box::pin(async move {
        // Step 1 gives the options and the instructions; the client's model answers them.
        let mut first = compute(ctx.clone(), a.clone()).await?;
        let Some(instructions) = first
            .value
            .pointer("/request/instructions")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            return Ok(first);
        };
        let params = json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": format!(
                "{instructions}\n\n答えは JSON だけで、次の形の配列にしてください: \
                 [{{\"optionId\": \"…\", \"criteria\": [{{\"description\": \"…\", \
                 \"type\": \"risk\", \"threshold\": \"…\", \"severity\": \"high\"}}]}}]"
            )}}],
            "systemPrompt": "You set withdrawal criteria (trip wires) for decision options. \
                             Answer with JSON only.",
            "includeContext": "none",
            "maxTokens": 4000,
        });
        let why = match link
            .ask("sampling", "sampling/createMessage", params, timeout)
            .await
        {
            Ok(v) => match parse_sampled(&v) {
                Ok(tripwires) => {
                    let second = Args {
                        options: a.options.clone(),
                        tripwires: Some(tripwires),
                    };
                    match compute(ctx, second).await {
                        Ok(mut out) => {
                            out.value["metadata"]["note"] = Value::String(
                                "criteria from the client's model through MCP sampling".into(),
                            );
                            return Ok(out);
                        }
                        Err(e) => format!("its criteria were refused: {e}"),
                    }
                }
                Err(e) => e.to_string(),
            },
            Err(e) => e.to_string(),
        };
        // Sampling gave nothing usable: the two-step request, saying why.
        first.value["metadata"]["note"] = Value::String(format!(
            "MCP sampling failed ({why}): answer the request by calling make_tripwire again \
             with `tripwires`"
        ));
        Ok(first)
    })
}

/// Why the client's model's answer (MCP sampling) gave no criteria; said in the result's note.
#[derive(Debug, thiserror::Error)]
enum SamplingError {
    #[error("the answer has no content")]
    NoContent,
    #[error("the answer has no text")]
    NoText,
    #[error("no JSON in the answer")]
    NoJson,
    #[error("the answer is not JSON: {0}")]
    NotJson(serde_json::Error),
    #[error("no `tripwires` in the answer")]
    NoTripwires,
    #[error("the answer has the wrong shape: {0}")]
    WrongShape(serde_json::Error),
}

/// The criteria in a `sampling/createMessage` result: its text content, JSON (a bare array of
/// `{optionId, criteria}`, or `{tripwires: [...]}`), possibly in a Markdown code fence.
fn parse_sampled(v: &Value) -> Result<Vec<TripwireArg>, SamplingError> {
    let content = v.get("content").ok_or(SamplingError::NoContent)?;
    // One block (2025-06-18) or a list of them (2025-11-25).
    let blocks: Vec<&Value> = match content {
        Value::Array(a) => a.iter().collect(),
        c => vec![c],
    };
    let text: String = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n");
    if text.is_empty() {
        return Err(SamplingError::NoText);
    }
    let start = text.find(['[', '{']).ok_or(SamplingError::NoJson)?;
    let end = text.rfind([']', '}']).ok_or(SamplingError::NoJson)?;
    if end < start {
        return Err(SamplingError::NoJson);
    }
    let json: Value = serde_json::from_str(&text[start..=end]).map_err(SamplingError::NotJson)?;
    let list = match json {
        Value::Object(mut o) => o.remove("tripwires").ok_or(SamplingError::NoTripwires)?,
        a => a,
    };
    serde_json::from_value(list).map_err(SamplingError::WrongShape)
}

fn compute(ctx: Ctx, a: Args) -> crate::tools::ToolFuture {
    crate::tools::blocking(move || {
        let store = decision_store(&ctx)?;
        let given = a.options.is_some();
        let options = options_of(&store, a.options)?;
        let Some(answers) = a.tripwires else {
            return needs_criteria(&options);
        };
        let (tripwires, total) = tripwires_of(&options, &answers)?;
        let mut stored = false;
        if !given {
            let v: Vec<Value> = tripwires
                .iter()
                .map(|t| serde_json::to_value(t).unwrap_or(Value::Null))
                .collect();
            store.set_tripwires(v)?;
            stored = true;
        }
        let out = Answer {
            status: "recorded",
            metadata: Metadata {
                generated_at: now_rfc3339(),
                total_options: tripwires.len(),
                total_criteria: total,
                note: "criteria given by the model".into(),
            },
            tripwires,
            request: None,
            stored,
        };
        let text = recorded_text(&out, total);
        let mut r = ToolOutput::of(&out)?;
        r.text = Some(text);
        Ok(r)
    })
}

/// Why tripwires cannot be made or recorded. Empty `options` are the caller's mistake
/// (-32602); the rest the tool's refusal (`isError: true`), which says what to give instead.
#[derive(Debug, thiserror::Error)]
pub enum TripwireError {
    #[error(
        "no options: register them with register_options, or pass `options: [{{id, name, \
         description}}]`"
    )]
    NoOptions,
    #[error("make_tripwire: `options` must not be empty")]
    EmptyOptions,
    #[error("no criteria for option '{name}' (id {id}): every option needs at least one")]
    NoCriteria { name: String, id: String },
    #[error("option '{name}' (id {id}) has an empty criteria list")]
    EmptyCriteria { name: String, id: String },
    #[error("criteria for an unknown option id '{id}'")]
    UnknownOption { id: String },
    /// Criterion `n` (1-based) of option `option` is malformed: `why`.
    #[error("criterion {n} of option {option}: {why}")]
    BadCriterion {
        n: usize,
        option: String,
        why: String,
    },
}

impl crate::error::Fault for TripwireError {
    fn is_callers(&self) -> bool {
        matches!(self, TripwireError::EmptyOptions)
    }
}

/// The options given, else the registered ones.
fn options_of(
    store: &crate::decision::Store,
    given: Option<Vec<OptionArg>>,
) -> Result<Vec<OptionArg>, ToolError> {
    let options: Vec<OptionArg> = match given {
        Some(o) => o,
        None => {
            let data = store.load()?;
            let opts = data.map(|d| d.options).unwrap_or_default();
            if opts.is_empty() {
                return Err(TripwireError::NoOptions.into());
            }
            opts.into_iter()
                .map(|o| OptionArg {
                    id: o.id,
                    name: o.text,
                    description: o.supplementary_info,
                })
                .collect()
        }
    };
    if options.is_empty() {
        return Err(TripwireError::EmptyOptions.into());
    }
    Ok(options)
}

/// The first call's answer: the request for criteria, to be answered by a second call.
fn needs_criteria(options: &[OptionArg]) -> Result<ToolOutput, ToolError> {
    let out = Answer {
        status: "needs_criteria",
        tripwires: options
            .iter()
            .map(|o| Tripwire {
                option_id: o.id.clone(),
                option_name: o.name.clone(),
                criteria: Vec::new(),
            })
            .collect(),
        metadata: Metadata {
            generated_at: now_rfc3339(),
            total_options: options.len(),
            total_criteria: 0,
            note: "no MCP sampling here: answer the request by calling make_tripwire again with \
                   `tripwires`"
                .into(),
        },
        request: Some(json!({
            "instructions": instructions(options),
            "answerWith": {
                "tool": "make_tripwire",
                "argument": "tripwires",
                "schema": crate::tools::schema_value::<Vec<TripwireArg>>(),
            },
        })),
        stored: false,
    };
    let text = instructions(options);
    let mut r = ToolOutput::of(&out)?;
    r.text = Some(text);
    Ok(r)
}

/// Every option's tripwire from the model's `answers`, and how many criteria they hold.
fn tripwires_of(
    options: &[OptionArg],
    answers: &[TripwireArg],
) -> Result<(Vec<Tripwire>, usize), ToolError> {
    let mut tripwires = Vec::new();
    let mut total = 0;
    for o in options {
        let Some(t) = answers.iter().find(|t| t.option_id == o.id) else {
            return Err(TripwireError::NoCriteria {
                name: o.name.clone(),
                id: o.id.clone(),
            }
            .into());
        };
        if t.criteria.is_empty() {
            return Err(TripwireError::EmptyCriteria {
                name: o.name.clone(),
                id: o.id.clone(),
            }
            .into());
        }
        let criteria = t
            .criteria
            .iter()
            .enumerate()
            .map(|(i, c)| criterion(o, i, c))
            .collect::<Result<Vec<_>, _>>()?;
        total += criteria.len();
        tripwires.push(Tripwire {
            option_id: o.id.clone(),
            option_name: o.name.clone(),
            criteria,
        });
    }
    if let Some(extra) = answers
        .iter()
        .find(|t| !options.iter().any(|o| o.id == t.option_id))
    {
        return Err(TripwireError::UnknownOption {
            id: extra.option_id.clone(),
        }
        .into());
    }
    Ok((tripwires, total))
}

/// Criterion `i` (0-based) of option `o`, checked.
fn criterion(o: &OptionArg, i: usize, c: &CriterionArg) -> Result<Criterion, ToolError> {
    let bad = |why: String| {
        Err(TripwireError::BadCriterion {
            n: i + 1,
            option: o.id.clone(),
            why,
        }
        .into())
    };
    if !TYPES.contains(&c.kind.as_str()) {
        return bad(format!(
            "type '{}' is not one of {}",
            c.kind,
            TYPES.join(", ")
        ));
    }
    if !SEVERITIES.contains(&c.severity.as_str()) {
        return bad(format!(
            "severity '{}' is not one of {}",
            c.severity,
            SEVERITIES.join(", ")
        ));
    }
    if c.description.trim().is_empty() || c.threshold.trim().is_empty() {
        return bad("description and threshold must not be empty".into());
    }
    Ok(Criterion {
        id: format!("{}-criterion-{}", o.id, i + 1),
        description: c.description.trim().into(),
        kind: c.kind.clone(),
        threshold: c.threshold.trim().into(),
        severity: c.severity.clone(),
    })
}

/// The text of a recorded answer: the criteria per option.
fn recorded_text(out: &Answer, total: usize) -> String {
    let mut text = format!(
        "撤退基準を{}件、{}個の選択肢に設定しました。\n",
        total,
        out.tripwires.len()
    );
    for t in &out.tripwires {
        text.push_str(&format!("- {}\n", t.option_name));
        for c in &t.criteria {
            text.push_str(&format!(
                "    [{}/{}] {}: {}\n",
                c.kind, c.severity, c.description, c.threshold
            ));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::TripwireError;
    use crate::tools::testutil::*;
    use crate::tools::ToolError;
    use serde_json::json;

    #[test]
    fn the_refusals_keep_their_words_and_their_kind() {
        assert_eq!(
            ToolError::from(TripwireError::EmptyOptions),
            ToolError::InvalidParams("make_tripwire: `options` must not be empty".into())
        );
        let failed = |e: TripwireError| match ToolError::from(e) {
            ToolError::Failed(m) => m,
            other => panic!("not the tool's refusal: {other:?}"),
        };
        let (name, id) = ("Rewrite".to_string(), "opt-1".to_string());
        for (e, said) in [
            (
                TripwireError::NoOptions,
                "no options: register them with register_options, or pass `options: [{id, \
                 name, description}]`",
            ),
            (
                TripwireError::NoCriteria {
                    name: name.clone(),
                    id: id.clone(),
                },
                "no criteria for option 'Rewrite' (id opt-1): every option needs at least one",
            ),
            (
                TripwireError::EmptyCriteria {
                    name: name.clone(),
                    id: id.clone(),
                },
                "option 'Rewrite' (id opt-1) has an empty criteria list",
            ),
            (
                TripwireError::UnknownOption { id: id.clone() },
                "criteria for an unknown option id 'opt-1'",
            ),
            (
                TripwireError::BadCriterion {
                    n: 2,
                    option: id,
                    why: "description and threshold must not be empty".into(),
                },
                "criterion 2 of option opt-1: description and threshold must not be empty",
            ),
        ] {
            assert_eq!(failed(e), said);
        }
    }

    #[test]
    fn asks_then_records_criteria_for_the_registered_options() {
        let d = tempfile::tempdir().unwrap();
        let project = d.path().canonicalize().unwrap();
        let s = TestServer::new(&project, &d.path().join("state"));
        let r = s.call("make_tripwire", json!({}));
        assert!(
            is_error(&r) && text_of(&r).contains("register_options"),
            "{r}"
        );
        s.call(
            "define_issue",
            json!({"title": "DB", "description": "which"}),
        );
        let reg = s.call(
            "register_options",
            json!({"options": ["PostgreSQL", "SQLite", "MySQL"]}),
        );
        let ids: Vec<String> = reg["structuredContent"]["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["id"].as_str().unwrap().to_string())
            .collect();
        // Step 1: the request.
        let r = s.call("make_tripwire", json!({}));
        assert!(!is_error(&r), "{r}");
        let sc = &r["structuredContent"];
        assert_eq!(sc["status"], "needs_criteria");
        assert_eq!(sc["tripwires"].as_array().unwrap().len(), 3);
        assert_eq!(sc["tripwires"][1]["optionName"], "SQLite");
        assert_eq!(sc["tripwires"][1]["criteria"], json!([]));
        assert_eq!(sc["request"]["answerWith"]["argument"], "tripwires");
        assert!(
            sc["request"]["answerWith"]["schema"]["items"].is_object(),
            "{sc}"
        );
        assert!(text_of(&r).contains("SQLite") && text_of(&r).contains("tripwires"));
        // Step 2: the answer, checked, kept, shaped as mcp-decisive's.
        let crit = |t: &str| json!([{"description": "遅い", "type": t, "threshold": "p95 > 200ms", "severity": "high"}]);
        let answer: Vec<_> = ids
            .iter()
            .map(|id| json!({"optionId": id, "criteria": crit("performance")}))
            .collect();
        let r = s.call("make_tripwire", json!({"tripwires": answer}));
        assert!(!is_error(&r), "{r}");
        let sc = &r["structuredContent"];
        assert_eq!(sc["status"], "recorded");
        assert_eq!(sc["stored"], true);
        assert_eq!(sc["metadata"]["totalCriteria"], 3);
        assert_eq!(sc["metadata"]["totalOptions"], 3);
        assert_eq!(
            sc["tripwires"][0]["criteria"][0]["id"],
            format!("{}-criterion-1", ids[0])
        );
        let store = crate::decision::Store::new(&d.path().join("state"), &project);
        let data = store.load().unwrap().unwrap();
        assert_eq!(data.tripwires.len(), 3);
        // Bad answers change nothing.
        let mut bad = answer.clone();
        bad[2] = json!({"optionId": ids[2], "criteria": crit("vibes")});
        let r = s.call("make_tripwire", json!({"tripwires": bad}));
        assert!(is_error(&r) && text_of(&r).contains("vibes"), "{r}");
        let r = s.call("make_tripwire", json!({"tripwires": &answer[..2]}));
        assert!(is_error(&r) && text_of(&r).contains("MySQL"), "{r}");
        assert_eq!(store.load().unwrap().unwrap().tripwires.len(), 3);
        // New options clear the old criteria.
        s.call("register_options", json!({"options": ["a", "b", "c"]}));
        assert!(store.load().unwrap().unwrap().tripwires.is_empty());
    }

    #[test]
    fn the_originals_call_with_explicit_options_and_its_name() {
        let d = tempfile::tempdir().unwrap();
        let s = TestServer::new(&d.path().canonicalize().unwrap(), &d.path().join("state"));
        let opts = json!([{"id": "o1", "name": "内製", "description": "自社で作る"}, {"id": "o2", "name": "外注", "description": "委託する"}]);
        let r = s.call("make-tripwire", json!({"options": opts}));
        assert!(!is_error(&r), "{r}");
        assert_eq!(r["structuredContent"]["tripwires"][0]["optionId"], "o1");
        assert!(text_of(&r).contains("自社で作る"));
        let r = s.call(
            "make_tripwire",
            json!({"options": opts, "tripwires": [
                {"optionId": "o1", "criteria": [{"description": "d", "type": "cost", "threshold": "予算の120%", "severity": "critical"}]},
                {"optionId": "o2", "criteria": [{"description": "d", "type": "timeline", "threshold": "2週間遅延", "severity": "medium"}]},
                {"optionId": "o3", "criteria": [{"description": "d", "type": "timeline", "threshold": "x", "severity": "low"}]}
            ]}),
        );
        assert!(is_error(&r) && text_of(&r).contains("'o3'"), "{r}");
        let r = s.call("make_tripwire", json!({"options": []}));
        assert_eq!(r["error"]["code"], -32602, "{r}");
    }
}
