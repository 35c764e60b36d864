//! Memory bank tools (context family): rules, core files, documents, search, branches.

pub mod get_recent_branches;
pub mod list_memory_bank_documents;
pub mod read_branch_core_files;
pub mod read_branch_memory_bank;
pub mod read_context;
pub mod read_document;
pub mod read_global_core_files;
pub mod read_global_memory_bank;
pub mod read_rules;
pub mod search_documents_by_tags;
pub mod write_branch_memory_bank;
pub mod write_document;
pub mod write_global_memory_bank;

use crate::memory_bank::{Edit, Language, Scope};
use crate::tools::{blocking, memory_bank, Ctx, ToolError, ToolFuture, ToolOutput};

/// The arguments of the tools that take only a language (`read_rules`,
/// `read_global_core_files`).
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LanguageArgs {
    /// Language code (en, ja or zh); default "ja".
    #[serde(default = "crate::memory_bank::default_language")]
    #[schemars(extend("enum" = ["en", "ja", "zh"]))]
    pub language: String,
    /// The original server's bank directory (t3ta/memory-bank-mcp-server's `docs`): accepted
    /// and ignored; the bank is the one configured (setup / MEMORY_BANK_ROOT).
    #[serde(default)]
    pub docs: Option<String>,
}

/// The body of `write_global_memory_bank` / `write_branch_memory_bank`: a plain `content` is a
/// whole-document write; `patches` or `tags` (the original server's v3 edits) go through
/// write_document's edit and answer with the same outcome. `tool` names the caller in errors.
pub(crate) fn write_or_edit(
    ctx: Ctx,
    tool: &'static str,
    branch: Option<String>,
    path: String,
    edit: Edit,
    language: String,
) -> ToolFuture {
    match edit {
        Edit {
            content: Some(serde_json::Value::String(content)),
            patches: None,
            tags: None,
        } => write_bank_document(ctx, branch, path, content, language),
        edit => blocking(move || {
            let lang = Language::parse(&language)?;
            let bank = memory_bank(&ctx)?;
            let edited = bank
                .edit(Scope::of(&branch), &path, edit, lang)
                .map_err(|e| match ToolError::from(e) {
                    ToolError::InvalidParams(m) => ToolError::InvalidParams(format!("{tool}: {m}")),
                    e => e,
                })?;
            ToolOutput::of(&edited.outcome)
        }),
    }
}

/// Reads `path` from `branch`'s memory bank (the global bank when `None`); the shared body of
/// `read_branch_memory_bank` and `read_global_memory_bank`.
pub fn read_bank_document(ctx: Ctx, branch: Option<String>, path: String) -> ToolFuture {
    blocking(move || {
        let bank = memory_bank(&ctx)?;
        let doc = bank.read(Scope::of(&branch), &path)?;
        // People (and prompts written for the original server) read the document itself as
        // the text; programs get {path, content, tags, lastModified} as structuredContent.
        let text = doc.content.clone();
        let mut out = ToolOutput::json(doc.into_value());
        out.text = Some(text);
        Ok(out)
    })
}

/// Writes `content` to `path` in `branch`'s memory bank (the global bank when `None`), seeding
/// a new bank from templates in `language`; the shared body of `write_branch_memory_bank` and
/// `write_global_memory_bank`.
pub fn write_bank_document(
    ctx: Ctx,
    branch: Option<String>,
    path: String,
    content: String,
    language: String,
) -> ToolFuture {
    blocking(move || {
        let lang = Language::parse(&language)?;
        let bank = memory_bank(&ctx)?;
        let out = bank.write(Scope::of(&branch), &path, &content, lang)?;
        ToolOutput::of(&out)
    })
}
