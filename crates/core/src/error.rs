//! The crate's errors: each module has its own `thiserror` enum ([`ConfigError`],
//! [`LockError`], [`ClaudeError`], [`DiscoveryError`], [`HookError`], [`EditorError`],
//! [`TurnError`]);
//! [`Error`] gathers them, and the one conversion to a JSON-RPC error lives here (a tool's
//! caller gets its mistakes as -32602 "invalid params", anything else as -32603). The Neovim
//! side turns any of them into a Lua error the same way (`src/api.rs`, `lua_error`). No
//! production code returns a bare `String` error (`tests/layout.rs` holds it).

use crate::claude::ClaudeError;
use crate::config::ConfigError;
use crate::discovery::DiscoveryError;
use crate::editor::EditorError;
use crate::hook::HookError;
use crate::jsonrpc::RpcError;
use crate::lockfile::LockError;
use crate::turns::checkpoints::TurnError;
use rmcp::model::ErrorCode;

/// Any of the modules' errors.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(transparent)]
    Claude(#[from] ClaudeError),
    #[error(transparent)]
    Discovery(#[from] DiscoveryError),
    #[error(transparent)]
    Hook(#[from] HookError),
    #[error(transparent)]
    Turn(#[from] TurnError),
    #[error(transparent)]
    Editor(#[from] EditorError),
}

impl Error {
    /// Whether the caller's input is at fault (what it asked for is malformed or refused).
    pub fn is_callers(&self) -> bool {
        if let Error::Turn(e) = self {
            return e.is_callers();
        }
        matches!(
            self,
            Error::Config(ConfigError::Invalid(_))
                | Error::Claude(
                    ClaudeError::InvalidOption(_)
                        | ClaudeError::ToolNotAllowed(_)
                        | ClaudeError::InvalidSessionId(_)
                )
        )
    }
}

impl From<Error> for RpcError {
    fn from(e: Error) -> RpcError {
        let code = if e.is_callers() {
            ErrorCode::INVALID_PARAMS
        } else {
            ErrorCode::INTERNAL_ERROR
        };
        RpcError::new(code, e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_callers_mistakes_are_invalid_params_the_rest_internal_errors() {
        let e: RpcError = Error::from(ClaudeError::InvalidSessionId("a b".into())).into();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS.0);
        assert!(e.message.starts_with("invalid session_id \"a b\""), "{e:?}");
        let e: RpcError = Error::from(ConfigError::NoStateDir).into();
        assert_eq!(e.code, ErrorCode::INTERNAL_ERROR.0);
        assert_eq!(
            e.message,
            "no state directory: set setup's state_dir or HOME (XDG_STATE_HOME)"
        );
        let e: RpcError = Error::from(LockError::NoHome).into();
        assert_eq!(e.code, ErrorCode::INTERNAL_ERROR.0);
        let e: RpcError = Error::from(TurnError::NothingToUndo("/p".into())).into();
        assert_eq!(
            (e.code, e.message.as_str()),
            (ErrorCode::INVALID_PARAMS.0, "no rewind to undo in /p")
        );
        let e: RpcError = Error::from(TurnError::WorkerStopped).into();
        assert_eq!(e.code, ErrorCode::INTERNAL_ERROR.0);
    }

    #[test]
    fn an_editor_failure_is_the_tools_failure_with_the_editors_text() {
        let failed = || EditorError::Handler("File not found: /nope".into());
        let e: RpcError = Error::from(failed()).into();
        assert_eq!(e.code, ErrorCode::INTERNAL_ERROR.0);
        assert_eq!(e.message, "File not found: /nope");
        let e: crate::tools::ToolError = Error::from(failed()).into();
        assert_eq!(
            e,
            crate::tools::ToolError::Failed("File not found: /nope".into())
        );
    }
}
