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

/// The sums `get_execution_stats` answers as they are: kept in [`Counters`], answered in
/// [`StatsResult`].
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Default, PartialEq)]
pub struct Totals {
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
}

/// [`Totals`] as a store file holds them: a sum the file lacks (one written before it was
/// counted) reads as 0, as every counter of [`Counters`] does.
fn totals_or_zero<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Totals, D::Error> {
    let given = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
    let mut totals = serde_json::to_value(Totals::default()).map_err(serde::de::Error::custom)?;
    if let Some(all) = totals.as_object_mut() {
        for (k, v) in given {
            if all.contains_key(&k) {
                all.insert(k, v);
            }
        }
    }
    Totals::deserialize(totals).map_err(serde::de::Error::custom)
}

/// Counters behind `get_execution_stats`, cumulative since `since`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct Counters {
    #[serde(flatten, deserialize_with = "totals_or_zero")]
    pub totals: Totals,
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
    #[serde(flatten)]
    pub totals: Totals,
    /// The mean of the CLI's `duration_ms` over runs that reported one.
    pub mean_duration_ms: Option<f64>,
    /// The mean `execution_time` (seconds) over all runs.
    pub mean_execution_time: Option<f64>,
    pub current_session_id: Option<String>,
}

/// Reads as its [`Totals`] (`stats.runs`).
impl std::ops::Deref for StatsResult {
    type Target = Totals;

    fn deref(&self) -> &Totals {
        &self.totals
    }
}

#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
pub struct CancelResult {
    pub success: bool,
    /// Runs cancelled: the one running plus those waiting their turn.
    pub cancelled: usize,
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counters_keep_their_file_shape_and_a_missing_sum_reads_as_zero() {
        let mut c = Counters::default();
        c.totals.since = Some("2026-01-01T00:00:00Z".into());
        c.totals.runs = 3;
        c.totals.total_cost_usd = 0.5;
        c.duration_ms_total = 7;
        let v = serde_json::to_value(&c).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "since",
                "runs",
                "successes",
                "failures",
                "total_cost_usd",
                "input_tokens",
                "output_tokens",
                "cache_creation_input_tokens",
                "cache_read_input_tokens",
                "duration_ms_total",
                "duration_ms_runs",
                "execution_time_total",
            ]
        );
        assert_eq!(serde_json::from_value::<Counters>(v).unwrap(), c);
        // A file from before some sums were counted, with a key no longer known.
        let old: Counters =
            serde_json::from_value(json!({"runs": 2, "duration_ms_runs": 1, "gone": true}))
                .unwrap();
        assert_eq!(old.totals.runs, 2);
        assert_eq!(old.totals.cache_read_input_tokens, 0);
        assert_eq!(old.totals.since, None);
        assert_eq!(old.duration_ms_runs, 1);
        assert!(serde_json::from_value::<Counters>(json!({"runs": "two"})).is_err());
    }
}
