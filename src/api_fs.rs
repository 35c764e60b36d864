//! `require("claude_context.native").fs`: the editor's own reads and writes of the person's
//! project files (the review of Claude's changes), through the capability layer
//! ([`claude_context_core::capfs::ProjectFile`]): nothing is checked by path and then opened by
//! name, no symbolic link is followed, only regular files are read or written, within a size
//! cap. Every function returns at once: the work runs on one file thread, in the order asked
//! (two writes of one file land in that order), and `cb` runs later on the main thread.
//!
//! * `read(root, path, cb)`: `cb(err, bytes)`; both nil when the file does not exist.
//! * `replace(root, path, bytes, expect, cb)`: atomic (temp file beside it, fsync, rename),
//!   the mode kept; `expect` (a string or nil): only when the file holds exactly that now.
//!   `cb(err)`.
//! * `create(root, path, bytes, cb)`: only when nothing is there. `cb(err)`.
//! * `remove(root, path, expect, cb)`: a regular file only. `cb(err)`.
//!
//! `replace`, `create` and `remove` keep what they change first: the file's current content
//! goes into the project's checkpoint store and the write is recorded for `:ClaudeContext
//! rewind undo` ([`crate::api_review::kept_write`]; refused when the store cannot keep it).

use crate::main_thread::MainThread;
use claude_context_core::capfs::{CapError, ProjectFile};
use mlua::{Function, Lua, Table};
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc::{channel, Sender};

type Work = Box<dyn FnOnce() + Send + 'static>;

/// What a job answers: the bytes read (`None`: no file, or a write), or why it failed.
type Answer = Result<Option<Vec<u8>>, FsError>;

/// Why a job failed; `cb` gets its text as `err`.
#[derive(Debug, thiserror::Error)]
enum FsError {
    #[error(transparent)]
    Cap(#[from] CapError),
    /// The job panicked (contained and logged).
    #[error("claude-context: internal error in fs.{0} (logged; see :ClaudeContext log)")]
    Panicked(&'static str),
}

thread_local! {
    static MAIN: RefCell<Option<MainThread>> = const { RefCell::new(None) };
    static WORKER: RefCell<Option<Sender<Work>>> = const { RefCell::new(None) };
    static CALLBACKS: RefCell<HashMap<u64, Function>> = RefCell::new(HashMap::new());
    static NEXT_ID: RefCell<u64> = const { RefCell::new(1) };
}

fn main_thread() -> mlua::Result<MainThread> {
    MAIN.with(|m| {
        if let Some(mt) = m.borrow().as_ref() {
            return Ok(mt.clone());
        }
        let mt = MainThread::new().map_err(|e| mlua::Error::runtime(e.to_string()))?;
        *m.borrow_mut() = Some(mt.clone());
        Ok(mt)
    })
}

/// The file thread (started on first use); a panic in a job is contained there.
fn worker() -> mlua::Result<Sender<Work>> {
    WORKER.with(|w| {
        if let Some(tx) = w.borrow().as_ref() {
            return Ok(tx.clone());
        }
        let (tx, rx) = channel::<Work>();
        std::thread::Builder::new()
            .name("claude-context-fs".into())
            .spawn(move || {
                while let Ok(job) = rx.recv() {
                    if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)) {
                        crate::logging::log_panic("fs job", p.as_ref());
                    }
                }
            })
            .map_err(|e| mlua::Error::runtime(format!("claude-context: no file thread: {e}")))?;
        *w.borrow_mut() = Some(tx.clone());
        Ok(tx)
    })
}

/// Runs `op` on the file thread; its answer goes to `cb` on the main thread.
fn submit(
    what: &'static str,
    cb: Function,
    op: impl FnOnce() -> Result<Option<Vec<u8>>, CapError> + Send + 'static,
) -> mlua::Result<()> {
    let main = main_thread()?;
    let tx = worker()?;
    let id = NEXT_ID.with(|n| {
        let mut n = n.borrow_mut();
        *n += 1;
        *n
    });
    CALLBACKS.with(|c| c.borrow_mut().insert(id, cb));
    let job: Work = Box::new(move || {
        let answer: Answer = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(op)) {
            Ok(r) => r.map_err(FsError::from),
            Err(p) => {
                crate::logging::log_panic(what, p.as_ref());
                Err(FsError::Panicked(what))
            }
        };
        main.run(Box::new(move |lua| answer_cb(lua, id, answer)));
    });
    if tx.send(job).is_err() {
        CALLBACKS.with(|c| c.borrow_mut().remove(&id));
        return Err(mlua::Error::runtime(
            "claude-context: the file thread is gone",
        ));
    }
    Ok(())
}

fn answer_cb(lua: &Lua, id: u64, answer: Answer) {
    let Some(cb) = CALLBACKS.with(|c| c.borrow_mut().remove(&id)) else {
        return;
    };
    let r = match answer {
        Err(e) => cb.call::<()>((e.to_string(), mlua::Value::Nil)),
        Ok(None) => cb.call::<()>((mlua::Value::Nil, mlua::Value::Nil)),
        Ok(Some(bytes)) => match lua.create_string(&bytes) {
            Ok(s) => cb.call::<()>((mlua::Value::Nil, s)),
            Err(e) => cb.call::<()>((e.to_string(), mlua::Value::Nil)),
        },
    };
    if let Err(e) = r {
        crate::logging::log_panic("fs callback", &e.to_string());
    }
}

/// A Lua-facing function with panics contained.
fn guard<T>(what: &str, f: impl FnOnce() -> mlua::Result<T>) -> mlua::Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            crate::logging::log_panic(what, p.as_ref());
            Err(mlua::Error::runtime(format!(
                "claude-context: internal error in {what} (logged; see :ClaudeContext log)"
            )))
        }
    }
}

fn bytes(s: Option<mlua::String>) -> Option<Vec<u8>> {
    s.map(|s| s.as_bytes().to_vec())
}

pub fn create(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set(
        "read",
        lua.create_function(|_, (root, path, cb): (String, String, Function)| {
            guard("fs.read", || {
                submit("read", cb, move || {
                    ProjectFile::open(&PathBuf::from(root), &path)?.read()
                })
            })
        })?,
    )?;
    t.set(
        "replace",
        lua.create_function(
            |_,
             (root, path, data, expect, cb): (
                String,
                String,
                mlua::String,
                Option<mlua::String>,
                Function,
            )| {
                guard("fs.replace", || {
                    let data = data.as_bytes().to_vec();
                    let expect = bytes(expect);
                    let keep = crate::api_review::keeper();
                    submit("replace", cb, move || {
                        crate::api_review::kept_write(keep, &root, &path, || {
                            ProjectFile::open(&PathBuf::from(&root), &path)?
                                .replace(&data, expect.as_deref())
                                .map(|_| None)
                        })
                    })
                })
            },
        )?,
    )?;
    t.set(
        "create",
        lua.create_function(
            |_, (root, path, data, cb): (String, String, mlua::String, Function)| {
                guard("fs.create", || {
                    let data = data.as_bytes().to_vec();
                    let keep = crate::api_review::keeper();
                    submit("create", cb, move || {
                        crate::api_review::kept_write(keep, &root, &path, || {
                            ProjectFile::open(&PathBuf::from(&root), &path)?
                                .create(&data)
                                .map(|_| None)
                        })
                    })
                })
            },
        )?,
    )?;
    t.set(
        "remove",
        lua.create_function(
            |_, (root, path, expect, cb): (String, String, Option<mlua::String>, Function)| {
                guard("fs.remove", || {
                    let expect = bytes(expect);
                    let keep = crate::api_review::keeper();
                    submit("remove", cb, move || {
                        crate::api_review::kept_write(keep, &root, &path, || {
                            ProjectFile::open(&PathBuf::from(&root), &path)?
                                .remove(expect.as_deref())
                                .map(|_| None)
                        })
                    })
                })
            },
        )?,
    )?;
    Ok(t)
}
