//! A memory bank document: its content, its tags and when it last changed.

use crate::capfs::{CapDir, CapError};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use std::io::Read;
use std::path::Path;
use std::time::SystemTime;

/// How many lines from the top a Markdown document's `tags:` line may be on.
pub const TAG_LINES: usize = 20;
/// How much of a Markdown file `search_documents_by_tags` reads to find its tags.
const HEAD_BYTES: u64 = 8 * 1024;

/// A document as the tools return it: `{path, content, tags, lastModified}` (doc/protocol.md,
/// read_context).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Document {
    /// The path relative to the bank (global or branch).
    pub path: String,
    pub content: String,
    /// From a `tags: #a #b` line near the top (Markdown) or `metadata.tags` (JSON).
    pub tags: Vec<String>,
    /// The file's modification time, RFC 3339 UTC.
    pub last_modified: String,
}

impl Document {
    /// The document as a JSON object, moving the content (no copy of large strings).
    pub fn into_value(self) -> Value {
        let mut m = serde_json::Map::with_capacity(4);
        m.insert("path".into(), Value::String(self.path));
        m.insert("content".into(), Value::String(self.content));
        m.insert(
            "tags".into(),
            Value::Array(self.tags.into_iter().map(Value::String).collect()),
        );
        m.insert("lastModified".into(), Value::String(self.last_modified));
        Value::Object(m)
    }
}

/// RFC 3339 UTC with seconds, like `2025-03-17T00:00:00Z`.
pub fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

/// RFC 3339 UTC with milliseconds, for timestamps we create.
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

fn is_json(path: &str) -> bool {
    path.to_ascii_lowercase().ends_with(".json")
}

/// The tags of a document: `metadata.tags` for JSON documents, the `tags:` line otherwise.
pub fn tags_of(path: &str, content: &str) -> Vec<String> {
    if is_json(path) {
        json_tags(content)
    } else {
        markdown_tags(content)
    }
}

fn push_tag(out: &mut Vec<String>, raw: &str) {
    let t = raw.trim_matches(|c: char| c == '#' || c == '"' || c == '\'' || c == '[' || c == ']');
    let t = t.trim_start_matches('#');
    if !t.is_empty() && !out.iter().any(|x| x == t) {
        out.push(t.to_string());
    }
}

/// Tags from the first `tags:` line (case-insensitive) within [`TAG_LINES`] lines of the top:
/// `tags: #a #b`, also `tags: a, b` and `tags: [a, b]`. `#` is stripped; duplicates dropped.
pub fn markdown_tags(content: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in content.lines().take(TAG_LINES) {
        let t = line.trim_start();
        let Some(head) = t.get(..5) else { continue };
        if head.eq_ignore_ascii_case("tags:") {
            for tok in t[5..].split(|c: char| c.is_whitespace() || c == ',') {
                push_tag(&mut out, tok);
            }
            break;
        }
    }
    out
}

/// Tags from `metadata.tags` of a JSON document (strings only); none when it is not valid JSON.
pub fn json_tags(content: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(v) = serde_json::from_str::<Value>(content) {
        if let Some(tags) = v.pointer("/metadata/tags").and_then(Value::as_array) {
            for t in tags.iter().filter_map(Value::as_str) {
                push_tag(&mut out, t);
            }
        }
    }
    out
}

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("no such file")]
    NotFound,
    #[error("{0}")]
    Io(std::io::Error),
    #[error("the file is not valid UTF-8 text")]
    NotUtf8,
    #[error("not a regular file (FIFOs, sockets, devices and directories are not read)")]
    NotAFile,
    #[error(
        "larger than the {} byte limit for a memory bank document",
        super::MAX_DOCUMENT_BYTES
    )]
    TooLarge,
    #[error("{0}")]
    Cap(CapError),
}

/// Reads a whole document (`rel_path` inside `dir`; `rel` is the path reported back): opened
/// without blocking, regular files only, at most [`super::MAX_DOCUMENT_BYTES`].
pub fn read(dir: &CapDir, rel_path: &Path, rel: &str) -> Result<Document, ReadError> {
    let (f, meta) = open(dir, rel_path)?;
    read_open(f, &meta, rel)
}

/// `rel_path` inside `dir` opened without blocking: regular files only, capped.
pub(super) fn open(
    dir: &CapDir,
    rel_path: &Path,
) -> Result<(std::fs::File, std::fs::Metadata), ReadError> {
    dir.open_regular_capped(rel_path, super::MAX_DOCUMENT_BYTES)
        .map_err(|e| match e {
            e if e.is_not_found() => ReadError::NotFound,
            CapError::NotRegular { .. } => ReadError::NotAFile,
            CapError::TooLarge { .. } => ReadError::TooLarge,
            e => ReadError::Cap(e),
        })
}

/// The document in the opened file `f` (`meta` its `fstat`).
pub(super) fn read_open(
    f: std::fs::File,
    meta: &std::fs::Metadata,
    rel: &str,
) -> Result<Document, ReadError> {
    let bytes =
        crate::capfs::read_capped_from(f, super::MAX_DOCUMENT_BYTES).map_err(|e| match e {
            None => ReadError::TooLarge,
            Some(e) => ReadError::Io(e),
        })?;
    let content = String::from_utf8(bytes).map_err(|_| ReadError::NotUtf8)?;
    let tags = tags_of(rel, &content);
    Ok(Document {
        path: rel.to_string(),
        tags,
        last_modified: rfc3339(meta.modified().unwrap_or(SystemTime::UNIX_EPOCH)),
        content,
    })
}

/// Reads just enough of a document to know its tags (the head of a Markdown file, all of a JSON
/// one up to the document cap), plus its modification time.
pub fn read_tags(
    dir: &CapDir,
    rel_path: &Path,
    rel: &str,
) -> Result<(Vec<String>, SystemTime), CapError> {
    let (f, meta) = dir.open_regular(rel_path)?;
    let cap = if is_json(rel) {
        super::MAX_DOCUMENT_BYTES
    } else {
        HEAD_BYTES
    };
    let mut buf = Vec::new();
    f.take(cap)
        .read_to_end(&mut buf)
        .map_err(|err| CapError::Io {
            what: "read",
            path: dir.display(rel_path),
            err,
        })?;
    let text = String::from_utf8_lossy(&buf);
    Ok((
        tags_of(rel, &text),
        meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_tag_line_forms() {
        assert_eq!(
            markdown_tags("# Title\n\ntags: #core #branch-context\n\nbody #not-a-tag"),
            vec!["core", "branch-context"]
        );
        assert_eq!(markdown_tags("Tags: a, b,  #c a"), vec!["a", "b", "c"]);
        assert_eq!(markdown_tags("tags: [x, \"y\"]"), vec!["x", "y"]);
        assert_eq!(markdown_tags("tags: #設計 #メモ"), vec!["設計", "メモ"]);
        // Too far from the top, or not at the start of a line: not a tag line.
        let far = format!("{}tags: #late", "line\n".repeat(TAG_LINES));
        assert!(markdown_tags(&far).is_empty());
        assert!(markdown_tags("the tags: #x").is_empty());
        assert!(markdown_tags("").is_empty());
        // A multi-byte character where "tags:" would be does not panic.
        assert!(markdown_tags("日本語の文書").is_empty());
    }

    #[test]
    fn json_tags_from_metadata() {
        assert_eq!(
            json_tags(r##"{"metadata": {"tags": ["a", "#b", 3, "a"]}, "content": {}}"##),
            vec!["a", "b"]
        );
        assert!(json_tags("{not json").is_empty());
        assert!(json_tags(r#"{"tags": ["top-level is not metadata"]}"#).is_empty());
        assert_eq!(
            tags_of("x.JSON", r#"{"metadata":{"tags":["j"]}}"#),
            vec!["j"]
        );
        assert!(tags_of("x.md", r#"{"metadata":{"tags":["j"]}}"#).is_empty());
    }

    #[test]
    fn read_reports_mtime_utf8_and_kind() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.md");
        std::fs::write(&p, "tags: #t\n本文").unwrap();
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_742_169_600);
        std::fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(t)
            .unwrap();
        let dir = CapDir::open_root(d.path()).unwrap();
        let doc = read(&dir, Path::new("a.md"), "a.md").unwrap();
        assert_eq!(doc.last_modified, "2025-03-17T00:00:00Z");
        assert_eq!(doc.tags, vec!["t"]);
        assert_eq!(doc.content, "tags: #t\n本文");
        let v = doc.into_value();
        assert_eq!(v["lastModified"], "2025-03-17T00:00:00Z");
        assert_eq!(
            v.as_object().unwrap().keys().collect::<Vec<_>>(),
            vec!["path", "content", "tags", "lastModified"]
        );

        std::fs::write(d.path().join("bad.md"), [0xff, 0xfe, 0x00]).unwrap();
        assert!(matches!(
            read(&dir, Path::new("bad.md"), "bad.md"),
            Err(ReadError::NotUtf8)
        ));
        assert!(matches!(
            read(&dir, Path::new("none.md"), "none.md"),
            Err(ReadError::NotFound)
        ));
        assert!(matches!(
            read(&dir, Path::new("."), "."),
            Err(ReadError::NotAFile)
        ));
    }
}
