//! A project's session bookkeeping: its history, its current session (reset or set by the
//! person) and its run statistics.

use super::Manager;
use crate::claude::projects::lock;
use crate::claude::results::{
    ClearResult, HistoryResult, ResetResult, SessionResult, SetSessionResult, StatsResult,
};
use crate::claude::ClaudeError;
use std::path::Path;

impl Manager {
    /// The project at `root`'s history (another project's is never seen).
    pub async fn history(&self, root: Option<&Path>, limit: usize) -> HistoryResult {
        let state = self.state(root).await;
        let st = lock(&state);
        let h = &st.p.history;
        HistoryResult {
            success: true,
            history: h
                .iter()
                .skip(h.len().saturating_sub(limit))
                .cloned()
                .collect(),
            total_entries: h.len(),
            current_session_id: st.p.current_session_id.clone(),
        }
    }

    pub async fn clear_history(&self, root: Option<&Path>) -> ClearResult {
        let pr = self.project(root).await;
        let n = {
            let mut st = lock(&pr.state);
            let n = st.p.history.len();
            st.p.history.clear();
            n
        };
        self.persist(&pr).await;
        ClearResult {
            success: true,
            message: format!(
                "Cleared {n} history entr{}",
                if n == 1 { "y" } else { "ies" }
            ),
            cleared_count: n,
        }
    }

    pub async fn current_session(&self, root: Option<&Path>) -> SessionResult {
        let state = self.state(root).await;
        let id = lock(&state).p.current_session_id.clone();
        SessionResult {
            success: true,
            has_session: id.is_some(),
            session_id: id,
        }
    }

    pub async fn reset_session(&self, root: Option<&Path>) -> ResetResult {
        let pr = self.project(root).await;
        let old = {
            let mut st = lock(&pr.state);
            st.epoch += 1;
            st.p.session_cwd = None;
            st.p.current_session_id.take()
        };
        self.persist(&pr).await;
        ResetResult {
            success: true,
            message: match &old {
                Some(id) => {
                    format!("Session {id} reset; the next run starts a new conversation")
                }
                None => "No session was active; the next run starts a new conversation".into(),
            },
            old_session_id: old,
        }
    }

    /// Makes `id` the session the next run resumes. The id is checked for shape only; the CLI
    /// reports an unknown one on the next run (and the session is then reset).
    pub async fn set_session(
        &self,
        root: Option<&Path>,
        id: &str,
    ) -> Result<SetSessionResult, ClaudeError> {
        if !crate::claude::args::valid_session_id(id) {
            return Err(ClaudeError::InvalidSessionId(id.to_string()));
        }
        let pr = self.project(root).await;
        let old = {
            let mut st = lock(&pr.state);
            st.epoch += 1;
            st.p.session_cwd = None;
            st.p.current_session_id.replace(id.to_string())
        };
        self.persist(&pr).await;
        Ok(SetSessionResult {
            success: true,
            message: format!("The next run resumes session {id}"),
            session_id: id.to_string(),
            old_session_id: old,
        })
    }

    pub async fn stats(&self, root: Option<&Path>) -> StatsResult {
        let state = self.state(root).await;
        let st = lock(&state);
        let c = &st.p.stats;
        StatsResult {
            success: true,
            totals: c.totals.clone(),
            mean_duration_ms: (c.duration_ms_runs > 0)
                .then(|| c.duration_ms_total as f64 / c.duration_ms_runs as f64),
            mean_execution_time: (c.totals.runs > 0)
                .then(|| c.execution_time_total / c.totals.runs as f64),
            current_session_id: st.p.current_session_id.clone(),
        }
    }
}
