//! The land's three-way merge (crates/core/src/merge.rs): the cases the Lua side relied on, and a
//! property test against the old merge (`lua/claude_context/agents/merge.lua` before it moved
//! here: every hunk of theirs compared with every hunk of ours), transcribed below.

use claude_context_core::merge::{merge, merge_all, Conflict};
use claude_context_core::proposal::line_diff;
use proptest::prelude::*;

fn m(base: &str, ours: &str, theirs: &str) -> (String, usize, Vec<(usize, usize)>) {
    let r = merge(base.as_bytes(), ours.as_bytes(), theirs.as_bytes());
    let c = r.conflicts.iter().map(|c| (c.line, c.count)).collect();
    (String::from_utf8(r.text).unwrap(), r.applied, c)
}

const BASE: &str = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";

#[test]
fn disjoint_hunks_both_land() {
    // The person changed line 8; the worktree line 2 and added a line after 5.
    let r = m(
        BASE,
        "1\n2\n3\n4\n5\n6\n7\nEIGHT\n9\n",
        "1\nTWO\n3\n4\n5\nnew\n6\n7\n8\n9\n",
    );
    assert_eq!(
        r,
        ("1\nTWO\n3\n4\n5\nnew\n6\n7\nEIGHT\n9\n".into(), 2, vec![])
    );
}

#[test]
fn a_hunk_on_the_persons_edit_is_a_conflict_left_out() {
    let mine = "1\n2\nmine\n4\n5\n6\n7\n8\n9\n";
    let r = m(BASE, mine, "1\n2\ntheirs\n4\n5\n6\n7\n8\n9\n");
    assert_eq!(r, (mine.into(), 0, vec![(3, 1)]));
    // A neighbouring line merges; of a two-line change, the line the person changed too is
    // the conflict, the other lands.
    let r = m(BASE, mine, "1\n2\n3\ntheirs\n5\n6\n7\n8\nnine\n");
    assert_eq!(
        r,
        ("1\n2\nmine\ntheirs\n5\n6\n7\n8\nnine\n".into(), 2, vec![])
    );
    let r = m(BASE, mine, "1\n2\nT3\nT4\n5\n6\n7\n8\n9\n");
    assert_eq!(
        r,
        ("1\n2\nmine\nT4\n5\n6\n7\n8\n9\n".into(), 1, vec![(3, 1)])
    );
    // Lines removed around the person's edit, or inserted at the same place.
    let r = m(BASE, mine, "1\n5\n6\n7\n8\n9\n");
    assert_eq!(r, (mine.into(), 0, vec![(2, 3)]));
    let r = m(
        BASE,
        "1\nmine\n2\n3\n4\n5\n6\n7\n8\n9\n",
        "1\ntheirs\n2\n3\n4\n5\n6\n7\n8\n9\n",
    );
    assert_eq!(r.2, vec![(2, 0)]);
}

#[test]
fn a_change_already_there_is_neither_applied_again_nor_a_conflict() {
    let r = m(
        BASE,
        "1\nTWO\n3\n4\n5\n6\n7\n8\n9\n",
        "1\nTWO\n3\n4\n5\n6\n7\n8\nNINE\n",
    );
    assert_eq!(r, ("1\nTWO\n3\n4\n5\n6\n7\n8\nNINE\n".into(), 1, vec![]));
    let same = "1\nTWO\n3\n4\n5\n6\n7\n8\n9\n";
    assert_eq!(m(BASE, same, same), (same.into(), 0, vec![]));
}

#[test]
fn the_last_line_break_is_as_the_side_that_changed_it() {
    assert_eq!(m("a\nb", "a\nb", "a\nb\nc").0, "a\nb\nc");
    assert_eq!(m("a\nb\n", "A\nb\n", "a\nb").0, "A\nb");
    assert_eq!(m("a\nb\n", "a\nb\n", "a\nb"), ("a\nb".into(), 1, vec![]));
    assert_eq!(m("a\nb", "A\nb", "a\nb").0, "A\nb");
    assert_eq!(m("", "", "x\n"), ("x\n".into(), 1, vec![]));
    assert_eq!(m("x\n", "x\n", ""), ("".into(), 1, vec![]));
}

#[test]
fn bytes_that_are_not_utf8_merge_as_bytes() {
    let r = merge(b"\xff\n2\n3\n", b"\xff\n2\n\xfe\n", b"\xfd\n2\n3\n");
    assert_eq!(r.text, b"\xfd\n2\n\xfe\n");
    assert_eq!(r.applied, 1);
}

#[test]
fn merge_all_keeps_the_order() {
    let files = vec![
        (b"a\n".to_vec(), b"a\n".to_vec(), b"b\n".to_vec()),
        (b"x\n".to_vec(), b"y\n".to_vec(), b"z\n".to_vec()),
    ];
    let r = merge_all(&files);
    assert_eq!(r[0].text, b"b\n");
    assert_eq!(r[1].conflicts, vec![Conflict { line: 1, count: 1 }]);
}

/// The old merge, as `agents/merge.lua` wrote it (hunks `{s, n, new}`, `s` 1-based; every hunk
/// of theirs against every hunk of ours), over the same hunks.
mod old {
    type H = (usize, usize, Vec<Vec<u8>>);

    fn nl(t: &[u8]) -> Vec<u8> {
        let mut t = t.to_vec();
        if !t.is_empty() && t.last() != Some(&b'\n') {
            t.push(b'\n');
        }
        t
    }

    fn lines(t: &[u8]) -> Vec<&[u8]> {
        t.split_inclusive(|&b| b == b'\n').collect()
    }

    fn hunks(a: &[&[u8]], b: &[&[u8]]) -> Vec<H> {
        let mut out = Vec::new();
        for h in super::line_diff(a, b) {
            let (sa, ca) = (h.before.start as usize, h.before.len());
            let new: Vec<Vec<u8>> = b[h.after.start as usize..h.after.end as usize]
                .iter()
                .map(|l| l.to_vec())
                .collect();
            if ca > 1 && new.len() == ca {
                for (i, l) in new.into_iter().enumerate() {
                    out.push((sa + 1 + i, 1, vec![l]));
                }
            } else {
                out.push((sa + 1, ca, new));
            }
        }
        out
    }

    // (The comparisons as the Lua wrote them.)
    #[allow(clippy::int_plus_one)]
    fn overlap(x: &H, y: &H) -> bool {
        let (xs, xn, ys, yn) = (x.0 as i64, x.1 as i64, y.0 as i64, y.1 as i64);
        if xn == 0 && yn == 0 {
            return xs == ys;
        }
        if xn == 0 {
            return ys < xs && xs <= ys + yn - 1;
        }
        if yn == 0 {
            return xs < ys && ys <= xs + xn - 1;
        }
        xs <= ys + yn - 1 && ys <= xs + xn - 1
    }

    fn ends(t: &[u8]) -> bool {
        t.is_empty() || t.last() == Some(&b'\n')
    }

    fn fix_last_break(text: Vec<u8>, base: &[u8], ours: &[u8], theirs: &[u8]) -> Vec<u8> {
        let mut want = ends(ours);
        if ends(theirs) != ends(base) && ends(ours) == ends(base) {
            want = ends(theirs);
        }
        let mut text = text;
        if text.is_empty() {
            return text;
        }
        if want && !text.ends_with(b"\n") {
            text.push(b'\n');
        } else if !want && text.ends_with(b"\n") {
            text.pop();
        }
        text
    }

    pub fn merge(base: &[u8], ours: &[u8], theirs: &[u8]) -> (Vec<u8>, usize, Vec<(usize, usize)>) {
        let (b, o, t) = (nl(base), nl(ours), nl(theirs));
        let (lb, lo, lt) = (lines(&b), lines(&o), lines(&t));
        let mine = hunks(&lb, &lo);
        let (mut keep, mut conflicts) = (Vec::new(), Vec::new());
        for th in hunks(&lb, &lt) {
            let (mut clash, mut already) = (false, false);
            for m in &mine {
                if *m == th {
                    already = true;
                } else if overlap(&th, m) {
                    clash = true;
                }
            }
            if clash {
                conflicts.push((th.0, th.1));
            } else if !already {
                keep.push(th);
            }
        }
        if keep.is_empty() {
            let text = fix_last_break(ours.to_vec(), base, ours, theirs);
            let applied = usize::from(text != ours);
            return (text, applied, conflicts);
        }
        let applied = keep.len();
        let mut all = mine;
        all.extend(keep);
        all.sort_by_key(|h| (h.0, h.1));
        let (mut out, mut pos) = (Vec::new(), 1);
        for h in &all {
            for l in &lb[pos - 1..h.0 - 1] {
                out.extend_from_slice(l);
            }
            for l in &h.2 {
                out.extend_from_slice(l);
            }
            pos = h.0 + h.1;
        }
        for l in &lb[pos - 1..] {
            out.extend_from_slice(l);
        }
        (fix_last_break(out, base, ours, theirs), applied, conflicts)
    }
}

/// A short text of lines drawn from a few words (so that hunks meet, touch and repeat), with or
/// without its last line break.
fn text() -> impl Strategy<Value = Vec<u8>> {
    (prop::collection::vec(0u8..5, 0..14), any::<bool>()).prop_map(|(words, last_break)| {
        let mut t: Vec<u8> = words
            .iter()
            .flat_map(|w| ["a\n", "b\n", "c\n", "d\n", "\n"][*w as usize].bytes())
            .collect();
        if !last_break && t.len() > 1 {
            t.pop();
        }
        t
    })
}

/// `base` edited: a few of its lines replaced, removed or inserted before.
fn edited(base: &[u8], edits: &[(u8, u8)]) -> Vec<u8> {
    let mut lines: Vec<Vec<u8>> = base
        .split_inclusive(|&b| b == b'\n')
        .map(|l| l.to_vec())
        .collect();
    for &(at, what) in edits {
        let i = at as usize % (lines.len() + 1);
        match what % 3 {
            0 if i < lines.len() => lines[i] = format!("x{what}\n").into_bytes(),
            1 if i < lines.len() => {
                lines.remove(i);
            }
            _ => lines.insert(i, format!("y{what}\n").into_bytes()),
        }
    }
    lines.concat()
}

fn new_of(r: claude_context_core::merge::Merged) -> (Vec<u8>, usize, Vec<(usize, usize)>) {
    let c = r.conflicts.iter().map(|c| (c.line, c.count)).collect();
    (r.text, r.applied, c)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    /// The same text, applied count and conflicts as the old merge, for any three texts and
    /// for edits of one base (where the merge matters most).
    #[test]
    fn the_merge_is_the_old_one(
        base in text(),
        ours in text(),
        theirs in text(),
        e1 in prop::collection::vec((any::<u8>(), any::<u8>()), 0..4),
        e2 in prop::collection::vec((any::<u8>(), any::<u8>()), 0..4),
    ) {
        prop_assert_eq!(new_of(merge(&base, &ours, &theirs)), old::merge(&base, &ours, &theirs));
        let (o, t) = (edited(&base, &e1), edited(&base, &e2));
        prop_assert_eq!(new_of(merge(&base, &o, &t)), old::merge(&base, &o, &t));
    }

    /// Nothing changed here: theirs as it is. Nothing changed there: ours as it is. The same
    /// change on both sides: ours, no conflict.
    #[test]
    fn one_side_unchanged_gives_the_other(base in text(), other in text()) {
        let r = merge(&base, &base, &other);
        prop_assert_eq!(&r.text, &other);
        prop_assert!(r.conflicts.is_empty());
        let r = merge(&base, &other, &base);
        prop_assert_eq!((&r.text, r.applied), (&other, 0));
        let r = merge(&base, &other, &other);
        prop_assert_eq!((&r.text, r.applied, r.conflicts.len()), (&other, 0, 0));
    }
}
