//! The land's three-way merge of one file, conflicts never overwritten.
//!
//! Landing a background session's worktree brings the change `base` → `theirs` (the worktree)
//! into `ours` (the main checkout, with the person's uncommitted edits). A hunk of theirs whose
//! region (in `base`) overlaps a region the person changed is a conflict: it is left out and
//! reported, and the person's text stays. A hunk already in `ours` (landed before, or the same
//! change made by the person) is skipped; every other hunk is applied. A hunk that changes as
//! many lines as it replaces counts line by line, so a line the person also changed does not
//! hold back its neighbours. The last line break is as the side that changed it has it.
//!
//! Pure: texts (bytes) in, the merged text and its conflicts out. The hunks are
//! [`proposal::line_diff`]'s (Histogram, as `vim.diff` computes them). The Lua side
//! (`lua/claude_context/agents/merge.lua`) runs [`merge_all`] on a thread of its own.

use crate::proposal;
use std::ops::Range;

/// A hunk of theirs left out: its first line in `base` (1-based; of an insertion, the line it
/// is inserted before) and how many lines of `base` it replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conflict {
    pub line: usize,
    pub count: usize,
}

/// What [`merge`] made of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    /// The merged text (`ours` when nothing applied).
    pub text: Vec<u8>,
    /// How many hunks of theirs were applied.
    pub applied: usize,
    /// The hunks of theirs left out, in order.
    pub conflicts: Vec<Conflict>,
}

/// One side's change of `base`: lines `s .. s + n` of base (0-based; `n` 0: an insertion before
/// line `s`) become `new` (lines of that side).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Hunk<'a> {
    s: usize,
    n: usize,
    new: &'a [&'a [u8]],
}

/// The lines of `text`, each with its line break (the last may have none).
fn lines(text: &[u8]) -> Vec<&[u8]> {
    text.split_inclusive(|&b| b == b'\n').collect()
}

/// Whether `text` ends with a line break (an empty text counts as one).
fn ends(text: &[u8]) -> bool {
    text.is_empty() || text.ends_with(b"\n")
}

/// `text` with a line break put at its end when it has none, so that lines compare alike and
/// join without gluing.
fn with_break(text: &[u8]) -> Vec<u8> {
    let mut t = text.to_vec();
    if !ends(text) {
        t.push(b'\n');
    }
    t
}

/// The hunks `base` → `side`, those replacing as many lines as they remove cut one per line.
fn hunks<'a>(base: &[&[u8]], side: &'a [&'a [u8]]) -> Vec<Hunk<'a>> {
    let mut out = Vec::new();
    for h in proposal::line_diff(base, side) {
        let r = |r: Range<u32>| r.start as usize..r.end as usize;
        let (before, after) = (r(h.before), r(h.after));
        let n = before.len();
        if n > 1 && after.len() == n {
            out.extend((0..n).map(|i| Hunk {
                s: before.start + i,
                n: 1,
                new: &side[after.start + i..after.start + i + 1],
            }));
        } else {
            out.push(Hunk {
                s: before.start,
                n,
                new: &side[after],
            });
        }
    }
    out
}

/// Whether hunks `x` and `y` (regions of `base`) overlap. An insertion sits before its line: it
/// overlaps an insertion at the same place, or a change around that place.
fn overlap(x: &Hunk, y: &Hunk) -> bool {
    match (x.n, y.n) {
        (0, 0) => x.s == y.s,
        (0, _) => y.s < x.s && x.s < y.s + y.n,
        (_, 0) => x.s < y.s && y.s < x.s + x.n,
        _ => x.s < y.s + y.n && y.s < x.s + x.n,
    }
}

/// Whether `t` is already in `mine` (`Some(false)`), clashes with one of its hunks
/// (`Some(true)`), or neither (`None`). `mine` is in order and its hunks never overlap, so
/// only those around `t` are looked at.
fn against(t: &Hunk, mine: &[Hunk]) -> Option<bool> {
    // The first hunk of mine that ends at or after t's start: those before cannot touch it.
    let from = mine.partition_point(|m| m.s + m.n < t.s);
    let mut found = None;
    for m in mine[from..].iter().take_while(|m| m.s <= t.s + t.n) {
        if m == t {
            found = found.or(Some(false));
        } else if overlap(t, m) {
            return Some(true);
        }
    }
    found
}

/// The merged text's last line break as the side that changed the end has it.
fn fix_last_break(mut text: Vec<u8>, base: &[u8], ours: &[u8], theirs: &[u8]) -> Vec<u8> {
    let want = if ends(theirs) != ends(base) && ends(ours) == ends(base) {
        ends(theirs)
    } else {
        ends(ours)
    };
    if text.is_empty() {
        return text;
    }
    match (want, text.ends_with(b"\n")) {
        (true, false) => text.push(b'\n'),
        (false, true) => {
            text.pop();
        }
        _ => {}
    }
    text
}

/// Merges `base` → `theirs` into `ours`.
pub fn merge(base: &[u8], ours: &[u8], theirs: &[u8]) -> Merged {
    let (b, o, t) = (with_break(base), with_break(ours), with_break(theirs));
    let (lb, lo, lt) = (lines(&b), lines(&o), lines(&t));
    let mine = hunks(&lb, &lo);
    let mut keep = Vec::new();
    let mut conflicts = Vec::new();
    for h in hunks(&lb, &lt) {
        match against(&h, &mine) {
            Some(true) => conflicts.push(Conflict {
                line: h.s + 1,
                count: h.n,
            }),
            Some(false) => {}
            None => keep.push(h),
        }
    }
    if keep.is_empty() {
        // Only the last line break may have changed in the worktree.
        let text = fix_last_break(ours.to_vec(), base, ours, theirs);
        let applied = usize::from(text != ours);
        return Merged {
            text,
            applied,
            conflicts,
        };
    }
    let applied = keep.len();
    let mut all = mine;
    all.extend(keep);
    all.sort_by_key(|h| (h.s, h.n));
    let mut out = Vec::with_capacity(o.len().max(t.len()));
    let mut pos = 0;
    for h in &all {
        lb[pos..h.s].iter().for_each(|l| out.extend_from_slice(l));
        h.new.iter().for_each(|l| out.extend_from_slice(l));
        pos = h.s + h.n;
    }
    lb[pos..].iter().for_each(|l| out.extend_from_slice(l));
    Merged {
        text: fix_last_break(out, base, ours, theirs),
        applied,
        conflicts,
    }
}

/// One file's three texts: `base`, `ours`, `theirs`.
pub type Texts = (Vec<u8>, Vec<u8>, Vec<u8>);

/// [`merge`] of each file, in order.
pub fn merge_all(files: &[Texts]) -> Vec<Merged> {
    files.iter().map(|(b, o, t)| merge(b, o, t)).collect()
}
