//! The integration tests, one module each, in one test binary (one link instead of one per
//! file). The tests that change something of the whole process (its umask, an environment
//! variable, a thread's priority), measure it (`backpressure`: its RSS) or need a feature
//! (`panic`) keep binaries of their own.

#[path = "../common/mod.rs"]
mod common;
#[path = "../ws_async/mod.rs"]
mod ws_async;

mod bash_edits;
mod capfs_prop;
mod capfs_race;
mod checkpoint;
mod checkpoint_watch;
mod claude_session;
mod client_requests;
mod client_status;
mod compat_replay;
mod facts;
mod file_cycles;
mod hook;
mod hook_cwd;
mod ide_connection;
mod inflight_budget;
mod json_depth;
mod jsonrpc;
mod land_merge;
mod layout;
mod load;
mod lock_file_follows;
mod loopback_only;
mod mcp_door;
mod mcp_roots;
mod plan_review;
mod project_file;
mod protected_files;
mod relay;
mod secrets;
mod turn_checkpoints;
mod ws_protocol;
