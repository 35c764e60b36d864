//! The Lua API's edit-in-place function (`require("claude_context.native").edit_command`): the
//! command line of the warm Claude Code process behind `:ClaudeContext edit`
//! (crates/core/src/claude/edit.rs owns it; lua/claude_context/edit/ runs it).

use crate::binding::{export, lua_error};
use claude_context_core::claude::edit::edit_command;
use claude_context_core::config::Config;
use mlua::{Lua, Table};
use std::path::Path;

/// Adds `edit_command(config_json, cli, root|nil, persist) -> JSON {args, env}` to `t`.
pub fn register(lua: &Lua, t: &Table) -> mlua::Result<()> {
    export(lua, t, "edit_command", command)
}

/// edit_command(config_json, cli, root, persist) -> `{"args": […], "env": {name: value}}`.
fn command(
    _: &Lua,
    (config, cli, root, persist): (String, String, Option<String>, bool),
) -> mlua::Result<String> {
    let cfg = Config::from_json(&config).map_err(lua_error)?;
    let c = edit_command(
        &cfg.claude,
        Path::new(&cli),
        root.as_deref().map(Path::new),
        persist,
    );
    let env: serde_json::Map<String, serde_json::Value> =
        c.env.into_iter().map(|(k, v)| (k, v.into())).collect();
    Ok(serde_json::json!({ "args": c.args, "env": env }).to_string())
}
