//! `require("claude_context.native").conversations(opts_json, cb)`: Claude Code's conversations
//! of a project (`claude_context_core::conversations`), listed or searched on a thread of their
//! own; `cb(nil, list)` later on the main thread with the list (a Lua table built natively:
//! a thousand conversations are not a megabyte of JSON to decode on the main thread), or
//! `cb(message)` (the binding's one convention, `src/binding.rs`). Returns at once. Calls run in
//! the order made; the files are read in parallel by a small pool ([`conversations::Pool`]).
//! With `since` in the options (the generation of the list the caller keeps; 0: none), the
//! answer is what changed since ([`conversations::since`]): `{generation, unchanged = true}`,
//! `{generation, base, changed, removed}` or `{generation, list}`.

use crate::binding::{self, export, lua_error, Failure};
use crate::main_thread::MainThread;
use claude_context_core::conversations::since::{Answers, Reply};
use claude_context_core::conversations::{self, Conversation, ListOptions};
use mlua::{Function, Lua, Table};
use std::cell::RefCell;
use std::sync::mpsc::Sender;

/// The conversations thread's state: its pool for the files (or why there is none) and the
/// last answer of each listing (for a caller that asks what changed since its own).
struct Lister {
    pool: Result<conversations::Pool, conversations::ConversationError>,
    answers: RefCell<Answers>,
}

fn lister() -> Lister {
    Lister {
        pool: conversations::Pool::new(),
        answers: RefCell::default(),
    }
}

thread_local! {
    static WORKER: RefCell<Option<Sender<binding::Job<Lister>>>> = const { RefCell::new(None) };
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

fn start(opts: &str, cb: Function, main: fn() -> mlua::Result<MainThread>) -> mlua::Result<()> {
    let o: ListOptions = serde_json::from_str(opts)
        .map_err(|e| lua_error(format!("claude-context: conversations: bad options: {e}")))?;
    let main = main()?;
    // The conversations thread (its pool reads the files in parallel), jobs in call order.
    let tx = binding::worker(&WORKER, "cc-conversations", lister)?;
    let id = binding::hold("conversations", cb, false);
    let job: binding::Job<Lister> = Box::new(move |l| {
        // Without a pool, on this thread alone.
        let pool = l.pool.as_ref().ok();
        // A query's matches are its own: never kept, always whole.
        if let Some(since) = o.since.filter(|_| o.query.is_none()) {
            let reply = binding::contained("conversations", || {
                let mut answers = l.answers.borrow_mut();
                conversations::list_since(&o, pool, &mut answers, since).map_err(Failure::new)
            });
            return match reply {
                Ok(r) => answer_since(&main, id, r),
                Err(f) => answer_in_pieces(&main, id, Err(f), None),
            };
        }
        let answer = binding::contained("conversations", || {
            match pool {
                Some(p) => p.list(&o),
                None => conversations::list(&o),
            }
            .map_err(Failure::new)
        });
        answer_in_pieces(&main, id, answer, None);
    });
    if tx.send(job).is_err() {
        binding::forget(id);
        return Err(lua_error(
            "claude-context: the conversations thread is gone",
        ));
    }
    Ok(())
}

/// Conversations made Lua tables per main-thread job: a thousand are a few short jobs, each
/// its own turn of the main loop when the last one took long (`main_thread`'s slices).
const PIECE: usize = 250;

thread_local! {
    /// The lists being built on the main thread, by callback id.
    static BUILDING: RefCell<std::collections::HashMap<u64, Table>> = RefCell::default();
}

/// Answers a caller that holds a generation ([`Reply`]): `{generation, unchanged = true}`,
/// `{generation, base, changed = {…}, removed = {ids}}` in one main-thread job, or
/// `{generation, list = {…}}` built in pieces.
fn answer_since(main: &MainThread, id: u64, reply: Reply) {
    let (generation, changed, removed, base) = match reply {
        Reply::Full { generation, list } => {
            return answer_in_pieces(main, id, Ok(list), Some(generation))
        }
        Reply::Unchanged { generation } => (generation, None, Vec::new(), None),
        Reply::Patch {
            generation,
            base,
            changed,
            removed,
        } => (generation, Some(changed), removed, Some(base)),
    };
    main.run(Box::new(move |lua| {
        let t = (|| {
            let t = lua.create_table_with_capacity(0, 4)?;
            t.raw_set("generation", generation)?;
            match changed {
                None => t.raw_set("unchanged", true)?,
                Some(changed) => {
                    let c = lua.create_table_with_capacity(changed.len(), 0)?;
                    for (i, x) in changed.into_iter().enumerate() {
                        c.raw_set(i + 1, conversation_to_lua(lua, x)?)?;
                    }
                    t.raw_set("changed", c)?;
                    t.raw_set("removed", lua.create_sequence_from(removed)?)?;
                    t.raw_set("base", base)?;
                }
            }
            Ok::<_, mlua::Error>(mlua::Value::Table(t))
        })();
        binding::call_value(id, t.map_err(Failure::new));
    }));
}

/// Answers callback `id` with the list as a Lua array of tables (the fields of
/// [`Conversation`]; a missing one is nil), built on the main thread [`PIECE`] entries per job,
/// or with the failure; with `generation`, as `{generation, list}`.
fn answer_in_pieces(
    main: &MainThread,
    id: u64,
    answer: Result<Vec<Conversation>, Failure>,
    generation: Option<u64>,
) {
    let list = match answer {
        Ok(l) => l,
        Err(f) => {
            main.run(Box::new(move |_| binding::call_value(id, Err(f))));
            return;
        }
    };
    let total = list.len();
    let mut rest = list.into_iter();
    let mut at = 0;
    loop {
        let piece: Vec<Conversation> = rest.by_ref().take(PIECE).collect();
        let start = at;
        at += piece.len();
        let last = at >= total;
        main.run(Box::new(move |lua| {
            if let Err(e) = append(lua, id, start, piece) {
                BUILDING.with(|b| b.borrow_mut().remove(&id));
                return binding::call_value(id, Err(Failure::new(e)));
            }
            if last {
                let t = BUILDING.with(|b| b.borrow_mut().remove(&id));
                let v = (|| {
                    let t = match t {
                        Some(t) => t,
                        None => lua.create_table()?,
                    };
                    let Some(g) = generation else {
                        return Ok(mlua::Value::Table(t));
                    };
                    let e = lua.create_table_with_capacity(0, 2)?;
                    e.raw_set("generation", g)?;
                    e.raw_set("list", t)?;
                    Ok::<_, mlua::Error>(mlua::Value::Table(e))
                })();
                binding::call_value(id, v.map_err(Failure::new));
            }
        }));
        if last {
            return;
        }
    }
}

/// Appends `piece` (entries `start + 1 …` of the list) to the list being built for `id`.
fn append(lua: &Lua, id: u64, start: usize, piece: Vec<Conversation>) -> mlua::Result<()> {
    let t = match BUILDING.with(|b| b.borrow().get(&id).cloned()) {
        Some(t) => t,
        None => {
            let t = lua.create_table()?;
            BUILDING.with(|b| b.borrow_mut().insert(id, t.clone()));
            t
        }
    };
    for (i, c) in piece.into_iter().enumerate() {
        t.raw_set(start + i + 1, conversation_to_lua(lua, c)?)?;
    }
    Ok(())
}

fn conversation_to_lua(lua: &Lua, c: Conversation) -> mlua::Result<Table> {
    let t = lua.create_table_with_capacity(0, 18)?;
    t.raw_set("id", c.id)?;
    t.raw_set("title", c.title)?;
    t.raw_set("cwd", c.cwd)?;
    t.raw_set("branch", c.branch)?;
    t.raw_set("worktree", c.worktree)?;
    t.raw_set("started_ms", c.started_ms)?;
    t.raw_set("updated_ms", c.updated_ms)?;
    t.raw_set("prompts", c.prompts)?;
    t.raw_set("first_prompt", c.first_prompt)?;
    t.raw_set("last_prompt", c.last_prompt)?;
    t.raw_set("cost_usd", c.cost_usd)?;
    t.raw_set("running", c.running)?;
    t.raw_set("bytes", c.bytes)?;
    t.raw_set("folder", c.folder)?;
    t.raw_set("partial", c.partial)?;
    if let Some(ms) = c.matches {
        let m = lua.create_table_with_capacity(ms.len(), 0)?;
        for (i, x) in ms.into_iter().enumerate() {
            let e = lua.create_table_with_capacity(0, 3)?;
            e.raw_set("ts", x.ts)?;
            e.raw_set("role", x.role)?;
            e.raw_set("text", x.text)?;
            m.raw_set(i + 1, e)?;
        }
        t.raw_set("matches", m)?;
    }
    Ok(t)
}
