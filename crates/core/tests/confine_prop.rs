//! Property tests of path confinement: whatever path a client sends — `..`, `.`, empty and
//! absolute parts, symlinks leading in, out, up, dangling, in loops — `confine` either refuses
//! it or returns a path that lies inside the root *as the operating system resolves it*
//! (checked independently: every existing component of the result is a real directory or file,
//! not a symlink, and the result starts with the canonical root).
#![cfg(unix)]

mod common;

use claude_context_core::paths::{confine, PathError};
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
    T.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("root");
        for d in ["root/src", "root/sub/deeper", "root2", "outside"] {
            std::fs::create_dir_all(base.join(d)).unwrap();
        }
        std::fs::write(root.join("src/main.rs"), "fn main() {}").unwrap();
        std::fs::write(root.join("sub/deeper/f"), "f").unwrap();
        std::fs::write(base.join("root2/x"), "x").unwrap();
        std::fs::write(base.join("outside/secret"), "s").unwrap();
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
    })
}

/// The independent oracle: `p` is absolute and normal (no `.`/`..`), lies under the canonical
/// root, and none of its existing components is a symlink — so the OS resolves it to itself.
fn physically_inside(p: &Path, root: &Path) -> Result<(), String> {
    if !p.is_absolute() {
        return Err(format!("{} is not absolute", p.display()));
    }
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
            Err(_) => break, // nothing below a missing component can exist
        }
    }
    Ok(())
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
    let t = tree();
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
    fn no_input_resolves_outside_the_root(input in input()) {
        let t = tree();
        match confine(&t.root, &input) {
            Ok(p) => {
                if let Err(why) = physically_inside(&p, &t.root) {
                    return Err(TestCaseError::fail(format!("{input:?} -> {why}")));
                }
            }
            Err(PathError::Outside { resolved, root, .. }) => {
                prop_assert_eq!(&root, &t.root);
                prop_assert!(!resolved.starts_with(&t.root) || resolved == t.root.join("..")
                    || !resolved.is_absolute(), "refused {} which is inside", resolved.display());
            }
            Err(PathError::Invalid { .. }) => {}
            Err(e) => prop_assert!(false, "{input:?}: unexpected {e}"),
        }
    }

    /// Paths made of plain names of real entries inside the root, without symlinks or `..`,
    /// are never refused and resolve to exactly root/input.
    #[test]
    fn plain_paths_inside_are_accepted(parts in prop::collection::vec(
        prop::sample::select(vec!["src", "sub", "deeper", "new", "a", "b.txt"]), 1..5)) {
        let t = tree();
        let input = parts.join("/");
        let p = confine(&t.root, &input).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(p, t.root.join(&input));
    }

    /// Without `..`, confinement agrees with the OS: an existing target inside the root resolves
    /// to what `realpath` says.
    #[test]
    fn existing_targets_match_realpath(
        parts in prop::collection::vec(component().prop_filter("no ..", |c| c != ".."), 1..5)
    ) {
        let t = tree();
        let input = parts.join("/");
        if let Ok(real) = t.root.join(&input).canonicalize() {
            match confine(&t.root, &input) {
                Ok(p) => prop_assert_eq!(p, real),
                // Empty paths are refused by design.
                Err(PathError::Invalid { .. }) => prop_assert!(input.trim_matches('/').is_empty()),
                Err(e) => prop_assert!(!real.starts_with(&t.root), "{input:?}: {e}"),
            }
        }
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
        assert!(r.to_string().contains("symlink loop"), "{tool}: {r}");
    }
    c.assert_alive();
}
