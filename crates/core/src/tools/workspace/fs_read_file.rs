//! `fs-read-file {path, offset?, limit?}` — read a UTF-8 text file inside the project root,
//! optionally a window of lines (`offset` is the 0-based first line, `limit` the line count).

use crate::capfs::{CapDir, CapError};
use crate::tools::{parse_args, schema_of, Ctx, Run, ToolDef, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// Files larger than this are refused unless read by line window.
pub const MAX_WHOLE_FILE: u64 = 16 << 20;

/// Why a file cannot be read as asked: the tool's failure (`isError: true`), said as it is.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("'{path}' is a directory: use fs-list-directory")]
    Directory { path: String },
    #[error(
        "'{path}' is {size} bytes, over the {MAX_WHOLE_FILE} byte limit for a whole read: pass \
         offset and limit"
    )]
    TooLarge { path: String, size: u64 },
    #[error(
        "'{path}' grew past the {MAX_WHOLE_FILE} byte limit for a whole read: pass offset and \
         limit"
    )]
    Grew { path: String },
    #[error("cannot read '{path}': {err}")]
    Io { path: String, err: std::io::Error },
    #[error("'{path}' is not UTF-8 text")]
    NotUtf8 { path: String },
    #[error("line {line} of '{path}' is longer than {cap} bytes and cannot be returned")]
    LongLine { path: String, line: u64, cap: usize },
}

impl crate::error::Fault for ReadError {}

/// `path` as the errors show it.
fn shown(path: &Path) -> String {
    path.display().to_string()
}

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
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let args: Args = match parse_args("fs-read-file", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    crate::tools::blocking(move || {
        let root = ctx.project_root_dir()?;
        let out = read(&root, &args)?;
        Ok(ToolOutput {
            text: Some(out.content.clone()),
            ..ToolOutput::of(&out)?
        })
    })
}

pub fn read(root: &std::path::Path, a: &Args) -> Result<ReadResult, ToolError> {
    let dir = CapDir::open_root(root)?;
    let rel = dir.rel(&a.path)?;
    let path = dir.display(&rel);
    // Opened once, without blocking (a FIFO opens at once and is refused); every check below
    // is on the open file, not the name.
    let (file, meta) = dir.open_regular(&rel).map_err(|e| match e {
        CapError::NotRegular {
            kind: "a directory",
            ..
        } => ToolError::from(ReadError::Directory { path: shown(&path) }),
        e => ToolError::from(e),
    })?;
    if meta.len() > MAX_WHOLE_FILE && a.limit.is_none() {
        return Err(ReadError::TooLarge {
            path: shown(&path),
            size: meta.len(),
        }
        .into());
    }
    let offset = a.offset.unwrap_or(0);
    if a.offset.is_some() || a.limit.is_some() {
        let limit = a.limit.unwrap_or(u64::MAX);
        let w = read_window(file, &path, offset, limit, MAX_WHOLE_FILE as usize)?;
        return Ok(ReadResult {
            path: path.to_string_lossy().into_owned(),
            content: w.content,
            offset,
            lines: w.lines,
            total_lines: w.total_lines,
            truncated: w.cut || offset.saturating_add(w.lines) < w.total_lines,
        });
    }
    // At most one byte over the limit is read: the file may have grown since it was measured.
    let bytes = crate::capfs::read_capped_from(file, MAX_WHOLE_FILE).map_err(|e| match e {
        None => ReadError::Grew { path: shown(&path) },
        Some(err) => ReadError::Io {
            path: shown(&path),
            err,
        },
    })?;
    let text = String::from_utf8(bytes).map_err(|_| ReadError::NotUtf8 { path: shown(&path) })?;
    let total_lines = text.lines().count() as u64;
    Ok(ReadResult {
        path: path.to_string_lossy().into_owned(),
        content: text,
        offset,
        lines: total_lines,
        total_lines,
        truncated: false,
    })
}

struct Window {
    content: String,
    lines: u64,
    total_lines: u64,
    /// The window was cut short at `cap` bytes.
    cut: bool,
}

/// Streams the file: keeps the lines `offset..offset+limit` (at most `cap` bytes of them, whole
/// lines only) and counts the rest, so memory stays bounded whatever the file's size.
fn read_window(
    file: std::fs::File,
    path: &Path,
    offset: u64,
    limit: u64,
    cap: usize,
) -> Result<Window, ReadError> {
    let fail = |err: std::io::Error| ReadError::Io {
        path: shown(path),
        err,
    };
    let mut r = BufReader::with_capacity(64 << 10, file);
    let end = offset.saturating_add(limit);
    let (mut window, mut kept) = (Vec::new(), 0usize); // kept: bytes of whole lines in window
    let (mut line_no, mut lines, mut cut) = (0u64, 0u64, false);
    let mut last = b'\n';
    loop {
        let buf = r.fill_buf().map_err(fail)?;
        if buf.is_empty() {
            break;
        }
        let n = buf.len();
        let mut i = 0;
        while i < n {
            let nl = buf[i..].iter().position(|&b| b == b'\n');
            let seg_end = nl.map_or(n, |p| i + p + 1);
            if !cut && line_no >= offset && line_no < end {
                if window.len() + (seg_end - i) > cap {
                    if kept == 0 {
                        return Err(ReadError::LongLine {
                            path: shown(path),
                            line: line_no,
                            cap,
                        });
                    }
                    window.truncate(kept);
                    cut = true;
                } else {
                    window.extend_from_slice(&buf[i..seg_end]);
                    if nl.is_some() {
                        kept = window.len();
                        lines += 1;
                    }
                }
            }
            if nl.is_some() {
                line_no += 1;
            }
            last = buf[seg_end - 1];
            i = seg_end;
        }
        r.consume(n);
    }
    let total_lines = line_no + u64::from(last != b'\n');
    if window.len() > kept {
        lines += 1; // the last line, without a newline
    }
    let content =
        String::from_utf8(window).map_err(|_| ReadError::NotUtf8 { path: shown(path) })?;
    Ok(Window {
        content,
        lines,
        total_lines,
        cut,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusals_say_what_to_do_and_are_the_tools_failures() {
        let path = "/p/a.txt".to_string();
        let said = |e: ReadError| match ToolError::from(e) {
            ToolError::Failed(m) => m,
            other => panic!("not a failure: {other:?}"),
        };
        assert_eq!(
            said(ReadError::Directory { path: path.clone() }),
            "'/p/a.txt' is a directory: use fs-list-directory"
        );
        assert_eq!(
            said(ReadError::TooLarge {
                path: path.clone(),
                size: 20 << 20
            }),
            "'/p/a.txt' is 20971520 bytes, over the 16777216 byte limit for a whole read: pass \
             offset and limit"
        );
        assert_eq!(
            said(ReadError::Grew { path: path.clone() }),
            "'/p/a.txt' grew past the 16777216 byte limit for a whole read: pass offset and limit"
        );
        assert_eq!(
            said(ReadError::NotUtf8 { path: path.clone() }),
            "'/p/a.txt' is not UTF-8 text"
        );
        assert_eq!(
            said(ReadError::LongLine {
                path,
                line: 3,
                cap: 10
            }),
            "line 3 of '/p/a.txt' is longer than 10 bytes and cannot be returned"
        );
    }

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
    fn windows_stream_and_match_the_whole_read() {
        let d = tempfile::tempdir().unwrap();
        let a = |offset, limit| Args {
            path: "f.txt".into(),
            offset,
            limit,
        };
        for text in ["", "\n", "a", "a\n", "a\nb", "a\r\nb\n\nc", "é\n€\n𝄞"] {
            std::fs::write(d.path().join("f.txt"), text).unwrap();
            let whole = read(d.path(), &a(None, None)).unwrap();
            let lines: Vec<&str> = text.split_inclusive('\n').collect();
            for off in 0..4u64 {
                for lim in [0u64, 1, 2, 10, u64::MAX] {
                    let w = read(d.path(), &a(Some(off), Some(lim))).unwrap();
                    let want: String = lines
                        .iter()
                        .skip(off as usize)
                        .take(lim.min(100) as usize)
                        .copied()
                        .collect();
                    assert_eq!(w.content, want, "{text:?} {off} {lim}");
                    assert_eq!(w.total_lines, whole.total_lines, "{text:?}");
                    assert_eq!(
                        w.truncated,
                        off.saturating_add(w.lines) < w.total_lines,
                        "{text:?} {off} {lim}"
                    );
                }
            }
        }
    }

    #[test]
    fn huge_windows_are_capped_and_bounded() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("big.txt");
        let line = "x".repeat(99) + "\n";
        std::fs::write(&p, line.repeat(10_000)).unwrap(); // 1 MB, 10,000 lines
        let w = read_window(std::fs::File::open(&p).unwrap(), &p, 0, u64::MAX, 4096).unwrap();
        assert_eq!((w.lines, w.content.len(), w.cut), (40, 4000, true));
        assert_eq!(w.total_lines, 10_000);
        let w = read_window(std::fs::File::open(&p).unwrap(), &p, 9_998, 5, 4096).unwrap();
        assert_eq!((w.lines, w.cut, w.total_lines), (2, false, 10_000));
        std::fs::write(&p, "y".repeat(10_000)).unwrap();
        let e = read_window(std::fs::File::open(&p).unwrap(), &p, 0, 1, 4096)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("longer than 4096 bytes"), "{e}");
        // Invalid UTF-8 outside the window does not matter; inside it is reported.
        std::fs::write(&p, b"ok\n\xff\n").unwrap();
        assert_eq!(
            read_window(std::fs::File::open(&p).unwrap(), &p, 0, 1, 4096)
                .unwrap()
                .content,
            "ok\n"
        );
        let e = read_window(std::fs::File::open(&p).unwrap(), &p, 1, 1, 4096)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("not UTF-8"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn fifos_and_devices_are_refused_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        for (offset, limit) in [(None, None), (Some(0), Some(1))] {
            let a = Args {
                path: "pipe".into(),
                offset,
                limit,
            };
            let e = read(d.path(), &a).unwrap_err().to_string();
            assert!(e.contains("not a regular file"), "{e}");
        }
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
        assert!(e.contains("missing") && e.contains("does not exist"), "{e}");
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
