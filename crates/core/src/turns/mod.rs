//! What every Claude Code session is doing, learned from Claude Code's own hooks: the sessions
//! the bridge has heard of, keyed by Claude's session id, and their turns (a prompt, the files
//! Claude's edit tools changed, when it started and ended).
//!
//! The events arrive through the bridge's hook door (`claude-context-mcp hook <Event>`, see
//! [`crate::hook`]) as [`HookEvent`]s; [`Registry::apply`] moves the session's state:
//!
//! ```text
//! SessionStart                      -> idle   (a new session; its model)
//! UserPromptSubmit                  -> working (a new turn)
//! PermissionRequest, Notification
//!   (permission_prompt, elicitation_dialog; idle_prompt while working)
//!                                   -> waiting (Claude asks the person)
//! PreToolUse / PostToolUse          -> working (from waiting: the person answered, Claude
//!                                      goes on); an edit tool's PreToolUse adds its file to
//!                                      the turn's files, and so does a Bash call's PostToolUse
//!                                      with what Claude Code says it changed (the end
//!                                      checkpoint then lists what changed on disk)
//! Stop                              -> done   (unseen until the person looks: Registry::seen -> idle)
//! SessionEnd                        -> ended
//! ```
//!
//! Everything is bounded: [`MAX_SESSIONS`] sessions (ended ones go first), [`MAX_TURNS`] turns,
//! [`MAX_FILES`] files per turn; texts are cut at [`PROMPT_BYTES`]. Time is passed in (epoch
//! milliseconds), so the state machine is tested without clocks.

pub mod checkpoints;
mod record;
mod tracker;

pub use crate::hook::{Event, HookEvent, EDIT_TOOLS, FIELD_BYTES, PROMPT_BYTES};
pub use crate::text::cut;
pub use record::{record, record_tool_call};
pub use tracker::Tracker;

use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard};

/// Sessions kept; past it the oldest ended (else the least recently active) one is dropped.
pub const MAX_SESSIONS: usize = 64;
/// Turns kept (all sessions together); the oldest go first.
pub const MAX_TURNS: usize = 500;
/// Files recorded per turn.
pub const MAX_FILES: usize = 1000;
/// The most bytes of the first line shown for a session.
pub const LINE_BYTES: usize = 200;

/// A session's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionState {
    /// A prompt was submitted; Claude works on it.
    Working,
    /// Claude asks the person (a permission prompt, a question, an idle prompt).
    Waiting,
    /// Claude stopped, and the person has not looked since.
    Done,
    /// Nothing to do (started, or done and seen).
    Idle,
    /// The session ended.
    Ended,
}

impl SessionState {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionState::Working => "working",
            SessionState::Waiting => "waiting",
            SessionState::Done => "done",
            SessionState::Idle => "idle",
            SessionState::Ended => "ended",
        }
    }
}

/// One turn: a prompt and what Claude's edit tools changed until it stopped.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Turn {
    /// Increasing over the bridge's life (all sessions).
    pub id: u64,
    /// Claude's session id.
    pub session: String,
    /// The terminal's name, when the plugin started the session.
    pub name: Option<String>,
    pub prompt: String,
    /// Epoch milliseconds.
    pub start_ms: u64,
    /// Epoch milliseconds; `None` while the turn runs.
    pub end_ms: Option<u64>,
    /// The files the edit tools touched (as each edit starts: PreToolUse), in order, once each;
    /// at the turn's end checkpoint, what changed on disk.
    pub files: Vec<String>,
}

#[derive(Debug, Clone)]
struct Session {
    id: String,
    terminal: Option<String>,
    cwd: Option<String>,
    model: Option<String>,
    permission_mode: Option<String>,
    state: SessionState,
    /// When the state last changed (epoch ms).
    since_ms: u64,
    /// When the session was first heard of (epoch ms).
    started_ms: u64,
    /// The last event (epoch ms), to choose which session to drop.
    last_ms: u64,
    /// The first line of the last prompt.
    prompt: String,
    /// The last turn's id.
    turn: Option<u64>,
    /// What Claude waits for (the notification's message, or the tool asking permission).
    waiting_for: Option<String>,
}

/// A session as `status().sessions` lists it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SessionView {
    /// Claude's session id.
    pub id: String,
    /// The terminal's name when the plugin started it, else the session id's first 8 characters.
    pub name: String,
    /// The terminal's name (`None` for sessions started outside Neovim).
    pub terminal: Option<String>,
    pub state: SessionState,
    /// The first line of the last prompt ("" before the first).
    pub prompt: String,
    /// The last turn's running time: until now while it runs, else until it ended.
    pub elapsed_ms: u64,
    /// Time in the current state.
    pub state_ms: u64,
    /// How many files the last turn changed.
    pub files_changed: usize,
    pub files: Vec<String>,
    pub model: Option<String>,
    pub cwd: Option<String>,
    pub permission_mode: Option<String>,
    pub turn: Option<u64>,
    pub waiting_for: Option<String>,
    /// Epoch ms when the session was first heard of.
    pub started_ms: u64,
}

/// What an event changed, for the editor (`User ClaudeContextSessionState`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Change {
    pub event: String,
    /// The state before the event (`None` for a session first heard of).
    pub previous: Option<SessionState>,
    pub session: SessionView,
}

#[derive(Default)]
struct Inner {
    sessions: HashMap<String, Session>,
    turns: VecDeque<Turn>,
    next_turn: u64,
}

/// The sessions and turns; shared by the hook door (writes) and the editor (reads).
#[derive(Default)]
pub struct Registry {
    inner: Mutex<Inner>,
}

/// The first non-empty line of `prompt`, trimmed and cut to [`LINE_BYTES`].
pub fn first_line(prompt: &str) -> String {
    let line = prompt
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    cut(line, LINE_BYTES).to_string()
}

/// The current time in epoch milliseconds.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl Registry {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A poisoned lock only means a panic elsewhere; the tables stay usable.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Applies one hook event at `now` (epoch ms); returns what changed, or `None` when the
    /// event is not about a session (no id) or changed nothing the editor shows.
    pub fn apply(&self, ev: &HookEvent, now: u64) -> Option<Change> {
        if ev.session_id.is_empty() {
            return None;
        }
        let mut g = self.lock();
        let inner = &mut *g;
        let is_new = !inner.sessions.contains_key(&ev.session_id);
        if is_new {
            make_room(&mut inner.sessions);
        }
        let s = inner
            .sessions
            .entry(ev.session_id.clone())
            .or_insert_with(|| new_session(&ev.session_id, now));
        let before = (
            s.state,
            s.model.clone(),
            s.permission_mode.clone(),
            s.waiting_for.clone(),
        );
        s.last_ms = now;
        note_context(s, ev);
        let (new_state, files_changed) =
            on_event(&mut inner.turns, &mut inner.next_turn, s, ev, now);
        if let Some(st) = new_state {
            if st != s.state {
                s.state = st;
                s.since_ms = now;
            }
        }
        let after = (
            s.state,
            s.model.clone(),
            s.permission_mode.clone(),
            s.waiting_for.clone(),
        );
        if !is_new && !files_changed && before == after && ev.event != Event::Stop {
            return None;
        }
        let s = s.clone();
        let view = view(&s, &inner.turns, now);
        Some(Change {
            event: ev.event.as_str().into(),
            previous: (!is_new).then_some(before.0),
            session: view,
        })
    }

    /// The person looked at session `id`: `done` becomes `idle`. Returns the change, if any.
    pub fn seen(&self, id: &str, now: u64) -> Option<Change> {
        let mut g = self.lock();
        let inner = &mut *g;
        let s = inner.sessions.get_mut(id)?;
        if s.state != SessionState::Done {
            return None;
        }
        s.state = SessionState::Idle;
        s.since_ms = now;
        let s = s.clone();
        Some(Change {
            event: "seen".into(),
            previous: Some(SessionState::Done),
            session: view(&s, &inner.turns, now),
        })
    }

    /// Every session, the most recently started first.
    pub fn sessions(&self, now: u64) -> Vec<SessionView> {
        let g = self.lock();
        let mut v: Vec<SessionView> = g
            .sessions
            .values()
            .map(|s| view(s, &g.turns, now))
            .collect();
        v.sort_by(|a, b| {
            b.started_ms
                .cmp(&a.started_ms)
                .then_with(|| a.id.cmp(&b.id))
        });
        v
    }

    /// Replaces turn `id`'s files with `files` (what its checkpoints found changed: edit tools,
    /// Bash, formatters), cut to [`MAX_FILES`]. False when the turn is no longer kept.
    pub fn set_files(&self, id: u64, mut files: Vec<String>) -> bool {
        files.truncate(MAX_FILES);
        let mut g = self.lock();
        match find_turn(&mut g.turns, id) {
            Some(t) => {
                t.files = files;
                true
            }
            None => false,
        }
    }

    /// The id of session `session`'s current (last) turn.
    pub fn current_turn(&self, session: &str) -> Option<u64> {
        self.lock().sessions.get(session).and_then(|s| s.turn)
    }

    /// The turns, oldest first; of one session when `session` is given.
    pub fn turns(&self, session: Option<&str>) -> Vec<Turn> {
        self.lock()
            .turns
            .iter()
            .filter(|t| session.is_none_or(|s| t.session == s))
            .cloned()
            .collect()
    }
}

fn find_turn(turns: &mut VecDeque<Turn>, id: u64) -> Option<&mut Turn> {
    // Recent turns are at the back.
    turns.iter_mut().rev().find(|t| t.id == id)
}

/// A session first heard of at `now`.
fn new_session(id: &str, now: u64) -> Session {
    Session {
        id: id.to_string(),
        terminal: None,
        cwd: None,
        model: None,
        permission_mode: None,
        state: SessionState::Idle,
        since_ms: now,
        started_ms: now,
        last_ms: now,
        prompt: String::new(),
        turn: None,
        waiting_for: None,
    }
}

/// What event `ev` tells of session `s`'s terminal, directory, model and permission mode.
fn note_context(s: &mut Session, ev: &HookEvent) {
    if ev.terminal.is_some() {
        s.terminal.clone_from(&ev.terminal);
    }
    if ev.cwd.is_some() {
        s.cwd.clone_from(&ev.cwd);
    }
    if ev.model.is_some() {
        s.model.clone_from(&ev.model);
    }
    if ev.permission_mode.is_some() {
        s.permission_mode.clone_from(&ev.permission_mode);
    }
}

/// What event `ev` at `now` does to session `s` and its turns: the state it goes to, if any,
/// and whether its turn's files changed.
fn on_event(
    turns: &mut VecDeque<Turn>,
    next_turn: &mut u64,
    s: &mut Session,
    ev: &HookEvent,
    now: u64,
) -> (Option<SessionState>, bool) {
    let mut files_changed = false;
    let mut new_state = None;
    match ev.event {
        Event::SessionStart => {
            if matches!(s.state, SessionState::Ended) {
                new_state = Some(SessionState::Idle);
            }
        }
        Event::UserPromptSubmit => {
            start_prompt(turns, next_turn, s, ev, now);
            files_changed = true;
        }
        Event::PreToolUse | Event::PostToolUse | Event::PostToolUseFailure => {
            return tool_use(turns, s, ev);
        }
        Event::PermissionRequest => {
            s.waiting_for = ev.tool_name.as_ref().map(|t| format!("permission for {t}"));
            new_state = Some(SessionState::Waiting);
        }
        Event::Notification => match ev.notification_type.as_deref() {
            Some("permission_prompt" | "elicitation_dialog") => {
                s.waiting_for.clone_from(&ev.message);
                new_state = Some(SessionState::Waiting);
            }
            // Claude waits for the next prompt: news only while it was thought to work (a
            // Stop already said it finished).
            Some("idle_prompt") if s.state == SessionState::Working => {
                s.waiting_for.clone_from(&ev.message);
                new_state = Some(SessionState::Waiting);
            }
            _ => {}
        },
        Event::Stop => {
            if let Some(t) = s.turn.and_then(|id| find_turn(turns, id)) {
                t.end_ms = Some(now);
            }
            s.waiting_for = None;
            new_state = Some(SessionState::Done);
        }
        Event::SessionEnd => {
            if let Some(t) = s.turn.and_then(|id| find_turn(turns, id)) {
                t.end_ms.get_or_insert(now);
            }
            s.waiting_for = None;
            new_state = Some(SessionState::Ended);
        }
    }
    (new_state, files_changed)
}

/// A prompt at `now`: a new turn of session `s` (the one that never saw its Stop ends), working.
fn start_prompt(
    turns: &mut VecDeque<Turn>,
    next_turn: &mut u64,
    s: &mut Session,
    ev: &HookEvent,
    now: u64,
) {
    let prompt = ev.prompt.as_deref().unwrap_or("");
    // A turn that never saw its Stop (interrupted) ends here.
    if let Some(t) = s.turn.and_then(|id| find_turn(turns, id)) {
        t.end_ms.get_or_insert(now);
    }
    *next_turn += 1;
    let id = *next_turn;
    if turns.len() >= MAX_TURNS {
        turns.pop_front();
    }
    turns.push_back(Turn {
        id,
        session: s.id.clone(),
        name: s.terminal.clone(),
        prompt: cut(prompt, PROMPT_BYTES).to_string(),
        start_ms: now,
        end_ms: None,
        files: Vec::new(),
    });
    s.turn = Some(id);
    s.prompt = first_line(prompt);
    s.waiting_for = None;
    // Working again, even when it was working: the elapsed time restarts.
    s.state = SessionState::Working;
    s.since_ms = now;
}

/// A tool's use by session `s`: the state it goes to, if any, and whether its turn's files
/// changed (an edit tool's file, as the edit starts).
fn tool_use(
    turns: &mut VecDeque<Turn>,
    s: &mut Session,
    ev: &HookEvent,
) -> (Option<SessionState>, bool) {
    let mut files_changed = false;
    let mut new_state = None;
    // Claude goes on: the person answered. Not the PreToolUse of a tool the person
    // reviews in Neovim (a plan, a question): that review's own hook runs beside it
    // and its `waiting` holds until the person decides (the door then records it).
    let reviewed = ev.event == Event::PreToolUse && ev.is_reviewed_tool();
    if matches!(s.state, SessionState::Waiting) && !reviewed {
        new_state = Some(SessionState::Working);
    }
    // As the edit starts (the hook Claude waits for, in every set of the plugin's
    // hooks); the end checkpoint then replaces the list with what changed. Not
    // after it: a PostToolUse Claude did not wait for can come after the next
    // prompt, and would credit the file to the new turn.
    let mut named: Vec<&str> = Vec::new();
    if ev.event == Event::PreToolUse && ev.is_edit_tool() {
        named.extend(ev.file.as_deref());
    }
    // After a Bash call, the files Claude Code says it changed (a hook Claude waits for).
    if let (Some(b), Event::PostToolUse) = (&ev.bash, ev.event) {
        named.extend(b.files.iter().map(|f| f.path.as_str()));
    }
    if let Some(t) = s.turn.and_then(|id| find_turn(turns, id)) {
        for f in named.into_iter().filter(|f| !f.is_empty()) {
            if t.files.len() < MAX_FILES && !t.files.iter().any(|x| x == f) {
                t.files.push(f.to_string());
                files_changed = true;
            }
        }
    }
    (new_state, files_changed)
}

fn make_room(sessions: &mut HashMap<String, Session>) {
    if sessions.len() < MAX_SESSIONS {
        return;
    }
    let victim = sessions
        .values()
        .min_by_key(|s| (s.state != SessionState::Ended, s.last_ms))
        .map(|s| s.id.clone());
    if let Some(id) = victim {
        sessions.remove(&id);
    }
}

fn view(s: &Session, turns: &VecDeque<Turn>, now: u64) -> SessionView {
    let turn = s
        .turn
        .and_then(|id| turns.iter().rev().find(|t| t.id == id));
    let elapsed_ms = turn
        .map(|t| t.end_ms.unwrap_or(now).saturating_sub(t.start_ms))
        .unwrap_or(0);
    let files = turn.map(|t| t.files.clone()).unwrap_or_default();
    SessionView {
        id: s.id.clone(),
        name: s
            .terminal
            .clone()
            .unwrap_or_else(|| cut(&s.id, 8).to_string()),
        terminal: s.terminal.clone(),
        state: s.state,
        prompt: s.prompt.clone(),
        elapsed_ms,
        state_ms: now.saturating_sub(s.since_ms),
        files_changed: files.len(),
        files,
        model: s.model.clone(),
        cwd: s.cwd.clone(),
        permission_mode: s.permission_mode.clone(),
        turn: s.turn,
        waiting_for: s.waiting_for.clone(),
        started_ms: s.started_ms,
    }
}

#[cfg(test)]
mod tests;
