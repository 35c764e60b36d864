//! MCP prompts (`prompts/list`, `prompts/get`): the WRAP decision prompts mcp-decisive offered,
//! `identify-issue` (also `identify-the-issue`, its name there) and `widen-options`. The texts are
//! this plugin's own, written for its tools (define_issue, register_options, get_current_status,
//! make_tripwire).

use serde_json::{json, Map, Value};

struct Prompt {
    name: &'static str,
    aliases: &'static [&'static str],
    description: &'static str,
    /// (name, description, required)
    arguments: &'static [(&'static str, &'static str, bool)],
    render: fn(&Map<String, Value>) -> String,
}

const PROMPTS: &[Prompt] = &[
    Prompt {
        name: "identify-issue",
        aliases: &["identify-the-issue"],
        description: "WRAP, step 0: pin down the decision to make (issue, context, constraints) \
                      through a short dialogue, then record it with define_issue.",
        arguments: &[(
            "problem",
            "The problem as the person describes it (optional).",
            false,
        )],
        render: identify_issue,
    },
    Prompt {
        name: "widen-options",
        aliases: &[],
        description: "WRAP, Widen your options: grow a narrow choice into several distinct, \
                      concrete options and register them with register_options.",
        arguments: &[],
        render: widen_options,
    },
];

fn identify_issue(args: &Map<String, Value>) -> String {
    let mut s = String::from(
        "あなたは意思決定の「課題」を明確にする手伝いをします。課題とは、複数の選択肢があり、\
         どれかを選ばなければならない決定点のことです。\n\n",
    );
    if let Some(p) = args
        .get("problem")
        .and_then(Value::as_str)
        .filter(|p| !p.trim().is_empty())
    {
        s.push_str("相談の内容:\n");
        s.push_str(p.trim());
        s.push_str("\n\nここから始めてください。\n\n");
    }
    s.push_str(
        "対話で次の3つだけを聞き出してください（解決策や選択肢はまだ出さないこと）:\n\
         - 課題 (issue): 決めなければならないこと。症状ではなく決定点として、短く。\n\
         - 背景と目的 (context): なぜ今それを決めるのか、何がかかっているのか。\n\
         - 制約 (constraints): 変えられない・変えたくない条件（予算、期限、技術、人）。\n\n\
         相手がすでに明確なら深掘りは不要です。質問は一度に一つか二つ。\n\
         3つが揃ったら、必ず define_issue ツールで登録してください: \
         {\"issue\": …, \"context\": …, \"constraints\": …}（title / description でも可）。\n\
         登録後は get_current_status で確認し、widen-options に進みます。\n\
         ユーザーへの返答は日本語で。\n",
    );
    s
}

fn widen_options(_: &Map<String, Value>) -> String {
    "WRAP の Widen your options（選択肢を広げる）を進めます。\n\n\
     1. get_current_status で現在の課題・制約・登録済みの選択肢を確認する。\n\
     2. 「するか、しないか」の二択を疑い、カテゴリーから異なる選択肢を出す。「最適化」「強化」\
        のような抽象語だけの案は選択肢にしない。誰が・何を・どうするかが分かる具体的な案にする。\n\
     3. 広げ方の例:\n\
        - ラダリング: 各案で本当に得たいものは何かを問い、それを別の手段で得る案を足す。\n\
        - 類推: 同じ問題を解いた他の分野・チーム・製品を調べ、その解決策を持ち込む。\n\
        - 消去テスト: 今の案がすべて使えないとしたら何をするかを考える。\n\
        - AND 思考: 「A か B か」ではなく「A も B も」を試す。\n\
     4. register_options で選択肢を登録する（3件以上、各案は短く、補足は supplementaryInfo に）。\
        どの広げ方を終えたかは widenOptionsStep（initial_registered, laddered, \
        analogical_research_done, elimination_tested, fixed）で伝える。\n\
     5. 不明な点はユーザーに質問し、答えに応じて選択肢を更新する。選択肢が固まったら \
        make_tripwire で各案の撤退基準を決める。\n"
        .into()
}

fn find(name: &str) -> Option<&'static Prompt> {
    PROMPTS
        .iter()
        .find(|p| p.name == name || p.aliases.contains(&name))
}

/// The `prompts/list` result.
pub fn list() -> Value {
    let prompts: Vec<Value> = PROMPTS
        .iter()
        .map(|p| {
            json!({
                "name": p.name,
                "description": p.description,
                "arguments": p.arguments.iter().map(|(n, d, r)| json!({
                    "name": n, "description": d, "required": r
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({ "prompts": prompts })
}

/// What is wrong with a `prompts/get` request (the caller's mistake: -32602).
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("prompts/get needs a string 'name'")]
    NoName,
    /// `name` is shortened to 100 characters.
    #[error("Unknown prompt: {name}; known: {}", known())]
    Unknown { name: String },
    #[error("'arguments' must be an object")]
    ArgumentsNotObject,
    #[error("prompt {prompt} takes no argument '{arg}'")]
    NoSuchArgument { prompt: &'static str, arg: String },
    #[error("prompt argument '{0}' must be a string")]
    NotString(String),
}

/// The prompts' names, for the error naming an unknown one.
fn known() -> String {
    PROMPTS
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `prompts/get` result, or what is wrong with the request.
pub fn get(params: &Map<String, Value>) -> Result<Value, PromptError> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or(PromptError::NoName)?;
    let p = find(name).ok_or_else(|| PromptError::Unknown {
        name: crate::jsonrpc::shorten(name, 100).to_string(),
    })?;
    let args = match params.get("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(o)) => o.clone(),
        Some(_) => return Err(PromptError::ArgumentsNotObject),
    };
    for (k, v) in &args {
        if !p.arguments.iter().any(|(n, _, _)| n == k) {
            return Err(PromptError::NoSuchArgument {
                prompt: p.name,
                arg: k.clone(),
            });
        }
        if !v.is_string() {
            return Err(PromptError::NotString(k.clone()));
        }
    }
    Ok(json!({
        "description": p.description,
        "messages": [{"role": "user", "content": {"type": "text", "text": (p.render)(&args)}}],
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_renders_both_prompts() {
        let l = list();
        let names: Vec<_> = l["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["identify-issue", "widen-options"]);
        assert_eq!(l["prompts"][0]["arguments"][0]["name"], "problem");
        let args = |v: Value| v.as_object().unwrap().clone();
        let r = get(&args(
            json!({"name": "identify-issue", "arguments": {"problem": "DBをどれにするか"}}),
        ))
        .unwrap();
        let t = r["messages"][0]["content"]["text"].as_str().unwrap();
        assert!(
            t.contains("DBをどれにするか") && t.contains("define_issue"),
            "{t}"
        );
        assert_eq!(r["messages"][0]["role"], "user");
        // The original's name works too; without a problem the problem block is absent.
        let r = get(&args(json!({"name": "identify-the-issue"}))).unwrap();
        assert!(!r["messages"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("相談の内容"));
        let r = get(&args(json!({"name": "widen-options", "arguments": {}}))).unwrap();
        assert!(r["messages"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("register_options"));
        assert!(get(&args(json!({"name": "nope"})))
            .unwrap_err()
            .to_string()
            .contains("identify-issue"));
        assert!(get(&args(
            json!({"name": "widen-options", "arguments": {"x": "1"}})
        ))
        .is_err());
        assert!(get(&args(
            json!({"name": "identify-issue", "arguments": {"problem": 1}})
        ))
        .is_err());
        assert!(get(&args(json!({}))).is_err());
    }
}
