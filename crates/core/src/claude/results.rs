//! The shapes the Claude-session tools answer with, field for field as the tools document them
//! (doc/protocol.md, Answers), and the counters persisted behind `get_execution_stats`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The result of `execute_claude` / `execute_claude_with_context` (doc/protocol.md, Answers),
/// field for field. `context_file` only appears for `execute_claude_with_context`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct ExecResult {
    pub success: bool,
    /// The prompt as given.
    pub prompt: String,
    /// The CLI's `result` field; null on failure.
    pub response: Option<String>,
    /// Seconds the run took (the CLI process, reading the context file), not the queue wait.
    pub execution_time: f64,
    /// When the run started, ISO 8601 with the local offset.
    pub timestamp: String,
    /// What went wrong; null on success.
    pub error: Option<String>,
    /// The context file as given (execute_claude_with_context only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_file: Option<String>,
}

/// One history entry: the result plus what the CLI reported about the run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct HistoryEntry {
    #[serde(flatten)]
    pub result: ExecResult,
    /// `execute_claude` or `execute_claude_with_context`.
    #[serde(default)]
    pub tool: String,
    /// The session the CLI reported for this run.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The session this run resumed (`--resume`), if any.
    #[serde(default)]
    pub resumed_session_id: Option<String>,
    #[serde(default)]
    pub total_cost_usd: Option<f64>,
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
    /// The CLI's own `duration_ms`.
    #[serde(default)]
    pub duration_ms: Option<u64>,
}

/// Counters behind `get_execution_stats`, cumulative since `since`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct Counters {
    pub since: Option<String>,
    pub runs: u64,
    pub successes: u64,
    pub failures: u64,
    pub total_cost_usd: f64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub duration_ms_total: u64,
    pub duration_ms_runs: u64,
    pub execution_time_total: f64,
}

#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
pub struct HistoryResult {
    pub success: bool,
    /// The newest `limit` entries, oldest first.
    pub history: Vec<HistoryEntry>,
    /// Entries kept in all (at most 100).
    pub total_entries: usize,
    pub current_session_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
pub struct ClearResult {
    pub success: bool,
    pub message: String,
    pub cleared_count: usize,
}

#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
pub struct SessionResult {
    pub success: bool,
    pub session_id: Option<String>,
    pub has_session: bool,
}

#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
pub struct ResetResult {
    pub success: bool,
    pub message: String,
    pub old_session_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
pub struct SetSessionResult {
    pub success: bool,
    pub message: String,
    pub session_id: String,
    pub old_session_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
pub struct CliTestResult {
    pub success: bool,
    /// The CLI's absolute path; null when not found.
    pub path: Option<String>,
    /// How it was found: `config`, `PATH`, `common location` or `CLAUDE_PATH`.
    pub source: Option<String>,
    /// What `claude --version` printed.
    pub version: Option<String>,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
pub struct StatsResult {
    pub success: bool,
    /// Every `execute_claude*` call counted since this time (ISO 8601); null before the first.
    pub since: Option<String>,
    pub runs: u64,
    pub successes: u64,
    pub failures: u64,
    /// The sum of the CLI's `total_cost_usd`.
    pub total_cost_usd: f64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
    /// The mean of the CLI's `duration_ms` over runs that reported one.
    pub mean_duration_ms: Option<f64>,
    /// The mean `execution_time` (seconds) over all runs.
    pub mean_execution_time: Option<f64>,
    pub current_session_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
pub struct CancelResult {
    pub success: bool,
    /// Runs cancelled: the one running plus those waiting their turn.
    pub cancelled: usize,
    pub message: String,
}
