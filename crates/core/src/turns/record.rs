//! Where a hook event goes, whichever way it came (the hook door, or the hook tool Claude Code
//! calls on the plugin's MCP server): the session registry, the checkpoints, and the editor.

use super::Tracker as State;
use super::{Change, HookEvent};
use crate::editor::methods;
use serde_json::Value;
use std::sync::Arc;

/// Records `ev` in the session registry, takes the checkpoints it calls for (never waiting for
/// a walk), and tells the editor when a session's state changed.
pub fn record(state: &Arc<State>, ev: HookEvent) {
    record_at(state, ev, None)
}

/// [`record`], the tool's file at `line` (a `Read`'s `offset`, when the hook sent it).
fn record_at(state: &Arc<State>, ev: HookEvent, line: Option<u64>) {
    let ev = crate::hook::bound(ev);
    send_tool_call(state, &ev, line);
    let change = state.sessions.apply(&ev, super::now_ms());
    // Checkpoints (after the registry: a prompt's turn exists); never waits for a walk.
    super::checkpoints::on_event(state, &ev);
    let Some(change) = change else {
        return;
    };
    tracing::debug!(
        event = %change.event,
        session = %change.session.id,
        state = change.session.state.as_str(),
        "session state"
    );
    send_change(state, &change);
}

/// Sends a registry change to the editor (`session_state`), not waiting for it.
fn send_change(state: &State, change: &Change) {
    let params = serde_json::to_value(change).unwrap_or(Value::Null);
    tell_editor(state, methods::SESSION_STATE, params);
}

/// Sends `method` to the editor, not waiting for its answer.
fn tell_editor(state: &State, method: &'static str, params: Value) {
    let fut = state.rpc.call(method, params);
    if let Ok(rt) = tokio::runtime::Handle::try_current() {
        rt.spawn(async move {
            if let Err(e) = fut.await {
                tracing::debug!(error = %e, method, "the editor did not take it");
            }
        });
    }
}

/// Tells the editor of a tool call on a file (`tool_call`: the follow window and the trail,
/// `lua/claude_context/follow/init.lua`), not waiting for it.
fn send_tool_call(state: &State, ev: &HookEvent, line: Option<u64>) {
    let (Some(tool), Some(file)) = (&ev.tool_name, &ev.file) else {
        return;
    };
    if !ev.event.is_tool_call() || file.is_empty() {
        return;
    }
    let params = serde_json::json!({
        "event": ev.event, "session_id": ev.session_id, "terminal": ev.terminal,
        "cwd": ev.cwd, "tool": tool, "file": file, "line": line,
    });
    tell_editor(state, methods::TOOL_CALL, params);
}

/// The line a tool call's hook names: the `offset` the hook interpolated (a number, or its
/// text), when it is one.
fn line_of(args: &Value) -> Option<u64> {
    match args.get("offset")? {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|n| *n > 0)
}

/// Records the hook event Claude Code sends as a call of the hook tool
/// ([`crate::hook::MCP_TOOL`]) on the plugin's MCP server: `args` holds the hook input's fields
/// (see [`crate::hook::event_from_tool_args`]). Only a tool's `PreToolUse` and `PostToolUse`
/// come this way: anything else is refused, so a caller of the tool cannot start or end a turn
/// nor fake a session's state.
pub fn record_tool_call(state: &Arc<State>, args: &Value) -> Result<(), crate::hook::HookError> {
    let mut ev = crate::hook::event_from_tool_args(args)?;
    crate::hook::admit_cwd(&mut ev, &state.model_roots())?;
    record_at(state, ev, line_of(args));
    Ok(())
}
