//! The editor's raw answer and what the model gets: locations confined to the door, columns in
//! characters, grouped by file, sorted, de-duplicated and capped ([`shape`]), and as text
//! ([`render`]).

use super::{read_text, MAX_LINE_CHARS};
use crate::tools::door::Door;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One location as the editor's handler sends it: 0-based positions in `encoding` units.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
pub struct RawLoc {
    pub path: String,
    #[serde(default)]
    pub line: u64,
    #[serde(default)]
    pub character: u64,
    #[serde(default)]
    pub end_line: Option<u64>,
    #[serde(default)]
    pub end_character: Option<u64>,
    /// `utf-8`, `utf-16` or `utf-32`: what `character` counts (the client's offset_encoding).
    #[serde(default)]
    pub encoding: Option<String>,
    /// The start line's text, when a buffer holds the file (its unsaved state).
    #[serde(default)]
    pub text: Option<String>,
    /// The end line's text, when it is another line and a buffer holds the file.
    #[serde(default)]
    pub end_text: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub detail: Option<String>,
    /// Nesting depth in a file's outline (0 at the top).
    #[serde(default)]
    pub depth: Option<u64>,
    #[serde(default)]
    pub severity: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub code: Option<Value>,
}

/// A titled list of locations in the editor's answer.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct RawSection {
    pub title: String,
    #[serde(default)]
    pub items: Vec<RawLoc>,
    /// Keep the handler's order (an outline) instead of sorting by place.
    #[serde(default)]
    pub ordered: bool,
}

/// The editor's answer to every tool of this family.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct RawAnswer {
    /// What was asked, in words (`references of area at src/a.py:3:5`).
    #[serde(default)]
    pub query: String,
    /// The language servers (or `tree-sitter`) that answered.
    #[serde(default)]
    pub servers: Vec<String>,
    #[serde(default)]
    pub sections: Vec<RawSection>,
    #[serde(default)]
    pub hover: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
}

/// One location in an answer.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
pub struct Loc {
    /// 1-based line.
    pub line: u64,
    /// 1-based column in characters; absent outside the project.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub col: Option<u64>,
    /// Where the symbol's range ends (1-based line, 1-based column in characters, exclusive).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_col: Option<u64>,
    /// The line's text (cut at 240 characters); absent outside the project.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<Value>,
}

/// The locations in one file.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
pub struct FileGroup {
    /// Project-relative when inside the project, else absolute.
    pub path: String,
    /// Inside the project or a workspace folder (outside: lines only, no text).
    pub inside: bool,
    pub locations: Vec<Loc>,
}

/// A titled, capped list of locations grouped by file.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
pub struct Section {
    pub title: String,
    /// How many locations there are in all.
    pub total: usize,
    /// How many of them are not listed (over `limit`).
    pub more: usize,
    pub files: Vec<FileGroup>,
}

/// The answer of every code intelligence tool (`structuredContent`).
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
pub struct Answer {
    /// What was asked, in words.
    pub query: String,
    /// The language servers (or `tree-sitter`) that answered.
    pub servers: Vec<String>,
    pub sections: Vec<Section>,
    /// `lsp_hover`: the signature and documentation (Markdown).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hover: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Files' lines, read once per answer.
struct Lines<'a> {
    door: &'a Door,
    files: HashMap<String, Option<Vec<String>>>,
}

impl Lines<'_> {
    fn line(&mut self, path: &str, n: u64) -> Option<String> {
        let door = self.door;
        let lines = self.files.entry(path.to_string()).or_insert_with(|| {
            read_text(door, Path::new(path)).map(|t| {
                t.split('\n')
                    .map(|l| l.trim_end_matches('\r').to_string())
                    .collect()
            })
        });
        lines.as_ref()?.get(n as usize).cloned()
    }
}

/// The number of characters before `units` code units of `encoding` in `line` (past the end:
/// the line's length in characters plus what is left over, so a position at the end of a line
/// stays there).
pub fn chars_of(line: &str, units: u64, encoding: &str) -> u64 {
    let mut used = 0u64;
    let mut n = 0u64;
    for c in line.chars() {
        if used >= units {
            return n;
        }
        used += match encoding {
            "utf-8" => c.len_utf8() as u64,
            "utf-32" => 1,
            _ => c.len_utf16() as u64,
        };
        n += 1;
    }
    n + units.saturating_sub(used)
}

fn cut(line: &str) -> String {
    let t = line.trim_end();
    if t.chars().count() <= MAX_LINE_CHARS {
        return t.to_string();
    }
    let mut s: String = t.chars().take(MAX_LINE_CHARS).collect();
    s.push('…');
    s
}

/// The path shown for a location: relative to the project root when under it.
fn shown_path(door: &Door, path: &Path) -> String {
    let mut bases: Vec<PathBuf> = door.base().map(Path::to_path_buf).into_iter().collect();
    if let Some(first) = door.roots().first() {
        bases.push(first.clone());
    }
    for b in bases {
        if let Some(rel) = crate::paths::relative_inside(&b, path) {
            return rel;
        }
    }
    path.to_string_lossy().into_owned()
}

/// A section's items sorted by place (unless the editor gave them in order) and de-duplicated.
fn sorted_items(mut items: Vec<RawLoc>, ordered: bool) -> Vec<RawLoc> {
    if !ordered {
        items.sort_by(|a, b| (&a.path, a.line, a.character).cmp(&(&b.path, b.line, b.character)));
    }
    items.dedup_by(|a, b| {
        a.path == b.path
            && a.line == b.line
            && a.character == b.character
            && a.end_line == b.end_line
            && a.end_character == b.end_character
            && a.name == b.name
            && a.message == b.message
    });
    items
}

/// A location inside the door: its line's text (the buffer's, else the file's), columns in
/// characters, 1-based.
fn loc_inside(it: RawLoc, key: &str, lines: &mut Lines<'_>) -> Loc {
    let enc = it.encoding.as_deref().unwrap_or("utf-16");
    let text = it.text.clone().or_else(|| lines.line(key, it.line));
    let col = chars_of(text.as_deref().unwrap_or(""), it.character, enc) + 1;
    let (end_line, end_col) = match (it.end_line, it.end_character) {
        (Some(el), Some(ec)) => {
            let et = if el == it.line {
                text.clone()
            } else {
                it.end_text.clone().or_else(|| lines.line(key, el))
            };
            (
                Some(el + 1),
                Some(chars_of(et.as_deref().unwrap_or(""), ec, enc) + 1),
            )
        }
        _ => (None, None),
    };
    Loc {
        line: it.line + 1,
        col: Some(col),
        end_line,
        end_col,
        text: text.as_deref().map(cut),
        name: it.name,
        kind: it.kind,
        detail: it.detail,
        depth: it.depth,
        severity: it.severity,
        message: it.message,
        source: it.source,
        code: it.code,
    }
}

/// A location outside the door: where it is, never what it says.
fn loc_outside(it: RawLoc) -> Loc {
    Loc {
        line: it.line + 1,
        col: None,
        end_line: None,
        end_col: None,
        text: None,
        name: it.name,
        kind: it.kind,
        detail: None,
        depth: it.depth,
        severity: None,
        message: None,
        source: None,
        code: None,
    }
}

/// One section's items, capped at `limit` and grouped by file.
fn shape_section(
    door: &Door,
    sec: RawSection,
    limit: usize,
    lines: &mut Lines<'_>,
    inside_cache: &mut HashMap<String, bool>,
) -> Section {
    let items = sorted_items(sec.items, sec.ordered);
    let total = items.len();
    let more = total.saturating_sub(limit);
    let mut files: Vec<FileGroup> = Vec::new();
    for it in items.into_iter().take(limit) {
        let abs = crate::paths::normalize(Path::new(&it.path));
        let key = abs.to_string_lossy().into_owned();
        let inside = *inside_cache
            .entry(key.clone())
            .or_insert_with(|| abs.is_absolute() && door.admits(&abs));
        let (loc, path) = if inside {
            (loc_inside(it, &key, lines), shown_path(door, &abs))
        } else {
            (loc_outside(it), key)
        };
        match files.iter_mut().find(|f| f.path == path) {
            Some(f) => f.locations.push(loc),
            None => files.push(FileGroup {
                path,
                inside,
                locations: vec![loc],
            }),
        }
    }
    Section {
        title: sec.title,
        total,
        more,
        files,
    }
}

/// The editor's raw answer, confined and shaped (see the module's documentation).
pub fn shape(door: &Door, raw: RawAnswer, limit: usize) -> Answer {
    let mut lines = Lines {
        door,
        files: HashMap::new(),
    };
    let mut inside_cache: HashMap<String, bool> = HashMap::new();
    let sections = raw
        .sections
        .into_iter()
        .map(|sec| shape_section(door, sec, limit, &mut lines, &mut inside_cache))
        .collect();
    Answer {
        query: raw.query,
        servers: raw.servers,
        sections,
        hover: raw.hover,
        note: raw.note,
    }
}

/// One location's line of text: `line:col` (with the range, indented by depth) inside, or
/// `path:line` outside; then its kind, name, severity, message and the line's text.
fn render_loc(f: &FileGroup, l: &Loc) -> String {
    let mut line = String::new();
    if !f.inside {
        let _ = write!(line, "{}:{}", f.path, l.line);
    } else {
        line.push_str("  ");
        for _ in 0..l.depth.unwrap_or(0) {
            line.push_str("  ");
        }
        let _ = write!(line, "{}:{}", l.line, l.col.unwrap_or(1));
        match (l.end_line, l.end_col) {
            (Some(el), Some(ec)) if el == l.line => {
                let _ = write!(line, "-{ec}");
            }
            (Some(el), Some(ec)) => {
                let _ = write!(line, "-{el}:{ec}");
            }
            _ => {}
        }
    }
    if let Some(k) = &l.kind {
        let _ = write!(line, " {k}");
    }
    if let Some(n) = &l.name {
        let _ = write!(line, " {n}");
    }
    if let Some(sev) = &l.severity {
        let _ = write!(line, " {sev}");
    }
    if let Some(m) = &l.message {
        let src = l
            .source
            .as_deref()
            .map(|x| format!(" [{x}]"))
            .unwrap_or_default();
        let _ = write!(line, ": {}{src}", m.replace('\n', " "));
    }
    if let Some(t) = &l.text {
        let _ = write!(line, "  | {}", t.trim_start());
    }
    if !f.inside {
        line.push_str("  (outside the project: text withheld)");
    }
    line
}

/// The answer as text for the model: a header per section, then per file its locations as
/// `line:col` with the symbol's range and the line's text.
pub fn render(a: &Answer) -> String {
    let mut s = String::new();
    let by = if a.servers.is_empty() {
        String::new()
    } else {
        format!(" ({})", a.servers.join(", "))
    };
    let _ = writeln!(s, "{}{by}", a.query);
    if let Some(h) = &a.hover {
        let _ = writeln!(s, "{}", h.trim_end());
    }
    for sec in &a.sections {
        let nfiles = sec.files.len();
        let _ = writeln!(
            s,
            "{}: {} in {} file{}",
            sec.title,
            sec.total,
            nfiles,
            if nfiles == 1 { "" } else { "s" }
        );
        for f in &sec.files {
            if f.inside {
                let _ = writeln!(s, "{}", f.path);
            }
            for l in &f.locations {
                let _ = writeln!(s, "{}", render_loc(f, l));
            }
        }
        if sec.more > 0 {
            let _ = writeln!(
                s,
                "… {} more (not listed; raise `limit` to see them)",
                sec.more
            );
        }
    }
    if let Some(n) = &a.note {
        let _ = writeln!(s, "note: {n}");
    }
    s
}
