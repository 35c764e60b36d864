//! Claude sessions: run the Claude Code CLI as a sub-agent and keep its conversation going
//! across calls (doc/protocol.md, Claude CLI session server).
//!
//! * [`args`] — argument policy: the per-call options, the tools a run may use, the command line.
//! * [`discovery`] — where the CLI is (config, PATH, common locations, `CLAUDE_PATH`).
//! * [`runner`] — one CLI process in its own process group, killed as a group on timeout.
//! * [`reply`] and [`outcome`] — the CLI's JSON answer, and what a finished run means (a pure
//!   function of its output and exit status).
//! * [`context`] — the context file of `execute_claude_with_context`.
//! * [`results`] — the shapes the tools answer with.
//! * [`store`] and [`projects`] — history, current session id and counters, per project,
//!   persisted under `state_dir`.
//! * [`manager`] — the [`manager::Manager`] that ties them together: one run at a time, in
//!   call order.

pub mod args;
pub mod context;
pub mod discovery;
pub mod manager;
pub mod outcome;
mod projects;
pub mod reply;
pub mod results;
pub mod runner;
pub mod store;
