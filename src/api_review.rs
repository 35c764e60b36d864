//! The review's native functions (`lua/claude_context/review/source.lua`, `:ClaudeContext
//! checkpoints` and `rewind`): each takes its options as JSON and a callback, returns at once,
//! does its work (walks, blob reads, restores) on a thread of its own after the project's
//! pending checkpoints, and calls `cb(json)` later on the main thread with `{"ok": …}` or
//! `{"error": "…"}` (the core's error, as the person reads it).

use crate::main_thread::MainThread;
use claude_context_core::error::Error;
use claude_context_core::server::Shared;
use claude_context_core::turns::checkpoints::{self, Project, TurnError, TurnQuery};
use mlua::{Function, Lua, Table};
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

thread_local! {
    static CALLBACKS: RefCell<HashMap<u64, Function>> = RefCell::new(HashMap::new());
    static NEXT_ID: RefCell<u64> = const { RefCell::new(1) };
}

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
    let fns: [(&str, Work); 4] = [
        ("review_changeset", checkpoints::changeset),
        ("review_turns", checkpoints::list_turns),
        ("review_rewind", checkpoints::rewind),
        ("review_rewind_undo", undo),
    ];
    for (name, work) in fns {
        t.set(
            name,
            lua.create_function(move |_, (opts, cb): (String, Function)| {
                start(name, work, &opts, cb, shared, main)
            })?,
        )?;
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
        .map_err(|e| mlua::Error::runtime(format!("claude-context: {name}: bad options: {e}")))?;
    let state = shared().map(|s| s.turns.clone()).ok_or_else(|| {
        mlua::Error::runtime("claude-context: the bridge is not running (:ClaudeContext start)")
    })?;
    let main = main()?;
    let id = NEXT_ID.with(|n| {
        let mut n = n.borrow_mut();
        *n += 1;
        *n
    });
    CALLBACKS.with(|c| c.borrow_mut().insert(id, cb));
    let answer = move |out: Value| {
        let text = out.to_string();
        main.run(Box::new(move |_lua| {
            if let Some(cb) = CALLBACKS.with(|c| c.borrow_mut().remove(&id)) {
                if let Err(e) = cb.call::<()>(text) {
                    crate::logging::log_panic(name, &e.to_string());
                }
            }
        }));
    };
    let spawned = std::thread::Builder::new()
        .name("cc-review".into())
        .spawn(move || {
            let run = || -> Result<Value, TurnError> {
                let project = checkpoints::query_project(&state, &q)?;
                checkpoints::after_pending(&project, move |p| work(p, &q))?
            };
            let out = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
                Ok(Ok(v)) => json!({ "ok": v }),
                Ok(Err(e)) => json!({ "error": Error::from(e).to_string() }),
                Err(p) => {
                    crate::logging::log_panic(name, p.as_ref());
                    json!({ "error": format!("internal error in {name} (logged)") })
                }
            };
            answer(out);
        });
    if let Err(e) = spawned {
        CALLBACKS.with(|c| c.borrow_mut().remove(&id));
        return Err(mlua::Error::runtime(format!(
            "claude-context: {name}: cannot start a thread: {e}"
        )));
    }
    Ok(())
}
