//! The Lua API's routing function (`require("claude_context.native").route`): which Claude
//! terminal the person works with, for the bridge's `selection_changed` / `at_mentioned`
//! (crates/core/src/server/route.rs).

use claude_context_core::server::route::{self, Route};
use mlua::{Lua, Table};

/// Adds `route(port, route_json|nil)` and `route_to_target(port, pids_json)` to the API table
/// `t`.
pub fn register(lua: &Lua, t: &Table) -> mlua::Result<()> {
    // route(port, json): `{ target = pid?, terminals = { pid, … } }` of the bridge on `port`;
    // nil forgets it (everyone gets everything).
    t.set(
        "route",
        lua.create_function(|_, (port, json): (u16, Option<String>)| {
            let route = match json {
                Some(j) => Some(serde_json::from_str::<Route>(&j).map_err(|e| {
                    mlua::Error::runtime(format!("claude-context: invalid route: {e}"))
                })?),
                None => None,
            };
            route::set(port, route);
            Ok(())
        })?,
    )?;
    // route_to_target(port, pids_json) -> bool: whether a routed notification now goes to the
    // target terminal's session, among clients with these `ide_connected` pids.
    t.set(
        "route_to_target",
        lua.create_function(|_, (port, pids): (u16, String)| {
            let pids: Vec<u64> = serde_json::from_str(&pids).unwrap_or_default();
            Ok(route::pick(port, pids).is_some_and(|p| p.to_target()))
        })?,
    )
}
