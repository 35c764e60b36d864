//! An `openDiff` proposal prepared off Neovim's main thread (neither side waits for the other).
//!
//! Before a diff view is shown, the bridge's threads do everything that grows with the file:
//! read the file on disk (a regular file only, never blocking, capped), split both texts into
//! buffer lines (a final newline and CR LF endings detected the way the Lua side does), and
//! compute the hunks ([imara-diff], Histogram, with its slider heuristics). The result waits in
//! [`STORE`] under an id; the Lua side has it put into its buffers a bounded chunk per
//! event-loop turn (`native.proposal_fill`, straight through Neovim's C API, and
//! `native.proposal_hunks`). When the person accepts an edited proposal, the buffer's lines come
//! back the same way (`native.proposal_collect`) and the final text is joined here. An entry
//! lives as long as its [`Handle`] (the `openDiff` call): nothing is left behind when the call
//! ends or is cancelled.
//!
//! [imara-diff]: https://docs.rs/imara-diff

use crate::capfs::{read_small_file, CapError};
use imara_diff::{Algorithm, Diff, InternedInput};
use serde::Serialize;
use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

/// The largest file on disk a diff view reads (the Lua side's `util.MAX_FILE_BYTES`).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// A text split into buffer lines, as `lua/claude_context/ide/util.lua`'s `split` does: on
/// `\n`; a final newline is not a line of its own (`eol`); when every line that has an ending
/// ends with CR LF (`crlf`) the CRs are not part of the lines.
#[derive(Debug, Default)]
pub struct Text {
    bytes: Vec<u8>,
    lines: Vec<Range<usize>>,
    pub eol: bool,
    pub crlf: bool,
}

impl Text {
    pub fn from_bytes(bytes: Vec<u8>) -> Text {
        let mut lines = Vec::with_capacity(bytes.len() / 40 + 1);
        let mut start = 0;
        for (i, b) in bytes.iter().enumerate() {
            if *b == b'\n' {
                lines.push(start..i);
                start = i + 1;
            }
        }
        lines.push(start..bytes.len());
        let mut eol = false;
        if lines.len() > 1 && lines.last().is_some_and(|r| r.is_empty()) {
            lines.pop();
            eol = true;
        }
        // Lines that had an ending: all but the last one unless the text ended with a newline.
        let ended = if eol { lines.len() } else { lines.len() - 1 };
        let crlf = ended > 0
            && lines[..ended]
                .iter()
                .all(|r| bytes[r.clone()].ends_with(b"\r"));
        if crlf {
            for r in &mut lines[..ended] {
                r.end -= 1;
            }
        }
        Text {
            bytes,
            lines,
            eol,
            crlf,
        }
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// The lines as the diff sees them: none for an empty text (which a buffer shows as one
    /// empty line), as `vim.diff` sees the buffers' text.
    pub fn diffed_len(&self) -> usize {
        if self.is_empty() {
            0
        } else {
            self.len()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn line(&self, i: usize) -> &[u8] {
        &self.bytes[self.lines[i].clone()]
    }

    /// Lines `from..` (0-based) up to about `max_bytes` (at least one line when any is left).
    pub fn chunk(&self, from: usize, max_bytes: usize) -> Vec<&[u8]> {
        let mut out = Vec::new();
        let mut size = 0;
        for i in from..self.lines.len() {
            let l = self.line(i);
            if !out.is_empty() && size + l.len() + 1 > max_bytes {
                break;
            }
            size += l.len() + 1;
            out.push(l);
        }
        out
    }
}

/// One hunk in `vim.diff()`'s `result_type = "indices"` convention: 1-based starts; a side with
/// no lines has the number of the line the change sits after (0 at the top).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Hunk {
    pub a_start: u32,
    pub a_count: u32,
    pub b_start: u32,
    pub b_count: u32,
}

/// The file on disk, the proposal and their hunks.
#[derive(Debug, Default)]
pub struct Prepared {
    pub old: Text,
    pub new: Text,
    pub hunks: Vec<Hunk>,
    /// Nothing is on disk yet: the proposal creates the file.
    pub is_new: bool,
}

/// What the Lua side needs to know before it pulls the lines (sent with the `openDiff` request).
#[derive(Debug, Serialize, PartialEq)]
pub struct Summary {
    pub id: u64,
    pub is_new: bool,
    pub old_lines: usize,
    pub new_lines: usize,
    /// Bytes of both sides together (what decides a large view).
    pub bytes: usize,
    pub hunks: usize,
    pub old_eol: bool,
    pub old_crlf: bool,
    pub new_eol: bool,
    pub new_crlf: bool,
}

/// Reads `old_path` (a regular file of at most [`MAX_FILE_BYTES`], or nothing: a new file),
/// splits both sides and computes the hunks. The error says why the file cannot be shown.
pub fn prepare(old_path: &Path, proposal: String) -> Result<Prepared, CapError> {
    let (old, is_new) = match read_small_file(old_path, MAX_FILE_BYTES) {
        Ok(b) => (b, false),
        Err(CapError::NotFound { .. }) => (Vec::new(), true),
        Err(CapError::Io { err, .. }) if err.raw_os_error() == Some(libc::ENOTDIR) => {
            (Vec::new(), true)
        }
        Err(e) => return Err(e),
    };
    let old = if is_new {
        Text::default()
    } else {
        Text::from_bytes(old)
    };
    let new = Text::from_bytes(proposal.into_bytes());
    let hunks = hunks(&old, &new);
    Ok(Prepared {
        old,
        new,
        hunks,
        is_new,
    })
}

/// The line hunks between the two sides (a new file is an empty `old`: everything is added),
/// over their [`Text::diffed_len`] lines.
pub fn hunks(old: &Text, new: &Text) -> Vec<Hunk> {
    fn lines(t: &Text) -> Vec<&[u8]> {
        (0..t.diffed_len()).map(|i| t.line(i)).collect()
    }
    line_diff(&lines(old), &lines(new))
        .into_iter()
        .map(|h| {
            let side = |r: &Range<u32>| {
                let count = r.end - r.start;
                (if count == 0 { r.start } else { r.start + 1 }, count)
            };
            let (a_start, a_count) = side(&h.before);
            let (b_start, b_count) = side(&h.after);
            Hunk {
                a_start,
                a_count,
                b_start,
                b_count,
            }
        })
        .collect()
}

/// The hunks between two lists of lines ([imara-diff]'s Histogram with its slider heuristics, as
/// `vim.diff`'s `histogram` does): each a range of `before` (0-based; empty: an insertion before
/// its start) replaced by a range of `after`, in order, never overlapping nor touching.
pub fn line_diff(before: &[&[u8]], after: &[&[u8]]) -> Vec<imara_diff::Hunk> {
    let mut input: InternedInput<&[u8]> = InternedInput::default();
    input.reserve(before.len() as u32, after.len() as u32);
    input.update_before(before.iter().copied());
    input.update_after(after.iter().copied());
    let mut diff = Diff::compute(Algorithm::Histogram, &input);
    diff.postprocess_lines(&input);
    diff.hunks().collect()
}

/// A prepared proposal and the lines collected from it once edited.
#[derive(Debug, Default)]
pub struct Entry {
    pub prepared: Prepared,
    pushed: Mutex<Vec<Vec<u8>>>,
}

/// The proposals waiting for their views, by id.
#[derive(Default)]
pub struct Store {
    map: Mutex<HashMap<u64, Arc<Entry>>>,
    next: AtomicU64,
}

/// The process's store: the tool inserts, the Neovim crate reads.
pub static STORE: LazyLock<Store> = LazyLock::new(Store::default);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Keeps a proposal in the store; removes it when dropped.
pub struct Handle {
    pub id: u64,
    pub entry: Arc<Entry>,
    store: &'static Store,
}

impl Drop for Handle {
    fn drop(&mut self) {
        lock(&self.store.map).remove(&self.id);
    }
}

impl Handle {
    pub fn summary(&self) -> Summary {
        let p = &self.entry.prepared;
        Summary {
            id: self.id,
            is_new: p.is_new,
            old_lines: p.old.len(),
            new_lines: p.new.len(),
            bytes: p.old.bytes().len() + p.new.bytes().len(),
            hunks: p.hunks.len(),
            old_eol: p.old.eol,
            old_crlf: p.old.crlf,
            new_eol: p.new.eol,
            new_crlf: p.new.crlf,
        }
    }

    /// The text of the lines collected from the edited proposal, joined as a file with these endings.
    pub fn pushed_text(&self, eol: bool, crlf: bool) -> Vec<u8> {
        let lines = std::mem::take(&mut *lock(&self.entry.pushed));
        join(&lines, eol, crlf)
    }
}

impl Prepared {
    /// The file on disk with only the hunks numbered in `take` (0-based) applied, with the
    /// proposal's line endings (a partial accept). Hunks are applied in order; unknown numbers
    /// are ignored.
    pub fn compose(&self, take: &[usize]) -> Vec<u8> {
        let old = |i: usize| self.old.line(i);
        // The same lines the hunks were computed over (a new file's `old` has none).
        let old_len = self.old.diffed_len();
        let mut taken = vec![false; self.hunks.len()];
        for &i in take {
            if let Some(t) = taken.get_mut(i) {
                *t = true;
            }
        }
        let mut out: Vec<&[u8]> = Vec::with_capacity(old_len);
        let mut pos = 0usize;
        for (i, h) in self.hunks.iter().enumerate() {
            // 0-based first old line of the hunk (a pure insertion sits after a_start).
            let a_first = if h.a_count == 0 {
                h.a_start
            } else {
                h.a_start - 1
            } as usize;
            out.extend((pos..a_first).map(old));
            if taken[i] {
                let b_first = if h.b_count == 0 {
                    h.b_start
                } else {
                    h.b_start - 1
                } as usize;
                out.extend((b_first..b_first + h.b_count as usize).map(|j| self.new.line(j)));
            } else {
                out.extend((a_first..a_first + h.a_count as usize).map(old));
            }
            pos = a_first + h.a_count as usize;
        }
        out.extend((pos..old_len).map(old));
        if out.is_empty() {
            return Vec::new();
        }
        join(&out, self.new.eol, self.new.crlf)
    }
}

/// Joins buffer lines into a file's text (the inverse of [`Text::from_bytes`]).
pub fn join<L: AsRef<[u8]>>(lines: &[L], eol: bool, crlf: bool) -> Vec<u8> {
    let nl: &[u8] = if crlf { b"\r\n" } else { b"\n" };
    let size: usize = lines.iter().map(|l| l.as_ref().len() + nl.len()).sum();
    let mut out = Vec::with_capacity(size);
    for (i, l) in lines.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(nl);
        }
        out.extend_from_slice(l.as_ref());
    }
    if eol {
        out.extend_from_slice(nl);
    }
    out
}

/// Which side of a proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Old,
    New,
}

impl Store {
    pub fn insert(&'static self, prepared: Prepared) -> Handle {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let entry = Arc::new(Entry {
            prepared,
            pushed: Mutex::default(),
        });
        lock(&self.map).insert(id, entry.clone());
        Handle {
            id,
            entry,
            store: self,
        }
    }

    pub fn get(&self, id: u64) -> Option<Arc<Entry>> {
        lock(&self.map).get(&id).cloned()
    }

    /// Appends lines of an edited proposal; false when the id is gone.
    pub fn push(&self, id: u64, lines: impl IntoIterator<Item = Vec<u8>>) -> bool {
        match self.get(id) {
            Some(e) => {
                lock(&e.pushed).extend(lines);
                true
            }
            None => false,
        }
    }
}

impl Entry {
    pub fn text(&self, side: Side) -> &Text {
        match side {
            Side::Old => &self.prepared.old,
            Side::New => &self.prepared.new,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(t: &Text) -> Vec<String> {
        (0..t.len())
            .map(|i| String::from_utf8_lossy(t.line(i)).into_owned())
            .collect()
    }

    #[test]
    fn split_matches_the_lua_side() {
        // (text, lines, eol, crlf) as util.split gives them.
        let cases: &[(&str, &[&str], bool, bool)] = &[
            ("", &[""], false, false),
            ("\n", &[""], true, false),
            ("a", &["a"], false, false),
            ("a\nb\n", &["a", "b"], true, false),
            ("a\nb", &["a", "b"], false, false),
            ("a\r\nb\r\n", &["a", "b"], true, true),
            ("a\r\nb", &["a", "b"], false, true),
            ("a\r\nb\n", &["a\r", "b"], true, false),
            ("a\n\n", &["a", ""], true, false),
            ("\r\n", &[""], true, true),
        ];
        for (text, want, eol, crlf) in cases {
            let t = Text::from_bytes(text.as_bytes().to_vec());
            assert_eq!(lines(&t), *want, "{text:?}");
            assert_eq!((t.eol, t.crlf), (*eol, *crlf), "{text:?}");
            let back = join(
                &(0..t.len()).map(|i| t.line(i)).collect::<Vec<_>>(),
                t.eol,
                t.crlf,
            );
            assert_eq!(back, text.as_bytes(), "join(split(x)) == x for {text:?}");
        }
    }

    #[test]
    fn chunks_cover_every_line_once_and_respect_the_size() {
        let text: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let t = Text::from_bytes(text.into_bytes());
        let mut from = 0;
        let mut seen = Vec::new();
        while from < t.len() {
            let c = t.chunk(from, 100);
            assert!(!c.is_empty());
            assert!(c.iter().map(|l| l.len() + 1).sum::<usize>() <= 100 || c.len() == 1);
            from += c.len();
            seen.extend(c.iter().map(|l| String::from_utf8_lossy(l).into_owned()));
        }
        assert_eq!(seen, lines(&t));
        assert!(t.chunk(t.len(), 100).is_empty());
        // A line longer than the chunk size still comes (alone).
        let long = Text::from_bytes(vec![b'x'; 500]);
        assert_eq!(long.chunk(0, 100).len(), 1);
    }

    #[test]
    fn hunks_follow_vim_diff_indices() {
        let t = |s: &str| Text::from_bytes(s.as_bytes().to_vec());
        // A change, an insertion after line 3, a deletion of line 5.
        let old = t("1\n2\n3\n4\n5\n6\n");
        let new = t("1\nTWO\n3\nnew\n4\n6\n");
        assert_eq!(
            hunks(&old, &new),
            vec![
                Hunk {
                    a_start: 2,
                    a_count: 1,
                    b_start: 2,
                    b_count: 1
                },
                Hunk {
                    a_start: 3,
                    a_count: 0,
                    b_start: 4,
                    b_count: 1
                },
                Hunk {
                    a_start: 5,
                    a_count: 1,
                    b_start: 5,
                    b_count: 0
                },
            ]
        );
        // At the top: an insertion sits after line 0.
        assert_eq!(
            hunks(&t("a\n"), &t("x\na\n")),
            vec![Hunk {
                a_start: 0,
                a_count: 0,
                b_start: 1,
                b_count: 1
            }]
        );
        // A new file: every line added; an empty proposal of an empty file: nothing.
        assert_eq!(
            hunks(&Text::default(), &t("a\nb\n")),
            vec![Hunk {
                a_start: 0,
                a_count: 0,
                b_start: 1,
                b_count: 2
            }]
        );
        assert!(hunks(&t(""), &t("")).is_empty());
        assert!(hunks(&old, &t("1\n2\n3\n4\n5\n6\n")).is_empty());
    }

    #[test]
    fn compose_applies_only_the_chosen_hunks() {
        let t = |s: &str| Text::from_bytes(s.as_bytes().to_vec());
        let p = Prepared {
            hunks: hunks(&t("1\n2\n3\n4\n5\n6\n"), &t("0\n1\nTWO\n3\n4\n6\n")),
            old: t("1\n2\n3\n4\n5\n6\n"),
            new: t("0\n1\nTWO\n3\n4\n6\n"),
            is_new: false,
        };
        assert_eq!(p.hunks.len(), 3, "{:?}", p.hunks);
        let s = |b: Vec<u8>| String::from_utf8(b).unwrap();
        assert_eq!(s(p.compose(&[])), "1\n2\n3\n4\n5\n6\n");
        assert_eq!(s(p.compose(&[0, 1, 2])), "0\n1\nTWO\n3\n4\n6\n");
        assert_eq!(s(p.compose(&[0])), "0\n1\n2\n3\n4\n5\n6\n");
        assert_eq!(s(p.compose(&[1])), "1\nTWO\n3\n4\n5\n6\n");
        assert_eq!(s(p.compose(&[2])), "1\n2\n3\n4\n6\n");
        // A new file: the one hunk or nothing.
        let n = Prepared {
            hunks: hunks(&Text::default(), &t("a\r\nb\r\n")),
            old: Text::default(),
            new: t("a\r\nb\r\n"),
            is_new: true,
        };
        assert_eq!(s(n.compose(&[0])), "a\r\nb\r\n");
        assert_eq!(s(n.compose(&[])), "");
        // An empty file on disk: no lines, as the hunks see it (not one empty line).
        let e = Prepared {
            hunks: hunks(&t(""), &t("a\n")),
            old: t(""),
            new: t("a\n"),
            is_new: false,
        };
        assert_eq!(s(e.compose(&[0])), "a\n");
        assert_eq!(s(e.compose(&[])), "");
    }

    #[test]
    fn prepare_reads_regular_files_only_and_new_files_are_empty() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.txt");
        std::fs::write(&f, "one\ntwo\n").unwrap();
        let p = prepare(&f, "one\nTWO\n".into()).unwrap();
        assert!(!p.is_new);
        assert_eq!(lines(&p.old), ["one", "two"]);
        assert_eq!(p.hunks.len(), 1);

        let p = prepare(&dir.path().join("missing.txt"), "x\n".into()).unwrap();
        assert!(p.is_new);
        assert_eq!(p.old.len(), 0);
        let p = prepare(&f.join("below-a-file"), "x\n".into()).unwrap();
        assert!(p.is_new, "ENOTDIR: nothing can be there");

        let e = prepare(dir.path(), "x".into()).unwrap_err().to_string();
        assert!(
            e.contains("not a regular file") || e.contains("directory"),
            "{e}"
        );
        #[cfg(unix)]
        {
            let fifo = dir.path().join("fifo");
            let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            // Returns at once (a FIFO with no writer would block an open without O_NONBLOCK).
            let e = prepare(&fifo, "x".into()).unwrap_err().to_string();
            assert!(e.to_lowercase().contains("fifo"), "{e}");
        }
    }

    #[test]
    fn the_store_forgets_a_proposal_with_its_handle() {
        let h = STORE.insert(prepare(Path::new("/nonexistent/x"), "a\r\nb\r\n".into()).unwrap());
        let id = h.id;
        let s = h.summary();
        assert_eq!(
            (s.new_lines, s.new_crlf, s.new_eol, s.is_new),
            (2, true, true, true)
        );
        assert!(STORE.get(id).is_some());
        assert!(STORE.push(id, [b"x".to_vec(), b"y".to_vec()]));
        assert!(STORE.push(id, [b"z".to_vec()]));
        assert_eq!(h.pushed_text(true, true), b"x\r\ny\r\nz\r\n");
        drop(h);
        assert!(STORE.get(id).is_none());
        assert!(
            !STORE.push(id, [b"late".to_vec()]),
            "pushes after the call ended are refused"
        );
    }
}
