//! `read_branch_core_files {branch}` — the branch bank's core files (`branchContext.md`,
//! `activeContext.md`, `systemPatterns.md`, `progress.md`), as in read_context's `branchMemory`.

use crate::memory_bank::{Language, Scope};
use crate::tools::{memory_bank, parse_args, schema_of, Ctx, Run, ToolDef, ToolError, ToolOutput};
use serde_json::{Map, Value};

bank_args! {
    pub struct Args {
        /// The git branch ("feature/x" is kept in branch-memory-bank/feature-x).
        pub branch: String,
        /// Language code (en, ja or zh) of the notes; default "ja".
        #[serde(default = "crate::memory_bank::default_language")]
        #[schemars(extend("enum" = ["en", "ja", "zh"]))]
        pub language: String,
    }
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "read_branch_core_files",
        aliases: &[],
        description: "Read the core files of a branch's memory bank. Returns {\"branchMemory\": \
                      {file: {path, content, tags, lastModified}}} like read_context, with \
                      `notes` when the bank or a core file does not exist yet.",
        input_schema: schema_of::<Args>(),
        output_schema: Some(super::read_context::section_schema()),
        run: Run::State(run),
    }
}

pub(crate) fn section(
    bank: &crate::memory_bank::Bank,
    scope: Scope,
    language: &str,
    key: &str,
) -> Result<Value, ToolError> {
    let lang = Language::parse(language)?;
    let (v, notes) = crate::tools::memory_bank::read_context::core_section(bank, scope, lang)?;
    let mut m = Map::new();
    m.insert(key.into(), v);
    if !notes.is_empty() {
        m.insert(
            "notes".into(),
            Value::Array(notes.into_iter().map(Value::String).collect()),
        );
    }
    Ok(Value::Object(m))
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let args: Args = match parse_args("read_branch_core_files", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    crate::tools::blocking(move || {
        let bank = memory_bank(&ctx)?;
        Ok(ToolOutput::json(section(
            &bank,
            Scope::Branch(&args.branch),
            &args.language,
            "branchMemory",
        )?))
    })
}

#[cfg(test)]
mod tests {
    use crate::tools::testutil::*;
    use serde_json::json;

    #[test]
    fn core_files_of_a_branch_through_the_server() {
        let (d, bank) = seeded_bank("feature/a");
        let s = TestServer::new(bank.root.parent().unwrap(), d.path());
        let r = s.call("read_branch_core_files", json!({"branch": "feature/a"}));
        assert!(!is_error(&r), "{r}");
        let m = r["structuredContent"]["branchMemory"].as_object().unwrap();
        assert_eq!(m.len(), 4);
        assert_eq!(m["progress.md"]["tags"], json!(["core", "progress"]));
        assert!(r["structuredContent"].get("notes").is_none());
        // The text content carries the same JSON.
        let t: serde_json::Value = serde_json::from_str(text_of(&r)).unwrap();
        assert_eq!(t, r["structuredContent"]);

        let r = s.call("read_branch_core_files", json!({"branch": "nope"}));
        assert!(!is_error(&r), "{r}");
        assert_eq!(r["structuredContent"]["branchMemory"], json!({}));
        assert!(r["structuredContent"]["notes"][0]
            .as_str()
            .unwrap()
            .contains("nope"));

        let r = s.call("read_branch_core_files", json!({"branch": ".."}));
        assert!(
            is_error(&r) && text_of(&r).contains("invalid branch name"),
            "{r}"
        );
        let r = s.call("read_branch_core_files", json!({"branch": ""}));
        assert!(is_error(&r) && text_of(&r).contains("empty"), "{r}");
        let r = s.call("read_branch_core_files", json!({}));
        assert_eq!(r["error"]["code"], -32602, "{r}");
    }
}
