//! The transcript's native function (`lua/claude_context/transcript/`): a conversation file
//! read from an offset and rendered (crates/core/src/transcript/), on a thread of its own; the
//! answer comes back on the main thread as `cb(nil, bytes)` (a JSON header, a newline, the
//! lines) or `cb(message)`.

use crate::binding::{self, export, lua_error, Failure};
use claude_context_core::transcript::{self, Query};
use mlua::{Function, Lua, Table};

/// Adds `transcript_read(opts_json, cb)` to the API table `t`.
pub fn register(lua: &Lua, t: &Table) -> mlua::Result<()> {
    export(lua, t, "transcript_read", read)
}

fn read(_: &Lua, (opts, cb): (String, Function)) -> mlua::Result<()> {
    let q: Query = serde_json::from_str(&opts)
        .map_err(|e| lua_error(format!("claude-context: transcript_read: bad options: {e}")))?;
    let main = binding::main_thread()?;
    let id = binding::hold("transcript_read", cb, false);
    let spawned = std::thread::Builder::new()
        .name("cc-transcript".into())
        .spawn(move || {
            let run = || transcript::read(&q);
            let answer = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
                Ok(Ok(bytes)) => Ok(Some(bytes)),
                Ok(Err(e)) => Err(Failure::new(e)),
                Err(p) => {
                    crate::logging::log_panic("transcript_read", p.as_ref());
                    Err(Failure::new("internal error in transcript_read (logged)"))
                }
            };
            binding::answer_later(&main, id, answer);
        });
    if let Err(e) = spawned {
        binding::forget(id);
        return Err(lua_error(format!(
            "claude-context: transcript_read: cannot start a thread: {e}"
        )));
    }
    Ok(())
}
