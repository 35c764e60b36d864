//! Path confinement on a tree with symlinks leading in, out, up, dangling and in loops: whatever
//! the input, `confine` refuses it or returns a path the OS resolves inside the root.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use claude_context_core::paths::confine;
use claude_context_fuzz::{make_tree, physically_inside, NAMES};
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
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

fuzz_target!(|data: &[u8]| {
    let t = tree();
    let mut u = Unstructured::new(data);
    let Ok(s) = input(&mut u, t) else { return };
    if let Ok(p) = confine(&t.root, &s) {
        if let Err(why) = physically_inside(&p, &t.root) {
            panic!("{s:?} -> {why}");
        }
    }
});
