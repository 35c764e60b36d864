//! `fs-read-file {path, offset?, limit?}` — read a UTF-8 text file inside the project root,
//! optionally a window of lines (`offset` is the 0-based first line, `limit` the line count).

use super::{parse_args, schema_of, Ctx, ToolDef, ToolError, ToolOutput};
use crate::paths::confine;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Files larger than this are refused unless read by line window.
pub const MAX_WHOLE_FILE: u64 = 16 << 20;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A path relative to the project root, or an absolute path inside it.
    pub path: String,
    /// 0-based index of the first line to return.
    #[serde(default)]
    pub offset: Option<u64>,
    /// The maximum number of lines to return.
    #[serde(default)]
    pub limit: Option<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ReadResult {
    /// The resolved absolute path.
    pub path: String,
    pub content: String,
    /// 0-based index of the first line returned.
    pub offset: u64,
    pub lines: u64,
    pub total_lines: u64,
    /// True when lines after the returned window exist.
    pub truncated: bool,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "fs-read-file",
        aliases: &["fs_read_file"],
        description: "Read a UTF-8 text file inside the project root. Relative paths resolve \
                      against project_root (see fs-get-project-info). Optional offset (0-based \
                      line) and limit (line count).",
        input_schema: schema_of::<Args>(),
        output_schema: Some(schema_of::<ReadResult>()),
        run,
    }
}

fn run(ctx: Ctx, args: Value) -> super::ToolFuture {
    let args: Args = match parse_args("fs-read-file", args) {
        Ok(a) => a,
        Err(e) => return super::ready(Err(e)),
    };
    super::blocking(move || {
        let root = ctx.project_root_dir()?;
        let out = read(&root, &args)?;
        Ok(ToolOutput {
            text: Some(out.content.clone()),
            ..ToolOutput::of(&out)?
        })
    })
}

pub fn read(root: &std::path::Path, a: &Args) -> Result<ReadResult, ToolError> {
    let path = confine(root, &a.path).map_err(|e| ToolError::Failed(e.to_string()))?;
    let fail = |what: &str, e: std::io::Error| {
        ToolError::Failed(format!("cannot {what} '{}': {e}", path.display()))
    };
    let meta = std::fs::metadata(&path).map_err(|e| fail("read", e))?;
    if meta.is_dir() {
        return Err(ToolError::Failed(format!(
            "'{}' is a directory: use fs-list-directory",
            path.display()
        )));
    }
    if meta.len() > MAX_WHOLE_FILE && a.limit.is_none() {
        return Err(ToolError::Failed(format!(
            "'{}' is {} bytes, over the {} byte limit for a whole read: pass offset and limit",
            path.display(),
            meta.len(),
            MAX_WHOLE_FILE
        )));
    }
    let bytes = std::fs::read(&path).map_err(|e| fail("read", e))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| ToolError::Failed(format!("'{}' is not UTF-8 text", path.display())))?;
    let total_lines = text.lines().count() as u64;
    let offset = a.offset.unwrap_or(0);
    let (content, lines) = if a.offset.is_none() && a.limit.is_none() {
        (text, total_lines)
    } else {
        let limit = a.limit.unwrap_or(u64::MAX);
        let mut out = String::new();
        let mut n = 0;
        for l in text
            .split_inclusive('\n')
            .skip(offset as usize)
            .take(limit as usize)
        {
            out.push_str(l);
            n += 1;
        }
        (out, n)
    };
    Ok(ReadResult {
        path: path.to_string_lossy().into_owned(),
        content,
        offset,
        lines,
        total_lines,
        truncated: offset.saturating_add(lines) < total_lines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_whole_and_windows() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("f.txt"), "a\nb\nc\nd\n").unwrap();
        let a = |offset, limit| Args {
            path: "f.txt".into(),
            offset,
            limit,
        };
        let r = read(d.path(), &a(None, None)).unwrap();
        assert_eq!(
            (r.content.as_str(), r.total_lines, r.truncated),
            ("a\nb\nc\nd\n", 4, false)
        );
        let r = read(d.path(), &a(Some(1), Some(2))).unwrap();
        assert_eq!(
            (r.content.as_str(), r.lines, r.truncated),
            ("b\nc\n", 2, true)
        );
        let r = read(d.path(), &a(Some(10), None)).unwrap();
        assert_eq!((r.content.as_str(), r.lines), ("", 0));
    }

    #[test]
    fn errors_are_actionable() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("bin"), [0xff, 0xfe]).unwrap();
        let a = |p: &str| Args {
            path: p.into(),
            offset: None,
            limit: None,
        };
        let e = read(d.path(), &a("missing")).unwrap_err().to_string();
        assert!(e.contains("missing") && e.contains("No such file"), "{e}");
        assert!(read(d.path(), &a("bin"))
            .unwrap_err()
            .to_string()
            .contains("not UTF-8"));
        assert!(read(d.path(), &a("."))
            .unwrap_err()
            .to_string()
            .contains("directory"));
        let e = read(d.path(), &a("../x")).unwrap_err().to_string();
        assert!(e.contains("outside the project root"), "{e}");
    }
}
