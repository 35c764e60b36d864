//! The crate's errors: each module has its own `thiserror` enum (`ConfigError`, `LockError`,
//! `ClaudeError`, `DiscoveryError`, `HookError`, `EditorError`, `TurnError`, …) and says, next
//! to it, whose fault each of its errors is ([`Fault`]). [`Error`] holds any of them, and the
//! one conversion to a JSON-RPC error lives here (a tool's caller gets its mistakes as -32602
//! "invalid params", anything else as -32603). The Neovim side turns any of them into a Lua
//! error the same way (`src/api.rs`, `lua_error`). No production code returns a bare `String`
//! error (`tests/it/layout.rs` holds it).
//!
//! Low in the layers: it uses only [`crate::jsonrpc`], and the modules whose errors it holds
//! depend on it, not it on them.

use crate::jsonrpc::RpcError;
use rmcp::model::ErrorCode;

/// A module's error, and whose fault it is: the caller's (what it asked for is malformed or
/// refused) or the bridge's. Each module implements it next to its error enum.
pub trait Fault: std::error::Error + Send + Sync + 'static {
    /// Whether the caller's input is at fault; an internal failure by default.
    fn is_callers(&self) -> bool {
        false
    }
}

/// Any of the modules' errors (shown as the error itself).
#[derive(Debug)]
pub struct Error(Box<dyn Fault>);

impl<E: Fault> From<E> for Error {
    fn from(e: E) -> Error {
        Error(Box::new(e))
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

impl Error {
    /// Whether the caller's input is at fault (what it asked for is malformed or refused).
    pub fn is_callers(&self) -> bool {
        self.0.is_callers()
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
    use crate::claude::ClaudeError;
    use crate::config::ConfigError;
    use crate::editor::EditorError;
    use crate::lockfile::LockError;
    use crate::turns::checkpoints::TurnError;

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
    fn a_typed_error_converts_to_a_tools_error_by_whose_fault_it_is() {
        use crate::tools::ToolError;
        let e: ToolError = ClaudeError::InvalidOption("bad model".into()).into();
        assert_eq!(e, ToolError::InvalidParams("bad model".into()));
        let e: ToolError = ConfigError::NoStateDir.into();
        assert!(matches!(e, ToolError::Failed(m) if m.starts_with("no state directory")));
        let e: ToolError = crate::capfs::CapError::TooLarge {
            path: "/p".into(),
            limit: 1,
        }
        .into();
        assert!(matches!(e, ToolError::Failed(_)));
        let e: ToolError = crate::state::NoProjectRoot.into();
        assert!(matches!(e, ToolError::Failed(m) if m.starts_with("the project root")));
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
