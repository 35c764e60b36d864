//! The Lua API's `worktree` table (`require("claude_context.native").get().worktree`): what land
//! reads of a background session's worktree, checked by the core
//! (crates/core/src/worktree.rs), and the land's three-way merge (crates/core/src/merge.rs), run
//! on a thread of its own. Bytes in, bytes out: paths and texts are never made UTF-8.

use crate::binding::{self, export_as, lua_error};
use claude_context_core::merge::{self, Merged};
use claude_context_core::worktree;
use mlua::{Function, Lua, Table, Value};

/// The `worktree` table: `name_status(out)`, `z_list(out)`, `batch(out, n)`,
/// `named_path(text, prefix|nil, base)`, `registered(gitdirs, dotgit)`, `landable(path)`,
/// `merge(texts, cb)`.
pub fn create(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    export_as(lua, &t, "name_status", "worktree.name_status", name_status)?;
    export_as(lua, &t, "z_list", "worktree.z_list", z_list)?;
    export_as(lua, &t, "batch", "worktree.batch", batch)?;
    export_as(lua, &t, "named_path", "worktree.named_path", named_path)?;
    export_as(lua, &t, "registered", "worktree.registered", registered)?;
    export_as(lua, &t, "landable", "worktree.landable", landable)?;
    export_as(lua, &t, "merge", "worktree.merge", merge_files)?;
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

/// merge(texts, cb): `texts` is `{ base1, ours1, theirs1, base2, … }`; returns at once, merges
/// each file on a thread of its own, and calls `cb(nil, out)` on the main thread, `out` holding
/// each file's result in order as [`encode`] writes it.
fn merge_files(_: &Lua, (texts, cb): (Table, Function)) -> mlua::Result<()> {
    let all: Vec<Vec<u8>> = texts
        .sequence_values::<mlua::String>()
        .map(|s| s.map(|s| s.as_bytes().to_vec()))
        .collect::<mlua::Result<_>>()?;
    if !all.len().is_multiple_of(3) {
        return Err(lua_error("worktree.merge: texts come in threes"));
    }
    let mut files = Vec::with_capacity(all.len() / 3);
    let mut it = all.into_iter();
    while let (Some(b), Some(o), Some(t)) = (it.next(), it.next(), it.next()) {
        files.push((b, o, t));
    }
    binding::answer_off_thread("worktree.merge", "cc-land-merge", cb, move || {
        Ok(encode(&merge::merge_all(&files)))
    })
}

/// Each result as `applied conflicts line count … length\n` then the text's `length` bytes
/// (`conflicts` pairs of `line count`), one after the other: `agents/merge.lua` reads it.
fn encode(results: &[Merged]) -> Vec<u8> {
    let size: usize = results.iter().map(|m| m.text.len() + 32).sum();
    let mut out = Vec::with_capacity(size);
    for m in results {
        let mut head = format!("{} {}", m.applied, m.conflicts.len());
        for c in &m.conflicts {
            head.push_str(&format!(" {} {}", c.line, c.count));
        }
        out.extend_from_slice(format!("{head} {}\n", m.text.len()).as_bytes());
        out.extend_from_slice(&m.text);
    }
    out
}
