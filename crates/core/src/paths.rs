//! Path confinement: a path a client gives us is resolved against a root and refused when it
//! leads outside it — through `..`, an absolute path, or a symlink anywhere along the way.

use std::fmt;
use std::path::{Component, Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathError {
    /// The path resolves outside the root.
    Outside {
        input: String,
        resolved: PathBuf,
        root: PathBuf,
    },
    /// The root itself cannot be resolved (missing, unreadable).
    BadRoot { root: PathBuf, reason: String },
    /// Empty path, NUL byte, …
    Invalid { input: String, reason: String },
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathError::Outside {
                input,
                resolved,
                root,
            } => write!(
                f,
                "refused: '{input}' resolves to '{}', which is outside the project root '{}'. \
                 Use a path inside the root (relative paths resolve against it).",
                resolved.display(),
                root.display()
            ),
            PathError::BadRoot { root, reason } => {
                write!(f, "the root '{}' cannot be used: {reason}", root.display())
            }
            PathError::Invalid { input, reason } => write!(f, "invalid path '{input}': {reason}"),
        }
    }
}

impl std::error::Error for PathError {}

/// Removes `.` and folds `..` lexically. `..` above the start is kept at the front, so the
/// result of a path that climbs out still climbs out.
pub fn normalize(p: &Path) -> PathBuf {
    let mut out: Vec<Component> = Vec::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.last() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir) | Some(Component::Prefix(_)) => {}
                _ => out.push(c),
            },
            other => out.push(other),
        }
    }
    let mut pb = PathBuf::new();
    for c in out {
        pb.push(c.as_os_str());
    }
    if pb.as_os_str().is_empty() {
        pb.push(".");
    }
    pb
}

/// Resolves `input` against `root` and checks it stays inside.
///
/// The deepest existing ancestor is canonicalised (so every symlink on the way is followed) and
/// the rest is appended; the result must lie inside the canonical root. The returned path is
/// canonical where it exists. Works for paths that do not exist yet (writes).
pub fn confine(root: &Path, input: &str) -> Result<PathBuf, PathError> {
    if input.is_empty() {
        return Err(PathError::Invalid {
            input: input.into(),
            reason: "the path is empty".into(),
        });
    }
    if input.contains('\0') {
        return Err(PathError::Invalid {
            input: input.escape_debug().to_string(),
            reason: "the path contains a NUL byte".into(),
        });
    }
    let root_canon = root.canonicalize().map_err(|e| PathError::BadRoot {
        root: root.to_path_buf(),
        reason: e.to_string(),
    })?;
    let joined = if Path::new(input).is_absolute() {
        PathBuf::from(input)
    } else {
        root_canon.join(input)
    };
    let lexical = normalize(&joined);
    let Some(resolved) = resolve_existing_prefix(&lexical) else {
        return Err(PathError::Invalid {
            input: input.into(),
            reason: format!(
                "more than {MAX_SYMLINK_HOPS} symbolic links on the way (a symlink loop?)"
            ),
        });
    };
    if resolved.starts_with(&root_canon) {
        Ok(resolved)
    } else {
        Err(PathError::Outside {
            input: input.into(),
            resolved,
            root: root_canon,
        })
    }
}

/// How many symlinks one resolution may follow (Linux's own limit is 40).
pub const MAX_SYMLINK_HOPS: usize = 40;

/// Canonicalises the longest existing prefix of an absolute, normalised path and appends the
/// rest. A dangling symlink in the path is resolved through its target text. `None` when more
/// than [`MAX_SYMLINK_HOPS`] symlinks had to be followed (a loop).
///
/// Iterative on purpose: a pair of symlinks pointing at each other used to recurse until the
/// stack overflowed, which aborts the whole editor.
fn resolve_existing_prefix(p: &Path) -> Option<PathBuf> {
    let mut path = p.to_path_buf();
    'hop: for _ in 0..=MAX_SYMLINK_HOPS {
        let mut existing = path.clone();
        let mut rest: Vec<std::ffi::OsString> = Vec::new();
        loop {
            if let Ok(c) = existing.canonicalize() {
                let mut out = c;
                for r in rest.iter().rev() {
                    out.push(r);
                }
                return Some(normalize(&out));
            }
            // A dangling symlink (or one in a loop): continue from its target so it cannot
            // smuggle a write out of the root.
            if let Ok(target) = std::fs::read_link(&existing) {
                let parent = existing.parent().unwrap_or(Path::new("/"));
                let mut next = parent.join(target);
                for r in rest.iter().rev() {
                    next.push(r);
                }
                path = normalize(&next);
                continue 'hop;
            }
            match (existing.file_name(), existing.parent()) {
                (Some(name), Some(parent)) => {
                    rest.push(name.to_os_string());
                    existing = parent.to_path_buf();
                }
                _ => return Some(path),
            }
        }
    }
    None
}

/// `path` relative to `root` (both absolute) when inside it: `.` for the root itself.
pub fn relative_inside(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    if rel.as_os_str().is_empty() {
        Some(".".into())
    } else {
        Some(rel.to_string_lossy().into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("root");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/main.rs"), "fn main(){}").unwrap();
        std::fs::create_dir_all(d.path().join("outside")).unwrap();
        std::fs::write(d.path().join("outside/secret"), "s").unwrap();
        let root = root.canonicalize().unwrap();
        (d, root)
    }

    #[test]
    fn relative_paths_resolve_against_root() {
        let (_d, root) = setup();
        assert_eq!(
            confine(&root, "src/main.rs").unwrap(),
            root.join("src/main.rs")
        );
        assert_eq!(
            confine(&root, "./src/../src/main.rs").unwrap(),
            root.join("src/main.rs")
        );
        assert_eq!(confine(&root, ".").unwrap(), root);
        assert_eq!(
            confine(&root, "new/file.txt").unwrap(),
            root.join("new/file.txt")
        );
    }

    #[test]
    fn dotdot_and_absolute_escapes_are_refused_with_both_paths_named() {
        let (_d, root) = setup();
        let e = confine(&root, "../outside/secret").unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("outside/secret"), "{msg}");
        assert!(msg.contains(&root.display().to_string()), "{msg}");
        assert!(confine(&root, "/etc/passwd").is_err());
        assert!(confine(&root, "src/../../outside").is_err());
        // An absolute path inside the root is fine.
        let inside = root.join("src/main.rs");
        assert_eq!(confine(&root, inside.to_str().unwrap()).unwrap(), inside);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_that_lead_out_are_refused() {
        let (d, root) = setup();
        std::os::unix::fs::symlink(d.path().join("outside"), root.join("link")).unwrap();
        assert!(confine(&root, "link/secret").is_err());
        assert!(confine(&root, "link/newfile").is_err());
        // A dangling symlink pointing out cannot be used to create a file outside.
        std::os::unix::fs::symlink(d.path().join("outside/nothing"), root.join("dangling"))
            .unwrap();
        assert!(confine(&root, "dangling").is_err());
        // A symlink that stays inside is fine.
        std::os::unix::fs::symlink(root.join("src"), root.join("src2")).unwrap();
        assert_eq!(
            confine(&root, "src2/main.rs").unwrap(),
            root.join("src/main.rs")
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlink_loops_are_refused_not_a_stack_overflow() {
        let (_d, root) = setup();
        std::os::unix::fs::symlink("loop_b", root.join("loop_a")).unwrap();
        std::os::unix::fs::symlink("loop_a", root.join("loop_b")).unwrap();
        std::os::unix::fs::symlink("self", root.join("self")).unwrap();
        std::os::unix::fs::symlink(root.join("chain1"), root.join("chain0")).unwrap();
        std::os::unix::fs::symlink("chain0", root.join("chain1")).unwrap();
        for input in [
            "loop_a",
            "loop_b/x",
            "self",
            "src/../loop_a/deeper/file",
            "chain1",
        ] {
            let e = confine(&root, input).unwrap_err();
            assert!(matches!(e, PathError::Invalid { .. }), "{input}: {e:?}");
            assert!(e.to_string().contains("symlink loop"), "{e}");
        }
        // A long but finite chain inside the root is followed.
        let mut prev = "src".to_string();
        for i in 0..30 {
            let name = format!("hop{i}");
            std::os::unix::fs::symlink(&prev, root.join(&name)).unwrap();
            prev = name;
        }
        std::fs::remove_dir_all(root.join("src")).unwrap();
        // Dangling now: hop29 -> … -> src (missing): resolves to root/src/new.
        assert_eq!(confine(&root, "hop29/new").unwrap(), root.join("src/new"));
    }

    #[test]
    fn bad_input_is_reported() {
        let (_d, root) = setup();
        assert!(matches!(confine(&root, ""), Err(PathError::Invalid { .. })));
        assert!(matches!(
            confine(&root, "a\0b"),
            Err(PathError::Invalid { .. })
        ));
        assert!(matches!(
            confine(Path::new("/nonexistent-root-xyz"), "a"),
            Err(PathError::BadRoot { .. })
        ));
    }

    #[test]
    fn normalize_keeps_leading_parents() {
        assert_eq!(normalize(Path::new("a/../../b")), PathBuf::from("../b"));
        assert_eq!(normalize(Path::new("/a/../../b")), PathBuf::from("/b"));
    }
}
