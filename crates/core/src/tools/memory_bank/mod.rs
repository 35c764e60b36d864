//! Memory bank tools (context family): rules, core files, documents, search, branches.

/// A memory bank tool's arguments: `struct Name { fields }`, closed to unknown fields, then
/// the fields these tools share, each written once here so that their schemas cannot drift
/// apart:
/// - `v3` first (read_document, write_document): where the document is (`scope`, `branch`);
///   those tools name their own `docs`;
/// - `write` last (write_branch_memory_bank, write_global_memory_bank): the whole content or
///   the edit, and the language a new bank is seeded in ([`BankWrite`]);
/// - otherwise last: the original server's `docs`, which every bank tool accepts.
macro_rules! bank_args {
    ($(#[$m:meta])* pub struct $name:ident { $($field:tt)* } v3) => {
        bank_args!(@emit $(#[$m])* $name {
            /// "branch" or "global".
            pub scope: crate::memory_bank::DocScope,
            /// The branch (scope "branch"); the project's current git branch when omitted.
            #[serde(default)]
            pub branch: Option<String>,
            $($field)*
        });
    };
    ($(#[$m:meta])* pub struct $name:ident { $($field:tt)* } write) => {
        bank_args!($(#[$m])* pub struct $name {
            $($field)*
            /// The complete new content (a write replaces the whole document). Not with `patches`.
            #[serde(default)]
            pub content: Option<String>,
            /// JSON Patch operations (RFC 6902) for a JSON document, applied all or nothing (as in
            /// write_document). Not with `content`.
            #[serde(default)]
            pub patches: Option<crate::memory_bank::edit::Patches>,
            /// Sets the document's tags (as in write_document).
            #[serde(default)]
            pub tags: Option<Vec<String>>,
            /// Language (en, ja or zh) of the templates a new bank is seeded from; default "ja".
            #[serde(default = "crate::memory_bank::default_language")]
            #[schemars(extend("enum" = ["en", "ja", "zh"]))]
            pub language: String,
        });

        impl crate::tools::memory_bank::BankWrite for $name {
            fn into_write(self) -> (String, crate::memory_bank::Edit, String) {
                let edit = crate::memory_bank::Edit {
                    content: self.content.map(serde_json::Value::String),
                    patches: self.patches,
                    tags: self.tags,
                };
                (self.path, edit, self.language)
            }
        }
    };
    ($(#[$m:meta])* pub struct $name:ident { $($field:tt)* }) => {
        bank_args!(@emit $(#[$m])* $name {
            $($field)*
            /// The original server's bank directory (t3ta/memory-bank-mcp-server's `docs`): accepted
            /// and ignored; the bank is the one configured (setup / MEMORY_BANK_ROOT).
            #[serde(default)]
            pub docs: Option<String>,
        });
    };
    (@emit $(#[$m:meta])* $name:ident { $($field:tt)* }) => {
        #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        $(#[$m])*
        pub struct $name {
            $($field)*
        }
    };
}

/// The description of read_branch_memory_bank and read_global_memory_bank, reading from
/// `$bank`.
macro_rules! read_description {
    ($bank:literal) => {
        concat!(
            "Read a document from ",
            $bank,
            ". `path` is relative to the bank; paths leading outside it are refused. Returns \
             {path, content, tags, lastModified}."
        )
    };
}

/// The description of write_branch_memory_bank and write_global_memory_bank, writing to
/// `$bank`, which has no bank yet when `$none`.
macro_rules! write_description {
    ($bank:literal, $none:literal) => {
        concat!(
            "Write a document to ",
            $bank,
            " (atomically; the content replaces the whole document). Creates the bank when ",
            $none,
            " none yet, seeding the missing core files from templates in `language`."
        )
    };
}

/// The description of the memory bank v3 tools (read_document, write_document): `$verb`
/// (“read a document from”) which bank, then `$rest`.
macro_rules! v3_description {
    ($verb:literal, $rest:literal) => {
        concat!(
            "Memory bank v3: ",
            $verb,
            " the global bank (scope \"global\") or a branch's bank (scope \"branch\"; branch \
             defaults to the current git branch). ",
            $rest
        )
    };
}

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

use crate::memory_bank::{branch_for, DocScope, Edit, Language, Scope};
use crate::tools::{
    blocking, memory_bank, parse_args, ready, Ctx, ToolError, ToolFuture, ToolOutput,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

bank_args! {
    /// The arguments of the tools that take only a language (`read_rules`,
    /// `read_global_core_files`).
    pub struct LanguageArgs {
        /// Language code (en, ja or zh); default "ja".
        #[serde(default = "crate::memory_bank::default_language")]
        #[schemars(extend("enum" = ["en", "ja", "zh"]))]
        pub language: String,
    }
}

/// What a write tool's arguments (`bank_args! { … } write`) ask to write: the path, the
/// content or edit, and the language a new bank is seeded in.
pub(crate) trait BankWrite {
    fn into_write(self) -> (String, Edit, String);
}

/// The run of write_branch_memory_bank and write_global_memory_bank: `args` decoded as `A`,
/// written to the bank of `branch(&args)` ([`write_or_edit`]).
pub(crate) fn run_write<A: BankWrite + DeserializeOwned>(
    ctx: Ctx,
    tool: &'static str,
    args: Value,
    branch: fn(&A) -> Option<String>,
) -> ToolFuture {
    let a: A = match parse_args(tool, args) {
        Ok(a) => a,
        Err(e) => return ready(Err(e)),
    };
    let branch = branch(&a);
    let (path, edit, language) = a.into_write();
    write_or_edit(ctx, tool, branch, path, edit, language)
}

/// The run of read_branch_memory_bank and read_global_memory_bank: `args` decoded as `A`, and
/// the document `at(args)` names (branch, path) read ([`read_bank_document`]).
pub(crate) fn run_read<A: DeserializeOwned>(
    ctx: Ctx,
    tool: &'static str,
    args: Value,
    at: fn(A) -> (Option<String>, String),
) -> ToolFuture {
    match parse_args(tool, args) {
        Ok(a) => {
            let (branch, path) = at(a);
            read_bank_document(ctx, branch, path)
        }
        Err(e) => ready(Err(e)),
    }
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

/// The branch a v3 tool (read_document, write_document) acts on: `None` for the global bank,
/// else `branch`, else the project's current git branch ([`branch_for`]).
pub(crate) fn doc_branch(
    ctx: &Ctx,
    scope: DocScope,
    branch: Option<String>,
) -> Result<Option<String>, ToolError> {
    branch_for(scope, branch, || {
        ctx.project_root_dir().map_err(ToolError::from)
    })
}

/// How the v3 tools' answers name the bank of `branch`: "branch" or "global".
pub(crate) fn scope_name(branch: &Option<String>) -> &'static str {
    if branch.is_some() {
        "branch"
    } else {
        "global"
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
