//! What a conversation file says about itself, read defensively: a file is a sequence of JSON
//! lines, each a record with a `type`. The ones read here (every supported CLI writes some of
//! them; unknown types and damaged lines are skipped, never an error):
//!
//! * `user` / `assistant`: a message (`message.content` a string or blocks), with `timestamp`,
//!   `cwd`, `gitBranch`; a user record is a prompt unless it is `isMeta`, `isSidechain`, a
//!   compact summary or carries tool results.
//! * `custom-title` (`customTitle`: the person's `/rename`), `ai-title` (`aiTitle`), `summary`
//!   (`summary`, older CLIs): the title, the person's first.
//! * `last-prompt` (`lastPrompt`), `cost-state` (`totalCostUSD`, the newer CLIs).
//!
//! Only lines that can be one of those (a cheap byte search for their `"type":"…"`) are parsed
//! as JSON: a conversation's largest lines (system prompts, tool results) are skipped unread.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::borrow::Cow;

/// What one conversation file says (what a listing needs).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Meta {
    pub custom_title: Option<String>,
    pub ai_title: Option<String>,
    pub summary: Option<String>,
    pub first_prompt: Option<String>,
    pub last_prompt: Option<String>,
    /// The `last-prompt` record's (the CLI's own idea of it, kept when the tail was not read).
    pub last_prompt_record: Option<String>,
    pub prompts: u64,
    pub cwd: Option<String>,
    pub branch: Option<String>,
    pub started_ms: Option<i64>,
    pub updated_ms: Option<i64>,
    pub cost_usd: Option<f64>,
    /// Only part of the file was read (it is larger than the listing reads).
    pub partial: bool,
}

impl Meta {
    /// The title shown: the person's, the CLI's, the summary, else the first prompt.
    pub fn title(&self) -> Option<&str> {
        self.custom_title
            .as_deref()
            .or(self.ai_title.as_deref())
            .or(self.summary.as_deref())
            .or(self.first_prompt.as_deref())
    }
}

/// The record types a listing parses (a line holding none of these is not parsed).
const INTERESTING: [&[u8]; 6] = [
    br#""type":"user""#,
    br#""type":"custom-title""#,
    br#""type":"ai-title""#,
    br#""type":"summary""#,
    br#""type":"last-prompt""#,
    br#""type":"cost-state""#,
];

/// The longest prompt or title kept, in characters.
pub const MAX_TEXT: usize = 300;

#[derive(Deserialize)]
struct Rec<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow)]
    cwd: Option<Cow<'a, str>>,
    #[serde(rename = "gitBranch", borrow)]
    git_branch: Option<Cow<'a, str>>,
    #[serde(rename = "isMeta")]
    is_meta: Option<bool>,
    #[serde(rename = "isSidechain")]
    is_sidechain: Option<bool>,
    #[serde(rename = "isCompactSummary")]
    is_compact_summary: Option<bool>,
    #[serde(borrow)]
    message: Option<&'a RawValue>,
    #[serde(rename = "customTitle", borrow)]
    custom_title: Option<Cow<'a, str>>,
    #[serde(rename = "aiTitle", borrow)]
    ai_title: Option<Cow<'a, str>>,
    #[serde(borrow)]
    summary: Option<Cow<'a, str>>,
    #[serde(rename = "lastPrompt", borrow)]
    last_prompt: Option<Cow<'a, str>>,
    #[serde(rename = "totalCostUSD")]
    total_cost_usd: Option<f64>,
}

#[derive(Deserialize)]
struct Msg<'a> {
    #[serde(borrow)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow)]
    content: Option<Content<'a>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Content<'a> {
    #[serde(borrow)]
    Text(Cow<'a, str>),
    #[serde(borrow)]
    Blocks(Vec<Block<'a>>),
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
}

/// A message's role and its text (text blocks joined), when the record is a message.
pub fn message_text(line: &[u8]) -> Option<(String, String, Option<String>)> {
    let rec: Rec = serde_json::from_slice(line).ok()?;
    let kind = rec.kind.as_deref()?;
    if kind != "user" && kind != "assistant" {
        return None;
    }
    let msg: Msg = serde_json::from_str(rec.message?.get()).ok()?;
    let (text, _) = content_text(msg.content?);
    let role = msg.role.map(Cow::into_owned).unwrap_or_else(|| kind.into());
    Some((role, text, rec.timestamp.map(Cow::into_owned)))
}

/// The text of `content` and whether it carried tool results.
fn content_text(content: Content) -> (String, bool) {
    match content {
        Content::Text(t) => (t.into_owned(), false),
        Content::Blocks(blocks) => {
            let mut tool = false;
            let mut parts = Vec::new();
            for b in blocks {
                match b.kind.as_deref() {
                    Some("text") => parts.extend(b.text.map(Cow::into_owned)),
                    Some("tool_result") => tool = true,
                    _ => {}
                }
            }
            (parts.join("\n"), tool)
        }
    }
}

/// `text` on one line, cut to [`MAX_TEXT`] characters.
pub fn short(text: &str) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one.char_indices().nth(MAX_TEXT) {
        Some((i, _)) => format!("{}…", &one[..i]),
        None => one,
    }
}

/// Milliseconds since the epoch of an ISO 8601 UTC time (`2026-11-29T02:20:29.420Z`), or None.
pub fn iso_ms(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> { s.get(r)?.parse().ok() };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut ms = 0;
    if b.get(19) == Some(&b'.') {
        let frac: String = s[20..].chars().take_while(char::is_ascii_digit).collect();
        let f3 = format!("{:0<3}", &frac[..frac.len().min(3)]);
        ms = f3.parse().ok()?;
    }
    // Days from the civil date (H. Hinnant's algorithm).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146097 + doe - 719468;
    Some(((days * 24 + h) * 60 + mi) * 60_000 + se * 1000 + ms)
}

/// The time of the first (`last = false`) or last `"timestamp":"…"` in `bytes`.
fn find_time(bytes: &[u8], last: bool) -> Option<i64> {
    const KEY: &[u8] = br#""timestamp":""#;
    let mut hay = bytes;
    loop {
        let at = if last {
            memchr::memmem::rfind(hay, KEY)?
        } else {
            memchr::memmem::find(hay, KEY)?
        };
        let rest = &bytes[(hay.as_ptr() as usize - bytes.as_ptr() as usize) + at + KEY.len()..];
        let end = memchr::memchr(b'"', rest).unwrap_or(0);
        if let Some(t) = std::str::from_utf8(&rest[..end]).ok().and_then(iso_ms) {
            return Some(t);
        }
        hay = if last {
            &hay[..at]
        } else {
            &hay[at + KEY.len()..]
        };
    }
}

/// The complete lines of `bytes` (a last line without its newline included: a truncated one
/// simply fails to parse).
pub fn lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut start = 0;
    memchr::memchr_iter(b'\n', bytes)
        .chain(std::iter::once(bytes.len()))
        .map(move |end| {
            let l = &bytes[start.min(end)..end];
            start = end + 1;
            l
        })
        .filter(|l| l.first() == Some(&b'{'))
}

impl Meta {
    /// Reads `head` (the file's start) and `tail` (its end, from a line's start; empty when
    /// `head` is the whole file) into a listing's facts.
    pub fn read(head: &[u8], tail: &[u8]) -> Meta {
        let mut m = Meta {
            started_ms: find_time(head, false),
            updated_ms: find_time(if tail.is_empty() { head } else { tail }, true),
            ..Meta::default()
        };
        for part in [head, tail] {
            for line in lines(part) {
                if interesting(line) {
                    m.record(line);
                }
            }
        }
        m
    }

    /// One record of interest.
    fn record(&mut self, line: &[u8]) {
        let Ok(rec) = serde_json::from_slice::<Rec>(line) else {
            return;
        };
        let set = |slot: &mut Option<String>, v: Option<Cow<str>>| {
            if let Some(v) = v.filter(|v| !v.trim().is_empty()) {
                *slot = Some(short(&v));
            }
        };
        match rec.kind.as_deref() {
            Some("custom-title") => set(&mut self.custom_title, rec.custom_title),
            Some("ai-title") => set(&mut self.ai_title, rec.ai_title),
            Some("summary") => set(&mut self.summary, rec.summary),
            Some("last-prompt") => set(&mut self.last_prompt_record, rec.last_prompt),
            Some("cost-state") => {
                if let Some(c) = rec.total_cost_usd.filter(|c| c.is_finite()) {
                    self.cost_usd = Some(c);
                }
            }
            Some("user") => self.user(rec),
            _ => {}
        }
    }

    fn user(&mut self, rec: Rec) {
        if self.cwd.is_none() {
            self.cwd = rec.cwd.as_deref().map(str::to_string);
        }
        if let Some(b) = rec.git_branch.filter(|b| !b.is_empty()) {
            self.branch = Some(b.into_owned());
        }
        if rec.is_meta == Some(true)
            || rec.is_sidechain == Some(true)
            || rec.is_compact_summary == Some(true)
        {
            return;
        }
        let Some(msg) = rec
            .message
            .and_then(|m| serde_json::from_str::<Msg>(m.get()).ok())
        else {
            return;
        };
        let Some(content) = msg.content else { return };
        let (text, tool) = content_text(content);
        if tool || text.trim().is_empty() {
            return;
        }
        self.prompts += 1;
        let text = short(&text);
        if self.first_prompt.is_none() {
            self.first_prompt = Some(text.clone());
        }
        self.last_prompt = Some(text);
    }
}

/// How far into a line a record's own `"type"` is looked for: every CLI writes it before the
/// message (after a few ids and the working directory), so a line's bulk (a system prompt, a
/// tool's output) is never scanned; the line's last bytes too (an object's last member).
const TYPE_WITHIN: usize = 4096;
const TYPE_AT_END: usize = 256;

/// Whether `line` may be a record a listing reads.
fn interesting(line: &[u8]) -> bool {
    let finder = aho();
    if line.len() <= TYPE_WITHIN + TYPE_AT_END {
        return finder.is_match(line);
    }
    finder.is_match(&line[..TYPE_WITHIN]) || finder.is_match(&line[line.len() - TYPE_AT_END..])
}

fn aho() -> &'static aho_corasick::AhoCorasick {
    static A: std::sync::OnceLock<aho_corasick::AhoCorasick> = std::sync::OnceLock::new();
    A.get_or_init(|| aho_corasick::AhoCorasick::new(INTERESTING).expect("fixed patterns"))
}
