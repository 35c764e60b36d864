//! `require("claude_context.native").conversations(opts_json, cb)`: Claude Code's conversations
//! of a project (`claude_context_core::conversations`), listed or searched on a thread of their
//! own; `cb(nil, json)` later on the main thread with the list, or
//! `cb(message)` (the binding's one convention, `src/binding.rs`). Returns at once. Calls run in
//! the order made; the files are read in parallel by a small pool ([`conversations::Pool`]).

use crate::binding::{self, export, lua_error, Failure};
use crate::main_thread::MainThread;
use claude_context_core::conversations::{self, ListOptions};
use mlua::{Function, Lua, Table};
use std::cell::RefCell;
use std::sync::mpsc::{channel, Sender};

type Work = Box<
    dyn FnOnce(Result<&conversations::Pool, &conversations::ConversationError>) + Send + 'static,
>;

thread_local! {
    static WORKER: RefCell<Option<Sender<Work>>> = const { RefCell::new(None) };
}

/// Adds `conversations` to the API table `t`; `main` gives the main-thread queue.
pub fn register(lua: &Lua, t: &Table, main: fn() -> mlua::Result<MainThread>) -> mlua::Result<()> {
    export(
        lua,
        t,
        "conversations",
        move |_, (opts, cb): (String, Function)| start(&opts, cb, main),
    )
}

/// The conversations thread (started on first use), with its pool for the files.
fn worker() -> mlua::Result<Sender<Work>> {
    WORKER.with(|w| {
        if let Some(tx) = w.borrow().as_ref() {
            return Ok(tx.clone());
        }
        let (tx, rx) = channel::<Work>();
        std::thread::Builder::new()
            .name("cc-conversations".into())
            .spawn(move || {
                let pool = conversations::Pool::new();
                while let Ok(job) = rx.recv() {
                    job(pool.as_ref());
                }
            })
            .map_err(|e| lua_error(format!("claude-context: no conversations thread: {e}")))?;
        *w.borrow_mut() = Some(tx.clone());
        Ok(tx)
    })
}

fn start(opts: &str, cb: Function, main: fn() -> mlua::Result<MainThread>) -> mlua::Result<()> {
    let o: ListOptions = serde_json::from_str(opts)
        .map_err(|e| lua_error(format!("claude-context: conversations: bad options: {e}")))?;
    let main = main()?;
    let tx = worker()?;
    let id = binding::hold("conversations", cb, false);
    let job: Work = Box::new(move |pool| {
        let run = || match pool {
            Ok(p) => p.list(&o),
            // Without a pool, on this thread alone.
            Err(_) => conversations::list(&o),
        };
        let answer = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
            Ok(Ok(list)) => serde_json::to_vec(&list).map(Some).map_err(Failure::new),
            Ok(Err(e)) => Err(Failure::new(e)),
            Err(p) => {
                crate::logging::log_panic("conversations", p.as_ref());
                Err(Failure::new(
                    "claude-context: internal error in conversations (logged; see :ClaudeContext log)",
                ))
            }
        };
        binding::answer_later(&main, id, answer);
    });
    if tx.send(job).is_err() {
        binding::forget(id);
        return Err(lua_error(
            "claude-context: the conversations thread is gone",
        ));
    }
    Ok(())
}
