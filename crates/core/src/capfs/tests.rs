//! Each test is named after the attack it stops (SECURITY.md lists them).

use super::*;
use std::path::Path;

fn tree() -> (tempfile::TempDir, PathBuf, CapDir) {
    let d = tempfile::tempdir().unwrap();
    let base = d.path().canonicalize().unwrap();
    let root = base.join("root");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/main.rs"), "fn main() {}").unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    std::fs::write(base.join("outside/secret"), "OUTSIDE-SECRET").unwrap();
    let cap = CapDir::open_root(&root).unwrap();
    (d, root, cap)
}

fn rel(s: &str) -> PathBuf {
    PathBuf::from(s)
}

#[test]
fn relative_and_absolute_inputs_map_to_paths_inside() {
    let (_d, root, cap) = tree();
    assert_eq!(cap.rel("src/main.rs").unwrap(), rel("src/main.rs"));
    assert_eq!(cap.rel("./src/../src/main.rs").unwrap(), rel("src/main.rs"));
    assert_eq!(cap.rel(".").unwrap(), rel("."));
    let abs = root.join("src/main.rs");
    assert_eq!(cap.rel(abs.to_str().unwrap()).unwrap(), rel("src/main.rs"));
    for bad in ["../outside/secret", "/etc/passwd", "src/../../x", "/"] {
        let e = cap.rel(bad).unwrap_err();
        assert!(matches!(e, CapError::Outside { .. }), "{bad}: {e}");
        assert!(e.to_string().contains("outside the project root"), "{e}");
    }
    assert!(matches!(cap.rel(""), Err(CapError::Invalid { .. })));
    assert!(matches!(cap.rel("a\0b"), Err(CapError::Invalid { .. })));
}

#[cfg(unix)]
#[test]
fn repository_symlink_to_proc_self_environ_is_refused_naming_the_link() {
    let (_d, root, cap) = tree();
    std::os::unix::fs::symlink("/proc/self/environ", root.join("rules-ja.md")).unwrap();
    let e = cap.read_capped(&rel("rules-ja.md"), 1 << 20).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, CapError::LinkOut { .. }), "{msg}");
    assert!(
        msg.contains("rules-ja.md") && msg.contains("/proc/self/environ"),
        "{msg}"
    );
}

#[cfg(unix)]
#[test]
fn repository_symlink_to_dev_zero_is_refused_without_reading() {
    let (_d, root, cap) = tree();
    std::os::unix::fs::symlink("/dev/zero", root.join("zero.md")).unwrap();
    let e = cap.read_capped(&rel("zero.md"), 1 << 20).unwrap_err();
    assert!(matches!(e, CapError::LinkOut { .. }), "{e}");
}

#[cfg(unix)]
#[test]
fn relative_symlink_climbing_out_is_refused() {
    let (_d, root, cap) = tree();
    std::os::unix::fs::symlink("../outside", root.join("out")).unwrap();
    let e = cap.read_capped(&rel("out/secret"), 1 << 20).unwrap_err();
    assert!(e.to_string().contains("'../outside'"), "{e}");
    assert!(cap.open_dir(&rel("out")).is_err());
    assert!(cap.read_dir(&rel("out")).is_err());
}

#[cfg(unix)]
#[test]
fn symlinks_that_stay_inside_are_followed_absolute_or_relative() {
    let (_d, root, cap) = tree();
    std::os::unix::fs::symlink("src", root.join("rel_in")).unwrap();
    std::os::unix::fs::symlink(root.join("src"), root.join("abs_in")).unwrap();
    std::os::unix::fs::symlink(root.join("src/main.rs"), root.join("abs_file")).unwrap();
    for p in ["rel_in/main.rs", "abs_in/main.rs", "abs_file"] {
        assert_eq!(
            cap.read_capped(&rel(p), 100).unwrap(),
            b"fn main() {}",
            "{p}"
        );
    }
    assert!(cap.open_dir(&rel("abs_in")).unwrap().is_some());
    // Listed as they are read: a directory reached through an absolute link inside is listed
    // (it was refused as "outside" while its files could be read).
    for p in ["rel_in", "abs_in"] {
        let names: Vec<String> = cap
            .read_dir(&rel(p))
            .unwrap_or_else(|e| panic!("{p}: {e}"))
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["main.rs"], "{p}");
    }
    // One that leads out is still refused.
    std::os::unix::fs::symlink(root.join("../outside"), root.join("abs_out")).unwrap();
    assert!(cap.read_dir(&rel("abs_out")).is_err());
}

#[cfg(unix)]
#[test]
fn fifo_in_the_repository_is_refused_at_once() {
    let (_d, root, cap) = tree();
    let c = std::ffi::CString::new(root.join("pipe").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    // Without O_NONBLOCK this open would wait for a writer forever (the test would hang).
    let e = cap.read_capped(&rel("pipe"), 100).unwrap_err();
    assert!(
        matches!(e, CapError::NotRegular { kind: "a FIFO", .. }),
        "{e}"
    );
    assert!(e.to_string().contains("FIFO"), "{e}");
}

#[test]
fn sparse_terabyte_file_is_refused_without_allocating_it() {
    let (_d, root, cap) = tree();
    let f = std::fs::File::create(root.join("huge.md")).unwrap();
    f.set_len(1 << 40).unwrap();
    let e = cap.read_capped(&rel("huge.md"), 1 << 20).unwrap_err();
    assert!(matches!(e, CapError::TooLarge { .. }), "{e}");
}

#[test]
fn directories_are_not_read_as_files() {
    let (_d, _root, cap) = tree();
    let e = cap.read_capped(&rel("src"), 100).unwrap_err();
    assert!(
        matches!(
            e,
            CapError::NotRegular {
                kind: "a directory",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn atomic_write_creates_parents_and_replaces() {
    let (_d, root, cap) = tree();
    let w = cap.write_atomic(&rel("a/b/c.txt"), b"one", true).unwrap();
    assert!(w.created);
    let w = cap.write_atomic(&rel("a/b/c.txt"), b"two", false).unwrap();
    assert!(!w.created);
    assert_eq!(std::fs::read(root.join("a/b/c.txt")).unwrap(), b"two");
    // No temp files are left behind.
    let names: Vec<_> = std::fs::read_dir(root.join("a/b")).unwrap().collect();
    assert_eq!(names.len(), 1);
    assert!(cap.write_atomic(&rel("a/b"), b"x", true).is_err());
    assert!(!cap.write_new(&rel("a/b/c.txt"), b"three").unwrap());
    assert!(cap.write_new(&rel("a/b/d.txt"), b"four").unwrap());
    assert_eq!(std::fs::read(root.join("a/b/c.txt")).unwrap(), b"two");
    assert_eq!(std::fs::read(root.join("a/b/d.txt")).unwrap(), b"four");
}

#[cfg(unix)]
#[test]
fn write_through_a_symlinked_directory_is_refused() {
    let (d, root, cap) = tree();
    std::os::unix::fs::symlink(d.path().join("outside"), root.join("out")).unwrap();
    std::os::unix::fs::symlink("src", root.join("src_alias")).unwrap();
    for p in ["out/new.txt", "out/secret", "src_alias/new.rs"] {
        let e = cap.write_atomic(&rel(p), b"x", true).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{p}: {e}");
    }
    assert!(!d.path().join("outside/new.txt").exists());
    assert_eq!(
        std::fs::read(d.path().join("outside/secret")).unwrap(),
        b"OUTSIDE-SECRET"
    );
    assert!(!root.join("src/new.rs").exists());
}

#[cfg(unix)]
#[test]
fn write_over_a_symlink_is_refused_not_followed() {
    let (d, root, cap) = tree();
    std::os::unix::fs::symlink(d.path().join("outside/secret"), root.join("s")).unwrap();
    std::os::unix::fs::symlink(d.path().join("outside/nothing"), root.join("dangling")).unwrap();
    for p in ["s", "dangling"] {
        let e = cap.write_atomic(&rel(p), b"x", true).unwrap_err();
        assert!(matches!(e, CapError::LinkInWrite { .. }), "{p}: {e}");
    }
    assert!(!d.path().join("outside/nothing").exists());
    assert!(std::fs::symlink_metadata(root.join("s"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[cfg(unix)]
#[test]
fn overwrite_never_keeps_an_exec_bit() {
    use std::os::unix::fs::PermissionsExt;
    let (_d, root, cap) = tree();
    let hook = root.join("script.sh");
    std::fs::write(&hook, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o750)).unwrap();
    cap.write_atomic(&rel("script.sh"), b"echo pwned\n", true)
        .unwrap();
    let mode = std::fs::metadata(&hook).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640, "group read kept, every exec bit dropped");
}

#[test]
fn files_that_run_code_are_protected() {
    let p = WritePolicy::default();
    for bad in [
        ".git/hooks/pre-commit",
        ".git/config",
        ".git",
        "vendor/lib/.git/config",
        ".GIT/config",
        ".claude/settings.json",
        ".claude/settings.local.json",
        "sub/.claude/settings.json",
        ".mcp.json",
        ".envrc",
        "sub/.envrc",
        ".nvim.lua",
        ".nvimrc",
        ".exrc",
        ".lazy.lua",
    ] {
        let e = p.check(Path::new(bad)).unwrap_err();
        assert!(matches!(e, CapError::Denied { .. }), "{bad}");
        let msg = e.to_string();
        assert!(msg.contains("allow_write"), "{msg}");
    }
    for ok in [
        "src/main.rs",
        ".gitignore",
        ".gitattributes",
        ".gitmodules",
        "docs/settings.json",
        "git/config",
        "package.json",
        "Makefile",
        "build.rs",
        "pyproject.toml",
        "CLAUDE.md",
        ".editorconfig",
        "docs/mise-notes.md",
        "notes.python",
        ".github/dependabot.yml",
    ] {
        assert!(p.check(Path::new(ok)).is_ok(), "{ok}");
    }
    let p =
        WritePolicy::new(&[".claude/settings.local.json".into(), ".git/info/*".into()]).unwrap();
    assert!(p.check(Path::new(".claude/settings.local.json")).is_ok());
    assert!(p.check(Path::new(".git/info/exclude")).is_ok());
    assert!(p.check(Path::new(".git/hooks/pre-commit")).is_err());
    assert!(p.check(Path::new(".claude/settings.json")).is_err());
    assert!(WritePolicy::new(&["[".into()]).is_err());
}

#[test]
fn code_running_files_are_protected() {
    let p = WritePolicy::default();
    // Every class on the list, at the root and deeper, in other letter cases, and as Windows
    // would read a name (trailing dots and spaces, an `:$DATA` stream).
    for bad in [
        ".pre-commit-config.yaml",
        "sub/.pre-commit-config.yml",
        ".husky/pre-commit",
        ".husky/_/husky.sh",
        ".githooks/pre-push",
        "lefthook.yml",
        "pkg/lefthook.yaml",
        ".lefthook.yml",
        "lefthook-local.yml",
        ".lefthook/pre-commit/lint.sh",
        ".overcommit.yml",
        ".cargo/config",
        ".cargo/config.toml",
        "crates/x/.cargo/config.toml",
        ".claude/commands/x.md",
        ".claude/agents/a.md",
        ".claude/skills/s/SKILL.md",
        ".claude/hooks/h.sh",
        ".cursor/mcp.json",
        ".gemini/settings.json",
        ".vscode/tasks.json",
        ".vscode/settings.json",
        ".vscode/launch.json",
        ".idea/runConfigurations/x.xml",
        ".idea/workspace.xml",
        ".zed/settings.json",
        ".helix/languages.toml",
        ".fleet/run.json",
        ".devcontainer/devcontainer.json",
        ".dir-locals.el",
        ".vimrc",
        ".luarc.json",
        ".luarc.jsonc",
        ".env",
        "mise.toml",
        ".mise.toml",
        "mise.local.toml",
        ".mise.dev.toml",
        ".mise/config.toml",
        ".config/mise.toml",
        ".config/mise/config.toml",
        "mise/config.toml",
        ".tool-versions",
        "rust-toolchain",
        "rust-toolchain.toml",
        ".npmrc",
        ".yarnrc",
        ".yarnrc.yml",
        ".pnpmfile.cjs",
        ".yarn/releases/yarn-4.cjs",
        ".yarn/plugins/p.cjs",
        ".venv/lib/python3.12/site-packages/evil.pth",
        "lib/site-packages/x.pth",
        "sitecustomize.py",
        ".venv/bin/activate",
        ".github/workflows/ci.yml",
        ".github/actions/a/action.yml",
        ".gitlab-ci.yml",
        ".circleci/config.yml",
        ".HUSKY/pre-commit",
        "Sub/.VSCode/Tasks.JSON",
        ".Cargo/Config.TOML",
        ".git./config",
        ".envrc ",
        ".envrc::$DATA",
        "LEFTHOOK.YML",
    ] {
        let e = p.check(Path::new(bad)).unwrap_err();
        assert!(matches!(e, CapError::Denied { .. }), "{bad}");
        assert!(e.to_string().contains("allow_write"), "{e}");
        assert!(protected_reason(Path::new(bad)).is_some(), "{bad}");
    }
    for ok in [
        "lefthookery.md",
        "mise.md",
        "mise.toml.bak",
        "my.pth.txt",
        "src/env.rs",
    ] {
        assert!(p.check(Path::new(ok)).is_ok(), "{ok}");
    }
    // Each entry of the list is named by at least one path above (the list is what is tested).
    for e in PROTECTED {
        let hit = match e.name {
            Name::Tree(d) => format!("x/{d}/y"),
            Name::File(f) => format!("x/{f}"),
            Name::Seq(s) => format!("x/{}/y", s.join("/")),
            Name::Stem(stem, ext) => format!("x/{stem}.local{ext}"),
            Name::Suffix(x) => format!("x/a{x}"),
        };
        assert_eq!(protected_reason(Path::new(&hit)), Some(e.why), "{hit}");
    }
}

#[test]
fn a_sparse_file_over_the_cap_is_refused_from_its_size() {
    let (_d, root, cap) = tree();
    // 1 TiB of holes: reading the first `limit` bytes would take a while; the size says enough.
    std::fs::File::create(root.join("huge.md"))
        .unwrap()
        .set_len(1 << 40)
        .unwrap();
    let e = cap.read_capped(&rel("huge.md"), 16 << 20).unwrap_err();
    assert!(matches!(e, CapError::TooLarge { .. }), "{e}");
    let e = cap
        .open_regular_capped(&rel("huge.md"), 16 << 20)
        .unwrap_err();
    assert!(matches!(e, CapError::TooLarge { .. }), "{e}");
    assert!(cap.open_regular_capped(&rel("huge.md"), 1 << 40).is_ok());
}

#[cfg(unix)]
#[test]
fn untrusted_files_are_read_without_following_links_or_waiting() {
    let d = tempfile::tempdir().unwrap();
    let lock = d.path().join("1.lock");
    std::fs::write(&lock, b"{}").unwrap();
    let (bytes, meta) = read_untrusted_file(&lock, 16).unwrap();
    assert_eq!((bytes.as_slice(), meta.is_file()), (&b"{}"[..], true));
    // A symlink to a readable file is not followed.
    let link = d.path().join("2.lock");
    std::os::unix::fs::symlink(&lock, &link).unwrap();
    assert!(matches!(
        read_untrusted_file(&link, 16),
        Err(CapError::NotRegular { kind: SYMLINK, .. })
    ));
    // A FIFO is refused at once, a file over the cap without reading it.
    let fifo = d.path().join("3.lock");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    assert!(matches!(
        read_untrusted_file(&fifo, 16),
        Err(CapError::NotRegular { .. })
    ));
    assert!(matches!(
        read_untrusted_file(&lock, 1),
        Err(CapError::TooLarge { .. })
    ));
}
