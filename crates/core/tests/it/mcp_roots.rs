//! What the model's door (`/mcp`) may reach: the project root, the editor's working directory
//! and the roots the person added in setup (`workspace.extra_roots`). A language server's folder
//! outside the project (lua_ls on `~/.config/nvim` while the person works in a project) is
//! listed by `getWorkspaceFolders` on the IDE door, as Claude Code expects, but `/mcp` can
//! neither make it its root nor read or open files there unless the person allows language
//! servers' folders (`workspace.allow_lsp_roots`).
#![cfg(unix)]

use crate::common;

use claude_context_core::editor::EditorState;
use serde_json::{json, Value};

const SECRET: &str = "lsp-folder-secret-5ecret";

fn mcp(srv: &common::TestServer) -> common::Raw {
    let (status, raw) = common::Raw::try_connect_path(
        srv.port,
        "/mcp",
        &[(common::AUTH_HEADER, srv.token.as_str())],
    )
    .unwrap();
    assert!(status.starts_with("HTTP/1.1 101"), "{status}");
    raw
}

/// A server whose editor has a language server attached with its folder outside the project
/// (and its root as the current buffer's); returns the server and that folder.
fn with_lsp_folder_outside(overrides: Value) -> (common::TestServer, std::path::PathBuf) {
    let srv = common::start(overrides);
    let outside = srv.dir.path().canonicalize().unwrap().join("nvim-config");
    std::fs::create_dir_all(outside.join("lua")).unwrap();
    std::fs::write(outside.join("lua/secrets.lua"), SECRET).unwrap();
    srv.server.update_editor_state(EditorState {
        cwd: Some(srv.root.clone()),
        lsp_folders: vec![outside.clone()],
        lsp_root: Some(outside.clone()),
        nvim_version: "0.11.4".into(),
    });
    (srv, outside)
}

fn is_error(r: &Value) -> bool {
    r["isError"] == true
}

#[test]
fn mcp_cannot_root_into_lsp_folder() {
    let (srv, outside) = with_lsp_folder_outside(json!({}));
    let mut m = mcp(&srv);
    // The default root stays the project (the buffer's language server lies outside the cwd).
    let info = m.tool("fs-get-project-info", json!({}));
    assert_eq!(
        info["structuredContent"]["project_root"],
        json!(srv.root.to_string_lossy()),
        "{info}"
    );
    let r = m.tool(
        "fs-set-project-root",
        json!({"path": outside.to_string_lossy()}),
    );
    assert!(is_error(&r), "{r}");
    assert!(r.to_string().contains("extra_roots"), "{r}");
    let secret = outside.join("lua/secrets.lua");
    for (tool, args) in [
        ("fs-read-file", json!({"path": secret.to_string_lossy()})),
        ("openFile", json!({"filePath": secret.to_string_lossy()})),
    ] {
        let r = m.tool(tool, args);
        assert!(is_error(&r), "{tool}: {r}");
        assert!(!r.to_string().contains(SECRET), "{tool} leaked: {r}");
    }
    // The IDE door still lists the folder (Claude Code's own getWorkspaceFolders).
    let mut ide = srv.client();
    let f = ide.tool("getWorkspaceFolders", json!({}));
    assert!(
        f.to_string().contains(&*outside.to_string_lossy()),
        "listed on the IDE door: {f}"
    );
    m.assert_alive();
}

#[test]
fn the_person_can_add_roots_or_allow_lsp_folders() {
    let extra = tempfile::tempdir().unwrap();
    let extra = extra.path().canonicalize().unwrap();
    std::fs::write(extra.join("notes.txt"), "shared notes").unwrap();
    let (srv, outside) = with_lsp_folder_outside(json!({"workspace": {"extra_roots": [extra]}}));
    let mut m = mcp(&srv);
    let r = m.tool(
        "fs-set-project-root",
        json!({"path": extra.to_string_lossy()}),
    );
    assert!(!is_error(&r), "{r}");
    let r = m.tool("fs-read-file", json!({"path": "notes.txt"}));
    assert!(r.to_string().contains("shared notes"), "{r}");
    let r = m.tool(
        "fs-set-project-root",
        json!({"path": outside.to_string_lossy()}),
    );
    assert!(is_error(&r), "still not the language server's folder: {r}");

    let (srv, outside) = with_lsp_folder_outside(json!({"workspace": {"allow_lsp_roots": true}}));
    let mut m = mcp(&srv);
    let r = m.tool(
        "fs-set-project-root",
        json!({"path": outside.to_string_lossy()}),
    );
    assert!(!is_error(&r), "{r}");
    let r = m.tool("fs-read-file", json!({"path": "lua/secrets.lua"}));
    assert!(r.to_string().contains(SECRET), "{r}");
    // A relative extra root is a configuration error.
    let e = claude_context_core::config::Config::from_json(
        r#"{"workspace": {"extra_roots": ["rel/dir"]}}"#,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("workspace.extra_roots"), "{e}");
}
