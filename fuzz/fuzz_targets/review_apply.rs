//! A review's hunks applied to a file that changed meanwhile. The hunk arithmetic and the
//! partial apply live in the core (`proposal::hunks`, `Prepared::compose`: openDiff's partial
//! accept); the review of a turn picks its hunks in Lua (`lua/claude_context/review/hunks.lua`)
//! and writes through the core's `capfs::project::ProjectFile` with the text it built from
//! (`replace`/`remove` with `expect`). Both are driven here:
//! * any subset of the hunks composes to a text whose lines are the old ones with exactly
//!   those hunks swapped in: none gives the old lines, all gives the new;
//! * the file on disk held `old` when the review read it; the person then wrote `now`. The
//!   review's write (`replace` / `remove` expecting `old`) goes through only when the disk
//!   still holds `old`; otherwise it is refused and the person's bytes are on disk untouched.
#![no_main]

use arbitrary::Arbitrary;
use claude_context_core::capfs::ProjectFile;
use claude_context_core::proposal::{hunks, join, Prepared, Text};
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

#[derive(Arbitrary, Debug)]
struct Input {
    old: Vec<u8>,
    new: Vec<u8>,
    /// The person's change meanwhile: `None` leaves the file as the review read it.
    edit: Option<Edit>,
    take: Vec<u8>,
    remove: bool,
}

#[derive(Arbitrary, Debug)]
enum Edit {
    Whole(Vec<u8>),
    Insert { at: u16, bytes: Vec<u8> },
    Flip { at: u16 },
    Cut { len: u16 },
}

fn root() -> &'static PathBuf {
    static R: OnceLock<(PathBuf, tempfile::TempDir)> = OnceLock::new();
    &R.get_or_init(|| {
        let d = tempfile::tempdir().expect("tempdir");
        (d.path().canonicalize().expect("canonical"), d)
    })
    .0
}

fn lines(t: &Text) -> Vec<Vec<u8>> {
    (0..t.diffed_len()).map(|i| t.line(i).to_vec()).collect()
}

fuzz_target!(|input: Input| {
    if input.old.len() > 4096 || input.new.len() > 4096 {
        return;
    }
    let old = Text::from_bytes(input.old.clone());
    let new = Text::from_bytes(input.new.clone());
    let p = Prepared {
        hunks: hunks(&old, &new),
        old,
        new,
        is_new: false,
    };
    // The hunks are in order, inside both sides, and do not overlap.
    let (old_len, new_len) = (p.old.diffed_len(), p.new.diffed_len());
    let mut a_end = 0usize;
    for h in &p.hunks {
        let a_first = if h.a_count == 0 {
            h.a_start
        } else {
            h.a_start - 1
        } as usize;
        let b_first = if h.b_count == 0 {
            h.b_start
        } else {
            h.b_start - 1
        } as usize;
        assert!(a_first >= a_end, "{:?}", p.hunks);
        assert!(a_first + h.a_count as usize <= old_len, "{h:?}");
        assert!(b_first + h.b_count as usize <= new_len, "{h:?}");
        a_end = a_first + h.a_count as usize;
    }
    // A file of no lines is empty (no lone line ending).
    let (eol, crlf) = (p.new.eol, p.new.crlf);
    let file = |t: &Text| {
        let l = lines(t);
        if l.is_empty() {
            Vec::new()
        } else {
            join(&l, eol, crlf)
        }
    };
    let all: Vec<usize> = (0..p.hunks.len()).collect();
    assert_eq!(p.compose(&[]), file(&p.old), "none taken");
    assert_eq!(p.compose(&all), file(&p.new), "all taken");
    let take: Vec<usize> = input.take.iter().map(|&i| i as usize).collect();
    let composed = p.compose(&take);

    // The write, against a file the person changed meanwhile (or not).
    let dir = root();
    let path = dir.join("f.txt");
    let _ = std::fs::remove_file(&path);
    std::fs::write(&path, &input.old).expect("write old");
    let mut now = input.old.clone();
    match &input.edit {
        None => {}
        Some(Edit::Whole(b)) => now = b.clone(),
        Some(Edit::Insert { at, bytes }) => {
            let i = (*at as usize).min(now.len());
            now.splice(i..i, bytes.iter().copied());
        }
        Some(Edit::Flip { at }) => {
            if !now.is_empty() {
                let i = *at as usize % now.len();
                now[i] ^= 0x20;
            }
        }
        Some(Edit::Cut { len }) => now.truncate(*len as usize),
    }
    std::fs::write(&path, &now).expect("write now");
    let f = ProjectFile::open(dir, "f.txt").expect("open");
    let r = if input.remove {
        f.remove(Some(&input.old))
    } else {
        f.replace(&composed, Some(&input.old))
    };
    let disk = std::fs::read(&path).ok();
    if now == input.old {
        assert!(r.is_ok(), "{r:?}");
        let want = if input.remove { None } else { Some(composed) };
        assert_eq!(disk, want);
    } else {
        assert!(r.is_err(), "the person's change was overwritten");
        assert_eq!(disk, Some(now), "the person's bytes are on disk untouched");
    }
});
