//! Editing a document of the memory bank as memory bank v3's tools do: the bank a call means
//! ([`DocScope`], [`branch_for`]: the current git branch from `HEAD`, [`current_branch`]), a
//! whole `content`, JSON Patch edits (RFC 6902, the `json-patch` crate: all or nothing, within
//! limits, [`apply_patches`]), and tags ([`with_tags`]: `metadata.tags` of a JSON document, the
//! `tags:` line of a Markdown one). [`Bank::edit`] does it all and writes once.

use super::document::TAG_LINES;
use super::{Bank, BankError, Language, Scope, WriteOutcome};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Which bank a v3 document tool works on.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum DocScope {
    Branch,
    Global,
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
        max = super::MAX_DOCUMENT_BYTES
    )]
    TooLarge(usize),
    /// The document cannot be encoded as JSON text.
    #[error("{0}")]
    Encode(serde_json::Error),
    /// Both a whole `content` and `patches` were given.
    #[error("give `content` or `patches`, not both")]
    ContentAndPatches,
    /// Neither `content`, `patches` nor `tags` was given.
    #[error("give `content`, `patches` or `tags`")]
    NothingToWrite,
    #[error(transparent)]
    Bank(#[from] BankError),
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

/// The caller's mistakes: what it asked for does not fit the document, or names no branch;
/// a file that cannot be read or written is the bank's failure.
impl crate::error::Fault for DocumentError {
    fn is_callers(&self) -> bool {
        matches!(
            self,
            DocumentError::ContentAndPatches | DocumentError::NothingToWrite
        )
    }
}

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

/// The branch a v3 call means: none for the global bank; the given one, or the current git
/// branch of the project root `root` gives (asked only then).
pub fn branch_for<E: From<DocumentError>>(
    scope: DocScope,
    branch: Option<String>,
    root: impl FnOnce() -> Result<PathBuf, E>,
) -> Result<Option<String>, E> {
    match scope {
        DocScope::Global => Ok(None),
        DocScope::Branch => match branch.filter(|b| !b.trim().is_empty()) {
            Some(b) => Ok(Some(b)),
            None => Ok(Some(current_branch(&root()?)?)),
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

/// JSON Patch operations as a call gives them, read within [`MAX_PATCH_OPS`]: past the limit
/// the rest are counted and skipped unread (nothing of them is built), so a call of millions of
/// operations costs no more than one of the limit's; [`apply_patches`] then refuses it with
/// their count.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Patches {
    /// The operations read: all of them, or the first [`MAX_PATCH_OPS`] + 1.
    ops: Vec<Value>,
    /// How many the call gave.
    given: usize,
}

impl Patches {
    /// How many operations the call gave.
    pub fn len(&self) -> usize {
        self.given
    }

    pub fn is_empty(&self) -> bool {
        self.given == 0
    }
}

impl From<Vec<Value>> for Patches {
    fn from(ops: Vec<Value>) -> Patches {
        Patches {
            given: ops.len(),
            ops,
        }
    }
}

impl<'de> Deserialize<'de> for Patches {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Patches, D::Error> {
        struct Bounded;
        impl<'de> serde::de::Visitor<'de> for Bounded {
            type Value = Patches;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an array of JSON Patch operations")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Patches, A::Error> {
                let mut ops =
                    Vec::with_capacity(seq.size_hint().unwrap_or(0).min(MAX_PATCH_OPS + 1));
                while ops.len() <= MAX_PATCH_OPS {
                    match seq.next_element::<Value>()? {
                        Some(op) => ops.push(op),
                        None => return Ok(Patches::from(ops)),
                    }
                }
                let mut given = ops.len();
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                    given += 1;
                }
                Ok(Patches { ops, given })
            }
        }
        d.deserialize_seq(Bounded)
    }
}

/// The schema of an array of values, as `Vec<Value>`'s (the tools' schemas do not change).
impl JsonSchema for Patches {
    fn inline_schema() -> bool {
        <Vec<Value>>::inline_schema()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        <Vec<Value>>::schema_id()
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        <Vec<Value>>::schema_name()
    }

    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <Vec<Value>>::json_schema(g)
    }
}

/// Applies RFC 6902 `patches` to the JSON document `content`, all or nothing, within limits:
/// at most [`MAX_PATCH_OPS`] operations, a document of at most
/// [`super::MAX_DOCUMENT_BYTES`] (what the bank reads back) nested at most
/// [`crate::json_limits::MAX_DEPTH`] levels (the limit of incoming JSON). The operation count
/// is checked before anything is applied, the document after every operation: one operation
/// can at most double it (`copy`) or add the depth of its value and path (`add`, `move`), so
/// nothing far over a limit is ever built, and a violation names the limit and the operation.
pub fn apply_patches(path: &str, content: &str, patches: Patches) -> Result<String, DocumentError> {
    if patches.len() > MAX_PATCH_OPS {
        return Err(DocumentError::TooManyOperations(patches.len()));
    }
    let patches = patches.ops;
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
    if text.len() as u64 > super::MAX_DOCUMENT_BYTES {
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

const MAX_PATCH_BYTES: usize = super::MAX_DOCUMENT_BYTES as usize;

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

/// What to write: the whole content, or patches, and/or tags.
pub struct Edit {
    pub content: Option<Value>,
    pub patches: Option<Patches>,
    pub tags: Option<Vec<String>>,
}

/// What [`Bank::edit`] wrote.
pub struct Edited {
    /// The document's whole new content.
    pub content: String,
    pub outcome: WriteOutcome,
    /// JSON Patch operations applied.
    pub patches_applied: usize,
}

impl Bank {
    /// Writes `path` in `scope`'s bank as `edit` says (a new bank seeded from templates in
    /// `lang`): the whole content, or patches applied to the document, and/or its tags.
    /// Blocking.
    pub fn edit(
        &self,
        scope: Scope,
        path: &str,
        edit: Edit,
        lang: Language,
    ) -> Result<Edited, DocumentError> {
        let mut patches_applied = 0;
        let mut content = match (edit.content, edit.patches) {
            (Some(_), Some(_)) => return Err(DocumentError::ContentAndPatches),
            (Some(Value::String(s)), None) => s,
            (Some(v), None) => serde_json::to_string_pretty(&v).map_err(DocumentError::Encode)?,
            (None, Some(p)) => {
                let old = self.read(scope, path)?;
                patches_applied = p.len();
                apply_patches(path, &old.content, p)?
            }
            (None, None) if edit.tags.is_some() => self.read(scope, path)?.content,
            (None, None) => return Err(DocumentError::NothingToWrite),
        };
        if let Some(tags) = &edit.tags {
            content = with_tags(path, &content, tags)?;
        }
        let outcome = self.write(scope, path, &content, lang)?;
        Ok(Edited {
            content,
            outcome,
            patches_applied,
        })
    }
}
