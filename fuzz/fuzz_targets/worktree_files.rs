//! The worktree's files as land reads them (crates/core/src/worktree.rs): a background
//! session's worktree is the model's, and so is everything git prints about it.
//! * `diff --name-status -z`, `ls-files -z`, `cat-file --batch` outputs built from arbitrary
//!   names (any bytes but NUL) and contents read back exactly; the same outputs cut anywhere
//!   give an error or exactly the entries before the cut, never a wrong path or blob; raw bytes
//!   never panic;
//! * a `.git` file's and a registration's text name a clean absolute path or nothing, and the
//!   registration found is the one and only that names the worktree's `.git`;
//! * a path land may write is plain, relative, outside every `.git` (any case) and the
//!   sessions' worktrees, without a line break, and stays under the project when joined to it.
#![no_main]

// The core's module itself, by its path: a leaf that uses no other module of the crate, so the
// target builds without the rest of the core (its instrumented build is the slow part here).
#[path = "../../crates/core/src/worktree.rs"]
#[allow(dead_code)]
mod worktree;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use worktree::{
    batch, clean, landable, name_status, named_path, registered, z_list, Change, WorktreeError,
};

#[derive(Arbitrary, Debug)]
struct Input {
    changes: Vec<(u8, Vec<u8>, Vec<u8>)>,
    objects: Vec<Option<Vec<u8>>>,
    cut: u16,
    raw: Vec<u8>,
    gitdirs: Vec<(u8, Vec<u8>)>,
    dotgit: u8,
    text: Vec<u8>,
    path: Vec<u8>,
}

const STATUSES: &[u8] = b"ADMTUXRC";
const ADMINS: &[&[u8]] = &[
    b"/p/.git/worktrees/a",
    b"/p/.git/worktrees/b",
    b"/p/.git/worktrees/a1",
];
const DOTGITS: &[&[u8]] = &[
    b"/p/.claude/worktrees/a/.git",
    b"/p/.claude/worktrees/b/.git",
];

fn no_nul(mut b: Vec<u8>) -> Vec<u8> {
    b.retain(|c| *c != 0);
    if b.is_empty() {
        b.push(b'x');
    }
    b
}

/// A `--name-status -z` output of `changes` and the changes it must read as.
fn name_status_of(changes: &[(u8, Vec<u8>, Vec<u8>)]) -> (Vec<u8>, Vec<Change>, Vec<usize>) {
    let (mut out, mut want, mut ends) = (Vec::new(), Vec::new(), Vec::new());
    for (s, a, b) in changes.iter().take(64) {
        let status = STATUSES[usize::from(*s) % STATUSES.len()];
        let (a, b) = (no_nul(a.clone()), no_nul(b.clone()));
        out.push(status);
        if status == b'R' || status == b'C' {
            out.extend_from_slice(b"100");
        }
        out.push(0);
        out.extend_from_slice(&a);
        out.push(0);
        if status == b'R' || status == b'C' {
            out.extend_from_slice(&b);
            out.push(0);
            want.push(Change {
                status: b'D',
                path: a,
            });
            want.push(Change {
                status: b'A',
                path: b,
            });
        } else {
            want.push(Change { status, path: a });
        }
        ends.push(want.len());
    }
    (out, want, ends)
}

fn check_name_status(input: &Input) {
    let (out, want, ends) = name_status_of(&input.changes);
    assert_eq!(name_status(&out).as_ref(), Ok(&want));
    // Cut anywhere: an error, or exactly the whole entries before the cut.
    let cut = usize::from(input.cut) % (out.len() + 1);
    match name_status(&out[..cut]) {
        Ok(got) => assert!(
            ends.contains(&got.len()) || got.is_empty(),
            "a partial entry read"
        ),
        Err(e) => assert!(matches!(
            e,
            WorktreeError::Truncated | WorktreeError::Status(_)
        )),
    }
    if let Ok(got) = name_status(&out[..cut]) {
        assert_eq!(&got[..], &want[..got.len()]);
    }
    if let Ok(got) = name_status(&input.raw) {
        assert!(got.iter().all(|c| !c.path.contains(&0)));
    }
    let names: Vec<Vec<u8>> = want.iter().map(|c| c.path.clone()).collect();
    let mut z = Vec::new();
    for n in &names {
        z.extend_from_slice(n);
        z.push(0);
    }
    assert_eq!(z_list(&z), Ok(names.clone()));
    let cut = usize::from(input.cut) % (z.len() + 1);
    if let Ok(got) = z_list(&z[..cut]) {
        assert_eq!(&got[..], &names[..got.len()]);
    }
}

fn check_batch(input: &Input) {
    let objects: Vec<Option<Vec<u8>>> = input.objects.iter().take(32).cloned().collect();
    let mut out = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        match o {
            Some(b) => {
                out.extend_from_slice(format!("{:040x} blob {}\n", i, b.len()).as_bytes());
                out.extend_from_slice(b);
                out.push(b'\n');
            }
            None => out.extend_from_slice(format!("{i:x}:some path missing\n").as_bytes()),
        }
    }
    assert_eq!(batch(&out, objects.len()), objects);
    let cut = usize::from(input.cut) % (out.len() + 1);
    let got = batch(&out[..cut], objects.len());
    assert_eq!(got.len(), objects.len());
    for (g, o) in got.iter().zip(&objects) {
        if g.is_some() {
            assert_eq!(g, o, "a blob read that is not the one asked for");
        }
    }
    let n = usize::from(input.cut % 64);
    assert_eq!(batch(&input.raw, n).len(), n);
}

fn is_clean_absolute(p: &[u8]) -> bool {
    p.first() == Some(&b'/')
        && !p.contains(&0)
        && !p.contains(&b'\n')
        && (p == b"/" || !p.ends_with(b"/"))
        && p[1..]
            .split(|b| *b == b'/')
            .all(|c| p == b"/" || (!c.is_empty() && c != b"." && c != b".."))
}

fn check_git_files(input: &Input) {
    for prefix in [Some(&b"gitdir"[..]), None] {
        if let Some(p) = named_path(&input.text, prefix, b"/p/.claude/worktrees/a") {
            assert!(is_clean_absolute(&p), "{p:?}");
            assert_eq!(clean(&p).as_deref(), Some(&p[..]));
        }
    }
    let regs: Vec<(Vec<u8>, Vec<u8>)> = input
        .gitdirs
        .iter()
        .take(8)
        .map(|(a, t)| (ADMINS[usize::from(*a) % ADMINS.len()].to_vec(), t.clone()))
        .collect();
    let dotgit = DOTGITS[usize::from(input.dotgit) % DOTGITS.len()];
    let naming: Vec<usize> = (0..regs.len())
        .filter(|i| named_path(&regs[*i].1, None, &regs[*i].0).as_deref() == Some(dotgit))
        .collect();
    match registered(&regs, dotgit) {
        Ok(i) => assert_eq!(naming, vec![i]),
        Err(WorktreeError::NotRegistered) => assert!(naming.is_empty()),
        Err(WorktreeError::RegisteredTwice) => assert!(naming.len() > 1),
        Err(e) => panic!("unexpected {e}"),
    }
}

fn check_landable(path: &[u8]) {
    if landable(path).is_err() {
        return;
    }
    assert!(!path.is_empty() && path[0] != b'/' && !path.contains(&0) && !path.contains(&b'\n'));
    let parts: Vec<&[u8]> = path.split(|b| *b == b'/').collect();
    for c in &parts {
        assert!(!c.is_empty() && *c != b"." && *c != b"..", "{path:?}");
        assert!(!c.eq_ignore_ascii_case(b".git"), "{path:?}");
    }
    assert!(!(parts.len() > 2 && parts[0] == b".claude" && parts[1] == b"worktrees"));
    let mut joined = b"/root/".to_vec();
    joined.extend_from_slice(path);
    let c = clean(&joined).expect("a relative plain path joined to the root is clean");
    assert!(
        c.starts_with(b"/root/") && c.len() > 6,
        "{path:?} leaves the root"
    );
}

fuzz_target!(|input: Input| {
    check_name_status(&input);
    check_batch(&input);
    check_git_files(&input);
    check_landable(&input.path);
    check_landable(&input.raw);
});
