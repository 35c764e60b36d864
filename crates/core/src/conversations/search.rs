//! A query over conversations: the files are searched as bytes for the text as JSON writes it
//! (case-insensitive for ASCII unless the query has a capital letter), in parallel; only the lines
//! that hold it are parsed, and a conversation is kept when one of its messages (a prompt or
//! Claude's text, not a tool's output or a system prompt) contains the text.

use super::folders::Fit;
use super::parse::{message_text, short};
use super::read;
use super::Conversation;
use crate::capfs::CapDir;
use aho_corasick::{AhoCorasick, AhoCorasickBuilder};
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

/// The finder of `query` in a file's bytes (its JSON-escaped form) and in a message's text.
struct Finder {
    raw: AhoCorasick,
    text: AhoCorasick,
}

impl Finder {
    fn new(query: &str) -> Option<Finder> {
        let insensitive = !query.chars().any(char::is_uppercase);
        let escaped = serde_json::to_string(query).ok()?;
        let escaped = &escaped[1..escaped.len() - 1];
        let build = |p: &str| {
            AhoCorasickBuilder::new()
                .ascii_case_insensitive(insensitive)
                .build([p])
                .ok()
        };
        Some(Finder {
            raw: build(escaped)?,
            text: build(query)?,
        })
    }
}

/// The conversations of `list` whose messages contain `query`, each with its matches.
pub fn filter(
    list: Vec<Conversation>,
    dirs: &[(CapDir, String, Fit)],
    query: &str,
) -> Vec<Conversation> {
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
        let at = from + hit.start();
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
    let hit = finder.text.find(&text)?;
    let mut start = hit.start();
    for _ in 0..AROUND {
        match text[..start].chars().next_back() {
            Some(c) => start -= c.len_utf8(),
            None => break,
        }
    }
    let around: String = text[start..]
        .chars()
        .take(AROUND * 2 + query_len(hit))
        .collect();
    Some(Match {
        ts: ts.as_deref().and_then(super::parse::iso_ms),
        role,
        text: short(&around),
    })
}

fn query_len(hit: aho_corasick::Match) -> usize {
    hit.end() - hit.start()
}
