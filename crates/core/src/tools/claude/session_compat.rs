//! The Claude-session tools' answers as tethiro/mcp-claude-context-continuity gave them, beside
//! ours: every result names its tool (`tool_name`), `set_current_session` also answers
//! `new_session_id`, and `test_claude_cli` also answers `command`, `output` and `message`.

use crate::claude::results::{CliTestResult, HistoryEntry, HistoryResult, SetSessionResult};
use schemars::JsonSchema;
use serde::Serialize;

/// A result with the name of the tool that produced it (`tool_name`), as the original had.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Named<T> {
    /// The tool that produced this result.
    pub tool_name: String,
    #[serde(flatten)]
    pub result: T,
}

impl<T> Named<T> {
    pub fn new(tool: &str, result: T) -> Named<T> {
        Named {
            tool_name: tool.into(),
            result,
        }
    }
}

/// `get_execution_history`: each entry carries `tool_name` as well as `tool`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct History {
    pub tool_name: String,
    pub success: bool,
    /// The newest `limit` entries, oldest first.
    pub history: Vec<Named<HistoryEntry>>,
    /// Entries kept in all (at most 100).
    pub total_entries: usize,
    pub current_session_id: Option<String>,
}

impl From<HistoryResult> for History {
    fn from(h: HistoryResult) -> History {
        History {
            tool_name: "get_execution_history".into(),
            success: h.success,
            history: h
                .history
                .into_iter()
                .map(|e| {
                    let tool = if e.tool.is_empty() {
                        "execute_claude".to_string()
                    } else {
                        e.tool.clone()
                    };
                    Named::new(&tool, e)
                })
                .collect(),
            total_entries: h.total_entries,
            current_session_id: h.current_session_id,
        }
    }
}

/// `set_current_session`: `new_session_id` (the original's name) beside `session_id`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SetSession {
    pub tool_name: String,
    #[serde(flatten)]
    pub result: SetSessionResult,
    /// The same as `session_id`.
    pub new_session_id: String,
}

impl From<SetSessionResult> for SetSession {
    fn from(r: SetSessionResult) -> SetSession {
        SetSession {
            tool_name: "set_current_session".into(),
            new_session_id: r.session_id.clone(),
            result: r,
        }
    }
}

/// `test_claude_cli`: both field sets, ours (`path, source, version, error`) and the
/// original's (`command, output, message`).
#[derive(Debug, Serialize, JsonSchema)]
pub struct CliTest {
    pub tool_name: String,
    #[serde(flatten)]
    pub result: CliTestResult,
    /// The command that was run (`<path> --version`); null when the CLI was not found.
    pub command: Option<String>,
    /// What it printed (the same as `version`).
    pub output: Option<String>,
    /// One line saying how it went.
    pub message: String,
}

impl From<CliTestResult> for CliTest {
    fn from(r: CliTestResult) -> CliTest {
        let message = match (&r.path, r.success) {
            (None, _) => "Claude CLI not found",
            (Some(_), true) => "Claude CLI found and working!",
            (Some(_), false) => "Claude CLI found but not working properly",
        };
        CliTest {
            tool_name: "test_claude_cli".into(),
            command: r.path.as_ref().map(|p| format!("{p} --version")),
            output: r.version.clone(),
            message: message.into(),
            result: r,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_test_has_both_field_sets() {
        let ok = serde_json::to_value(CliTest::from(CliTestResult {
            success: true,
            path: Some("/bin/claude".into()),
            source: Some("PATH".into()),
            version: Some("2.1.197 (Claude Code)".into()),
            error: None,
        }))
        .unwrap();
        for k in [
            "tool_name",
            "success",
            "path",
            "source",
            "version",
            "error",
            "command",
            "output",
            "message",
        ] {
            assert!(ok.get(k).is_some(), "{k}: {ok}");
        }
        assert_eq!(ok["command"], "/bin/claude --version");
        assert_eq!(ok["output"], "2.1.197 (Claude Code)");
        assert_eq!(ok["message"], "Claude CLI found and working!");
        let missing = serde_json::to_value(CliTest::from(CliTestResult {
            success: false,
            path: None,
            source: None,
            version: None,
            error: Some("not found".into()),
        }))
        .unwrap();
        assert_eq!(missing["command"], serde_json::Value::Null);
        assert_eq!(missing["message"], "Claude CLI not found");
    }
}
