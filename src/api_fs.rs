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
//! rewind undo` (the core's `keep::kept_write`; refused when the store cannot keep it). An
//! optional last argument `group` (a string) names the batch (a land) one undo takes back whole.
//!
//! * `protected(rel)`: why the project-relative path `rel` runs code by itself (the core's
//!   protected-file list, [`claude_context_core::capfs::protected_reason`]), or nil.

use crate::binding::{self, export_as, lua_error, main_thread, Failure};
use claude_context_core::capfs::{CapError, ProjectFile};
use claude_context_core::turns::checkpoints::keep;
use claude_context_core::turns::Tracker;
use mlua::{Function, Lua, Table};
use std::cell::RefCell;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;

thread_local! {
    static WORKER: RefCell<Option<Sender<binding::Job<()>>>> = const { RefCell::new(None) };
}

/// Runs `op` on the file thread; its answer goes to `cb` on the main thread (`cb(err, bytes)`).
fn submit(
    what: &'static str,
    cb: Function,
    op: impl FnOnce() -> Result<Option<Vec<u8>>, CapError> + Send + 'static,
) -> mlua::Result<()> {
    let main = main_thread()?;
    // The file thread: jobs one after another.
    let tx = binding::worker(&WORKER, "claude-context-fs", || ())?;
    let id = binding::hold(what, cb, false);
    let job: binding::Job<()> = Box::new(move |_| {
        let answer = binding::contained(what, || op().map_err(Failure::new));
        binding::answer_later(&main, id, answer);
    });
    if tx.send(job).is_err() {
        binding::forget(id);
        return Err(lua_error("claude-context: the file thread is gone"));
    }
    Ok(())
}

/// A write's arguments: root, path, bytes, `X`, cb and the optional group.
type Args<X> = (String, String, mlua::String, X, Function, Option<String>);

fn bytes(s: Option<mlua::String>) -> Option<Vec<u8>> {
    s.map(|s| s.as_bytes().to_vec())
}

/// The `fs` table: `read`, `replace`, `create`, `remove`.
pub fn create(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    export_as(lua, &t, "read", "fs.read", read)?;
    export_as(lua, &t, "replace", "fs.replace", replace)?;
    export_as(lua, &t, "create", "fs.create", create_file)?;
    export_as(lua, &t, "remove", "fs.remove", remove)?;
    export_as(lua, &t, "protected", "fs.protected", protected)?;
    Ok(t)
}

/// protected(rel): why `rel` is one of the files that run code by themselves, or nil.
fn protected(_: &Lua, rel: mlua::String) -> mlua::Result<Option<&'static str>> {
    let rel = PathBuf::from(std::ffi::OsStr::from_bytes(&rel.as_bytes()));
    Ok(claude_context_core::capfs::protected_reason(&rel))
}

/// read(root, path, cb)
fn read(_: &Lua, (root, path, cb): (String, String, Function)) -> mlua::Result<()> {
    submit("fs.read", cb, move || {
        ProjectFile::open(&PathBuf::from(root), &path)?.read()
    })
}

/// replace(root, path, bytes, expect, cb)
fn replace(
    _: &Lua,
    (root, path, data, expect, cb, group): Args<Option<mlua::String>>,
) -> mlua::Result<()> {
    let data = data.as_bytes().to_vec();
    let expect = bytes(expect);
    submit_kept("fs.replace", cb, root, path, group, move |f| {
        f.replace(&data, expect.as_deref())
    })
}

/// create(root, path, bytes, cb)
fn create_file(
    _: &Lua,
    (root, path, data, cb, group): (String, String, mlua::String, Function, Option<String>),
) -> mlua::Result<()> {
    let data = data.as_bytes().to_vec();
    submit_kept("fs.create", cb, root, path, group, move |f| f.create(&data))
}

/// remove(root, path, expect, cb)
fn remove(
    _: &Lua,
    (root, path, expect, cb, group): (
        String,
        String,
        Option<mlua::String>,
        Function,
        Option<String>,
    ),
) -> mlua::Result<()> {
    let expect = bytes(expect);
    submit_kept("fs.remove", cb, root, path, group, move |f| {
        f.remove(expect.as_deref())
    })
}

/// Runs `op` on the project file `path` of `root` on the file thread ([`submit`]), keeping what
/// it replaces first (the core's `keep::kept_write`, in the running bridge's checkpoints; `group`
/// names the batch one undo takes back whole).
fn submit_kept(
    what: &'static str,
    cb: Function,
    root: String,
    path: String,
    group: Option<String>,
    op: impl FnOnce(ProjectFile) -> Result<(), CapError> + Send + 'static,
) -> mlua::Result<()> {
    let keep = crate::api_review::keeper();
    submit(what, cb, move || {
        let cps = keep.as_deref().map(|t: &Tracker| &t.checkpoints);
        keep::kept_write(
            cps,
            Path::new(&root),
            Path::new(&path),
            group.as_deref(),
            || op(ProjectFile::open(&PathBuf::from(&root), &path)?).map(|_| None),
        )
    })
}
