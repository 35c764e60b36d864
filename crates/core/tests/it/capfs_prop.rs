//! Property tests of the capability layer: whatever path a client sends — `..`, `.`, empty and
//! absolute parts, symlinks leading in, out, up, dangling, in loops — a read never returns a byte
//! from outside the root, a listing never shows an outside directory, and a write never creates
//! or changes anything outside nor goes through a symlink (checked independently: every existing
//! component of the written path is a real directory, under the canonical root).
#![cfg(unix)]

use crate::common;

use claude_context_core::capfs::CapDir;
use proptest::prelude::*;
use serde_json::json;
use std::os::unix::fs::symlink;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

struct Tree {
    _dir: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
}
/// base/
///   root/ src/main.rs, sub/deeper/f, and symlinks of every kind
///   root2/x            (a sibling whose name starts with "root")
///   outside/secret
///   rootlink -> root
fn tree() -> &'static Tree {
    static T: OnceLock<Tree> = OnceLock::new();
    T.get_or_init(make_tree)
}

/// A second tree for the write test: writes create entries (even named like outside ones).
fn write_tree() -> &'static Tree {
    static T: OnceLock<Tree> = OnceLock::new();
    T.get_or_init(make_tree)
}

fn make_tree() -> Tree {
    {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("root");
        for d in ["root/src", "root/sub/deeper", "root2", "outside"] {
            std::fs::create_dir_all(base.join(d)).unwrap();
        }
        std::fs::write(root.join("src/main.rs"), "fn main() {}").unwrap();
        std::fs::write(root.join("sub/deeper/f"), "f").unwrap();
        std::fs::write(base.join("root2/x"), "ROOT2-SECRET").unwrap();
        std::fs::write(base.join("outside/secret"), "OUTSIDE-SECRET").unwrap();
        let links: &[(&str, PathBuf)] = &[
            ("root/link_in", root.join("src")),
            ("root/link_in_rel", "src".into()),
            ("root/link_out", base.join("outside")),
            ("root/link_out_rel", "../outside".into()),
            ("root/link_up", "..".into()),
            ("root/self", ".".into()),
            ("root/sub/back", "../..".into()),
            ("root/sub/back_in", "../src".into()),
            ("root/file_out", base.join("outside/secret")),
            ("root/dangling_out", base.join("outside/nothing/new")),
            ("root/dangling_out_rel", "../outside/missing".into()),
            ("root/dangling_in", root.join("newdir/x")),
            ("root/dangling_in_rel", "sub/missing".into()),
            ("root/dangling_chain", "dangling_out".into()),
            ("root/loop_a", "loop_b".into()),
            ("root/loop_b", "loop_a".into()),
            ("root/to_root2", base.join("root2")),
            ("rootlink", root.clone()),
        ];
        for (name, target) in links {
            symlink(target, base.join(name)).unwrap();
        }
        Tree {
            _dir: dir,
            base,
            root,
        }
    }
}

/// The independent oracle: `p` is absolute and normal (no `.`/`..`), lies under the canonical
/// root, and none of its existing components is a symlink — so the OS resolves it to itself.
fn physically_inside(p: &Path, root: &Path) -> Result<(), String> {
    if p.components()
        .any(|c| matches!(c, Component::CurDir | Component::ParentDir))
    {
        return Err(format!("{} is not normal", p.display()));
    }
    if !p.starts_with(root) {
        return Err(format!("{} is not under {}", p.display(), root.display()));
    }
    let mut cur = PathBuf::from("/");
    for c in p.components().skip(1) {
        cur.push(c);
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(format!(
                    "{} goes through the symlink {}",
                    p.display(),
                    cur.display()
                ))
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    Ok(())
}

/// Every file outside the root (root2/, outside/) with its content.
fn outside_state(base: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for d in ["root2", "outside"] {
        for e in std::fs::read_dir(base.join(d)).unwrap().flatten() {
            out.push((e.path(), std::fs::read(e.path()).unwrap_or_default()));
        }
    }
    out.sort();
    out
}

fn component() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => Just("..".to_string()),
        2 => Just(".".to_string()),
        1 => Just("".to_string()),
        6 => prop::sample::select(vec![
            "src", "main.rs", "sub", "deeper", "f", "link_in", "link_in_rel", "link_out",
            "link_out_rel", "link_up", "self", "back", "back_in", "file_out", "dangling_out",
            "dangling_out_rel", "dangling_in", "dangling_in_rel", "dangling_chain", "loop_a",
            "to_root2", "root", "root2", "rootlink", "outside", "secret", "x", "newdir",
        ])
        .prop_map(String::from),
        2 => "[a-z]{1,4}",
        1 => "[a-zA-Z0-9 ._~é€-]{1,8}",
    ]
}

fn input() -> impl Strategy<Value = String> {
    input_for(tree())
}

fn input_for(t: &'static Tree) -> impl Strategy<Value = String> {
    let (base, root) = (t.base.display().to_string(), t.root.display().to_string());
    let prefix = prop_oneof![
        6 => Just(String::new()),
        1 => Just("/".to_string()),
        1 => Just(format!("{root}/")),
        1 => Just(format!("{base}/")),
        1 => Just(format!("{base}/rootlink/")),
        1 => Just(format!("{base}/root2/")),
        1 => Just("/etc/".to_string()),
        1 => Just("//".to_string()),
    ];
    (
        prefix,
        prop::collection::vec(component(), 0..8),
        any::<bool>(),
    )
        .prop_map(|(prefix, parts, trailing)| {
            let mut s = prefix + &parts.join("/");
            if trailing {
                s.push('/');
            }
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn no_input_reads_or_lists_outside_the_root(input in input()) {
        let t = tree();
        let cap = CapDir::open_root(&t.root).unwrap();
        let Ok(rel) = cap.rel(&input) else { return Ok(()) };
        if let Ok(bytes) = cap.read_capped(&rel, 1 << 16) {
            let text = String::from_utf8_lossy(&bytes);
            prop_assert!(!text.contains("SECRET"), "{input:?} read {text}");
        }
        if let Ok(rd) = cap.read_dir(&rel) {
            for e in rd.flatten() {
                let n = e.file_name();
                prop_assert!(n != "secret" && n != "x", "{input:?} listed an outside directory");
            }
        }
    }

    #[test]
    fn no_input_writes_outside_the_root(input in input_for(write_tree())) {
        let t = write_tree();
        let cap = CapDir::open_root(&t.root).unwrap();
        let Ok(rel) = cap.rel(&input) else { return Ok(()) };
        // A file named like an outside one would make the read oracle ambiguous.
        if matches!(rel.file_name(), Some(n) if n == "secret" || n == "x") {
            return Ok(());
        }
        let before = outside_state(&t.base);
        if cap.write_atomic(&rel, b"W", false).is_ok() {
            let p = t.root.join(&rel);
            if let Err(why) = physically_inside(&p, &t.root) {
                return Err(TestCaseError::fail(format!("{input:?} -> {why}")));
            }
            prop_assert_eq!(std::fs::read(&p).unwrap(), b"W");
        }
        prop_assert_eq!(before, outside_state(&t.base), "{:?} changed a file outside", input);
    }

    /// Paths made of plain names inside the root, without symlinks or `..`, are never refused
    /// and name exactly root/input.
    #[test]
    fn plain_paths_inside_are_accepted(parts in prop::collection::vec(
        prop::sample::select(vec!["src", "sub", "deeper", "new", "a", "b.txt"]), 1..5)) {
        let t = tree();
        let input = parts.join("/");
        let cap = CapDir::open_root(&t.root).unwrap();
        let rel = cap.rel(&input).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(cap.display(&rel), t.root.join(&input));
    }
}

/// A symlink loop in the project, reached through the server: an error result, not a crash.
#[test]
fn symlink_loops_through_the_server_are_refused() {
    let srv = common::start(json!({}));
    symlink("loop_b", srv.root.join("loop_a")).unwrap();
    symlink("loop_a", srv.root.join("loop_b")).unwrap();
    let mut c = srv.client();
    for (tool, args) in [
        ("fs-read-file", json!({"path": "loop_a"})),
        ("fs-write-file", json!({"path": "loop_b/x", "content": "x"})),
        ("fs-list-directory", json!({"path": "loop_a"})),
    ] {
        let r = c.tool(tool, args);
        assert_eq!(r["isError"], true, "{tool}: {r}");
    }
    c.assert_alive();
}
