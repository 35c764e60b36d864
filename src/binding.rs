//! The binding's plumbing, once for every native function the Lua side calls:
//!
//! * [`export`]: every function of the API table is exported through it, guarded ([`guard`]):
//!   a panic becomes a Lua error and a log line, never a crash.
//! * [`lua_error`]: the one conversion of an error (any of the core's, or a message) to a Lua
//!   error: its text, as the person reads it.
//! * [`main_thread`]: the one main-thread queue answers come back through.
//! * [`hold`] / [`answer`]: the one registry of Lua callbacks waiting for work done on other
//!   threads, and the one convention they are called with: `cb(err, value)`, `err` nil or a
//!   message (with a JSON-RPC error code as a third argument when there is one), `value` the
//!   answer's bytes as a Lua string (JSON text, or a file's content), nil when there is none.
//!   A wrong argument is a raised Lua error at the call, never a callback.

use crate::main_thread::MainThread;
use mlua::{FromLuaMulti, Function, IntoLuaMulti, Lua, Table};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::mpsc::{channel, Sender};

/// What a function that needs the bridge says when it is not running.
pub const NOT_RUNNING: &str = "claude-context: the bridge is not running (:ClaudeContext start)";

/// The one conversion of the core's errors (any of `claude_context_core::error`'s, or a
/// message) to a Lua error: its text, as the person reads it.
pub fn lua_error(e: impl std::fmt::Display) -> mlua::Error {
    mlua::Error::runtime(e.to_string())
}

/// Guards a Lua-facing function: a panic becomes a Lua error and a log line, never a crash.
pub fn guard<T>(what: &str, f: impl FnOnce() -> mlua::Result<T>) -> mlua::Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            crate::logging::log_panic(what, p.as_ref());
            Err(lua_error(internal_error(what)))
        }
    }
}

/// The message a contained panic is answered with.
fn internal_error(what: &str) -> String {
    format!("claude-context: internal error in {what} (logged; see :ClaudeContext log)")
}

/// Runs work meant for another thread: a panic in it is logged and becomes a failure (the
/// callback waiting for it is still answered), never an unwinding thread.
pub fn contained<T>(what: &str, f: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            crate::logging::log_panic(what, p.as_ref());
            Err(Failure::new(internal_error(what)))
        }
    }
}

/// A job of a [`worker`] thread, given the thread's own state.
pub type Job<S> = Box<dyn FnOnce(&S) + Send + 'static>;

/// The sender of a long-lived thread named `name` (started on first use, remembered in `slot`):
/// its jobs run one after another with the state `init` made on it; a panic in a job is logged
/// and the thread goes on.
pub fn worker<S: 'static>(
    slot: &'static std::thread::LocalKey<RefCell<Option<Sender<Job<S>>>>>,
    name: &'static str,
    init: fn() -> S,
) -> mlua::Result<Sender<Job<S>>> {
    slot.with(|w| {
        if let Some(tx) = w.borrow().as_ref() {
            return Ok(tx.clone());
        }
        let (tx, rx) = channel::<Job<S>>();
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let state = init();
                while let Ok(job) = rx.recv() {
                    let _ = contained(name, || {
                        job(&state);
                        Ok(())
                    });
                }
            })
            .map_err(|e| lua_error(format!("claude-context: no {name} thread: {e}")))?;
        *w.borrow_mut() = Some(tx.clone());
        Ok(tx)
    })
}

/// Exports `f` as `name` in `t`, guarded ([`guard`], the panic named `what`).
pub fn export<A, R, F>(lua: &Lua, t: &Table, name: &'static str, f: F) -> mlua::Result<()>
where
    A: FromLuaMulti + 'static,
    R: IntoLuaMulti + 'static,
    F: Fn(&Lua, A) -> mlua::Result<R> + 'static,
{
    export_as(lua, t, name, name, f)
}

/// [`export`], the panic named `what` (`fs.read` for the `read` of the `fs` table).
pub fn export_as<A, R, F>(
    lua: &Lua,
    t: &Table,
    name: &'static str,
    what: &'static str,
    f: F,
) -> mlua::Result<()>
where
    A: FromLuaMulti + 'static,
    R: IntoLuaMulti + 'static,
    F: Fn(&Lua, A) -> mlua::Result<R> + 'static,
{
    t.set(name, function(lua, what, f)?)
}

/// A Lua function made of `f`, guarded ([`guard`], the panic named `what`): for a function
/// handed to Lua other than through the API table (an editor request's `respond`).
pub fn function<A, R, F>(lua: &Lua, what: &'static str, f: F) -> mlua::Result<Function>
where
    A: FromLuaMulti + 'static,
    R: IntoLuaMulti + 'static,
    F: Fn(&Lua, A) -> mlua::Result<R> + 'static,
{
    lua.create_function(move |lua, args: A| guard(what, || f(lua, args)))
}

thread_local! {
    static MAIN: RefCell<Option<MainThread>> = const { RefCell::new(None) };
    static WAITING: RefCell<HashMap<u64, Waiting>> = RefCell::new(HashMap::new());
    static NEXT_ID: RefCell<u64> = const { RefCell::new(1) };
}

/// The main-thread queue (made on first use, on the main thread).
pub fn main_thread() -> mlua::Result<MainThread> {
    MAIN.with(|m| {
        if let Some(mt) = m.borrow().as_ref() {
            return Ok(mt.clone());
        }
        let mt = MainThread::new().map_err(lua_error)?;
        *m.borrow_mut() = Some(mt.clone());
        Ok(mt)
    })
}

/// A callback waiting for its answer.
struct Waiting {
    /// What it waits for (logs name it).
    what: &'static str,
    cb: Function,
    /// Its work runs on the bridge's runtime, and stops with it ([`fail_bridge_work`]).
    on_bridge: bool,
}

/// Why work failed: the message `cb` gets as `err`, and the JSON-RPC error code, if any.
#[derive(Debug, Clone)]
pub struct Failure {
    pub message: String,
    pub code: Option<i64>,
}

impl Failure {
    pub fn new(message: impl std::fmt::Display) -> Failure {
        Failure {
            message: message.to_string(),
            code: None,
        }
    }
}

/// What a callback is called with: the answer's bytes (none: nothing to give), or why not.
pub type Answer = Result<Option<Vec<u8>>, Failure>;

/// Holds `cb` until its answer comes ([`answer`]); `on_bridge` when its work runs on the bridge's
/// runtime (it is answered with an error when the bridge stops). Returns its id.
pub fn hold(what: &'static str, cb: Function, on_bridge: bool) -> u64 {
    let id = NEXT_ID.with(|n| {
        let mut n = n.borrow_mut();
        *n += 1;
        *n
    });
    let w = Waiting {
        what,
        cb,
        on_bridge,
    };
    WAITING.with(|c| c.borrow_mut().insert(id, w));
    id
}

/// Forgets callback `id` unanswered (its work could not be started: the caller raises instead).
pub fn forget(id: u64) {
    WAITING.with(|c| c.borrow_mut().remove(&id));
}

/// Runs `run` on a thread of its own (named `thread`) and answers the callback held as `name`
/// (`cb`) on the main thread with its bytes or its failure. A panic in `run` is logged and
/// answered as an internal error: it never reaches Neovim, and the callback is always answered.
pub fn answer_off_thread(
    name: &'static str,
    thread: &str,
    cb: Function,
    run: impl FnOnce() -> Result<Vec<u8>, Failure> + Send + 'static,
) -> mlua::Result<()> {
    let main = main_thread()?;
    let id = hold(name, cb, false);
    let spawned = std::thread::Builder::new()
        .name(thread.into())
        .spawn(move || {
            let answer = contained(name, run).map(Some);
            answer_later(&main, id, answer);
        });
    if let Err(e) = spawned {
        forget(id);
        return Err(lua_error(format!(
            "claude-context: {name}: cannot start a thread: {e}"
        )));
    }
    Ok(())
}

/// Calls callback `id` with `answer` on the main thread, later (from any thread).
pub fn answer_later(main: &MainThread, id: u64, answer: Answer) {
    main.run(Box::new(move |lua| call(lua, id, answer)));
}

/// Calls callback `id` (on the main thread) with `cb(nil, value)`, or `cb(message)` when the
/// value could not be made or the work failed: a value built natively (a Lua table: no JSON
/// to decode on the main thread).
pub fn call_value(id: u64, value: Result<mlua::Value, Failure>) {
    let Some(w) = WAITING.with(|c| c.borrow_mut().remove(&id)) else {
        return;
    };
    let nil = mlua::Value::Nil;
    let r = match value {
        Ok(v) => w.cb.call::<()>((nil, v)),
        Err(f) => w.cb.call::<()>((f.message, nil, f.code)),
    };
    if let Err(e) = r {
        crate::logging::log_panic(&format!("{} callback", w.what), &e.to_string());
    }
}

/// Calls callback `id` with `answer` (on the main thread): `cb(nil, value)` or
/// `cb(message, nil[, code])`. An error in the callback is logged.
pub fn call(lua: &Lua, id: u64, answer: Answer) {
    let Some(w) = WAITING.with(|c| c.borrow_mut().remove(&id)) else {
        return;
    };
    let nil = mlua::Value::Nil;
    let r = match answer {
        Err(f) => w.cb.call::<()>((f.message, nil, f.code)),
        Ok(None) => w.cb.call::<()>((nil.clone(), nil)),
        Ok(Some(bytes)) => match lua.create_string(&bytes) {
            Ok(s) => w.cb.call::<()>((nil, s)),
            Err(e) => w.cb.call::<()>((e.to_string(), nil)),
        },
    };
    if let Err(e) = r {
        crate::logging::log_panic(&format!("{} callback", w.what), &e.to_string());
    }
}

/// Answers every callback whose work ran on the bridge's runtime with `failure` (the runtime
/// stopped: its jobs died with it), so that nothing in Lua waits forever.
pub fn fail_bridge_work(lua: &Lua, failure: &Failure) {
    let ids: Vec<u64> = WAITING.with(|c| {
        let c = c.borrow();
        c.iter()
            .filter(|(_, w)| w.on_bridge)
            .map(|(id, _)| *id)
            .collect()
    });
    for id in ids {
        call(lua, id, Err(failure.clone()));
    }
}
