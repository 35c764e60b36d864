//! The review's native functions (`lua/claude_context/review/source.lua`, `:ClaudeContext
//! checkpoints` and `rewind`): each takes its options as JSON and a callback, returns at once,
//! does its work (walks, blob reads, restores) on a thread of its own after the project's
//! pending checkpoints, and calls `cb(nil, json)` later on the main thread with the answer, or
//! `cb(message)` with the core's error, as the person reads it (the binding's one convention,
//! `src/binding.rs`).

use crate::binding::{self, export, lua_error, Failure};
use claude_context_core::server::Shared;
use claude_context_core::turns::checkpoints::{self, Project, TurnError, TurnQuery};
use claude_context_core::turns::Tracker;
use mlua::{Function, Lua, Table};
use serde_json::Value;
use std::sync::Arc;
use std::sync::OnceLock;

/// How the running bridge is found (given at [`register`]; called on the main thread only).
static SHARED: OnceLock<fn() -> Option<Arc<Shared>>> = OnceLock::new();

/// The running bridge's state, for the core's `keep::kept_write` (on the main thread; `None`:
/// not running).
pub fn keeper() -> Option<Arc<Tracker>> {
    SHARED.get().and_then(|f| f()).map(|s| s.turns.clone())
}

type Work = fn(&Project, &TurnQuery) -> Result<Value, TurnError>;

fn undo(p: &Project, q: &TurnQuery) -> Result<Value, TurnError> {
    checkpoints::rewind_undo(p, q.overwrite)
}

/// Adds `review_changeset`, `review_turns`, `review_rewind`, `review_rewind_undo` and
/// `review_restore_file` to `t`.
/// `shared` gives the running bridge (none when stopped).
pub fn register(lua: &Lua, t: &Table, shared: fn() -> Option<Arc<Shared>>) -> mlua::Result<()> {
    let _ = SHARED.set(shared);
    let fns: [(&'static str, Work); 5] = [
        ("review_changeset", checkpoints::changeset),
        ("review_turns", checkpoints::list_turns),
        ("review_rewind", checkpoints::rewind),
        ("review_rewind_undo", undo),
        ("review_restore_file", checkpoints::restore_file),
    ];
    for (name, work) in fns {
        export(lua, t, name, move |_, (opts, cb): (String, Function)| {
            start(name, work, &opts, cb, shared)
        })?;
    }
    Ok(())
}

fn start(
    name: &'static str,
    work: Work,
    opts: &str,
    cb: Function,
    shared: fn() -> Option<Arc<Shared>>,
) -> mlua::Result<()> {
    let q: TurnQuery = serde_json::from_str(opts)
        .map_err(|e| lua_error(format!("claude-context: {name}: bad options: {e}")))?;
    let state = shared()
        .map(|s| s.turns.clone())
        .ok_or_else(|| lua_error(binding::NOT_RUNNING))?;
    binding::answer_off_thread(name, "cc-review", cb, move || {
        let project = checkpoints::query_project(&state, &q).map_err(Failure::new)?;
        checkpoints::after_pending(&project, move |p| work(p, &q))
            .and_then(|r| r)
            .map(|v| v.to_string().into_bytes())
            .map_err(Failure::new)
    })
}
