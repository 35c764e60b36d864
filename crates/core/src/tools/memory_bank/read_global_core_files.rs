//! `read_global_core_files {}` — the global bank's core files, as in read_context's
//! `globalMemory`.

use crate::memory_bank::Scope;
use crate::tools::{memory_bank, parse_args, schema_of, Ctx, Run, ToolDef, ToolOutput};
use serde_json::Value;

/// The tool's arguments (a language).
pub type Args = memory_bank::LanguageArgs;

pub fn def() -> ToolDef {
    ToolDef {
        name: "read_global_core_files",
        aliases: &[],
        description: "Read the core files of the global memory bank (architecture, \
                      coding-standards, domain-models, glossary, tech-stack, user-guide). \
                      Returns {\"globalMemory\": {file: {path, content, tags, lastModified}}}.",
        input_schema: schema_of::<Args>(),
        output_schema: Some(super::read_context::section_schema()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let args: Args = match parse_args("read_global_core_files", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    crate::tools::blocking(move || {
        let bank = memory_bank(&ctx)?;
        Ok(ToolOutput::json(
            crate::tools::memory_bank::read_branch_core_files::section(
                &bank,
                Scope::Global,
                &args.language,
                "globalMemory",
            )?,
        ))
    })
}

#[cfg(test)]
mod tests {
    use crate::tools::testutil::*;
    use serde_json::json;

    #[test]
    fn global_core_files_and_a_missing_bank() {
        let (d, bank) = seeded_bank("main");
        let s = TestServer::new(bank.root.parent().unwrap(), d.path());
        let r = s.call("read_global_core_files", json!({}));
        let m = r["structuredContent"]["globalMemory"].as_object().unwrap();
        assert_eq!(m.len(), 6, "{r}");
        assert_eq!(m["tech-stack.md"]["path"], "tech-stack.md");
        std::fs::remove_dir_all(bank.global_dir()).unwrap();
        let r = s.call("read_global_core_files", json!({"language": "en"}));
        assert!(!is_error(&r), "{r}");
        assert_eq!(r["structuredContent"]["globalMemory"], json!({}));
        assert!(r["structuredContent"]["notes"][0]
            .as_str()
            .unwrap()
            .contains("The global memory bank does not exist yet"));
    }
}
