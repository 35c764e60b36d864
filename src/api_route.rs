//! The Lua API's routing function (`require("claude_context.native").route`): which Claude
//! terminal the person works with, for the bridge's `selection_changed` / `at_mentioned`
//! (crates/core/src/server/route.rs).

use crate::binding::{export, lua_error};
use claude_context_core::server::route::{self, Route};
use mlua::{Lua, Table};

/// Adds `route(port, route_json|nil)` and `route_to_target(port, pids_json)` to the API table
/// `t`.
pub fn register(lua: &Lua, t: &Table) -> mlua::Result<()> {
    export(lua, t, "route", set_route)?;
    export(lua, t, "route_to_target", route_to_target)
}

/// route(port, json): `{ target = pid?, terminals = { pid, … } }` of the bridge on `port`; nil
/// forgets it (everyone gets everything).
fn set_route(_: &Lua, (port, json): (u16, Option<String>)) -> mlua::Result<()> {
    let route = match json {
        Some(j) => Some(
            serde_json::from_str::<Route>(&j)
                .map_err(|e| lua_error(format!("claude-context: invalid route: {e}")))?,
        ),
        None => None,
    };
    route::set(port, route);
    Ok(())
}

/// route_to_target(port, pids_json) -> bool: whether a routed notification now goes to the
/// target terminal's session, among clients with these `ide_connected` pids.
fn route_to_target(_: &Lua, (port, pids): (u16, String)) -> mlua::Result<bool> {
    let pids: Vec<u64> = serde_json::from_str(&pids)
        .map_err(|e| lua_error(format!("claude-context: invalid pids: {e}")))?;
    Ok(route::pick(port, pids).is_some_and(|p| p.to_target()))
}
