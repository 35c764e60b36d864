//! The capability layer on a tree with symlinks leading in, out, up, dangling and in loops:
//! whatever the input, a read never returns a byte from outside the root, a listing never shows
//! an outside entry, and a write never creates or changes anything outside (nor follows a link).
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use claude_context_core::capfs::CapDir;
use claude_context_fuzz::{make_tree, physically_inside, NAMES};
use libfuzzer_sys::fuzz_target;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

struct Tree {
    base: PathBuf,
    root: PathBuf,
    _dir: tempfile::TempDir,
}

fn tree() -> &'static Tree {
    static T: OnceLock<Tree> = OnceLock::new();
    T.get_or_init(|| {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().canonicalize().expect("canonical");
        let root = make_tree(&base);
        Tree {
            base,
            root,
            _dir: dir,
        }
    })
}

fn input(u: &mut Unstructured, t: &Tree) -> arbitrary::Result<String> {
    if u.ratio(1, 4)? {
        return String::arbitrary(u); // raw text
    }
    let prefix = match u.int_in_range(0..=6)? {
        0 => "/".to_string(),
        1 => format!("{}/", t.root.display()),
        2 => format!("{}/", t.base.display()),
        3 => format!("{}/rootlink/", t.base.display()),
        4 => "//".to_string(),
        _ => String::new(),
    };
    let n = u.int_in_range(0..=10)?;
    let mut parts = Vec::new();
    for _ in 0..n {
        parts.push(if u.ratio(1, 6)? {
            String::arbitrary(u)?
        } else {
            u.choose(NAMES)?.to_string()
        });
    }
    Ok(prefix + &parts.join("/"))
}

/// Every file outside the root (root2/, outside/) with its content.
fn outside_state(base: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for d in ["root2", "outside"] {
        if let Ok(rd) = std::fs::read_dir(base.join(d)) {
            for e in rd.flatten() {
                out.push((e.path(), std::fs::read(e.path()).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

fuzz_target!(|data: &[u8]| {
    let t = tree();
    let mut u = Unstructured::new(data);
    let Ok(s) = input(&mut u, t) else { return };
    let write = u.ratio(1, 3).unwrap_or(false);
    let cap = CapDir::open_root(&t.root).expect("root");
    let Ok(rel) = cap.rel(&s) else { return };
    if let Ok(bytes) = cap.read_capped(&rel, 1 << 16) {
        assert!(
            bytes != b"secret" && bytes != b"x",
            "{s:?} read a file outside the root"
        );
    }
    if let Ok(rd) = cap.read_dir(&rel) {
        for e in rd.flatten() {
            let n = e.file_name();
            assert!(
                n != "secret" && n != "x",
                "{s:?} listed a directory outside"
            );
        }
    }
    // Creating an entry named like an outside one (a file or a directory on the way) would make
    // the read/list oracles ambiguous for later inputs.
    let ambiguous = rel.components().any(|c| {
        let c = c.as_os_str();
        c == "secret" || c == "x"
    });
    if write && !ambiguous {
        let before = outside_state(&t.base);
        if cap.write_atomic(&rel, b"W", false).is_ok() {
            let p = t.root.join(&rel);
            if let Err(why) = physically_inside(&p, &t.root) {
                panic!("{s:?} wrote {} -> {why}", p.display());
            }
        }
        assert_eq!(
            before,
            outside_state(&t.base),
            "{s:?} changed a file outside"
        );
    }
});
