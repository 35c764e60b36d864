//! Claude sessions: run the Claude Code CLI as a sub-agent and keep its conversation going
//! across calls (doc/protocol.md, Claude CLI session server).
//!
//! * [`args`] — argument policy: the per-call options, the tools a run may use, the command line.
//! * [`edit`] — the warm edit-in-place process's command line (the sub-agent's, read tools only,
//!   stream-json both ways).
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
pub mod edit;
pub mod manager;
pub mod outcome;
mod projects;
pub mod reply;
pub mod results;
pub mod runner;
pub mod store;

/// What a Claude-session call refuses, or why a run gave no answer. The text is what the
/// caller sees (a tool error, or a run's `error` field).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClaudeError {
    /// A per-call option is malformed; the text names it.
    #[error("{0}")]
    InvalidOption(String),
    /// The call asks for a tool outside the set the person allowed.
    #[error("{0}")]
    ToolNotAllowed(String),
    /// A session id `--resume` would not accept.
    #[error(
        "invalid session_id {0:?}: expected a Claude session id such as \
         123e4567-e89b-12d3-a456-426614174000 (letters, digits, '-', '_')"
    )]
    InvalidSessionId(String),
    /// The context file cannot be used.
    #[error(transparent)]
    ContextFile(#[from] context::ContextFileError),
    /// The context file's read was lost (its task ended without an answer).
    #[error("cannot read the context file: {0}")]
    ContextRead(String),
    /// The CLI cannot be found or started.
    #[error("{0}")]
    Cli(String),
    /// The run was cancelled or timed out before or while the CLI ran.
    #[error("{0}")]
    Stopped(String),
    /// The CLI finished without an answer.
    #[error(transparent)]
    Failed(#[from] outcome::CliFailure),
}

/// A malformed option, a refused tool or session id are the caller's mistakes; the rest is the
/// run's failure.
impl crate::error::Fault for ClaudeError {
    fn is_callers(&self) -> bool {
        matches!(
            self,
            ClaudeError::InvalidOption(_)
                | ClaudeError::ToolNotAllowed(_)
                | ClaudeError::InvalidSessionId(_)
        )
    }
}
