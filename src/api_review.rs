//! The review's native functions (`lua/claude_context/review/source.lua`, `:ClaudeContext
//! checkpoints` and `rewind`): each takes its options as JSON and a callback, returns at once,
//! does its work (walks, blob reads, restores) on a thread of its own after the project's
//! pending checkpoints, and calls `cb(nil, json)` later on the main thread with the answer, or
//! `cb(message)` with the core's error, as the person reads it (the binding's one convention,
//! `src/binding.rs`).

use crate::binding::{self, export, lua_error, Failure};
use crate::main_thread::MainThread;
use claude_context_core::server::Shared;
use claude_context_core::turns::checkpoints::{self, Project, TurnError, TurnQuery};
use mlua::{Function, Lua, Table};
use serde_json::Value;
use std::sync::Arc;

type Work = fn(&Project, &TurnQuery) -> Result<Value, TurnError>;

fn undo(p: &Project, q: &TurnQuery) -> Result<Value, TurnError> {
    checkpoints::rewind_undo(p, q.overwrite)
}

/// Adds `review_changeset`, `review_turns`, `review_rewind` and `review_rewind_undo` to `t`.
/// `shared` gives the running bridge (none when stopped); `main` the main-thread queue.
pub fn register(
    lua: &Lua,
    t: &Table,
    shared: fn() -> Option<Arc<Shared>>,
    main: fn() -> mlua::Result<MainThread>,
) -> mlua::Result<()> {
    let fns: [(&'static str, Work); 4] = [
        ("review_changeset", checkpoints::changeset),
        ("review_turns", checkpoints::list_turns),
        ("review_rewind", checkpoints::rewind),
        ("review_rewind_undo", undo),
    ];
    for (name, work) in fns {
        export(lua, t, name, move |_, (opts, cb): (String, Function)| {
            start(name, work, &opts, cb, shared, main)
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
    main: fn() -> mlua::Result<MainThread>,
) -> mlua::Result<()> {
    let q: TurnQuery = serde_json::from_str(opts)
        .map_err(|e| lua_error(format!("claude-context: {name}: bad options: {e}")))?;
    let state = shared()
        .map(|s| s.turns.clone())
        .ok_or_else(|| lua_error(crate::api::NOT_RUNNING))?;
    let main = main()?;
    let id = binding::hold(name, cb, false);
    let spawned = std::thread::Builder::new()
        .name("cc-review".into())
        .spawn(move || {
            let run = || -> Result<Value, TurnError> {
                let project = checkpoints::query_project(&state, &q)?;
                checkpoints::after_pending(&project, move |p| work(p, &q))?
            };
            let answer = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
                Ok(Ok(v)) => Ok(Some(v.to_string().into_bytes())),
                Ok(Err(e)) => Err(Failure::new(e)),
                Err(p) => {
                    crate::logging::log_panic(name, p.as_ref());
                    Err(Failure::new(format!("internal error in {name} (logged)")))
                }
            };
            binding::answer_later(&main, id, answer);
        });
    if let Err(e) = spawned {
        binding::forget(id);
        return Err(lua_error(format!(
            "claude-context: {name}: cannot start a thread: {e}"
        )));
    }
    Ok(())
}
