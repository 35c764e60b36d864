//! A conversation's transcript: Claude Code's conversation file
//! (`$CLAUDE_CONFIG_DIR/projects/<project folder>/<session id>.jsonl`, one JSON record a line)
//! found from the session's id and read from an offset on (a running session's file grows),
//! rendered as Markdown lines ([`render`]).
//!
//! The file is Claude Code's and the text in it untrusted: it is read through `capfs` (a FIFO
//! or a device in its place is refused without waiting on it), a line that is cut short is left
//! for the next read (the CLI is writing it), and every text is escaped by the renderer.

pub mod render;

use crate::capfs::{CapDir, CapError};
use render::{Link, Rendered, Usage};
use serde::{Deserialize, Serialize};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// At most this many bytes are read at once by default (a larger file is read in several
/// answers, each small enough for the editor to take in short slices).
pub const READ_BYTES: u64 = 4 << 20;

/// The most a caller may ask to read at once.
pub const MAX_READ_BYTES: u64 = 64 << 20;

#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    #[error("not a session id: {0:?} (letters, digits, '-' and '_' only)")]
    BadId(String),
    #[error("no conversation file for session {0} under {1}")]
    NotFound(String, PathBuf),
    #[error("neither CLAUDE_CONFIG_DIR nor HOME is set: cannot find Claude Code's conversations")]
    NoConfigDir,
    #[error("neither a session id nor a path is given")]
    NoTarget,
    #[error(transparent)]
    Cap(#[from] CapError),
}

impl crate::error::Fault for TranscriptError {}

/// What to read: a session's file (found by id in the projects of `cwds`, else in any
/// project), or a file by path; from `offset` on, after `prompts` prompts.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Query {
    pub id: Option<String>,
    pub path: Option<PathBuf>,
    pub config_dir: Option<PathBuf>,
    pub cwds: Vec<PathBuf>,
    pub offset: u64,
    pub prompts: u64,
    /// Only the session's cost ([`Rendered::usage_only`]): no lines.
    pub usage_only: bool,
    /// At most this many bytes ([`READ_BYTES`] when 0; at most [`MAX_READ_BYTES`]).
    pub max_bytes: u64,
}

/// The answer's header (the lines follow it).
#[derive(Debug, Serialize)]
pub struct Header {
    pub path: PathBuf,
    /// Where the next read starts (after the last complete record).
    pub offset: u64,
    pub size: u64,
    pub prompts: u64,
    /// The file is shorter than the offset asked for: read again from its start.
    pub reset: bool,
    /// One fold-level byte per line ([`render::level`]).
    pub levels: String,
    pub links: Vec<Link>,
    pub usage: Option<Usage>,
    pub title: Option<String>,
    pub lines: usize,
}

/// Claude Code's folder: `config_dir`, else `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub fn config_dir(given: Option<&Path>) -> Result<PathBuf, TranscriptError> {
    match given.filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => Ok(d.to_path_buf()),
        None => crate::conversations::config_dir().ok_or(TranscriptError::NoConfigDir),
    }
}

fn check_id(id: &str) -> Result<(), TranscriptError> {
    let ok = !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    ok.then_some(())
        .ok_or_else(|| TranscriptError::BadId(crate::text::cut(id, 64).to_string()))
}

/// The conversation file of session `id`: in the folder of one of `cwds` first (the project,
/// its worktrees), else in any project's folder. Returns the projects folder and the file's
/// path under it.
pub fn locate(
    config: &Path,
    cwds: &[PathBuf],
    id: &str,
) -> Result<(CapDir, PathBuf), TranscriptError> {
    check_id(id)?;
    let projects = config.join("projects");
    let root = CapDir::open_root(&projects)?;
    let file = format!("{id}.jsonl");
    let exists = |rel: &Path| root.metadata(rel).is_ok_and(|m| m.is_file());
    for cwd in cwds {
        let rel = Path::new(&crate::conversations::folders::encode(cwd)).join(&file);
        if exists(&rel) {
            return Ok((root, rel));
        }
    }
    for entry in root.read_dir(Path::new("."))?.flatten() {
        let rel = Path::new(&entry.file_name()).join(&file);
        if exists(&rel) {
            return Ok((root, rel));
        }
    }
    Err(TranscriptError::NotFound(id.to_string(), projects))
}

/// Reads what `q` names from its offset on and renders it: the header as JSON, a newline, and
/// the lines joined by newlines.
pub fn read(q: &Query) -> Result<Vec<u8>, TranscriptError> {
    let (dir, rel) = match (&q.id, &q.path) {
        (_, Some(p)) => {
            let parent = p.parent().filter(|d| !d.as_os_str().is_empty());
            let dir = CapDir::open_root(parent.unwrap_or(Path::new(".")))?;
            let name = p.file_name().ok_or(TranscriptError::NoTarget)?;
            (dir, PathBuf::from(name))
        }
        (Some(id), None) => locate(&config_dir(q.config_dir.as_deref())?, &q.cwds, id)?,
        (None, None) => return Err(TranscriptError::NoTarget),
    };
    let (mut file, meta) = dir.open_regular(&rel)?;
    let io = |err| CapError::Io {
        what: "read",
        path: dir.display(&rel),
        err,
    };
    let reset = meta.len() < q.offset;
    let (offset, prompts) = if reset { (0, 0) } else { (q.offset, q.prompts) };
    file.seek(SeekFrom::Start(offset)).map_err(io)?;
    let mut bytes = Vec::new();
    let max = match q.max_bytes {
        0 => READ_BYTES,
        n => n.min(MAX_READ_BYTES),
    };
    let mut cap = max;
    (&mut file).take(max).read_to_end(&mut bytes).map_err(io)?;
    // One record longer than a piece: read on until it is whole (at most MAX_READ_BYTES).
    while complete(&bytes) == 0 && bytes.len() as u64 == cap && cap < MAX_READ_BYTES {
        (&mut file).take(max).read_to_end(&mut bytes).map_err(io)?;
        cap += max;
    }
    let used = complete(&bytes);
    let mut r = Rendered::after(prompts);
    if q.usage_only {
        r.usage_only(&bytes[..used]);
    } else {
        r.records(&bytes[..used]);
    }
    Ok(answer(
        dir.display(&rel),
        offset + used as u64,
        meta.len(),
        reset,
        r,
    ))
}

/// How many bytes of `bytes` are whole records: up to the last newline, and a last line
/// without one when it is a whole JSON object (a file whose writer stopped without a newline).
/// A line cut short is left for the next read.
pub fn complete(bytes: &[u8]) -> usize {
    let end = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let rest = &bytes[end..];
    let whole = !rest.is_empty()
        && serde_json::from_slice::<serde_json::Value>(rest).is_ok_and(|v| v.is_object());
    if whole {
        bytes.len()
    } else {
        end
    }
}

fn answer(path: PathBuf, offset: u64, size: u64, reset: bool, r: Rendered) -> Vec<u8> {
    let header = Header {
        path,
        offset,
        size,
        prompts: r.prompts,
        reset,
        levels: String::from_utf8(r.levels).unwrap_or_default(),
        links: r.links,
        usage: r.usage,
        title: r.title,
        lines: r.lines.len(),
    };
    let mut out = serde_json::to_vec(&header).unwrap_or_default();
    out.push(b'\n');
    out.extend_from_slice(r.lines.join("\n").as_bytes());
    out
}

#[cfg(test)]
mod tests;
