//! Lexical path helpers. Confinement itself — resolving a client's path inside a root — is the
//! capability layer's ([`crate::capfs`]): paths are opened beneath a directory handle, never
//! checked and then opened by name.

use std::path::{Component, Path, PathBuf};

/// The last component of `dir` as part of a file name (the plugin's per-project stores): every
/// character but an ASCII letter or digit, `-`, `_` and those in `keep` made `_`, at most 48
/// of them; empty when `dir` has no last component.
pub fn name_part(dir: &Path, keep: &[char]) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || keep.contains(&c) {
                c
            } else {
                '_'
            }
        })
        .take(48)
        .collect()
}

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

/// How many symlinks one resolution may follow (Linux's own limit is 40).
pub const MAX_SYMLINK_HOPS: usize = 40;

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

    #[test]
    fn name_part_keeps_safe_characters_only() {
        let dir = Path::new("/home/me/my project.v2-ü_x");
        assert_eq!(name_part(dir, &[]), "my_project_v2-__x");
        assert_eq!(name_part(dir, &['.']), "my_project.v2-__x");
        assert_eq!(name_part(Path::new("/"), &[]), "");
        assert_eq!(
            name_part(&Path::new("/").join("a".repeat(60)), &[]).len(),
            48
        );
    }

    #[test]
    fn normalize_keeps_leading_parents() {
        assert_eq!(normalize(Path::new("a/../../b")), PathBuf::from("../b"));
        assert_eq!(normalize(Path::new("/a/../../b")), PathBuf::from("/b"));
        assert_eq!(normalize(Path::new("./a/./b/..")), PathBuf::from("a"));
    }

    #[test]
    fn relative_inside_names_paths_under_the_root() {
        let r = Path::new("/p");
        assert_eq!(relative_inside(r, Path::new("/p")).as_deref(), Some("."));
        assert_eq!(
            relative_inside(r, Path::new("/p/a/b")).as_deref(),
            Some("a/b")
        );
        assert_eq!(relative_inside(r, Path::new("/pq")), None);
    }
}
