//! What the turns work with: the state every tool reads, and over it the sessions and
//! checkpoints heard of through Claude Code's hooks. The state does not hold these (it is a
//! layer below the turns, `tests/it/layout.rs`); the MCP dispatch's `Service` holds a [`Tracker`]
//! and dereferences to it, so `shared.sessions` and `shared.config` read the same at every layer
//! above.

use super::checkpoints::{Checkpoints, TurnError};
use super::Registry;
use crate::state::State;
use std::sync::Arc;

pub struct Tracker {
    /// The state the tools read (the editor, the configuration, the project).
    pub state: Arc<State>,
    /// The Claude Code sessions and their turns, from Claude Code's hooks.
    pub sessions: Registry,
    /// The checkpoints taken at the sessions' hooks (review, rewind).
    pub checkpoints: Checkpoints,
}

impl Tracker {
    pub fn new(state: Arc<State>) -> Tracker {
        Tracker {
            sessions: Registry::default(),
            checkpoints: Checkpoints::new(state.config.state_dir().ok()),
            state,
        }
    }
}

impl std::ops::Deref for Tracker {
    type Target = State;

    fn deref(&self) -> &State {
        &self.state
    }
}

/// What the editor asked for is at fault when there is no such project, turn or rewind
/// ([`TurnError::is_callers`]).
impl crate::error::Fault for TurnError {
    fn is_callers(&self) -> bool {
        TurnError::is_callers(self)
    }
}
