//! A query over conversations: the files are searched as bytes for the text as JSON writes it
//! (case-insensitive for ASCII unless the query has a capital letter), in parallel; only the lines
//! that hold it are parsed, and a conversation is kept when one of its messages (a prompt or
//! Claude's text, not a tool's output or a system prompt) contains the text.

use super::parse::{message_text, short};
use super::read;
use super::Conversation;
use rayon::prelude::*;
use serde::Serialize;
use std::path::PathBuf;

/// The most of one file a query reads.
pub const QUERY_CAP: u64 = 256 << 20;
/// The most matches kept per conversation.
pub const MAX_MATCHES: usize = 20;
/// How many characters of a message around a match are kept.
const AROUND: usize = 60;

/// One message that contains the query.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Match {
    /// Milliseconds since the epoch, when the record says.
    pub ts: Option<i64>,
    /// `user` or `assistant`.
    pub role: String,
    /// The message around the match, on one line.
    pub text: String,
}

/// A text found in bytes: by `memmem` when case matters; else by the rarest letter of it in
/// either case (`memchr2`, as fast as `memchr`) and a comparison of what is around.
struct Needle {
    bytes: Vec<u8>,
    insensitive: bool,
    exact: memchr::memmem::Finder<'static>,
    /// The byte searched for first (its index in `bytes`), when case does not matter.
    pivot: usize,
}

impl Needle {
    fn new(text: &str, insensitive: bool) -> Needle {
        let bytes = text.as_bytes().to_vec();
        // The letter least common in English text and JSON, of the needle (else its last byte).
        const COMMON: &[u8] = b"etaoinshrdlcumwfgypbvkjxqz";
        let rank = |b: u8| match b {
            b' ' | b'"' | b'\\' | b',' | b'.' | b':' => 0,
            b'0'..=b'9' => 20,
            _ => COMMON
                .iter()
                .position(|&c| c == b.to_ascii_lowercase())
                .map_or(COMMON.len() + 1, |p| p + 1),
        };
        let pivot = (0..bytes.len())
            .max_by_key(|&i| rank(bytes[i]))
            .unwrap_or(0);
        Needle {
            exact: memchr::memmem::Finder::new(&bytes).into_owned(),
            bytes,
            insensitive,
            pivot,
        }
    }

    /// Where the needle starts in `hay`, the first time.
    fn find(&self, hay: &[u8]) -> Option<usize> {
        if !self.insensitive || self.bytes.is_empty() {
            return self.exact.find(hay);
        }
        let p = self.bytes[self.pivot];
        let (lo, up) = (p.to_ascii_lowercase(), p.to_ascii_uppercase());
        let n = self.bytes.len();
        memchr::memchr2_iter(lo, up, hay).find_map(|i| {
            let start = i.checked_sub(self.pivot)?;
            let cand = hay.get(start..start + n)?;
            cand.eq_ignore_ascii_case(&self.bytes).then_some(start)
        })
    }
}

/// The finder of `query` in a file's bytes (its JSON-escaped form) and in a message's text.
struct Finder {
    raw: Needle,
    text: Needle,
}

impl Finder {
    fn new(query: &str) -> Option<Finder> {
        let insensitive = !query.chars().any(char::is_uppercase);
        let escaped = serde_json::to_string(query).ok()?;
        let escaped = &escaped[1..escaped.len() - 1];
        Some(Finder {
            raw: Needle::new(escaped, insensitive),
            text: Needle::new(query, insensitive),
        })
    }
}

/// The conversations of `list` whose messages contain `query`, each with its matches.
pub fn filter(list: Vec<Conversation>, dirs: &[super::Folder], query: &str) -> Vec<Conversation> {
    let Some(finder) = Finder::new(query) else {
        return Vec::new();
    };
    list.into_par_iter()
        .filter_map(|mut c| {
            let (dir, _, _) = dirs.iter().find(|(_, f, _)| *f == c.folder)?;
            let name = PathBuf::from(format!("{}.jsonl", c.id));
            let (bytes, _) = read::read_capped(dir, &name, QUERY_CAP).ok()?;
            let m = matches(&bytes, &finder);
            if m.is_empty() {
                return None;
            }
            c.matches = Some(m);
            Some(c)
        })
        .collect()
}

/// The messages of `bytes` that contain the query, at most [`MAX_MATCHES`].
fn matches(bytes: &[u8], finder: &Finder) -> Vec<Match> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(hit) = finder.raw.find(&bytes[from..]) {
        let at = from + hit;
        let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i);
        from = (end + 1).min(bytes.len());
        if let Some(m) = message_match(&bytes[start..end], finder) {
            out.push(m);
            if out.len() >= MAX_MATCHES {
                break;
            }
        }
        if end >= bytes.len() {
            break;
        }
    }
    out
}

/// The line's message around the query, when the line is a message that contains it.
fn message_match(line: &[u8], finder: &Finder) -> Option<Match> {
    let (role, text, ts) = message_text(line)?;
    let hit = finder.text.find(text.as_bytes())?;
    let mut start = hit;
    for _ in 0..AROUND {
        match text[..start].chars().next_back() {
            Some(c) => start -= c.len_utf8(),
            None => break,
        }
    }
    let around: String = text[start..]
        .chars()
        .take(AROUND * 2 + finder.text.bytes.len())
        .collect();
    Some(Match {
        ts: ts.as_deref().and_then(super::parse::iso_ms),
        role,
        text: short(&around),
    })
}
