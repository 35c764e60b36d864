//! Claude session tools: the `claude -p` sub-agent, its queue, history and session.

pub mod cancel_claude_execution;
pub mod clear_execution_history;
pub mod execute_claude;
pub mod execute_claude_with_context;
pub mod get_current_session;
pub mod get_execution_history;
pub mod get_execution_stats;
pub mod reset_session;
pub mod session_compat;
pub mod set_current_session;
pub mod test_claude_cli;
