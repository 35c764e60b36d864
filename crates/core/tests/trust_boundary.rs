//! The attacks on the trust boundary, through the server as a client sends them: each test is
//! named after the attack it stops (SECURITY.md lists them with the party each rule stops).
#![cfg(unix)]

mod common;

use serde_json::{json, Value};
use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::{Duration, Instant};

fn text(r: &Value) -> String {
    r.to_string()
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn repository_rules_symlink_to_proc_self_environ_leaks_no_environment() {
    // A value only this process's environment holds: what /proc/self/environ would leak.
    std::env::set_var("CLAUDE_CONTEXT_TEST_SECRET", "sk-test-5ecret-0f-the-editor");
    let srv = common::start(json!({}));
    std::fs::create_dir_all(srv.root.join("docs")).unwrap();
    symlink("/proc/self/environ", srv.root.join("docs/rules-ja.md")).unwrap();
    symlink("/proc/self/environ", srv.root.join("docs/rules-en.md")).unwrap();
    let mut c = srv.client();
    for (tool, args) in [
        ("read_context", json!({"includeBranchMemory": false})),
        (
            "read_context",
            json!({"includeBranchMemory": false, "language": "en"}),
        ),
        ("read_rules", json!({"language": "ja"})),
    ] {
        let r = c.tool(tool, args);
        let t = text(&r);
        assert!(
            !t.contains("sk-test-5ecret"),
            "{tool} leaked the environment: {t}"
        );
        assert_eq!(r["isError"], true, "{tool}: {t}");
        assert!(
            t.contains("rules-") && t.contains("/proc/self/environ"),
            "the message names the link and its target: {t}"
        );
    }
    c.assert_alive();
}

#[test]
fn repository_rules_symlink_to_dev_zero_is_refused_without_reading() {
    let srv = common::start(json!({}));
    std::fs::create_dir_all(srv.root.join("docs")).unwrap();
    symlink("/dev/zero", srv.root.join("docs/rules-ja.md")).unwrap();
    let mut c = srv.client();
    let r = c.tool(
        "read_context",
        json!({"includeBranchMemory": false, "language": "ja"}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert!(text(&r).contains("/dev/zero"), "{r}");
}

#[test]
fn repository_bank_symlinks_out_of_the_project_are_refused() {
    for (link, tool, args) in [
        (
            "docs/global-memory-bank",
            "write_global_memory_bank",
            json!({"path": "pwn.md", "content": "x"}),
        ),
        (
            "docs/global-memory-bank",
            "read_global_memory_bank",
            json!({"path": "secret.md"}),
        ),
        (
            "docs/branch-memory-bank",
            "write_branch_memory_bank",
            json!({"branch": "main", "path": "pwn.md", "content": "x"}),
        ),
        (
            "docs/branch-memory-bank/main",
            "read_branch_memory_bank",
            json!({"branch": "main", "path": "secret.md"}),
        ),
        (
            "docs",
            "write_global_memory_bank",
            json!({"path": "pwn.md", "content": "x"}),
        ),
    ] {
        let srv = common::start(json!({}));
        let outside = srv.dir.path().join("anywhere");
        std::fs::create_dir_all(outside.join("main")).unwrap();
        std::fs::write(outside.join("secret.md"), "OUTSIDE-SECRET").unwrap();
        std::fs::write(outside.join("main/secret.md"), "OUTSIDE-SECRET").unwrap();
        let l = srv.root.join(link);
        std::fs::create_dir_all(l.parent().unwrap()).unwrap();
        symlink(&outside, &l).unwrap();
        let mut c = srv.client();
        let r = c.tool(tool, args.clone());
        let t = text(&r);
        assert_eq!(r["isError"], true, "{link} {tool}: {t}");
        assert!(!t.contains("OUTSIDE-SECRET"), "{t}");
        assert!(
            t.contains(&outside.display().to_string()) && t.contains("symbolic link"),
            "names the link and its target: {t}"
        );
        let names: Vec<_> = walk(&outside);
        assert!(
            !names.iter().any(|n| n.ends_with("pwn.md")),
            "{link} {tool} wrote outside: {names:?}"
        );
        for listing in [
            c.tool("list_memory_bank_documents", json!({})),
            c.tool("search_documents_by_tags", json!({"tags": ["x"]})),
        ] {
            assert!(!text(&listing).contains("secret.md"), "{listing}");
        }
    }
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p.display().to_string());
    }
    out
}

#[test]
fn a_bank_root_the_person_configured_may_be_anywhere() {
    let srv = common::start(json!({}));
    let elsewhere = srv.dir.path().join("my-notes");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let srv2 = common::start(json!({"memory_bank_root": elsewhere}));
    let mut c = srv2.client();
    let r = c.tool(
        "write_global_memory_bank",
        json!({"path": "a.md", "content": "hello"}),
    );
    assert_ne!(r["isError"], true, "{r}");
    assert_eq!(
        std::fs::read_to_string(elsewhere.join("global-memory-bank/a.md")).unwrap(),
        "hello"
    );
    drop(srv);
}

#[test]
fn fifo_in_the_memory_bank_pins_no_thread() {
    let srv = common::start(json!({}));
    let g = srv.root.join("docs/global-memory-bank");
    std::fs::create_dir_all(&g).unwrap();
    mkfifo(&g.join("pipe.md"));
    mkfifo(&srv.root.join("docs/rules-ja.md"));
    mkfifo(&srv.root.join("ctx.fifo"));
    let mut c = srv.client();
    let t0 = Instant::now();
    // More reads than the blocking pool has threads for file tools to spare: before, each one
    // pinned a thread until a writer came, and then every file tool stalled.
    for _ in 0..40 {
        let r = c.tool("read_global_memory_bank", json!({"path": "pipe.md"}));
        assert_eq!(r["isError"], true, "{r}");
        assert!(text(&r).contains("not a regular file"), "{r}");
    }
    let r = c.tool(
        "read_context",
        json!({"includeBranchMemory": false, "language": "ja"}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert!(text(&r).contains("FIFO"), "{r}");
    let r = c.tool("fs-read-file", json!({"path": "ctx.fifo"}));
    assert_eq!(r["isError"], true, "{r}");
    let r = c.tool("fs-read-file", json!({"path": "README.md"}));
    assert_eq!(r["structuredContent"]["content"], "# test project\n");
    // Generous: the failure mode is "never answers", not "slow".
    assert!(t0.elapsed() < Duration::from_secs(60));
}

#[test]
fn context_file_fifo_is_refused_at_once() {
    let d = tempfile::tempdir().unwrap();
    mkfifo(&d.path().join("ctx"));
    let e = claude_context_core::claude::context::read_context_file(Some(d.path()), "ctx", 1 << 20)
        .unwrap_err()
        .to_string();
    assert!(e.contains("FIFO"), "{e}");
    let f = std::fs::File::create(d.path().join("sparse")).unwrap();
    f.set_len(1 << 40).unwrap();
    let e =
        claude_context_core::claude::context::read_context_file(Some(d.path()), "sparse", 1 << 20)
            .unwrap_err()
            .to_string();
    assert!(e.contains("limit"), "{e}");
}

#[test]
fn model_writes_to_files_that_run_code_are_refused() {
    let srv = common::start(json!({}));
    std::fs::create_dir_all(srv.root.join(".git/hooks")).unwrap();
    std::fs::write(srv.root.join(".git/config"), "[core]\n").unwrap();
    let mut c = srv.client();
    for p in [
        ".git/hooks/pre-commit",
        ".git/config",
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".mcp.json",
        ".envrc",
        ".nvim.lua",
    ] {
        let r = c.tool(
            "fs-write-file",
            json!({"path": p, "content": "#!/bin/sh\ntouch /tmp/pwned\n"}),
        );
        assert_eq!(r["isError"], true, "{p}: {r}");
        assert!(text(&r).contains("allow_write"), "{p}: {r}");
    }
    assert!(!srv.root.join(".git/hooks/pre-commit").exists());
    assert_eq!(
        std::fs::read_to_string(srv.root.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(!srv.root.join(".claude").exists());
    // The memory bank holds documents, not hooks.
    let r = c.tool(
        "write_global_memory_bank",
        json!({"path": ".git/config", "content": "x"}),
    );
    assert_eq!(r["isError"], true, "{r}");
}

#[test]
fn the_person_can_allow_a_protected_file() {
    let srv = common::start(json!({"security": {"allow_write": [".claude/settings.local.json"]}}));
    let mut c = srv.client();
    let r = c.tool(
        "fs-write-file",
        json!({"path": ".claude/settings.local.json", "content": "{}"}),
    );
    assert_ne!(r["isError"], true, "{r}");
    let r = c.tool(
        "fs-write-file",
        json!({"path": ".claude/settings.json", "content": "{}"}),
    );
    assert_eq!(r["isError"], true, "{r}");
}

#[test]
fn overwriting_a_hook_like_file_drops_its_exec_bit() {
    use std::os::unix::fs::PermissionsExt;
    let srv = common::start(json!({}));
    let p = srv.root.join("build.sh");
    std::fs::write(&p, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut c = srv.client();
    let r = c.tool(
        "fs-write-file",
        json!({"path": "build.sh", "content": "#!/bin/sh\nrm -rf ~\n"}),
    );
    assert_ne!(r["isError"], true, "{r}");
    let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode & 0o111, 0, "mode {mode:o}");
}

#[test]
fn repository_gitignore_symlinked_to_dev_zero_or_a_fifo_cannot_stall_project_stats() {
    let srv = common::start(json!({}));
    symlink("/dev/zero", srv.root.join(".gitignore")).unwrap();
    std::fs::create_dir_all(srv.root.join("sub")).unwrap();
    mkfifo(&srv.root.join("sub/.ignore"));
    std::fs::write(srv.root.join("sub/a.rs"), "x").unwrap();
    let mut c = srv.client();
    let r = c.tool("fs-get-project-info", json!({"stats": true}));
    let stats = &r["structuredContent"]["stats"];
    // README.md, src/main.rs, sub/a.rs: the ignore files that are not regular are skipped.
    assert_eq!(stats["total_files"], 3, "{r}");
    assert_eq!(stats["files_by_extension"]["rs"], 2, "{r}");
}

#[test]
fn a_git_head_that_is_a_fifo_cannot_pin_branch_detection() {
    // A worktree-style `.git` file pointing at a directory another process controls, whose
    // HEAD is a FIFO: branch detection (read_context / read_document without a branch) used to
    // open it by name and wait for a writer forever.
    let srv = common::start(json!({}));
    let gitdir = srv.dir.path().join("planted-gitdir");
    std::fs::create_dir_all(&gitdir).unwrap();
    mkfifo(&gitdir.join("HEAD"));
    std::fs::write(
        srv.root.join(".git"),
        format!("gitdir: {}\n", gitdir.display()),
    )
    .unwrap();
    let mut c = srv.client();
    let r = c.tool("read_context", json!({}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(text(&r).contains("branch"), "{r}");
    let r = c.tool("read_document", json!({"scope": "branch", "path": "a.md"}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(text(&r).contains("FIFO"), "{r}");
    c.assert_alive();
}
