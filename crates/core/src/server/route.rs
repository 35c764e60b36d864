//! Where the person's selection and @-mentions go (`selection_changed`, `at_mentioned`): to the
//! Claude Code session they work with, not to every connected one.
//!
//! The editor says which terminals run Claude here and which one the person works with (the
//! focused or last-used Claude terminal, or the tab's with `per_tab`), as the pids of their jobs
//! ([`set`]). A client is paired with a terminal when the pid it sent in `ide_connected` is the
//! job's pid or a descendant of it (the job may be a wrapper that starts the CLI). Then:
//!
//! - the clients paired with the target terminal get the notification;
//! - when none is (no target, or its Claude is not connected yet), the clients paired with no
//!   terminal here — Claude Code started outside Neovim — get it;
//! - a client without a pid (it sent no `ide_connected`) is never filtered;
//! - without any route from the editor, everyone gets it, as before.
//!
//! Routes are kept per bridge port (one bridge per Neovim; tests run several in one process).

use serde::Deserialize;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

/// The notifications that are routed.
pub const ROUTED: &[&str] = &["selection_changed", "at_mentioned"];

/// What the editor says (`native.route(port, json)`).
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct Route {
    /// The pid of the job of the terminal the person works with.
    pub target: Option<u32>,
    /// The pids of the jobs of every Claude terminal of this Neovim.
    pub terminals: Vec<u32>,
}

#[derive(Default)]
struct Entry {
    route: Route,
    /// A client pid's ancestors (itself first), read once per route.
    lineage: HashMap<u64, Vec<u32>>,
}

static ROUTES: Mutex<Option<HashMap<u16, Entry>>> = Mutex::new(None);

fn routes() -> MutexGuard<'static, Option<HashMap<u16, Entry>>> {
    ROUTES.lock().unwrap_or_else(|p| p.into_inner())
}

/// Sets the route of the bridge on `port` (`None`: forget it, everyone gets everything).
pub fn set(port: u16, route: Option<Route>) {
    let mut g = routes();
    let map = g.get_or_insert_with(HashMap::new);
    match route {
        Some(route) => {
            let e = map.entry(port).or_default();
            if e.route != route {
                e.route = route;
                e.lineage.clear();
            }
        }
        None => {
            map.remove(&port);
        }
    }
}

/// The parent of `pid` (Linux: `/proc/<pid>/stat`; elsewhere unknown).
fn parent(pid: u32) -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // "pid (comm) state ppid …": comm may hold spaces and parentheses; the last ')' ends it.
        let rest = &stat[stat.rfind(')')? + 1..];
        let ppid: u32 = rest.split_whitespace().nth(1)?.parse().ok()?;
        (ppid > 1).then_some(ppid)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

/// `pid` and its ancestors, nearest first (at most 32).
pub fn lineage(pid: u32) -> Vec<u32> {
    let mut out = vec![pid];
    let mut p = pid;
    while out.len() < 32 {
        match parent(p) {
            Some(pp) if !out.contains(&pp) => {
                out.push(pp);
                p = pp;
            }
            _ => break,
        }
    }
    out
}

/// Who gets a routed notification, decided once for the clients of one broadcast.
pub struct Pick {
    /// The terminal a client's pid belongs to, by pid.
    owner: HashMap<u64, Option<u32>>,
    /// `Some(t)`: clients of terminal t; `None`: clients of no terminal here.
    to: Option<u32>,
}

impl Pick {
    /// Whether the client with `ide_connected` pid `pid` gets it.
    pub fn allows(&self, pid: Option<u64>) -> bool {
        let Some(pid) = pid else { return true };
        self.owner.get(&pid).copied().flatten() == self.to
    }

    /// Whether it goes to the target terminal's session (not to sessions started elsewhere).
    pub fn to_target(&self) -> bool {
        self.to.is_some()
    }
}

/// The pick for the bridge on `port` among clients with pids `pids`; `None`: no route, all get
/// it.
pub fn pick(port: u16, pids: impl IntoIterator<Item = u64>) -> Option<Pick> {
    let mut g = routes();
    let e = g.as_mut()?.get_mut(&port)?;
    let mut owner = HashMap::new();
    for pid in pids {
        let Ok(p32) = u32::try_from(pid) else {
            owner.insert(pid, None);
            continue;
        };
        let chain = e.lineage.entry(pid).or_insert_with(|| lineage(p32));
        let o = chain
            .iter()
            .find(|a| e.route.terminals.contains(a) || e.route.target == Some(**a))
            .copied();
        owner.insert(pid, o);
    }
    let target_here = e
        .route
        .target
        .filter(|t| owner.values().any(|o| *o == Some(*t)));
    Some(Pick {
        owner,
        to: target_here,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_descends_from_its_parents() {
        let me = std::process::id();
        let l = lineage(me);
        assert_eq!(l[0], me);
        #[cfg(target_os = "linux")]
        assert!(l.len() > 1, "{l:?}");
    }

    #[test]
    fn the_target_terminal_gets_it_else_the_sessions_started_elsewhere() {
        // Real processes: this test's process and its parent stand for two terminals' CLIs.
        let me = std::process::id();
        let parent = lineage(me).get(1).copied().unwrap_or(me);
        let port = 1; // no bridge listens there: only the route table is used
        assert!(pick(port, [u64::from(me)]).is_none(), "no route: everyone");

        // The person works with the terminal whose job is `me`; the outside session has a pid
        // that is no descendant of any terminal.
        let outside: u64 = 4_000_000_000; // no such process: a lineage of itself
        set(
            port,
            Some(Route {
                target: Some(me),
                terminals: vec![me],
            }),
        );
        let p = pick(port, [u64::from(me), outside]).unwrap();
        assert!(p.to_target());
        assert!(p.allows(Some(u64::from(me))));
        assert!(!p.allows(Some(outside)));
        assert!(p.allows(None), "a client without a pid is not filtered");

        // The target's Claude is not connected: the outside session gets it, the other
        // terminal's does not.
        set(
            port,
            Some(Route {
                target: Some(4_000_000_001),
                terminals: vec![me, 4_000_000_001],
            }),
        );
        let p = pick(port, [u64::from(me), outside]).unwrap();
        assert!(!p.to_target());
        assert!(!p.allows(Some(u64::from(me))));
        assert!(p.allows(Some(outside)));

        // A wrapper: the terminal's job is the parent of the client's process.
        set(
            port,
            Some(Route {
                target: Some(parent),
                terminals: vec![parent],
            }),
        );
        let p = pick(port, [u64::from(me), outside]).unwrap();
        assert!(p.allows(Some(u64::from(me))));
        assert!(!p.allows(Some(outside)));
        set(port, None);
        assert!(pick(port, [u64::from(me)]).is_none());
    }
}
