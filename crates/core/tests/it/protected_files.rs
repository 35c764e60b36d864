//! Files that run code without the person running the project (git hooks and their managers,
//! `.claude/`, editors' tasks and settings, Cargo's configuration, mise, direnv, package-manager
//! hooks, Python start-up files, CI workflows): no writer of the bridge writes them — not
//! `fs-write-file`, not the memory bank's writes, whatever the letter case, depth, symlink or
//! hard link. The list itself is `capfs::PROTECTED` (tested entry by entry in
//! `capfs::tests::code_running_files_are_protected`).
#![cfg(unix)]

use crate::common;

use serde_json::json;
use std::os::unix::fs::symlink;

const PAYLOAD: &str = "#!/bin/sh\ntouch /tmp/pwned\n";

#[test]
fn code_running_files_are_protected_through_every_writer() {
    let srv = common::start(json!({}));
    std::fs::create_dir_all(srv.root.join(".git")).unwrap();
    std::fs::write(srv.root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let mut c = srv.client();
    let targets = [
        ".pre-commit-config.yaml",
        ".husky/pre-commit",
        "lefthook.yml",
        ".cargo/config",
        ".cargo/config.toml",
        "crates/deep/.cargo/config.toml",
        ".claude/commands/deploy.md",
        ".claude/agents/helper.md",
        ".claude/skills/x/SKILL.md",
        ".vscode/tasks.json",
        ".vscode/settings.json",
        "mise.toml",
        ".tool-versions",
        "rust-toolchain.toml",
        ".npmrc",
        ".yarnrc.yml",
        ".pnpmfile.cjs",
        ".venv/lib/python3.12/site-packages/x.pth",
        ".github/workflows/release.yml",
        ".Husky/Pre-Commit",
        "sub/.VSCODE/tasks.json",
    ];
    for p in targets {
        let r = c.tool("fs-write-file", json!({"path": p, "content": PAYLOAD}));
        assert_eq!(r["isError"], true, "fs-write-file {p}: {r}");
        assert!(r.to_string().contains("allow_write"), "{p}: {r}");
        assert!(!srv.root.join(p).exists(), "{p} was written");
    }
    // The memory bank's writers: a document path, or a branch named like a protected
    // directory, never writes one.
    for (tool, args) in [
        (
            "write_global_memory_bank",
            json!({"path": ".husky/pre-commit", "content": PAYLOAD}),
        ),
        (
            "write_branch_memory_bank",
            json!({"branch": "main", "path": ".vscode/tasks.json", "content": "{}"}),
        ),
        (
            "write_branch_memory_bank",
            json!({"branch": ".claude", "path": "settings.json", "content": "{}"}),
        ),
        (
            "write_document",
            json!({"scope": "global", "path": "x/.cargo/config.toml", "content": "x"}),
        ),
        (
            "write_document",
            json!({"scope": "branch", "branch": ".husky", "path": "pre-commit.md", "content": "x"}),
        ),
        (
            "write_document",
            json!({"scope": "global", "path": "mise.toml", "content": "x"}),
        ),
    ] {
        let r = c.tool(tool, args.clone());
        assert_eq!(r["isError"], true, "{tool} {args}: {r}");
        assert!(r.to_string().contains("refused"), "{tool}: {r}");
    }
    assert!(!srv.root.join("docs/branch-memory-bank/.claude").exists());
    assert!(!srv.root.join("docs/branch-memory-bank/.husky").exists());

    // A symlinked directory pointing at a protected one is not written through.
    std::fs::create_dir_all(srv.root.join(".husky")).unwrap();
    symlink(".husky", srv.root.join("hooks")).unwrap();
    let r = c.tool(
        "fs-write-file",
        json!({"path": "hooks/pre-commit", "content": PAYLOAD}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert!(!srv.root.join(".husky/pre-commit").exists());
    // A file linked to a protected one: a symlink is refused, a hard link is replaced (the
    // write renames a new file over the name), never written into.
    std::fs::write(srv.root.join(".husky/pre-push"), "exit 0\n").unwrap();
    symlink(".husky/pre-push", srv.root.join("notes.txt")).unwrap();
    let r = c.tool(
        "fs-write-file",
        json!({"path": "notes.txt", "content": PAYLOAD}),
    );
    assert_eq!(r["isError"], true, "{r}");
    std::fs::hard_link(
        srv.root.join(".husky/pre-push"),
        srv.root.join("readme.txt"),
    )
    .unwrap();
    let r = c.tool(
        "fs-write-file",
        json!({"path": "readme.txt", "content": PAYLOAD}),
    );
    assert_ne!(r["isError"], true, "{r}");
    assert_eq!(
        std::fs::read_to_string(srv.root.join(".husky/pre-push")).unwrap(),
        "exit 0\n",
        "the hook behind the hard link is unchanged"
    );
    // `..` tricks are folded before the check.
    let r = c.tool(
        "fs-write-file",
        json!({"path": "src/../.cargo/./config.toml", "content": PAYLOAD}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert!(!srv.root.join(".cargo/config.toml").exists());
    c.assert_alive();
}

#[test]
fn the_person_can_allow_one_code_running_file() {
    let srv = common::start(json!({"security": {"allow_write": [".vscode/tasks.json"]}}));
    let mut c = srv.client();
    let r = c.tool(
        "fs-write-file",
        json!({"path": ".vscode/tasks.json", "content": "{}"}),
    );
    assert_ne!(r["isError"], true, "{r}");
    let r = c.tool(
        "fs-write-file",
        json!({"path": ".vscode/settings.json", "content": "{}"}),
    );
    assert_eq!(r["isError"], true, "{r}");
}
