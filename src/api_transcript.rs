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
    binding::answer_off_thread("transcript_read", "cc-transcript", cb, move || {
        transcript::read(&q).map_err(Failure::new)
    })
}
