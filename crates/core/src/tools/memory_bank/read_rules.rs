//! `read_rules {language}` — how an agent should read and keep the memory bank: the project's
//! `<bank root>/rules-<language>.md`, else the rules shipped with the plugin.

use crate::memory_bank::Language;
use crate::tools::{memory_bank, parse_args, schema_of, Ctx, Run, ToolDef, ToolOutput};
use serde_json::{Map, Value};

/// The tool's arguments (a language).
pub type Args = memory_bank::LanguageArgs;

pub fn def() -> ToolDef {
    ToolDef {
        name: "read_rules",
        aliases: &[],
        description: "Read the memory bank rules (how to read and keep the memory bank) in en \
                      or ja. Returns {\"rules\": {\"content\"}}, the rules section of \
                      read_context.",
        input_schema: schema_of::<Args>(),
        output_schema: Some(super::read_context::section_schema()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let args: Args = match parse_args("read_rules", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    crate::tools::blocking(move || {
        let lang = Language::parse(&args.language)?;
        let bank = memory_bank(&ctx)?;
        let mut m = Map::new();
        let rules = crate::tools::memory_bank::read_context::rules_section(&bank, lang)?;
        // The text content is the rules' Markdown, as the original server answered it.
        let text = rules
            .get("content")
            .and_then(Value::as_str)
            .map(String::from);
        m.insert("rules".into(), rules);
        let mut out = ToolOutput::json(Value::Object(m));
        out.text = text;
        Ok(out)
    })
}

#[cfg(test)]
mod tests {
    use crate::tools::testutil::*;
    use serde_json::json;

    #[test]
    fn rules_by_language_and_errors() {
        let (d, bank) = seeded_bank("main");
        let project = bank.root.parent().unwrap();
        let s = TestServer::new(project, d.path());
        let r = s.call("read_rules", json!({"language": "en"}));
        assert!(!is_error(&r), "{r}");
        assert!(r["structuredContent"]["rules"]["content"]
            .as_str()
            .unwrap()
            .contains("read_context"));
        // Without `language`: the configured one (English unless the editor says otherwise).
        let r = s.call("read_rules", json!({}));
        assert!(r["structuredContent"]["rules"]["content"]
            .as_str()
            .unwrap()
            .contains("Memory bank rules"));
        let r = s.call("read_rules", json!({"language": "ja"}));
        assert!(r["structuredContent"]["rules"]["content"]
            .as_str()
            .unwrap()
            .contains("メモリバンクのルール"));
        // The text is the Markdown itself; the JSON stays in structuredContent.
        assert_eq!(
            text_of(&r),
            r["structuredContent"]["rules"]["content"].as_str().unwrap()
        );
        assert!(text_of(&r).starts_with('#'), "{r}");
        let r = s.call("read_rules", json!({"language": "de"}));
        assert!(is_error(&r) && text_of(&r).contains("'de'"), "{r}");
        let r = s.call("read_rules", json!({"language": 1}));
        assert_eq!(r["error"]["code"], -32602, "{r}");
    }
}
