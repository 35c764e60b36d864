//! One conversation file's records rendered as Markdown lines, with each line's fold level and
//! the tool calls' places (`file:line`). Pure: bytes in, lines out; a record of a shape it does
//! not know is skipped, a line that is not JSON (or not UTF-8) becomes one short note, and the
//! text of the conversation (untrusted: what the model and the tools wrote) is escaped — a
//! control character or an escape sequence is shown as `\xNN`, never passed on.

use serde::Serialize;
use serde_json::Value;

/// At most this many lines of one tool's result are shown (the rest is counted).
pub const RESULT_LINES: usize = 200;
/// At most this many bytes of one line are shown.
pub const LINE_BYTES: usize = 4000;

/// A line's fold level, one byte per line: `0` none, `a` a tool call (a fold of level 1 starts),
/// `1` inside it, `b` a tool's result (a fold of level 2 starts), `2` inside it.
pub mod level {
    pub const NONE: u8 = b'0';
    pub const TOOL: u8 = b'a';
    pub const RESULT: u8 = b'b';
    pub const IN_RESULT: u8 = b'2';
}

/// Where a line leads (`<CR>` / `gf`): `[line (0-based, in this rendering), path, lnum]`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Link(pub usize, pub String, pub u64);

/// What the CLI says the session cost so far (its last `cost-state` record).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Usage {
    pub cost_usd: Option<f64>,
    pub api_ms: Option<f64>,
    pub lines_added: Option<f64>,
    pub lines_removed: Option<f64>,
    /// How full the context window is, in percent: the last answer's input tokens (with the
    /// cache's) over the model's window ([`context_pct`]).
    pub context_pct: Option<f64>,
}

/// Rendered records: lines, one fold-level byte per line, links, and what the records said of
/// the session (its cost, its title).
#[derive(Debug, Default)]
pub struct Rendered {
    pub lines: Vec<String>,
    pub levels: Vec<u8>,
    pub links: Vec<Link>,
    pub usage: Option<Usage>,
    pub title: Option<String>,
    /// Prompts seen so far (the next prompt's number is this plus one).
    pub prompts: u64,
}

impl Rendered {
    /// A renderer that continues after `prompts` prompts (a file read in pieces).
    pub fn after(prompts: u64) -> Rendered {
        Rendered {
            prompts,
            ..Rendered::default()
        }
    }

    fn push(&mut self, level: u8, text: String) {
        self.lines.push(text);
        self.levels.push(level);
    }

    fn link(&mut self, path: &str, lnum: u64) {
        let at = self.lines.len().saturating_sub(1);
        self.links.push(Link(at, path.to_string(), lnum.max(1)));
    }

    /// Renders every complete line of `bytes` (one JSON record a line).
    pub fn records(&mut self, bytes: &[u8]) {
        for raw in bytes.split(|b| *b == b'\n') {
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            if raw.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match parse(raw) {
                Some(v) => self.record(&v),
                None => self.push(
                    level::NONE,
                    format!("<!-- a record that is not JSON ({} bytes) -->", raw.len()),
                ),
            }
        }
    }

    /// Reads only what the records say of the session's cost (a `cost-state` record, the last
    /// one wins), rendering nothing: cheap enough for a statusline's refresh.
    pub fn usage_only(&mut self, bytes: &[u8]) {
        let cost = memchr::memmem::Finder::new(b"\"cost-state\"");
        let tokens = memchr::memmem::Finder::new(b"\"input_tokens\"");
        for raw in bytes.split(|b| *b == b'\n') {
            if cost.find(raw).is_none() && tokens.find(raw).is_none() {
                continue;
            }
            if let Some(v) = parse(raw) {
                match v.get("type").and_then(Value::as_str) {
                    Some("cost-state") => self.cost_state(&v),
                    Some("assistant") => self.context(&v),
                    _ => {}
                }
            }
        }
    }

    /// A `cost-state` record: the session's cost so far (how full the context is, kept).
    fn cost_state(&mut self, v: &Value) {
        let pct = self.usage.as_ref().and_then(|u| u.context_pct);
        self.usage = Some(Usage {
            context_pct: pct,
            ..usage_of(v)
        });
    }

    /// An answer's token counts: how full the context window is.
    fn context(&mut self, v: &Value) {
        if let Some(pct) = context_pct(v) {
            self.usage.get_or_insert_with(Usage::default).context_pct = Some(pct);
        }
    }

    /// Renders one record.
    pub fn record(&mut self, v: &Value) {
        match v.get("type").and_then(Value::as_str) {
            Some("user") => self.user(v),
            Some("assistant") => self.assistant(v),
            Some("cost-state") => self.cost_state(v),
            Some("custom-title") => self.title = str_of(v, "customTitle").map(String::from),
            Some("summary") if self.title.is_none() => {
                self.title = str_of(v, "summary").map(String::from)
            }
            _ => {}
        }
    }

    fn user(&mut self, v: &Value) {
        if v.get("isMeta").and_then(Value::as_bool) == Some(true) {
            return;
        }
        let Some(content) = v.pointer("/message/content") else {
            return;
        };
        if let Some(text) = content.as_str() {
            return self.prompt(text);
        }
        for block in content.as_array().into_iter().flatten() {
            match block.get("type").and_then(Value::as_str) {
                Some("text") => self.prompt(str_of(block, "text").unwrap_or("")),
                Some("tool_result") => self.result(block, v.get("toolUseResult")),
                _ => {}
            }
        }
    }

    fn prompt(&mut self, text: &str) {
        self.prompts += 1;
        let mut lines = text.lines();
        let first = lines.next().unwrap_or("");
        if !self.lines.is_empty() || self.prompts > 1 {
            self.push(level::NONE, String::new());
        }
        self.push(level::NONE, format!("## {}", escape(first)));
        for l in lines {
            self.push(level::NONE, escape(l));
        }
        self.push(level::NONE, String::new());
    }

    fn assistant(&mut self, v: &Value) {
        self.context(v);
        let Some(blocks) = v.pointer("/message/content").and_then(Value::as_array) else {
            return;
        };
        for block in blocks {
            match block.get("type").and_then(Value::as_str) {
                Some("text") => {
                    for l in str_of(block, "text").unwrap_or("").lines() {
                        self.push(level::NONE, escape(l));
                    }
                    self.push(level::NONE, String::new());
                }
                Some("tool_use") => self.tool_use(block, str_of(v, "cwd")),
                _ => {}
            }
        }
    }

    fn tool_use(&mut self, block: &Value, cwd: Option<&str>) {
        let name = str_of(block, "name").unwrap_or("tool");
        let input = block.get("input").unwrap_or(&Value::Null);
        let path = ["file_path", "notebook_path", "path"]
            .iter()
            .find_map(|k| str_of(input, k));
        let line = input.get("offset").and_then(Value::as_u64).unwrap_or(1);
        let what = match (path, name) {
            (Some(p), "Read") => format!("{}:{line}", shown(p, cwd)),
            (Some(p), _) => shown(p, cwd),
            (None, _) => summary(input),
        };
        self.push(level::TOOL, format!("▸ {} {}", escape(name), what));
        if let Some(p) = path {
            self.link(p, line);
        }
    }

    fn result(&mut self, block: &Value, tool: Option<&Value>) {
        let text = result_text(block.get("content"));
        let error = block.get("is_error").and_then(Value::as_bool) == Some(true);
        let (path, lnum) = result_place(tool);
        let mut head = format!(
            "  ⎿ {}{} line{}",
            if error { "error, " } else { "" },
            text.lines().count(),
            if text.lines().count() == 1 { "" } else { "s" }
        );
        if let Some(p) = &path {
            head.push_str(&format!(" · {}:{lnum}", escape(p)));
        }
        self.push(level::RESULT, head);
        if let Some(p) = path {
            self.link(&p, lnum);
        }
        let mut n = 0;
        for l in text.lines() {
            n += 1;
            if n <= RESULT_LINES {
                self.push(level::IN_RESULT, format!("    {}", escape(l)));
            }
        }
        if n > RESULT_LINES {
            let more = n - RESULT_LINES;
            self.push(level::IN_RESULT, format!("    … {more} more lines"));
        }
    }
}

/// A record: JSON, or JSON once its bytes that are not UTF-8 are replaced.
fn parse(raw: &[u8]) -> Option<Value> {
    let v = match serde_json::from_slice::<Value>(raw) {
        Ok(v) => v,
        Err(_) => match std::str::from_utf8(raw) {
            Ok(_) => return None,
            Err(_) => serde_json::from_str(&String::from_utf8_lossy(raw)).ok()?,
        },
    };
    v.is_object().then_some(v)
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn usage_of(v: &Value) -> Usage {
    let n = |k: &str| v.get(k).and_then(Value::as_f64);
    Usage {
        cost_usd: n("totalCostUSD"),
        api_ms: n("totalAPIDuration"),
        lines_added: n("totalLinesAdded"),
        lines_removed: n("totalLinesRemoved"),
        context_pct: None,
    }
}

/// How full the context window was for an assistant record's answer, in percent: its
/// `message.usage` input tokens (`input_tokens` + `cache_creation_input_tokens` +
/// `cache_read_input_tokens`, what the model was sent) over the model's window: 1,000,000
/// tokens for a model named with `[1m]`, else 200,000 (every Claude model's standard window).
/// A sub-agent's record (`isSidechain`) is another context: not counted.
pub fn context_pct(v: &Value) -> Option<f64> {
    if v.get("isSidechain").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    let msg = v.get("message")?;
    let u = msg.get("usage")?;
    let n = |k: &str| u.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let input = n("input_tokens") + n("cache_creation_input_tokens") + n("cache_read_input_tokens");
    if input <= 0.0 {
        return None;
    }
    let model = msg.get("model").and_then(Value::as_str).unwrap_or("");
    let window = if model.contains("[1m]") {
        1_000_000.0
    } else {
        200_000.0
    };
    Some((input * 1000.0 / window).round() / 10.0)
}

/// A tool result's text: a string, or its text blocks.
fn result_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|b| str_of(b, "text"))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Where a tool's result points: the file an edit changed at its first changed line, the file
/// a read read at its first line.
fn result_place(tool: Option<&Value>) -> (Option<String>, u64) {
    let Some(t) = tool.filter(|t| t.is_object()) else {
        return (None, 1);
    };
    if let Some(file) = t.get("file").filter(|f| f.is_object()) {
        let start = file.get("startLine").and_then(Value::as_u64).unwrap_or(1);
        return (str_of(file, "filePath").map(String::from), start);
    }
    let path = str_of(t, "filePath").map(String::from);
    let hunk = t.pointer("/structuredPatch/0");
    let start = hunk
        .and_then(|h| h.get("newStart"))
        .and_then(Value::as_u64)
        .unwrap_or(1);
    let context = hunk
        .and_then(|h| h.get("lines"))
        .and_then(Value::as_array)
        .map(|ls| {
            ls.iter()
                .take_while(|l| l.as_str().is_some_and(|s| s.starts_with(' ')))
                .count() as u64
        })
        .unwrap_or(0);
    (path, start + context)
}

/// A path as shown: relative to the session's folder when inside it; escaped.
fn shown(path: &str, cwd: Option<&str>) -> String {
    let rel = cwd
        .and_then(|c| path.strip_prefix(c))
        .and_then(|r| r.strip_prefix('/'))
        .filter(|r| !r.is_empty())
        .unwrap_or(path);
    escape(rel)
}

/// A tool's input in one short line (a command's first line, a pattern, else its JSON).
fn summary(input: &Value) -> String {
    let s = [
        "command",
        "pattern",
        "url",
        "query",
        "description",
        "prompt",
    ]
    .iter()
    .find_map(|k| str_of(input, k))
    .map(|s| s.lines().next().unwrap_or("").to_string())
    .unwrap_or_else(|| input.to_string());
    escape(crate::text::cut(&s, 200))
}

/// `s` with every control character (C0 but the tab, DEL, C1) and every bidirectional override
/// shown as `\xNN` / `\u{NNNN}`, cut to [`LINE_BYTES`].
pub fn escape(s: &str) -> String {
    let s = crate::text::cut(s, LINE_BYTES);
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let u = c as u32;
        if c == '\t' {
            out.push(c);
        } else if u < 0x20 || (0x7f..=0x9f).contains(&u) {
            out.push_str(&format!("\\x{u:02x}"));
        } else if (0x202a..=0x202e).contains(&u) || (0x2066..=0x2069).contains(&u) {
            out.push_str(&format!("\\u{{{u:04x}}}"));
        } else {
            out.push(c);
        }
    }
    out
}
