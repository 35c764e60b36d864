//! Facts written in more than one place, tied to their owner: the library owns each one; a copy
//! that must stay (a static file Claude Code reads, a Lua module that runs before the library
//! is asked) fails here when it drifts.

use claude_context_core::hook::EDIT_TOOLS;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The edit tools a turn records (`hook::EDIT_TOOLS`) are the PreToolUse matcher of the terminal's
/// `--settings` (`hooks.lua`) and of the Claude Code plugin's `hooks.json`.
#[test]
fn the_edit_tools_are_the_hooks_matchers() {
    let matcher = EDIT_TOOLS.join("|");
    let lua = read("lua/claude_context/sessions/hooks.lua");
    assert!(
        lua.contains(&format!("M.EDIT_TOOLS = \"{matcher}\"")),
        "lua/claude_context/sessions/hooks.lua's EDIT_TOOLS is not {matcher:?}"
    );
    let json: Value = serde_json::from_str(&read("claude-plugin/plugin/hooks/hooks.json")).unwrap();
    let pre = json["hooks"]["PreToolUse"].as_array().unwrap();
    let matchers: Vec<&str> = pre.iter().filter_map(|h| h["matcher"].as_str()).collect();
    assert_eq!(
        matchers,
        [matcher.as_str()],
        "hooks.json's PreToolUse matcher"
    );
}

/// The Claude Code plugin's `hooks.json` is generated from the one list of hook events
/// (`hook::event::plugin_hooks_file`): `make hooks-json` writes it again
/// (`CLAUDE_CONTEXT_WRITE_HOOKS_JSON=1`).
#[test]
fn the_plugins_hooks_json_is_generated_from_the_event_list() {
    use claude_context_core::hook::event::{plugin_hooks_file, PLUGIN_HOOKS_FILE};
    let want = plugin_hooks_file();
    if std::env::var_os("CLAUDE_CONTEXT_WRITE_HOOKS_JSON").is_some() {
        std::fs::write(repo().join(PLUGIN_HOOKS_FILE), &want).unwrap();
    }
    let have: Value = serde_json::from_str(&read(PLUGIN_HOOKS_FILE)).unwrap();
    let want: Value = serde_json::from_str(&want).unwrap();
    assert_eq!(
        have, want,
        "{PLUGIN_HOOKS_FILE} is not generated from hook::Event::ALL: run make hooks-json"
    );
}

/// The largest file the IDE handlers open (`ide/files.lua`) is the one a diff view's proposal
/// reads off the main thread (`proposal::MAX_FILE_BYTES`).
#[test]
fn the_lua_side_caps_editor_files_as_the_library_does() {
    let mib = claude_context_core::proposal::MAX_FILE_BYTES >> 20;
    assert_eq!(mib << 20, claude_context_core::proposal::MAX_FILE_BYTES);
    let lua = read("lua/claude_context/ide/files.lua");
    assert!(
        lua.contains(&format!("M.MAX_FILE_BYTES = {mib} * 1024 * 1024")),
        "lua/claude_context/ide/files.lua's MAX_FILE_BYTES is not {mib} MiB"
    );
}
