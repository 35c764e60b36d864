//! The editor's own reads and writes of the person's project files (the review of Claude's
//! changes puts hunks back through [`ProjectFile`]): a directory swapped for a symlink out of
//! the project after the file was read, a FIFO, a file over the cap, a symlinked file — each is
//! refused, and nothing outside the project (or the file itself) changes.
#![cfg(unix)]

use claude_context_core::capfs::{CapError, ProjectFile};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

struct Tree {
    _d: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
}

fn tree() -> Tree {
    let d = tempfile::tempdir().unwrap();
    let base = d.path().canonicalize().unwrap();
    let root = base.join("project");
    let outside = base.join("outside");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    Tree {
        _d: d,
        root,
        outside,
    }
}

fn listing(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let bytes = std::fs::read(e.path()).unwrap_or_default();
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect();
    v.sort();
    v
}

/// The review read `sub/f.txt`; then another local process swapped `sub` for a symlink to a
/// directory outside the project. The reject's write (and a remove, a create) must not land
/// there — the old review code checked the directory by path, then renamed by path.
#[test]
fn a_directory_swapped_for_a_link_out_after_the_read_is_refused() {
    let t = tree();
    std::fs::write(t.root.join("sub/f.txt"), "q\n").unwrap();
    std::fs::write(t.outside.join("f.txt"), "outside\n").unwrap();
    for path in [
        "sub/f.txt".to_string(),
        t.root.join("sub/f.txt").to_string_lossy().into_owned(),
    ] {
        let f = ProjectFile::open(&t.root, &path).unwrap();
        assert_eq!(f.read().unwrap().as_deref(), Some(&b"q\n"[..]));

        std::fs::rename(t.root.join("sub"), t.root.join("sub.real")).unwrap();
        std::os::unix::fs::symlink(&t.outside, t.root.join("sub")).unwrap();
        let before = listing(&t.outside);

        let e = f.replace(b"p\n", Some(b"q\n")).unwrap_err();
        assert!(matches!(e, CapError::LinkInWrite { .. }), "{e}");
        assert!(e.to_string().contains("symbolic link"), "{e}");
        let e = f.replace(b"p\n", None).unwrap_err();
        assert!(matches!(e, CapError::LinkInWrite { .. }), "{e}");
        assert!(f.remove(None).is_err());
        assert!(f.read().is_err());
        let new = ProjectFile::open(&t.root, "sub/new.txt").unwrap();
        assert!(new.create(b"x").is_err());
        assert_eq!(before, listing(&t.outside), "nothing outside changed");

        std::fs::remove_file(t.root.join("sub")).unwrap();
        std::fs::rename(t.root.join("sub.real"), t.root.join("sub")).unwrap();
        assert_eq!(std::fs::read(t.root.join("sub/f.txt")).unwrap(), b"q\n");
    }
}

#[test]
fn a_fifo_is_refused_at_once_and_left_alone() {
    let t = tree();
    let fifo = t.root.join("pipe");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let f = ProjectFile::open(&t.root, "pipe").unwrap();
    for e in [
        f.read().unwrap_err(),
        f.replace(b"x", None).unwrap_err(),
        f.remove(None).unwrap_err(),
    ] {
        assert!(matches!(e, CapError::NotRegular { .. }), "{e}");
    }
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
}

#[test]
fn a_file_over_the_cap_is_neither_read_nor_written() {
    let t = tree();
    std::fs::write(t.root.join("big"), vec![b'a'; 11]).unwrap();
    std::fs::write(t.root.join("small"), "s").unwrap();
    let big = ProjectFile::open(&t.root, "big").unwrap().with_limit(10);
    assert!(matches!(big.read().unwrap_err(), CapError::TooLarge { .. }));
    // The same words for a read and a write.
    assert!(
        big.read()
            .unwrap_err()
            .to_string()
            .ends_with("larger than the 10 byte limit"),
        "{}",
        big.read().unwrap_err()
    );
    let small = ProjectFile::open(&t.root, "small").unwrap().with_limit(10);
    let e = small.replace(&[b'b'; 11], None).unwrap_err();
    assert!(matches!(e, CapError::TooLarge { .. }), "{e}");
    assert_eq!(std::fs::read(t.root.join("small")).unwrap(), b"s");
}

#[test]
fn a_replace_is_atomic_keeps_the_mode_and_never_overwrites_a_change() {
    let t = tree();
    let p = t.root.join("run.sh");
    std::fs::write(&p, "old\n").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o750)).unwrap();
    let f = ProjectFile::open(&t.root, "run.sh").unwrap();
    f.replace(b"new\n", Some(b"old\n")).unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"new\n");
    assert_eq!(
        std::fs::metadata(&p).unwrap().permissions().mode() & 0o7777,
        0o750
    );
    // Someone changed it since: not overwritten, not removed.
    let e = f.replace(b"mine\n", Some(b"old\n")).unwrap_err();
    assert!(matches!(e, CapError::Changed { .. }), "{e}");
    let e = f.remove(Some(b"old\n")).unwrap_err();
    assert!(matches!(e, CapError::Changed { .. }), "{e}");
    assert_eq!(std::fs::read(&p).unwrap(), b"new\n");
    // No temp file left beside it.
    assert_eq!(listing(&t.root).len(), 2, "{:?}", listing(&t.root));
    // A missing file is not created by a replace; a create refuses an existing one.
    let gone = ProjectFile::open(&t.root, "gone.txt").unwrap();
    assert!(gone.replace(b"x", None).unwrap_err().is_not_found());
    assert_eq!(gone.read().unwrap(), None);
    assert!(f.create(b"x").is_err());
    gone.create(b"back\n").unwrap();
    assert_eq!(std::fs::read(t.root.join("gone.txt")).unwrap(), b"back\n");
    gone.remove(Some(b"back\n")).unwrap();
    assert!(!t.root.join("gone.txt").exists());
}

#[test]
fn a_symlinked_file_is_never_written_or_removed_through() {
    let t = tree();
    std::fs::write(t.outside.join("target.txt"), "y\n").unwrap();
    std::os::unix::fs::symlink(t.outside.join("target.txt"), t.root.join("link.txt")).unwrap();
    let f = ProjectFile::open(&t.root, "link.txt").unwrap();
    // Each refusal says what was refused: a read, a write.
    let e = f.read().unwrap_err();
    assert!(matches!(e, CapError::LinkInRead { .. }), "{e}");
    assert!(e.to_string().contains("is not followed"), "{e}");
    let e = f.replace(b"x\n", None).unwrap_err();
    assert!(matches!(e, CapError::LinkInWrite { .. }), "{e}");
    assert!(
        e.to_string().contains("writes do not go through links"),
        "{e}"
    );
    assert!(f.remove(None).is_err());
    assert_eq!(std::fs::read(t.outside.join("target.txt")).unwrap(), b"y\n");
    assert!(std::fs::symlink_metadata(t.root.join("link.txt"))
        .unwrap()
        .file_type()
        .is_symlink());
    // A path out of the project is refused before anything is opened.
    assert!(ProjectFile::open(&t.root, "../outside/target.txt").is_err());
}
