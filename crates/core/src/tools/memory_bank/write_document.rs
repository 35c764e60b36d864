//! `write_document {scope, branch?, path, content? | patches?, tags?, returnContent?, language?}`
//! — memory bank v3's one write tool (t3ta/memory-bank-mcp-server): a document of the global
//! bank or of a branch's bank (the current git branch when `branch` is omitted).
//!
//! * `content` replaces the document (a string, or a JSON value written as pretty JSON).
//! * `patches` edits a JSON document with JSON Patch (RFC 6902, the `json-patch` crate): every
//!   operation is applied to a copy in memory and the document is written once, atomically, only
//!   when all of them succeed — a failing `test` (or any other failing operation) writes
//!   nothing and says which operation failed and why.
//! * `tags` sets the document's tags: `metadata.tags` of a JSON document, the `tags:` line of
//!   a Markdown one (added under the first heading when there is none).
//!
//! Built on the memory bank's public API ([`crate::memory_bank::Bank::read`] / `write`), so the
//! bank's confinement and atomic writes apply unchanged. `docs` (the original's bank directory)
//! is accepted and ignored: the bank is the one the person configured.

use crate::memory_bank::document::TAG_LINES;
use crate::memory_bank::{Language, Scope, WriteOutcome};
use crate::tools::{memory_bank, parse_args, schema_of, Ctx, ToolDef, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Which bank a v3 document tool works on.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum DocScope {
    Branch,
    Global,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Args {
    /// "branch" or "global".
    pub scope: DocScope,
    /// The branch (scope "branch"); the project's current git branch when omitted.
    #[serde(default)]
    pub branch: Option<String>,
    /// The document's path relative to the bank, e.g. "progress.md" or "data/config.json".
    pub path: String,
    /// The whole new content: a string, or a JSON value (written as pretty JSON). Not with
    /// `patches`.
    #[serde(default)]
    pub content: Option<Value>,
    /// JSON Patch operations (RFC 6902) for a JSON document: [{op, path, value?, from?}],
    /// applied all or nothing. Not with `content`.
    #[serde(default)]
    pub patches: Option<Vec<Value>>,
    /// The document's tags (without "#").
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    /// Return the written content as well (default false).
    #[serde(default)]
    pub return_content: bool,
    /// Language (en, ja or zh) of the templates a new bank is seeded from; default "ja".
    #[serde(default = "crate::tools::default_language")]
    #[schemars(extend("enum" = ["en", "ja", "zh"]))]
    pub language: String,
    /// The original server's bank directory: accepted and ignored (the bank is the one
    /// configured in setup / MEMORY_BANK_ROOT).
    #[serde(default)]
    pub docs: Option<String>,
}

/// The document as the original answered it.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DocData {
    pub path: String,
    /// The content written (only with `returnContent`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    pub tags: Vec<String>,
    pub last_modified: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Written {
    pub success: bool,
    /// "branch" or "global".
    pub scope: &'static str,
    /// The branch written to (scope "branch").
    pub branch: Option<String>,
    pub data: DocData,
    /// What the write did (created, bankCreated, seeded, bytesWritten, …).
    pub outcome: WriteOutcome,
    /// JSON Patch operations applied.
    pub patches_applied: usize,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "write_document",
        aliases: &[],
        description: "Memory bank v3: write a document to the global bank (scope \"global\") \
                      or a branch's bank (scope \"branch\"; branch defaults to the current git \
                      branch). Give the whole `content`, or `patches` (JSON Patch, RFC 6902) to \
                      edit a JSON document: all operations apply or none (a failing \"test\" \
                      writes nothing). `tags` sets the document's tags. Returns {success, data: \
                      {path, tags, lastModified, content if returnContent}}.",
        input_schema: schema_of::<Args>(),
        output_schema: Some(schema_of::<Written>()),
        run,
    }
}

/// Why a document cannot be written as asked: the branch is not known, the tags or patches do
/// not fit the document. Said to the model as the tool's failure.
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    #[error(
        "cannot detect the branch: '{}' is not in a git repository; pass `branch`",
        .0.display()
    )]
    NotInRepository(PathBuf),
    #[error(
        "cannot detect the branch: '{}' is not a gitdir file; pass `branch`",
        .0.display()
    )]
    NotGitdirFile(PathBuf),
    #[error("cannot detect the branch: HEAD is detached (not on a branch); pass `branch`")]
    Detached,
    /// A git metadata file cannot be read.
    #[error("cannot detect the branch: {0}")]
    GitFile(crate::capfs::CapError),
    #[error("'{path}' is not valid JSON, so its tags cannot be set: {err}")]
    TagsNotJson {
        path: String,
        err: serde_json::Error,
    },
    #[error("'{0}' is not a JSON object, so it has no metadata.tags to set")]
    TagsNotObject(String),
    #[error("'{0}': metadata is not an object")]
    MetadataNotObject(String),
    #[error(
        "refused: {0} patch operations is more than the limit of {MAX_PATCH_OPS} per call — no \
         change was written; split the edit or write the whole `content`"
    )]
    TooManyOperations(usize),
    #[error(
        "'{path}' is not a JSON document ({err}); JSON Patch edits JSON documents only — write \
         Markdown with `content`"
    )]
    NotJsonDocument {
        path: String,
        err: serde_json::Error,
    },
    #[error("invalid patches: {0} (each needs op, path, and value or from as RFC 6902 says)")]
    InvalidPatches(serde_json::Error),
    /// Operation `number` (1-based), `shown` as given, failed; nothing was written.
    #[error("patch operation #{number} {shown} failed: {why} — no change was written")]
    OperationFailed {
        number: usize,
        shown: Value,
        why: OperationFailure,
    },
    #[error(
        "refused: the patched document would be {0} bytes, more than the document limit of \
         {max} bytes — no change was written",
        max = crate::memory_bank::MAX_DOCUMENT_BYTES
    )]
    TooLarge(usize),
    /// The document cannot be encoded as JSON text.
    #[error("{0}")]
    Encode(serde_json::Error),
}

/// Why one JSON Patch operation failed.
#[derive(Debug, thiserror::Error)]
pub enum OperationFailure {
    /// As RFC 6902 says (a failing `test`, a path that does not exist, …).
    #[error(transparent)]
    Patch(json_patch::PatchErrorKind),
    #[error(
        "the document would nest deeper than {} levels, the limit for JSON (as for incoming \
         messages)",
        crate::json_limits::MAX_DEPTH
    )]
    TooDeep,
    #[error("the document would grow past the document limit of {MAX_PATCH_BYTES} bytes")]
    TooLarge,
}

/// A document that cannot be written is the tool's failure, said to the model as it is.
impl crate::error::Fault for DocumentError {}

/// The project's current git branch: `HEAD` of the repository holding `root` (a `.git`
/// directory, or a `.git` file pointing at a worktree's git directory).
pub fn current_branch(root: &Path) -> Result<String, DocumentError> {
    let repo = crate::project::find_git_root(root)
        .ok_or_else(|| DocumentError::NotInRepository(root.to_path_buf()))?;
    let dotgit = repo.join(".git");
    let gitdir = if dotgit.is_dir() {
        dotgit
    } else {
        let text = read_small(&dotgit)?;
        let rel = text
            .trim()
            .strip_prefix("gitdir:")
            .ok_or_else(|| DocumentError::NotGitdirFile(dotgit.clone()))?
            .trim();
        repo.join(rel)
    };
    let head = read_small(&gitdir.join("HEAD"))?;
    match head.trim().strip_prefix("ref: refs/heads/") {
        Some(b) if !b.is_empty() => Ok(b.to_string()),
        _ => Err(DocumentError::Detached),
    }
}

/// A small file's text (git metadata: a regular file, at most 4 KiB, never blocking).
fn read_small(p: &Path) -> Result<String, DocumentError> {
    let bytes = crate::capfs::read_small_file(p, 4096).map_err(DocumentError::GitFile)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The branch a v3 call means: the given one, or the current git branch.
pub fn branch_for(
    ctx: &Ctx,
    scope: DocScope,
    branch: Option<String>,
) -> Result<Option<String>, ToolError> {
    match scope {
        DocScope::Global => Ok(None),
        DocScope::Branch => match branch.filter(|b| !b.trim().is_empty()) {
            Some(b) => Ok(Some(b)),
            None => {
                let root = ctx.project_root_dir()?;
                Ok(Some(current_branch(&root)?))
            }
        },
    }
}

/// `content` with its tags set to `tags` (see the module docs).
pub fn with_tags(path: &str, content: &str, tags: &[String]) -> Result<String, DocumentError> {
    let clean: Vec<String> = tags
        .iter()
        .map(|t| t.trim().trim_start_matches('#').to_string())
        .filter(|t| !t.is_empty())
        .collect();
    if path.to_ascii_lowercase().ends_with(".json") {
        let mut v: Value =
            serde_json::from_str(content).map_err(|err| DocumentError::TagsNotJson {
                path: path.to_string(),
                err,
            })?;
        let Some(o) = v.as_object_mut() else {
            return Err(DocumentError::TagsNotObject(path.to_string()));
        };
        let meta = o
            .entry("metadata")
            .or_insert_with(|| Value::Object(Default::default()));
        let Some(m) = meta.as_object_mut() else {
            return Err(DocumentError::MetadataNotObject(path.to_string()));
        };
        m.insert("tags".into(), clean.into());
        return serde_json::to_string_pretty(&v).map_err(DocumentError::Encode);
    }
    let line = format!(
        "tags: {}",
        clean
            .iter()
            .map(|t| format!("#{t}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let mut lines: Vec<&str> = content.lines().collect();
    let existing = lines.iter().take(TAG_LINES).position(|l| {
        l.trim_start()
            .get(..5)
            .is_some_and(|h| h.eq_ignore_ascii_case("tags:"))
    });
    match existing {
        Some(i) => lines[i] = &line,
        None => match lines
            .iter()
            .take(TAG_LINES)
            .position(|l| l.starts_with("# "))
        {
            Some(h) => {
                lines.insert(h + 1, "");
                lines.insert(h + 2, &line);
            }
            None => {
                lines.insert(0, &line);
                lines.insert(1, "");
            }
        },
    }
    let mut out = lines.join("\n");
    if content.ends_with('\n') || content.is_empty() {
        out.push('\n');
    }
    Ok(out)
}

/// The most JSON Patch operations one call applies.
pub const MAX_PATCH_OPS: usize = 1000;

/// Applies RFC 6902 `patches` to the JSON document `content`, all or nothing, within limits:
/// at most [`MAX_PATCH_OPS`] operations, a document of at most
/// [`crate::memory_bank::MAX_DOCUMENT_BYTES`] (what the bank reads back) nested at most
/// [`crate::json_limits::MAX_DEPTH`] levels (the limit of incoming JSON). The operation count
/// is checked before anything is applied, the document after every operation: one operation
/// can at most double it (`copy`) or add the depth of its value and path (`add`, `move`), so
/// nothing far over a limit is ever built, and a violation names the limit and the operation.
pub fn apply_patches(
    path: &str,
    content: &str,
    patches: Vec<Value>,
) -> Result<String, DocumentError> {
    if patches.len() > MAX_PATCH_OPS {
        return Err(DocumentError::TooManyOperations(patches.len()));
    }
    let doc: Value =
        serde_json::from_str(content).map_err(|err| DocumentError::NotJsonDocument {
            path: path.to_string(),
            err,
        })?;
    let ops: json_patch::Patch = serde_json::from_value(Value::Array(patches.clone()))
        .map_err(DocumentError::InvalidPatches)?;
    // Applied to a copy, one operation at a time; any failure drops the copy (all or nothing).
    let mut work = doc;
    let mut limits = PatchBudget::new(&work);
    for (n, op) in ops.0.iter().enumerate() {
        let fail = |why: OperationFailure| DocumentError::OperationFailed {
            number: n + 1,
            shown: patches.get(n).cloned().unwrap_or(Value::Null),
            why,
        };
        limits.before(&work, op);
        json_patch::patch_unsafe(&mut work, std::slice::from_ref(op))
            .map_err(|e| fail(OperationFailure::Patch(e.kind)))?;
        limits.after(&work, op).map_err(fail)?;
    }
    let text = serde_json::to_string_pretty(&work).map_err(DocumentError::Encode)?;
    if text.len() as u64 > crate::memory_bank::MAX_DOCUMENT_BYTES {
        return Err(DocumentError::TooLarge(text.len()));
    }
    Ok(text)
}

/// Upper bounds of a document's depth and size while patches apply, cheap to keep per
/// operation; measured exactly (without recursion) only when a bound passes its limit.
struct PatchBudget {
    depth: usize,
    bytes: usize,
    /// Bytes of the value an operation is about to remove or replace.
    leaving: usize,
}

const MAX_PATCH_BYTES: usize = crate::memory_bank::MAX_DOCUMENT_BYTES as usize;

impl PatchBudget {
    fn new(doc: &Value) -> PatchBudget {
        let m = crate::json_limits::measure(doc, usize::MAX, usize::MAX);
        PatchBudget {
            depth: m.depth,
            bytes: m.bytes,
            leaving: 0,
        }
    }

    /// Before `op` applies to `doc`: what it removes (so the size bound can shrink).
    fn before(&mut self, doc: &Value, op: &json_patch::PatchOperation) {
        use json_patch::PatchOperation as Op;
        self.leaving = match op {
            Op::Remove(o) => doc.pointer(o.path.as_str()),
            Op::Replace(o) => doc.pointer(o.path.as_str()),
            _ => None,
        }
        .map_or(0, |v| measure(v).bytes);
    }

    /// After `op` applied to `doc`: the new bounds, or the limit passed.
    fn after(
        &mut self,
        doc: &Value,
        op: &json_patch::PatchOperation,
    ) -> Result<(), OperationFailure> {
        use json_patch::PatchOperation as Op;
        let key = |p: &json_patch::jsonptr::Pointer| p.last().map_or(0, |t| t.encoded().len() + 3);
        let grow = match op {
            Op::Add(o) => {
                let m = measure(&o.value);
                Some((o.path.count() + m.depth, m.bytes + key(&o.path)))
            }
            Op::Replace(o) => {
                let m = measure(&o.value);
                Some((o.path.count() + m.depth, m.bytes))
            }
            // The copy is as large and as deep as its source.
            Op::Copy(o) => doc
                .pointer(o.from.as_str())
                .map(measure)
                .map(|m| (o.path.count() + m.depth, m.bytes + key(&o.path))),
            // The value moved keeps its size; its depth was at most the bound less `from`'s.
            Op::Move(o) => Some((
                o.path.count() + self.depth.saturating_sub(o.from.count()),
                key(&o.path),
            )),
            Op::Remove(_) | Op::Test(_) => Some((0, 0)),
        };
        let (depth, bytes) = grow.unwrap_or((usize::MAX, usize::MAX));
        self.depth = self.depth.max(depth);
        self.bytes = self
            .bytes
            .saturating_sub(self.leaving)
            .saturating_add(bytes);
        if self.depth > crate::json_limits::MAX_DEPTH || self.bytes > MAX_PATCH_BYTES {
            let m =
                crate::json_limits::measure(doc, crate::json_limits::MAX_DEPTH, MAX_PATCH_BYTES);
            if m.depth > crate::json_limits::MAX_DEPTH {
                return Err(OperationFailure::TooDeep);
            }
            if m.bytes > MAX_PATCH_BYTES {
                return Err(OperationFailure::TooLarge);
            }
            self.depth = m.depth;
            self.bytes = m.bytes;
        }
        Ok(())
    }
}

/// Measures a value of a document being patched (its depth is already bounded).
fn measure(v: &Value) -> crate::json_limits::Measure {
    crate::json_limits::measure(v, usize::MAX, usize::MAX)
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let a: Args = match parse_args("write_document", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    if a.content.is_some() && a.patches.is_some() {
        return crate::tools::ready(Err(ToolError::InvalidParams(
            "write_document: give `content` or `patches`, not both".into(),
        )));
    }
    if a.content.is_none() && a.patches.is_none() && a.tags.is_none() {
        return crate::tools::ready(Err(ToolError::InvalidParams(
            "write_document: give `content`, `patches` or `tags`".into(),
        )));
    }
    crate::tools::blocking(move || {
        let branch = branch_for(&ctx, a.scope, a.branch)?;
        let w = perform(
            &ctx,
            branch,
            &a.path,
            Edit {
                content: a.content,
                patches: a.patches,
                tags: a.tags,
            },
            a.return_content,
            &a.language,
        )?;
        ToolOutput::of(&w)
    })
}

/// What to write: the whole content, or patches, and/or tags.
pub struct Edit {
    pub content: Option<Value>,
    pub patches: Option<Vec<Value>>,
    pub tags: Option<Vec<String>>,
}

/// Writes `path` in `branch`'s bank (the global bank when `None`); the body of write_document
/// and of write_*_memory_bank called with `patches` or `tags`. Blocking.
pub fn perform(
    ctx: &Ctx,
    branch: Option<String>,
    path: &str,
    edit: Edit,
    return_content: bool,
    language: &str,
) -> Result<Written, ToolError> {
    let lang = Language::parse(language)?;
    let scope = match &branch {
        Some(b) => Scope::Branch(b),
        None => Scope::Global,
    };
    let bank = memory_bank(ctx)?;
    let mut patches_applied = 0;
    let mut content = match (edit.content, edit.patches) {
        (Some(_), Some(_)) => {
            return Err(ToolError::InvalidParams(
                "give `content` or `patches`, not both".into(),
            ))
        }
        (Some(Value::String(s)), None) => s,
        (Some(v), None) => serde_json::to_string_pretty(&v).map_err(DocumentError::Encode)?,
        (None, Some(p)) => {
            let old = bank.read(scope, path)?;
            patches_applied = p.len();
            apply_patches(path, &old.content, p)?
        }
        (None, None) if edit.tags.is_some() => bank.read(scope, path)?.content,
        (None, None) => {
            return Err(ToolError::InvalidParams(
                "give `content`, `patches` or `tags`".into(),
            ))
        }
    };
    if let Some(tags) = &edit.tags {
        content = with_tags(path, &content, tags)?;
    }
    let outcome = bank.write(scope, path, &content, lang)?;
    Ok(Written {
        success: true,
        scope: if branch.is_some() { "branch" } else { "global" },
        data: DocData {
            path: outcome.path.clone(),
            content: return_content.then_some(content),
            tags: outcome.tags.clone(),
            last_modified: outcome.last_modified.clone(),
        },
        branch,
        outcome,
        patches_applied,
    })
}

#[cfg(test)]
mod tests {
    use super::MAX_PATCH_OPS;
    use crate::tools::testutil::*;
    use serde_json::json;

    fn git_project(branch: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().canonicalize().unwrap().join("p");
        std::fs::create_dir_all(p.join(".git")).unwrap();
        std::fs::write(p.join(".git/HEAD"), format!("ref: refs/heads/{branch}\n")).unwrap();
        (d, p)
    }

    #[test]
    fn writes_by_scope_detects_the_branch_and_sets_tags() {
        let (d, p) = git_project("feature/login");
        let s = TestServer::new(&p, d.path());
        let r = s.call(
            "write_document",
            json!({"scope": "branch", "path": "progress.md", "content": "# Progress\n\nhalf done\n",
                   "tags": ["progress", "#core"], "returnContent": true, "docs": "./docs", "language": "en"}),
        );
        assert!(!is_error(&r), "{r}");
        let sc = &r["structuredContent"];
        assert_eq!(sc["success"], true);
        assert_eq!(sc["branch"], "feature/login");
        assert_eq!(sc["data"]["tags"], json!(["progress", "core"]));
        assert_eq!(
            sc["data"]["content"],
            "# Progress\n\ntags: #progress #core\n\nhalf done\n"
        );
        let on_disk =
            std::fs::read_to_string(p.join("docs/branch-memory-bank/feature-login/progress.md"))
                .unwrap();
        assert_eq!(
            on_disk,
            "# Progress\n\ntags: #progress #core\n\nhalf done\n"
        );
        // Without returnContent the content is left out.
        let r = s.call(
            "write_document",
            json!({"scope": "global", "path": "data/config.json", "content": {"a": 1}, "tags": ["config"]}),
        );
        let sc = &r["structuredContent"];
        assert!(sc["data"].get("content").is_none(), "{r}");
        assert_eq!(sc["scope"], "global");
        assert_eq!(sc["branch"], json!(null));
        let v: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(p.join("docs/global-memory-bank/data/config.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(v, json!({"a": 1, "metadata": {"tags": ["config"]}}));
        // Tags alone retag an existing document (replacing the line).
        let r = s.call(
            "write_document",
            json!({"scope": "branch", "branch": "feature/login", "path": "progress.md", "tags": ["done"], "returnContent": true}),
        );
        assert_eq!(
            r["structuredContent"]["data"]["content"],
            "# Progress\n\ntags: #done\n\nhalf done\n"
        );
        // Bad calls.
        for (args, want) in [
            (
                json!({"scope": "global", "path": "x.md", "content": "a", "patches": []}),
                "not both",
            ),
            (json!({"scope": "global", "path": "x.md"}), "give `content`"),
            (
                json!({"scope": "both", "path": "x.md", "content": "a"}),
                "unknown variant",
            ),
        ] {
            let r = s.call("write_document", args);
            assert_eq!(r["error"]["code"], -32602, "{r}");
            assert!(
                r["error"]["message"].as_str().unwrap().contains(want),
                "{r}"
            );
        }
        let r = s.call(
            "write_document",
            json!({"scope": "global", "path": "../x.md", "content": "a"}),
        );
        assert!(is_error(&r), "{r}");
    }

    #[test]
    fn patches_apply_all_or_nothing_with_a_clear_error_on_a_failing_test() {
        let (d, p) = git_project("main");
        let s = TestServer::new(&p, d.path());
        s.call(
            "write_document",
            json!({"scope": "global", "path": "c.json", "content": {"version": 1, "items": ["a"]}}),
        );
        let file = p.join("docs/global-memory-bank/c.json");
        let r = s.call(
            "write_document",
            json!({"scope": "global", "path": "c.json", "returnContent": true, "patches": [
                {"op": "test", "path": "/version", "value": 1},
                {"op": "replace", "path": "/version", "value": 2},
                {"op": "add", "path": "/items/-", "value": "b"},
                {"op": "copy", "from": "/items/0", "path": "/first"},
            ]}),
        );
        assert!(!is_error(&r), "{r}");
        assert_eq!(r["structuredContent"]["patchesApplied"], 4);
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(v, json!({"version": 2, "items": ["a", "b"], "first": "a"}));
        let before = std::fs::read(&file).unwrap();
        // The second operation's test fails: the first (applied in memory) is not written.
        let r = s.call(
            "write_document",
            json!({"scope": "global", "path": "c.json", "patches": [
                {"op": "replace", "path": "/version", "value": 3},
                {"op": "test", "path": "/version", "value": 99},
            ]}),
        );
        assert!(is_error(&r), "{r}");
        let t = text_of(&r);
        assert!(
            t.contains("patch operation #2")
                && t.contains("test")
                && t.contains("no change was written"),
            "{t}"
        );
        assert_eq!(std::fs::read(&file).unwrap(), before);
        // A remove of a missing path, a malformed op, a Markdown target.
        let r = s.call("write_document", json!({"scope": "global", "path": "c.json", "patches": [{"op": "remove", "path": "/nope"}]}));
        assert!(is_error(&r) && text_of(&r).contains("#1"), "{r}");
        let r = s.call(
            "write_document",
            json!({"scope": "global", "path": "c.json", "patches": [{"op": "jump", "path": "/x"}]}),
        );
        assert!(
            is_error(&r) && text_of(&r).contains("invalid patches"),
            "{r}"
        );
        s.call(
            "write_document",
            json!({"scope": "global", "path": "n.md", "content": "# N\n"}),
        );
        let r = s.call("write_document", json!({"scope": "global", "path": "n.md", "patches": [{"op": "add", "path": "/x", "value": 1}]}));
        assert!(
            is_error(&r) && text_of(&r).contains("JSON documents only"),
            "{r}"
        );
        assert_eq!(std::fs::read(&file).unwrap(), before);
    }

    #[test]
    fn a_refused_write_says_why_in_the_same_words() {
        let (d, p) = git_project("main");
        let s = TestServer::new(&p, d.path());
        let write = |path: &str, extra: serde_json::Value| {
            let mut args = json!({"scope": "global", "path": path});
            args.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            let r = s.call("write_document", args);
            assert!(is_error(&r), "{r}");
            assert!(
                r.get("error").is_none(),
                "a failure, not a JSON-RPC error: {r}"
            );
            text_of(&r).to_string()
        };
        s.call(
            "write_document",
            json!({"scope": "global", "path": "c.json", "content": {"v": 1}}),
        );
        s.call(
            "write_document",
            json!({"scope": "global", "path": "l.json", "content": [1]}),
        );
        s.call(
            "write_document",
            json!({"scope": "global", "path": "m.json", "content": {"metadata": 3}}),
        );
        s.call(
            "write_document",
            json!({"scope": "global", "path": "n.md", "content": "# N\n"}),
        );
        assert_eq!(
            write(
                "c.json",
                json!({"patches": [{"op": "test", "path": "/v", "value": 2}]})
            ),
            r#"patch operation #1 {"op":"test","path":"/v","value":2} failed: value did not match — no change was written"#
        );
        let many: Vec<_> = (0..=MAX_PATCH_OPS)
            .map(|_| json!({"op": "test", "path": "/v", "value": 1}))
            .collect();
        assert_eq!(
            write("c.json", json!({ "patches": many })),
            format!(
                "refused: {} patch operations is more than the limit of {MAX_PATCH_OPS} per call \
                 — no change was written; split the edit or write the whole `content`",
                MAX_PATCH_OPS + 1
            )
        );
        assert!(write(
            "n.md",
            json!({"patches": [{"op": "add", "path": "/x", "value": 1}]})
        )
        .ends_with("); JSON Patch edits JSON documents only — write Markdown with `content`"));
        assert_eq!(
            write("l.json", json!({"tags": ["a"]})),
            "'l.json' is not a JSON object, so it has no metadata.tags to set"
        );
        assert_eq!(
            write("m.json", json!({"tags": ["a"]})),
            "'m.json': metadata is not an object"
        );
    }

    #[test]
    fn branch_detection_follows_worktree_gitdir_files_and_refuses_detached_heads() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let wt = root.join("wt");
        let gd = root.join("repo/.git/worktrees/wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::create_dir_all(&gd).unwrap();
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", gd.display())).unwrap();
        std::fs::write(gd.join("HEAD"), "ref: refs/heads/topic/x\n").unwrap();
        assert_eq!(super::current_branch(&wt).unwrap(), "topic/x");
        std::fs::write(
            gd.join("HEAD"),
            "0123456789abcdef0123456789abcdef01234567\n",
        )
        .unwrap();
        assert!(super::current_branch(&wt)
            .unwrap_err()
            .to_string()
            .contains("detached"));
        let bare = root.join("nogit");
        std::fs::create_dir_all(&bare).unwrap();
        let s = TestServer::new(&bare, d.path());
        let r = s.call(
            "write_document",
            json!({"scope": "branch", "path": "a.md", "content": "x"}),
        );
        // No repository (unless the temp dir is inside one): a clear error naming `branch`.
        if crate::project::find_git_root(&bare).is_none() {
            assert!(is_error(&r) && text_of(&r).contains("pass `branch`"), "{r}");
        }
    }
}
