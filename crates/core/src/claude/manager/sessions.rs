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

    /// Makes `id` the session the next run resumes: one of the project's own conversations only
    /// (a session its runs made, or a conversation of the project or its worktrees in Claude
    /// Code's files). The CLI would resume a session of any project by its id, so another
    /// project's conversation, which is the person's, is refused.
    pub async fn set_session(
        &self,
        root: Option<&Path>,
        id: &str,
    ) -> Result<SetSessionResult, ClaudeError> {
        if !crate::claude::args::valid_session_id(id) {
            return Err(ClaudeError::InvalidSessionId(id.to_string()));
        }
        if !self.owns(root, id).await {
            return Err(ClaudeError::NotThisProjects(id.to_string()));
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

    /// Whether session `id` is the project's: named by its history, or one of its conversations
    /// on disk ([`crate::conversations::owns`], on the blocking pool).
    async fn owns(&self, root: Option<&Path>, id: &str) -> bool {
        let Some(root) = root else { return false };
        {
            let state = self.state(Some(root)).await;
            let st = lock(&state);
            let p = &st.p;
            let named = |s: &Option<String>| s.as_deref() == Some(id);
            if named(&p.current_session_id)
                || p.history
                    .iter()
                    .any(|e| named(&e.session_id) || named(&e.resumed_session_id))
            {
                return true;
            }
        }
        let Some(cfg) = self.claude_config_dir() else {
            return false;
        };
        let (root, id) = (root.to_path_buf(), id.to_string());
        tokio::task::spawn_blocking(move || crate::conversations::owns(&cfg, &root, &id))
            .await
            .unwrap_or(false)
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
