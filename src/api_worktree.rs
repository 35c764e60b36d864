//! The Lua API's `worktree` table (`require("claude_context.native").get().worktree`): what land
//! reads of a background session's worktree, checked by the core
//! (crates/core/src/worktree.rs). Bytes in, bytes out: paths are never made UTF-8.

use crate::binding::{export_as, lua_error};
use claude_context_core::worktree;
use mlua::{Lua, Table, Value};

/// The `worktree` table: `name_status(out)`, `z_list(out)`, `batch(out, n)`,
/// `named_path(text, prefix|nil, base)`, `registered(gitdirs, dotgit)`, `landable(path)`.
pub fn create(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    export_as(lua, &t, "name_status", "worktree.name_status", name_status)?;
    export_as(lua, &t, "z_list", "worktree.z_list", z_list)?;
    export_as(lua, &t, "batch", "worktree.batch", batch)?;
    export_as(lua, &t, "named_path", "worktree.named_path", named_path)?;
    export_as(lua, &t, "registered", "worktree.registered", registered)?;
    export_as(lua, &t, "landable", "worktree.landable", landable)?;
    Ok(t)
}

/// name_status(out) -> `{ {status, path} }`, or raises git's output refused.
fn name_status(lua: &Lua, out: mlua::String) -> mlua::Result<Table> {
    let list = worktree::name_status(&out.as_bytes())
        .map_err(|e| lua_error(format!("git diff --name-status: {e}")))?;
    let t = lua.create_table_with_capacity(list.len(), 0)?;
    for c in list {
        let e = lua.create_table()?;
        e.set("status", lua.create_string([c.status])?)?;
        e.set("path", lua.create_string(&c.path)?)?;
        t.push(e)?;
    }
    Ok(t)
}

/// z_list(out) -> the paths of `ls-files -z` output, or raises git's output refused.
fn z_list(lua: &Lua, out: mlua::String) -> mlua::Result<Table> {
    let list =
        worktree::z_list(&out.as_bytes()).map_err(|e| lua_error(format!("git ls-files: {e}")))?;
    let t = lua.create_table_with_capacity(list.len(), 0)?;
    for p in list {
        t.push(lua.create_string(&p)?)?;
    }
    Ok(t)
}

/// batch(out, n) -> `n` values: an object's bytes, or false when missing.
fn batch(lua: &Lua, (out, n): (mlua::String, usize)) -> mlua::Result<Table> {
    let objs = worktree::batch(&out.as_bytes(), n);
    let t = lua.create_table_with_capacity(objs.len(), 0)?;
    for o in objs {
        match o {
            Some(b) => t.push(lua.create_string(&b)?)?,
            None => t.push(false)?,
        }
    }
    Ok(t)
}

/// named_path(text, prefix|nil, base) -> the absolute path a git file names, or nil.
fn named_path(
    lua: &Lua,
    (text, prefix, base): (mlua::String, Option<mlua::String>, mlua::String),
) -> mlua::Result<Value> {
    let prefix = prefix.map(|p| p.as_bytes().to_vec());
    match worktree::named_path(&text.as_bytes(), prefix.as_deref(), &base.as_bytes()) {
        Some(p) => Ok(Value::String(lua.create_string(&p)?)),
        None => Ok(Value::Nil),
    }
}

/// registered(gitdirs, dotgit) -> the admin dir of `gitdirs` (`{ [admin] = gitdir's text }`)
/// registering `dotgit`, or nil and why not.
fn registered(
    lua: &Lua,
    (gitdirs, dotgit): (Table, mlua::String),
) -> mlua::Result<(Value, Option<String>)> {
    let mut regs = Vec::new();
    for pair in gitdirs.pairs::<mlua::String, mlua::String>() {
        let (admin, text) = pair?;
        regs.push((admin.as_bytes().to_vec(), text.as_bytes().to_vec()));
    }
    match worktree::registered(&regs, &dotgit.as_bytes()) {
        Ok(i) => Ok((Value::String(lua.create_string(&regs[i].0)?), None)),
        Err(e) => Ok((Value::Nil, Some(e.to_string()))),
    }
}

/// landable(path) -> nil when land may write `path`, else why not.
fn landable(_: &Lua, path: mlua::String) -> mlua::Result<Option<String>> {
    Ok(worktree::landable(&path.as_bytes())
        .err()
        .map(|e| e.to_string()))
}
